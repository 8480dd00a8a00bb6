//! The self-contained HTML report: environment, one section per experiment with a table and
//! charts (throughput, p99 latency, server CPU per request, fairness vs connections), and for seed
//! scenarios the published numbers beside the measured ones with a sentence on what agrees.
//!
//! The page (`page`), its parts (`verdicts`, `environment`, `table`, `plots`, `capacity`,
//! `classes`, `cards`, `seed`).

mod capacity;
mod cards;
mod classes;
mod environment;
mod page;
mod plots;
mod seed;
mod table;
mod verdicts;

#[cfg(test)]
mod tests;

pub use page::render;
