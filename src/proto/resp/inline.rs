//! An inline command's words as redis splits them (`sdssplitargs`): runs of bytes between
//! spaces, where `"..."` takes escapes (`\n`, `\r`, `\t`, `\b`, `\a`, `\xHH`, and `\`
//! before any other byte for that byte) and `'...'` takes `\'`; a closing quote must end its
//! word. An unclosed quote, or one followed by more of the word, is an error (redis: "Protocol
//! error: unbalanced quotes in request", and the connection closes).

/// The words of `line`, each unquoted in place (a word never grows as it is unquoted, so it is
/// written over its own bytes), each span in `line` handed to `word` (no allocation on a
/// command's path); `Err` for unbalanced quotes.
pub(super) fn words(line: &mut [u8], mut word: impl FnMut(usize, usize)) -> Result<(), ()> {
    let (mut r, n) = (0, line.len());
    while r < n {
        if line[r].is_ascii_whitespace() {
            r += 1;
            continue;
        }
        // A word: read from `r`, written from `w` (never ahead of `r`).
        let start = r;
        let mut w = r;
        while r < n && !line[r].is_ascii_whitespace() {
            match line[r] {
                q @ (b'"' | b'\'') => {
                    r = quoted(line, r + 1, &mut w, q)?;
                    // A closing quote ends the word.
                    if r < n && !line[r].is_ascii_whitespace() {
                        return Err(());
                    }
                    break;
                }
                c => {
                    line[w] = c;
                    (r, w) = (r + 1, w + 1);
                }
            }
        }
        word(start, w);
    }
    Ok(())
}

/// Reads a quoted part from `r` (past its opening `q`) to its closing quote, writing it at
/// `w`: where reading goes on (past the closing quote); `Err` where the line ends first.
fn quoted(line: &mut [u8], mut r: usize, w: &mut usize, q: u8) -> Result<usize, ()> {
    let n = line.len();
    loop {
        let c = *line.get(r).ok_or(())?;
        let (byte, used) = match (q, c) {
            (_, c) if c == q => return Ok(r + 1),
            (b'"', b'\\')
                if r + 3 < n && line[r + 1] == b'x' && hex(line[r + 2]).is_some() && hex(line[r + 3]).is_some() =>
            {
                (hex(line[r + 2]).unwrap_or(0) * 16 + hex(line[r + 3]).unwrap_or(0), 4)
            }
            (b'"', b'\\') if r + 1 < n => (
                match line[r + 1] {
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'a' => 0x07,
                    other => other,
                },
                2,
            ),
            (b'\'', b'\\') if r + 1 < n && line[r + 1] == b'\'' => (b'\'', 2),
            (_, c) => (c, 1),
        };
        line[*w] = byte;
        *w += 1;
        r += used;
    }
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::words;

    fn split(s: &str) -> Result<Vec<Vec<u8>>, ()> {
        let mut b = s.as_bytes().to_vec();
        let mut spans = Vec::new();
        words(&mut b, |a, z| spans.push((a, z)))?;
        Ok(spans.into_iter().map(|(a, z)| b[a..z].to_vec()).collect())
    }

    /// Quotes and escapes as redis-cli and redis read them: a quoted word may hold spaces and
    /// escaped bytes, an unclosed quote or one glued to more of its word is refused (before:
    /// `SET "a b` set the key `"a`).
    #[test]
    fn inline_words_unquote_as_redis_does_and_unbalanced_quotes_are_refused() {
        let ok: [(&str, &[&[u8]]); 7] = [
            ("SET k v", &[b"SET", b"k", b"v"]),
            ("  GET   k  ", &[b"GET", b"k"]),
            ("SET \"a b\" \"x\\ny\"", &[b"SET", b"a b", b"x\ny"]),
            ("SET k \"\\x41\\x7a\\q\\\"\"", &[b"SET", b"k", b"Azq\""]),
            ("SET 'it\\'s' ''", &[b"SET", b"it's", b""]),
            ("SET a\"b c\"", &[b"SET", b"ab c"]),
            ("SET k 'a\\nb'", &[b"SET", b"k", b"a\\nb"]),
        ];
        for (line, want) in ok {
            let got = split(line).unwrap_or_else(|_| panic!("{line}: refused"));
            assert_eq!(got, want.iter().map(|w| w.to_vec()).collect::<Vec<_>>(), "{line}");
        }
        for bad in ["SET \"a b", "SET 'a", "SET \"a\"b", "SET 'a'b", "GET \"k\\\""] {
            assert!(split(bad).is_err(), "{bad}: accepted");
        }
    }
}
