//! muxlab: a laboratory for TCP server concurrency models.
//!
//! Layers, each using only those above it: [`sys`] (syscall wrappers: the only layer with unchecked code),
//! [`proto`] (sans-I/O sessions), [`server`] (what models share), [`models`] (one file per
//! architecture), `load` (the load generator), `remote` (running it on other hosts over ssh),
//! `bench` and `report`, and [`cli`].

pub mod hist;
pub(crate) mod rng;
pub(crate) mod sync;
pub mod sys;
#[cfg(test)]
mod testing;
pub(crate) mod units;

pub mod proto;
pub mod server;

pub mod models;

pub mod queueing;

pub mod load;
pub(crate) mod remote;

pub mod bench;
pub(crate) mod report;

pub mod fuzz;

pub mod advise;

pub mod cli;
