//! Rendering the docs: every block of README.md and docs/*.md rendered from the committed
//! results by the kind it names, the files written where a block changed (or named under
//! `--check`), and each file's numbers linted.

use std::path::{Path, PathBuf};

use super::ctx::Ctx;
use super::error::DocsError;
use super::{against, blocks, cells, kept, lint, scripts, verdicts};

/// What renders a kind of block: its spec in, its text out (or why not).
type Renderer = fn(&Ctx, &str) -> Result<String, DocsError>;

/// The kinds of block, and what renders each.
const KINDS: [(&str, Renderer); 10] = [
    ("run", kept::run),
    ("cells", cells::cells),
    ("verdict", verdicts::verdict),
    ("glance", verdicts::glance),
    ("against", against::against),
    ("screen", kept::screen),
    ("peers", scripts::peers),
    ("advise", scripts::advise),
    ("h2cost", scripts::h2cost),
    ("h2client", scripts::h2client),
];

/// A block's text as the committed results render it.
pub fn render(ctx: &Ctx, b: &blocks::Block) -> Result<String, DocsError> {
    let Some((_, f)) = KINDS.iter().find(|(k, _)| *k == b.kind) else {
        return Err(DocsError::UnknownKind {
            kind: b.kind.clone(),
            kinds: KINDS.iter().map(|k| k.0).collect(),
        });
    };
    if let Some(name) = b.spec.lines().find_map(|l| l.trim().strip_prefix("result = ")) {
        let name = name.trim_matches('"');
        if name.contains('/') || name.contains('\\') || name.starts_with('.') {
            return Err(DocsError::ResultIsAPath { name: name.into() });
        }
    }
    f(ctx, &b.spec)
}

/// What `muxlab docs` found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Blocks rendered.
    pub blocks: usize,
    /// Blocks whose text differed from the render (`FILE:LINE KIND`, and the first line that
    /// differs); rewritten unless checking.
    pub changed: Vec<String>,
    /// Files rewritten.
    pub written: Vec<PathBuf>,
    /// Numbers with units outside blocks, code and marked paragraphs, or in an analytic
    /// paragraph whose mark does not name them (`FILE:LINE: figure`).
    pub unmarked: Vec<String>,
    /// Blocks that could not be rendered, and why.
    pub errors: Vec<String>,
}

/// The Markdown files a repository's docs are: README.md and docs/*.md.
pub fn files(root: &Path) -> Result<Vec<PathBuf>, DocsError> {
    let mut out = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .map_err(|error| DocsError::Read {
            path: root.join("docs"),
            error,
        })?
        .filter_map(|e| e.ok())
        .map(|e| PathBuf::from("docs").join(e.file_name()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    out.extend(docs);
    Ok(out)
}

/// Renders every block of `files` (relative to `root`) from the committed results; writes
/// those that changed unless `check`, and lints each file's numbers.
pub fn run(root: &Path, files: &[PathBuf], check: bool) -> Result<Outcome, DocsError> {
    if !root.join("docs").join("results").is_dir() {
        return Err(DocsError::NoResults {
            root: root.to_path_buf(),
        });
    }
    let mut out = Outcome::default();
    for file in files {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).map_err(|error| DocsError::Read {
            path: path.clone(),
            error,
        })?;
        let found = match blocks::parse(&text) {
            Ok(b) => b,
            Err(e) => {
                out.errors.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        let ctx = Ctx {
            root: root.to_path_buf(),
            file: file.clone(),
        };
        let mut bodies = Vec::new();
        let mut failed = false;
        for b in &found {
            out.blocks += 1;
            match render(&ctx, b) {
                Ok(body) => {
                    let now = &text[b.body.clone()];
                    let want = blocks::framed(&body);
                    if *now != want {
                        out.changed.push(format!(
                            "{}:{} {}: {}",
                            file.display(),
                            b.line,
                            b.kind,
                            first_difference(now, &want)
                        ));
                    }
                    bodies.push(body);
                }
                Err(e) => {
                    failed = true;
                    out.errors
                        .push(format!("{}:{} {}: {e}", file.display(), b.line, b.kind));
                    bodies.push(text[b.body.clone()].to_string());
                }
            }
        }
        let rendered = blocks::replace(&text, &found, &bodies);
        if !check && !failed && rendered != text {
            std::fs::write(&path, &rendered).map_err(|error| DocsError::Write {
                path: path.clone(),
                error,
            })?;
            out.written.push(file.clone());
        }
        let linted = if check || failed { &text } else { &rendered };
        out.unmarked
            .extend(lint::unmarked(linted).into_iter().map(|u| match u.in_analytic {
                true => format!(
                    "{}:{}: {} (its paragraph is marked analytic, but the mark does not name it)",
                    file.display(),
                    u.line,
                    u.figure
                ),
                false => format!("{}:{}: {}", file.display(), u.line, u.figure),
            }));
    }
    Ok(out)
}

/// Where two renders part: the first line that differs, as the file has it and as the results
/// render it.
fn first_difference(now: &str, want: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (now.trim().lines().collect(), want.trim().lines().collect());
    let at = (0..a.len().max(b.len())).find(|&i| a.get(i) != b.get(i)).unwrap_or(0);
    let clip = |s: Option<&&str>| {
        let s = s.copied().unwrap_or("(nothing)");
        match s.char_indices().nth(160) {
            Some((i, _)) => format!("{}…", &s[..i]),
            None => s.to_string(),
        }
    };
    format!(
        "the file has \"{}\", the results render \"{}\"",
        clip(a.get(at)),
        clip(b.get(at))
    )
}
