//! `report`: terminal tables, and the self-contained HTML report with SVG charts.
//!
//! The terminal's tables (`table`), the HTML page (`html`) and its charts (`charts`), the
//! comparison of two runs (`compare`), a load document's series (`series`), the files written
//! beside results (`write`) and why they were not (`error`), the docs rendered from kept results
//! (`docs`), and the escaping every HTML part uses (`escape`).

mod charts;
pub(crate) mod compare;
pub(crate) mod docs;
mod error;
mod escape;
pub(crate) mod html;
pub(crate) mod series;
pub(crate) mod table;
mod write;

#[cfg(test)]
mod compare_tests;
#[cfg(test)]
mod error_tests;
#[cfg(test)]
mod placement_tests;
#[cfg(test)]
mod rank_tests;

pub use error::Error;
pub(crate) use escape::esc;
pub use table::verdict_lines;
pub(crate) use table::{notes, STEAL_SHOWN};
pub use write::{against_baseline, compare_runs, rebuild, write_html};
