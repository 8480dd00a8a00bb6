//! `muxlab docs`: every table and measured figure in README.md and docs/*.md rendered from the
//! committed results (`docs/results/*`), between marked lines (`blocks`), by the current judge;
//! `--check` renders them all and names each block that differs from the file, and the
//! numbers with units standing outside a block, a code span or a marked paragraph (`lint`).
//!
//! Kinds: from a kept bench run (`kept`, `cells`, `verdicts`, `against`), `run`, `cells`,
//! `verdict`, `glance`, `screen`, `against`; from a script's file (`scripts`), `peers`, `advise`, `h2cost`,
//! `h2client`. Where a block renders (`ctx`), what a kept result says made it (`made`: a
//! binary's commit only where the result recorded it), the Markdown tables they write
//! (`markdown`), and the run over the files (`render`).

mod against;
pub mod blocks;
mod cells;
mod ctx;
mod error;
mod kept;
pub mod lint;
mod made;
mod markdown;
mod render;
mod scripts;
#[cfg(test)]
mod tests;
mod verdicts;

pub use render::{files, run};
