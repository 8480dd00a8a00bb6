//! Framing the server's replies: RESP's `+OK`, `$N` bulk, nil (`$-1`, RESP3's `_`) and `-ERR`,
//! or memcached's `STORED`, `VALUE key flags bytes` … `END`, `END` and its error lines. A reply
//! is framed where it lies (in the read buffer when it came whole, else in what was kept of
//! earlier reads): only a reply cut by a read's end is copied.

use std::ops::Range;

use super::command::Dialect;

/// The longest line a reply may have before its data (a memcached `VALUE` line, an error).
const MAX_LINE: usize = 8 * 1024;

/// The longest value a reply may announce: no command of this client writes a longer one.
const MAX_DATA: usize = super::sizes::MAX_VALUE + 1024;

/// One reply, its parts as ranges of the bytes it was framed from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A write was stored (`+OK`, `STORED`).
    Stored,
    /// A value, and (memcached) the key its `VALUE` line names.
    Value {
        data: Range<usize>,
        key: Option<Range<usize>>,
    },
    /// No value (`$-1`, `_`, `END`).
    Miss,
    /// The server refused the command (`-ERR …`, `-OOM …`, `SERVER_ERROR …`, `ERROR`,
    /// `NOT_STORED`): its line.
    Error(Range<usize>),
}

/// What the bytes at hand hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Framed {
    /// A reply, and the bytes it took.
    Reply(Reply, usize),
    /// Not a whole reply yet.
    More,
    /// Not a reply of the protocol.
    Bad,
}

/// The line at the front of `b` (without its CRLF) and the bytes it takes, if whole.
fn line(b: &[u8]) -> Result<Option<(&[u8], usize)>, ()> {
    match memchr_crlf(b) {
        Some(end) => Ok(Some((&b[..end], end + 2))),
        None if b.len() > MAX_LINE => Err(()),
        None => Ok(None),
    }
}

fn memchr_crlf(b: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(p) = b[from..].iter().position(|&c| c == b'\n') {
        let at = from + p;
        if at > 0 && b[at - 1] == b'\r' {
            return Some(at - 1);
        }
        from = at + 1;
    }
    None
}

/// A length of data (at most [`MAX_DATA`]).
fn length(d: &[u8]) -> Option<usize> {
    number(d).filter(|&n| n <= MAX_DATA)
}

fn number(d: &[u8]) -> Option<usize> {
    if d.is_empty() || d.len() > 12 {
        return None;
    }
    d.iter().try_fold(0usize, |n, &c| {
        c.is_ascii_digit().then(|| n * 10 + usize::from(c - b'0'))
    })
}

/// Frames the reply at the front of `b`.
pub fn frame(d: Dialect, b: &[u8]) -> Framed {
    let r = match d {
        Dialect::Resp => resp(b),
        Dialect::Memcache => memcache(b),
    };
    r.unwrap_or(Framed::Bad)
}

fn resp(b: &[u8]) -> Result<Framed, ()> {
    let Some((l, n)) = line(b)? else {
        return Ok(Framed::More);
    };
    let reply = match l.first() {
        Some(b'+') if &l[1..] == b"OK" => Reply::Stored,
        Some(b'-') => Reply::Error(1..l.len()),
        Some(b'_') if l.len() == 1 => Reply::Miss,
        Some(b'$') if &l[1..] == b"-1" => Reply::Miss,
        Some(b'$') => {
            let len = length(&l[1..]).ok_or(())?;
            if b.len() < n + len + 2 {
                return Ok(Framed::More);
            }
            if &b[n + len..n + len + 2] != b"\r\n" {
                return Err(());
            }
            return Ok(Framed::Reply(
                Reply::Value {
                    data: n..n + len,
                    key: None,
                },
                n + len + 2,
            ));
        }
        _ => return Err(()),
    };
    Ok(Framed::Reply(reply, n))
}

fn memcache(b: &[u8]) -> Result<Framed, ()> {
    let Some((l, n)) = line(b)? else {
        return Ok(Framed::More);
    };
    let reply = match l {
        b"STORED" => Reply::Stored,
        b"END" => Reply::Miss,
        b"ERROR" | b"NOT_STORED" | b"EXISTS" | b"NOT_FOUND" => Reply::Error(0..l.len()),
        _ if l.starts_with(b"SERVER_ERROR ") || l.starts_with(b"CLIENT_ERROR ") => Reply::Error(0..l.len()),
        _ if l.starts_with(b"VALUE ") => {
            // VALUE <key> <flags> <bytes> [<cas>]
            let mut words = l[6..].split(|&c| c == b' ');
            let key = words.next().filter(|k| !k.is_empty()).ok_or(())?;
            let _flags = words.next().and_then(number).ok_or(())?;
            let len = words.next().and_then(length).ok_or(())?;
            let end = n + len;
            if b.len() < end + 2 + 5 {
                return Ok(Framed::More);
            }
            if &b[end..end + 2] != b"\r\n" || &b[end + 2..end + 7] != b"END\r\n" {
                return Err(());
            }
            let key_at = 6..6 + key.len();
            return Ok(Framed::Reply(
                Reply::Value {
                    data: n..end,
                    key: Some(key_at),
                },
                end + 7,
            ));
        }
        _ => return Err(()),
    };
    Ok(Framed::Reply(reply, n))
}

/// Bytes that are not replies of the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotReplies;

/// A connection's replies as its reads bring them: the part of a reply a read cut off is kept
/// until the rest comes.
#[derive(Debug, Default)]
pub struct Replies {
    kept: Vec<u8>,
}

impl Replies {
    /// Frames the replies in `data` (after what was kept), handing each to `each` with the
    /// bytes its ranges index, until `each` says stop (`false`); keeps a cut reply. `Err` when
    /// the bytes are not replies of `d`.
    pub fn feed(
        &mut self,
        d: Dialect,
        data: &[u8],
        mut each: impl FnMut(&[u8], Reply) -> bool,
    ) -> Result<(), NotReplies> {
        if self.kept.is_empty() {
            let used = run(d, data, &mut each)?;
            self.kept.extend_from_slice(&data[used..]);
            return Ok(());
        }
        self.kept.extend_from_slice(data);
        let kept = std::mem::take(&mut self.kept);
        let used = run(d, &kept, &mut each);
        self.kept = kept;
        self.kept.drain(..used?);
        Ok(())
    }

    /// Part of a reply is waiting for its rest.
    pub fn mid_reply(&self) -> bool {
        !self.kept.is_empty()
    }

    /// The socket is gone: nothing of it is kept.
    pub fn reset(&mut self) {
        self.kept.clear();
    }
}

/// Frames replies from the front of `b` until one is cut or `each` says stop: the bytes used.
fn run(d: Dialect, b: &[u8], each: &mut impl FnMut(&[u8], Reply) -> bool) -> Result<usize, NotReplies> {
    let mut at = 0;
    loop {
        match frame(d, &b[at..]) {
            Framed::Reply(r, n) => {
                let go = each(&b[at..at + n], r);
                at += n;
                if !go {
                    return Ok(at);
                }
            }
            Framed::More => return Ok(at),
            Framed::Bad => return Err(NotReplies),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(d: Dialect, stream: &[u8], cut: usize) -> Result<Vec<(Reply, Vec<u8>)>, NotReplies> {
        let mut r = Replies::default();
        let mut got = Vec::new();
        for part in [&stream[..cut], &stream[cut..]] {
            r.feed(d, part, |b, reply| {
                let bytes = match &reply {
                    Reply::Value { data, .. } => b[data.clone()].to_vec(),
                    Reply::Error(l) => b[l.clone()].to_vec(),
                    _ => Vec::new(),
                };
                got.push((reply, bytes));
                true
            })?;
        }
        assert!(!r.mid_reply(), "nothing is left over at the end");
        Ok(got)
    }

    #[test]
    fn replies_frame_the_same_at_any_read_boundary_in_both_protocols() {
        let resp = b"+OK\r\n$5\r\nhel\r\n\r\n$-1\r\n_\r\n-OOM command not allowed\r\n$0\r\n\r\n";
        let mc = b"STORED\r\nVALUE mx:000000000001 0 5\r\nhel\r\n\r\nEND\r\nEND\r\nSERVER_ERROR out of memory\r\n";
        for cut in 0..resp.len() {
            let got = all(Dialect::Resp, resp, cut).unwrap();
            let kinds: Vec<_> = got
                .iter()
                .map(|(r, b)| (std::mem::discriminant(r), b.clone()))
                .collect();
            assert_eq!(got.len(), 6, "cut {cut}");
            assert_eq!(got[0].0, Reply::Stored);
            assert_eq!(kinds[1].1, b"hel\r\n", "a value may hold CRLF");
            assert_eq!((got[2].0.clone(), got[3].0.clone()), (Reply::Miss, Reply::Miss));
            assert_eq!(kinds[4].1, b"OOM command not allowed");
            assert_eq!(kinds[5].1, b"");
        }
        for cut in 0..mc.len() {
            let got = all(Dialect::Memcache, mc, cut).unwrap();
            assert_eq!(got.len(), 4, "cut {cut}");
            assert_eq!(got[1].1, b"hel\r\n");
            assert_eq!(got[2].0, Reply::Miss);
            assert_eq!(got[3].1, b"SERVER_ERROR out of memory");
        }
    }

    #[test]
    fn bytes_that_are_not_replies_are_refused() {
        for (d, bad) in [
            (Dialect::Resp, &b":1\r\n"[..]),
            (Dialect::Resp, b"$3\r\nabcd\r\n"),
            (Dialect::Resp, b"HTTP/1.1 200 OK\r\n"),
            (Dialect::Memcache, b"VALUE k 0 3\r\nabc\r\nEN\r\n\r\n"),
            (Dialect::Memcache, b"+OK\r\n"),
            (Dialect::Resp, b"$999999999999\r\n"),
            (Dialect::Memcache, b"VALUE k 0 999999999999\r\n"),
        ] {
            assert!(all(d, bad, 0).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let endless = vec![b'a'; MAX_LINE + 10];
        assert!(
            all(Dialect::Memcache, &endless, 0).is_err(),
            "a line without end is not waited for forever"
        );
    }
}
