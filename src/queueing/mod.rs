//! Queueing predictions: what a design's way of handing requests to its workers implies for
//! latency and capacity, worked out without a server by a small seeded discrete-event
//! simulation of its queues under a cell's arrivals and service times ([`simulate`]), checked
//! against the closed forms of M/M/1 and M/M/k ([`erlang`]).
//!
//! What is modelled: the load generator's connections (each with one request in flight at most,
//! the free ones taken in the order they came free, requests waiting at the client when none is
//! free, latency from the intended send time); the design's dispatch ([`Discipline`]); each
//! request's work (its CPU part and its wait, as `--work` draws them) and the design's own CPU
//! per request (`design_cpu`: its syscalls, wake-ups and copies, measured where a bench cell
//! gives it); and the server's CPUs, shared by the workers computing at once as the kernel
//! shares them, in slices ([`Sharing::Slices`], [`base_slice`]) or, for comparison, ideally
//! ([`Sharing::Processor`]), so that with `cpu:` work the CPU count, not the worker count,
//! bounds the servers. What is not: wake-up preemption, context switches beyond the measured
//! CPU per request, caches, the client's own cost.

mod bad;
pub mod command;
mod cpu;
pub mod erlang;
pub mod keyed;
mod predict;
mod run;
mod setup;
mod sim;
mod slice;
mod time;

pub use crate::server::{Assign, Discipline};

pub use bad::{BadPrediction, BadWork};
pub use cpu::Sharing;
pub use predict::{capacity_within, predict, ClassPrediction, Prediction};
pub use setup::{classes_of, discipline_of, Arrivals, Class, Setup};
pub use sim::simulate;
pub use slice::{base_slice, default_slice};

#[cfg(test)]
mod keyed_tests;
#[cfg(test)]
mod tests;
