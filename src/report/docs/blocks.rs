//! The marked blocks of a Markdown file: what a block asks for, and where its rendered text
//! lies.
//!
//! ```text
//! <!-- muxlab KIND
//! key = "value"          (TOML: which result, which rows, which figures)
//! -->
//! ...rendered, replaced on every `muxlab docs`...
//! <!-- /muxlab -->
//! ```

/// Where a block's marks open it.
pub const OPEN: &str = "<!-- muxlab ";
/// The line that closes it.
pub const CLOSE: &str = "<!-- /muxlab -->";

/// One marked block.
#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    /// What it renders (`cells`, `verdict`, `glance`, ...).
    pub kind: String,
    /// Its spec, as written between the marks (TOML).
    pub spec: String,
    /// The line its opening mark is on (1-based), to name it by.
    pub line: usize,
    /// The byte range of its rendered text: after the spec's `-->` line, up to the closing
    /// mark.
    pub body: std::ops::Range<usize>,
}

/// Blocks that do not open and close as blocks do: the line at fault, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadBlocks {
    pub line: usize,
    pub why: BlockFault,
}

/// Why a file's blocks do not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockFault {
    /// An opening mark without a kind (or with spaces in it).
    NoKind,
    /// A closing mark with no block open.
    ClosesNone,
    /// The spec of the block opened at `from` never ended.
    SpecNeverEnded { from: usize },
    /// A block opened inside the block opened at `from`.
    Nested { from: usize },
    /// The block opened here is never closed.
    NeverClosed,
}

impl std::fmt::Display for BadBlocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.line;
        match self.why {
            BlockFault::NoKind => write!(f, "line {n}: a block's first line is `{OPEN}KIND`, then its spec"),
            BlockFault::ClosesNone => write!(f, "line {n}: {CLOSE} closes no block"),
            BlockFault::SpecNeverEnded { from } => {
                write!(f, "line {n}: the spec of the block at line {from} never ended (`-->`)")
            }
            BlockFault::Nested { from } => write!(f, "line {n}: a block opens inside the block at line {from}"),
            BlockFault::NeverClosed => write!(f, "line {n}: the block opened here is never closed ({CLOSE})"),
        }
    }
}

impl std::error::Error for BadBlocks {}

/// The blocks of `text`, in order; a mark opened and never closed, a block inside a block or a
/// spec never ended is an error naming its line.
pub fn parse(text: &str) -> Result<Vec<Block>, BadBlocks> {
    let bad = |line, why| Err(BadBlocks { line, why });
    let mut out = Vec::new();
    let mut open: Option<(String, usize, String, Option<usize>)> = None;
    let mut offset = 0;
    let mut fence = false;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line = raw.trim_end_matches(['\n', '\r']);
        let n = i + 1;
        let at = offset;
        offset += raw.len();
        if line.trim_start().starts_with("```") && open.as_ref().is_none_or(|o| o.3.is_some()) {
            fence = !fence;
            continue;
        }
        if fence {
            continue;
        }
        match &mut open {
            None if line.starts_with(OPEN) => {
                let rest = &line[OPEN.len()..];
                let (kind, spec, done) = match rest.strip_suffix("-->") {
                    Some(r) => (r.trim().to_string(), String::new(), true),
                    None => (rest.trim().to_string(), String::new(), false),
                };
                if kind.is_empty() || kind.contains(char::is_whitespace) {
                    return bad(n, BlockFault::NoKind);
                }
                open = Some((kind, n, spec, done.then_some(offset)));
            }
            None if line.trim() == CLOSE => return bad(n, BlockFault::ClosesNone),
            None => {}
            Some((_, from, spec, body @ None)) => {
                if line.trim() == "-->" {
                    *body = Some(offset);
                } else if line.contains("<!--") || line.contains("-->") {
                    return bad(n, BlockFault::SpecNeverEnded { from: *from });
                } else {
                    spec.push_str(line);
                    spec.push('\n');
                }
            }
            Some((kind, from, spec, Some(start))) => {
                if line.starts_with(OPEN) {
                    return bad(n, BlockFault::Nested { from: *from });
                }
                if line.trim() == CLOSE {
                    out.push(Block {
                        kind: std::mem::take(kind),
                        spec: std::mem::take(spec),
                        line: *from,
                        body: *start..at,
                    });
                    open = None;
                }
            }
        }
    }
    match open {
        Some((_, from, _, _)) => bad(from, BlockFault::NeverClosed),
        None => Ok(out),
    }
}

/// `text` with each block's body replaced by `bodies` (one per block, in order), each set off
/// by a blank line on both sides so Markdown renders it as its own block.
pub fn replace(text: &str, blocks: &[Block], bodies: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (b, body) in blocks.iter().zip(bodies) {
        out.push_str(&text[from..b.body.start]);
        out.push_str(&framed(body));
        from = b.body.end;
    }
    out.push_str(&text[from..]);
    out
}

/// A body as it stands between the marks.
pub fn framed(body: &str) -> String {
    format!("\n{}\n\n", body.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# T\n\n<!-- muxlab cells\nresult = \"quick\"\n-->\n\nold\n\n<!-- /muxlab -->\nafter\n";

    #[test]
    fn a_block_has_its_kind_spec_and_the_text_between_its_marks() {
        let b = parse(DOC).unwrap();
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].kind, "cells");
        assert_eq!(b[0].spec, "result = \"quick\"\n");
        assert_eq!(b[0].line, 3);
        assert_eq!(&DOC[b[0].body.clone()], "\nold\n\n");
    }

    #[test]
    fn replacing_a_body_keeps_everything_around_it() {
        let b = parse(DOC).unwrap();
        let out = replace(DOC, &b, &["new".to_string()]);
        assert_eq!(out, DOC.replace("\nold\n\n", "\nnew\n\n"));
        // Rendering again changes nothing.
        assert_eq!(replace(&out, &parse(&out).unwrap(), &["new".to_string()]), out);
    }

    #[test]
    fn an_unclosed_a_nested_or_a_stray_mark_is_an_error_naming_its_line() {
        let bad = |t: &str| parse(t).unwrap_err();
        let e = bad("<!-- muxlab cells\n-->\nx\n");
        assert_eq!(e.why, BlockFault::NeverClosed);
        assert!(e.to_string().starts_with("line 1: "), "{e}");
        let e = bad("<!-- muxlab a -->\n<!-- muxlab b -->\n<!-- /muxlab -->\n");
        assert_eq!((e.line, e.why), (2, BlockFault::Nested { from: 1 }));
        assert!(e.to_string().starts_with("line 2: "), "{e}");
        assert_eq!(
            bad("x\n<!-- /muxlab -->\n"),
            BadBlocks {
                line: 2,
                why: BlockFault::ClosesNone
            }
        );
        let e = bad("<!-- muxlab cells\nresult = 1\n<!-- /muxlab -->\n");
        assert_eq!(e.why, BlockFault::SpecNeverEnded { from: 1 });
        assert!(e.to_string().contains("never ended"), "{e}");
    }

    #[test]
    fn marks_inside_a_code_fence_are_text() {
        let doc = "```\n<!-- muxlab cells\n-->\n```\n";
        assert!(parse(doc).unwrap().is_empty());
    }
}
