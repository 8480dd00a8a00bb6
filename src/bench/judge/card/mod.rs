//! A cell's explain card: where its requests' mean latency went, what a request cost, what
//! bound the cell and the share of the gap to its prediction each part the model leaves out
//! carries (`explain`); and the part of two designs' cards that carries the gap between them
//! (`gap`).

mod explain;
mod gap;

pub use explain::{of, Card, Part, COSTS, INTERVALS};
pub(super) use gap::why_gap;
pub use gap::CARRIES;

#[cfg(test)]
mod tests;
