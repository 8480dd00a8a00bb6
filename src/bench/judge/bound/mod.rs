//! What bound a cell (`rules`: one label with its evidence, by named thresholds), and the one
//! definition of the client's limit it tries first (`client`), which the metrics' rule reads
//! too.

mod client;
mod rules;

pub use client::client_limit;
pub use rules::{of, Bound, BoundBy, DELAYED, IDLE, OTHERS, SATURATED, STEAL, WAITED};

#[cfg(test)]
mod tests;
