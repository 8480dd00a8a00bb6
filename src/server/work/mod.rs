//! `--work`: what a request costs the thread that handles it, as a service-time distribution.
//!
//! `cpu:D` spins D of the thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`: a thread preempted
//! while spinning is not credited with time another thread used); `sleep:D` blocks the thread
//! for D (a backend call); `cpu:D1+sleep:D2` computes, then blocks. D is a fixed time (`200us`),
//! `exp(MEAN)`, `lognormal(MEAN,SIGMA)`, `pareto(MEAN,ALPHA)`, a weighted `mix(99.5%:50us,0.5%:5ms)`,
//! the presets of Shenango's load generator `bimodal1(MEAN)` (90 %: 0.5 MEAN, 10 %: 5.5 MEAN) and
//! `bimodal2(MEAN)` (99.9 %: 0.5 MEAN, 0.1 %: 500.5 MEAN), or `hist:FILE`, a user's measured
//! service times as an HdrHistogram (a `.hgrm` percentile listing in milliseconds, as wrk2 and
//! `muxlab load --hgrm` write it, or a V2 histogram log in nanoseconds, as muxlab records), drawn
//! from by its quantiles. Draws come from a generator seeded by (`--seed`, the worker, the
//! process, the thread), so forked workers and threads do not repeat each other. A request's
//! draw is cut at [`CEILING`] (at `--max-work` for work a request names).

mod bad;
mod cost;
mod dist;
mod parse;
mod perform;
#[cfg(test)]
mod tests;

pub use bad::{BadDist, BadWork, DistFault, WorkFault};
pub use cost::{Work, CEILING};
pub use dist::Dist;
pub use parse::parse_dist;
pub(crate) use perform::{perform, spin};
