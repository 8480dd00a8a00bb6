//! `muxlab report A B`: B against A, cell by cell (experiment, target, connections present in
//! both): the ratios B/A of throughput, p99 latency and server CPU per request, each with the
//! spread of both sides' repeats, and whether the change goes beyond the noise (the interval of
//! the two sides' logs lies past 5 %; one round a side is not judged). The before/after view
//! around a change: a terminal table and `B/compare.html`.
//!
//! The rows compared (`rows`), read as a headline, a terminal table and HTML (`render`), each
//! target against an experiment's reference (`reference`), and a `bench --baseline` run's
//! binary against its baseline (`baseline`).

mod baseline;
mod reference;
mod render;
mod rows;

pub use baseline::baseline_rows;
pub use reference::against_reference;
pub use render::{cell_text, headline, html, html_table, summary, table, CLASSES};
pub use rows::{rows, Row};
