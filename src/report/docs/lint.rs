//! Measured numbers outside rendered blocks: digits followed by a unit (µs, ms, s, KiB, MiB,
//! GB, req/s, %, ×, ...) are allowed in a Markdown file only inside a marked block, a code
//! block or a code span, or in a marked paragraph: `<!-- cited: SOURCE -->` (another source's
//! figures) or `<!-- analytic: ... -->` (not measured: worked out, or a setting or constant of
//! the code). An analytic mark holds derivations, not measurements, so it exempts only the
//! figures it names (`<!-- analytic: 1 ns the code's timer slack; 5 % worked out from it -->`):
//! a measured claim in its paragraph that the mark does not name is listed like any other.

use super::blocks::{CLOSE, OPEN};

/// The mark whose paragraph quotes another source: every figure in it is that source's.
pub const CITED: &str = "<!-- cited";

/// The mark whose paragraph works figures out: it names each figure it exempts.
pub const ANALYTIC: &str = "<!-- analytic";

/// Units a measured figure is given in, longest first where one starts another.
const UNITS: [&str; 16] = [
    "req/s", "k req/s", "M req/s", "µs", "us", "ns", "ms", "s", "KiB", "MiB", "GiB", "KB", "MB", "GB", "%", "×",
];

/// A number with a unit where none may stand.
#[derive(Debug, Clone, PartialEq)]
pub struct Unmarked {
    pub line: usize,
    pub figure: String,
    /// It stands in a paragraph marked analytic whose mark does not name it.
    pub in_analytic: bool,
}

/// The figures the analytic marks among `lines` (code spans left out) name, each without its
/// spaces (`None`: no analytic mark there).
fn named_by_analytic(lines: &[String]) -> Option<Vec<String>> {
    let text = lines.join("\n");
    let mut named = Vec::new();
    let mut any = false;
    for (at, _) in text.match_indices(ANALYTIC) {
        any = true;
        let inside = &text[at + ANALYTIC.len()..];
        let inside = &inside[..inside.find("-->").unwrap_or(inside.len())];
        named.extend(figures(inside).iter().map(|f| bare(f)));
    }
    any.then_some(named)
}

/// A figure without its spaces: `4.71 ms` and `4.71ms` are one figure.
fn bare(figure: &str) -> String {
    figure.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Every number with a unit in `text` outside blocks, code and marked paragraphs.
pub fn unmarked(text: &str) -> Vec<Unmarked> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let (mut fence, mut block, mut comment) = (false, false, false);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            fence = !fence;
            i += 1;
            continue;
        }
        if fence {
            i += 1;
            continue;
        }
        if line.starts_with(OPEN) {
            block = true;
        }
        if block {
            block = line.trim() != CLOSE;
            i += 1;
            continue;
        }
        if line.trim().is_empty() {
            i += 1;
            continue;
        }
        // A paragraph: the lines up to the next blank one.
        let end = (i..lines.len())
            .find(|&j| lines[j].trim().is_empty() || lines[j].starts_with(OPEN))
            .unwrap_or(lines.len());
        // A mark in a code span is an example of one, not a mark.
        let marks: Vec<String> = lines[i..end].iter().map(|l| without_code(l)).collect();
        let cited = marks.iter().any(|l| l.contains(CITED));
        let analytic = named_by_analytic(&marks);
        for (j, l) in lines.iter().enumerate().take(end).skip(i) {
            let (prose, still) = prose_of(l, comment);
            comment = still;
            if cited {
                continue;
            }
            out.extend(
                figures(&prose)
                    .into_iter()
                    .filter(|f| analytic.as_ref().is_none_or(|named| !named.contains(&bare(f))))
                    .map(|figure| Unmarked {
                        line: j + 1,
                        figure,
                        in_analytic: analytic.is_some(),
                    }),
            );
        }
        i = end;
    }
    out
}

/// `line` without its code spans (an unclosed one to the line's end).
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(c) = rest.find('`') {
        out.push_str(&rest[..c]);
        let ticks = rest[c..].chars().take_while(|&ch| ch == '`').count();
        let after = &rest[c + ticks..];
        match after.find(&"`".repeat(ticks)) {
            Some(e) => rest = &after[e + ticks..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// `line` without its code spans and HTML comments (`in_comment`: a comment from an earlier
/// line is still open), and whether a comment is open at its end.
fn prose_of(line: &str, mut in_comment: bool) -> (String, bool) {
    let mut out = String::new();
    let mut rest = line;
    loop {
        if in_comment {
            match rest.find("-->") {
                Some(at) => {
                    rest = &rest[at + 3..];
                    in_comment = false;
                }
                None => return (out, true),
            }
        }
        let next_code = rest.find('`');
        let next_comment = rest.find("<!--");
        match (next_code, next_comment) {
            (Some(c), m) if m.is_none_or(|m| c < m) => {
                out.push_str(&rest[..c]);
                let ticks = rest[c..].chars().take_while(|&ch| ch == '`').count();
                let after = &rest[c + ticks..];
                match after.find(&"`".repeat(ticks)) {
                    Some(e) => rest = &after[e + ticks..],
                    None => return (out, false),
                }
            }
            (_, Some(m)) => {
                out.push_str(&rest[..m]);
                rest = &rest[m + 4..];
                in_comment = true;
            }
            _ => {
                out.push_str(rest);
                return (out, false);
            }
        }
    }
}

/// The numbers with a unit in `s` (`4.71 ms`, `1.70×`, `99.4–99.8 %`'s `99.8 %`).
fn figures(s: &str) -> Vec<String> {
    let chars: Vec<(usize, char)> = s.char_indices().collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        let (at, ch) = chars[k];
        let before = k.checked_sub(1).map(|p| chars[p].1);
        let starts = ch.is_ascii_digit() && before.is_none_or(|b| !(b.is_alphanumeric() || b == '_' || b == '.'));
        if !starts {
            k += 1;
            continue;
        }
        let mut e = k;
        while e < chars.len() && (chars[e].1.is_ascii_digit() || chars[e].1 == ',' || chars[e].1 == '.') {
            e += 1;
        }
        // A trailing comma or full stop ends the sentence, not the number.
        while e > k && matches!(chars[e - 1].1, ',' | '.') {
            e -= 1;
        }
        let num_end = chars.get(e).map_or(s.len(), |c| c.0);
        let mut rest = &s[num_end..];
        for space in [' ', '\u{a0}', '\u{202f}', '\u{2009}'] {
            if let Some(r) = rest.strip_prefix(space) {
                rest = r;
                break;
            }
        }
        if let Some(u) = UNITS.iter().find(|u| unit_at(rest, u)) {
            let end = s.len() - rest.len() + u.trim_end().len();
            out.push(s[at..end].to_string());
        }
        k = e.max(k + 1);
    }
    out
}

/// Whether `rest` begins with unit `u`, whole (`5 ms`, `5ms,`, `5 µs/req`; not `5 streams`).
fn unit_at(rest: &str, u: &str) -> bool {
    let Some(after) = rest.strip_prefix(u) else {
        return false;
    };
    if !u.chars().last().is_some_and(|c| c.is_alphabetic()) {
        return true;
    }
    after.chars().next().is_none_or(|c| !c.is_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<String> {
        unmarked(text).into_iter().map(|u| u.figure).collect()
    }

    #[test]
    fn a_number_with_a_unit_in_prose_is_listed_with_its_line() {
        let u = unmarked("# T\n\nthread p99 4.71 ms, 1.70× reactor's; 99.4 % on time.\n");
        assert_eq!(u.iter().map(|u| u.line).collect::<Vec<_>>(), vec![3, 3, 3]);
        assert_eq!(
            found("2,800 req/s and 17.5 KiB and 3s and 5 µs/req"),
            vec!["2,800 req/s", "17.5 KiB", "3s", "5 µs"]
        );
    }

    #[test]
    fn words_after_numbers_and_numbers_in_words_are_not_figures() {
        assert!(found("5 streams, 10 sockets, p99, HTTP/1.1, 2 cores, x86, 3 syscalls, 64-byte").is_empty());
    }

    #[test]
    fn code_blocks_code_spans_and_rendered_blocks_are_left_alone() {
        let doc = "a `-d 10s` b\n\n```\nload -d 10s\n```\n\n<!-- muxlab cells\nx = 1\n-->\n\n| 4.7 ms |\n\n<!-- /muxlab -->\n";
        assert!(found(doc).is_empty(), "{:?}", found(doc));
    }

    #[test]
    fn a_marked_paragraph_may_hold_numbers_and_the_next_may_not() {
        let doc = "<!-- cited: the seed -->\nThe seed saw 65 % CPU.\n\nWe saw 12 %.\n";
        assert_eq!(found(doc), vec!["12 %"]);
        let doc = "Worked out: 1,000 × 4 KiB is 4 MiB. <!-- analytic: 1,000 × 4 KiB = 4 MiB, worked out -->\n";
        assert!(found(doc).is_empty(), "{:?}", found(doc));
    }

    #[test]
    fn an_analytic_mark_exempts_only_the_figures_it_names() {
        // A measured claim beside a setting: the mark names the setting, not the claim.
        let doc = "<!-- analytic: 1 ns the code's timer slack -->\nSleeps run with a timer slack of 1 ns: \
                   with the default every sleep overran by 50 µs.\n";
        assert_eq!(
            unmarked(doc),
            vec![Unmarked {
                line: 2,
                figure: "50 µs".into(),
                in_analytic: true
            }]
        );
        // A bare mark names nothing.
        assert_eq!(found("Worked out: 4 KiB. <!-- analytic -->\n"), vec!["4 KiB"]);
        // Spacing and a mark over several lines; a named figure is not a part of a larger one.
        let doc = "a 1.5× bound and 95 %\n<!-- analytic: 1.5 ×\nthe judge's; 5 % a derivation -->\n";
        assert_eq!(found(doc), vec!["95 %"]);
        // A cited paragraph is another source's: all its figures stand.
        assert!(found("<!-- cited: the seed --> <!-- analytic: x --> 65 % CPU\n").is_empty());
        // A mark in a code span is an example, not a mark.
        assert_eq!(found("as `<!-- analytic: 5 % -->` does; 5 % here\n"), vec!["5 %"]);
        assert_eq!(found("as `<!-- cited: x -->` does; 5 % here\n"), vec!["5 %"]);
    }

    #[test]
    fn a_comment_hides_its_numbers() {
        assert!(found("x <!-- 5 ms\nstill 6 ms --> y\n").is_empty());
    }
}
