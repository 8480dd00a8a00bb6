//! `muxlab docs`: every table and measured figure in README.md and docs/*.md rendered from the
//! committed results (`docs/results/*`), between marked lines (`blocks`), by the current judge;
//! `--check` renders them all and names each block that differs from the file, and the
//! numbers with units standing outside a block, a code span or a marked paragraph (`lint`).
//!
//! Kinds: from a kept bench run (`results`), `run`, `cells`, `verdict`, `glance`, `screen`;
//! from a script's file (`scripts`), `peers`, `advise`, `h2cost`, `h2client`.

pub mod blocks;
pub mod lint;
mod results;
mod scripts;

use std::path::{Path, PathBuf};

/// Where a block is rendered: the repository and the Markdown file (relative to it), which
/// its links are relative to.
pub struct Ctx {
    pub root: PathBuf,
    pub file: PathBuf,
}

impl Ctx {
    /// A kept result's path.
    pub fn result(&self, name: &str, ext: &str) -> PathBuf {
        self.root.join("docs").join("results").join(format!("{name}.{ext}"))
    }

    /// A link from the file to `path` (relative to the repository).
    pub fn link(&self, path: &str) -> String {
        let dir = self.file.parent().unwrap_or(Path::new(""));
        let mut p = Path::new(path);
        let mut up = dir.components().count();
        for c in dir.components() {
            match p.strip_prefix(c.as_os_str()) {
                Ok(rest) if up > 0 => {
                    p = rest;
                    up -= 1;
                }
                _ => break,
            }
        }
        format!("{}{}", "../".repeat(up), p.display())
    }

    /// A link from the file to a kept result.
    pub fn result_link(&self, name: &str, ext: &str) -> String {
        self.link(&format!("docs/results/{name}.{ext}"))
    }
}

/// The median of `xs` (`None`: empty).
pub fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => None,
        n if n % 2 == 1 => Some(xs[n / 2]),
        n => Some((xs[n / 2 - 1] + xs[n / 2]) / 2.0),
    }
}

/// What renders a kind of block: its spec in, its text out (or why not).
type Renderer = fn(&Ctx, &str) -> Result<String, String>;

/// The kinds of block, and what renders each.
const KINDS: [(&str, Renderer); 9] = [
    ("run", results::run),
    ("cells", results::cells),
    ("verdict", results::verdict),
    ("glance", results::glance),
    ("screen", results::screen),
    ("peers", scripts::peers),
    ("advise", scripts::advise),
    ("h2cost", scripts::h2cost),
    ("h2client", scripts::h2client),
];

/// A block's text as the committed results render it.
pub fn render(ctx: &Ctx, b: &blocks::Block) -> Result<String, String> {
    let Some((_, f)) = KINDS.iter().find(|(k, _)| *k == b.kind) else {
        return Err(format!(
            "no kind of block '{}': {}",
            b.kind,
            KINDS.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
        ));
    };
    if let Some(name) = b.spec.lines().find_map(|l| l.trim().strip_prefix("result = ")) {
        let name = name.trim_matches('"');
        if name.contains('/') || name.contains('\\') || name.starts_with('.') {
            return Err(format!("result '{name}' is a name in docs/results, not a path"));
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
    /// Numbers with units outside blocks, code and marked paragraphs (`FILE:LINE: figure`).
    pub unmarked: Vec<String>,
    /// Blocks that could not be rendered, and why.
    pub errors: Vec<String>,
}

/// The Markdown files a repository's docs are: README.md and docs/*.md.
pub fn files(root: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out = vec![PathBuf::from("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .map_err(|e| format!("{}: {e}", root.join("docs").display()))?
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
pub fn run(root: &Path, files: &[PathBuf], check: bool) -> Result<Outcome, String> {
    if !root.join("docs").join("results").is_dir() {
        return Err(format!(
            "{} has no docs/results: run muxlab docs from the repository's root (or give --root)",
            root.display()
        ));
    }
    let mut out = Outcome::default();
    for file in files {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
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
            std::fs::write(&path, &rendered).map_err(|e| format!("{}: {e}", path.display()))?;
            out.written.push(file.clone());
        }
        let linted = if check || failed { &text } else { &rendered };
        out.unmarked.extend(
            lint::unmarked(linted)
                .into_iter()
                .map(|u| format!("{}:{}: {}", file.display(), u.line, u.figure)),
        );
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_relative_to_the_file_they_are_in() {
        let at = |file: &str| Ctx {
            root: PathBuf::from("/r"),
            file: PathBuf::from(file),
        };
        assert_eq!(at("README.md").result_link("quick", "json"), "docs/results/quick.json");
        assert_eq!(at("docs/results.md").result_link("quick", "json"), "results/quick.json");
        assert_eq!(at("docs/results.md").link("scripts/x.sh"), "../scripts/x.sh");
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
    }
}
