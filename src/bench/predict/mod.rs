//! The predictions bench puts beside a cell's measurement: a design's cost from its
//! calibration cell (`calibration`), the queueing's prediction from it (`predicted`), and a
//! keyed store's, with its locks and shard hops (`keyed_prediction`).

pub(in crate::bench) mod calibration;
pub(in crate::bench) mod keyed_prediction;
pub(in crate::bench) mod predicted;
