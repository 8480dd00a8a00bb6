//! Why a block of the docs cannot be rendered, or the docs not read ([`DocsError`]): each
//! variant carries what it is about (a path, a result's name, a key), and its words are built
//! from them.

use std::fmt;
use std::path::PathBuf;

/// Why a block cannot be rendered, or the docs not read.
#[derive(Debug)]
pub enum DocsError {
    /// The repository root has no `docs/results`.
    NoResults { root: PathBuf },
    /// A file that could not be read.
    Read { path: PathBuf, error: std::io::Error },
    /// A file that could not be written.
    Write { path: PathBuf, error: std::io::Error },
    /// A kept result that bench cannot read (its error names the file).
    Kept { error: Box<crate::bench::Error> },
    /// A file that is not the JSON it should be.
    Json { path: PathBuf, error: serde_json::Error },
    /// A block's spec that does not read as its kind's.
    Spec(toml::de::Error),
    /// A file's blocks that do not open and close as blocks do.
    Blocks(super::blocks::BadBlocks),
    /// A block of a kind nothing renders.
    UnknownKind { kind: String, kinds: Vec<&'static str> },
    /// A block's `result` that is a path, not a name in docs/results.
    ResultIsAPath { name: PathBuf },
    /// A figure no column shows.
    NoFigure {
        key: String,
        metrics: Vec<&'static str>,
        counters: Vec<&'static str>,
    },
    /// A `predicted` figure (`key`) that is not among the block's `figures`.
    PredictedNotShown { key: String, figures: Vec<String> },
    /// A kept result with no such experiment.
    NoExperiment {
        result: String,
        experiment: String,
        has: Vec<String>,
    },
    /// An `against` block with nothing to compare: no baseline cells, and no experiment named
    /// (or none at all) with a reference.
    NothingToCompare { result: String, experiments: Vec<String> },
    /// A kept result with no such target in those experiments.
    NoTarget {
        result: String,
        target: String,
        experiments: Vec<String>,
    },
    /// A part of a verdict that is not one.
    NoPart { part: String, parts: Vec<&'static str> },
    /// A glance row's metric that the experiment's verdict does not rank.
    NoMetric {
        result: String,
        experiment: String,
        metric: String,
        ranked: Vec<String>,
    },
    /// A file a block names (relative to the repository) that does not exist.
    Missing { path: PathBuf },
    /// A script that does not make its picture from the result it is said to (the kept
    /// result's name: its file is `docs/results/RESULT.json`).
    NotFrom { script: PathBuf, result: String },
    /// A script's result without a field a block reads.
    NoField { result: String, field: &'static str },
}

impl fmt::Display for DocsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocsError::NoResults { root } => write!(
                f,
                "{} has no docs/results: run muxlab docs from the repository's root (or give --root)",
                root.display()
            ),
            DocsError::Read { path, error } | DocsError::Write { path, error } => {
                write!(f, "{}: {error}", path.display())
            }
            // bench's reading error names the file.
            DocsError::Kept { error } => write!(f, "{error}"),
            DocsError::Json { path, error } => write!(f, "{}: {error}", path.display()),
            DocsError::Spec(e) => write!(f, "{e}"),
            DocsError::NoMetric {
                result,
                experiment,
                metric,
                ranked,
            } => write!(
                f,
                "{result}'s verdict on {experiment} ranks no `{metric}` (it ranks: {})",
                ranked.join(", ")
            ),
            DocsError::Blocks(e) => write!(f, "{e}"),
            DocsError::UnknownKind { kind, kinds } => write!(f, "no kind of block '{kind}': {}", kinds.join(", ")),
            DocsError::ResultIsAPath { name } => {
                write!(f, "result '{}' is a name in docs/results, not a path", name.display())
            }
            DocsError::NoFigure { key, metrics, counters } => write!(
                f,
                "no figure '{key}': a metric ({}), a class's name before one (`short p99`), or a counter ({})",
                metrics.join(", "),
                counters.join(", ")
            ),
            DocsError::PredictedNotShown { key, figures } => {
                write!(
                    f,
                    "predicted '{key}' is not one of the figures ({})",
                    figures.join(", ")
                )
            }
            DocsError::NothingToCompare { result, experiments } => write!(
                f,
                "{result} has nothing to compare{}: no --baseline cells, and no experiment with a reference",
                match experiments.is_empty() {
                    true => String::new(),
                    false => format!(" in {}", experiments.join(", ")),
                }
            ),
            DocsError::NoExperiment {
                result,
                experiment,
                has,
            } => write!(
                f,
                "{result} has no experiment '{experiment}' (it has: {})",
                has.join(", ")
            ),
            DocsError::NoTarget {
                result,
                target,
                experiments,
            } => {
                write!(f, "{result} has no target '{target}' in {}", experiments.join(", "))
            }
            DocsError::NoPart { part, parts } => write!(f, "no part '{part}' of a verdict: {}", parts.join(", ")),
            DocsError::Missing { path } => write!(f, "{} does not exist", path.display()),
            DocsError::NotFrom { script, result } => write!(
                f,
                "{} does not make its picture from {}",
                script.display(),
                input_of(result)
            ),
            DocsError::NoField { result, field } => write!(f, "{result}: no {field}"),
        }
    }
}

impl std::error::Error for DocsError {}

/// The file a script makes its picture from, for the kept result `result`: what the script
/// must name.
pub(super) fn input_of(result: &str) -> String {
    format!("docs/results/{result}.json")
}

impl From<toml::de::Error> for DocsError {
    fn from(e: toml::de::Error) -> Self {
        DocsError::Spec(e)
    }
}

impl From<super::blocks::BadBlocks> for DocsError {
    fn from(e: super::blocks::BadBlocks) -> Self {
        DocsError::Blocks(e)
    }
}
