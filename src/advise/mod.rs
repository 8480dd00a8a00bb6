//! `muxlab advise`: a user's workload and latency target in, a ranked answer out. It writes
//! the experiment those flags describe as a scenario (`--print-scenario` shows it) and runs it
//! with `muxlab bench` in two rounds within the time given: every design once, then the
//! contenders again (`contenders`), so the answer has repeats where it matters. The answer
//! (`answer`) is read off both rounds' results: designs ranked by their capacity at the target
//! (a search that ran out of time by its bracket's low end), the ones within the noise of the
//! best named together as tied, their predicted capacity, why, what it depends on (`-c` where
//! the client's connections queued, the server's CPUs, the client's limit), and where the full
//! results are — as text or as one JSON document (`--json`).
//!
//! The flags (`args`), what they make (`plan`) or why they make nothing (`bad`), the designs ranked by what they carried
//! (`ranking`) and the answer read off the ranking (`answer`).

mod answer;
mod args;
mod bad;
mod plan;
mod ranking;
#[cfg(test)]
mod tests;

pub use answer::Answer;
pub use args::AdviseArgs;
pub use bad::BadPlan;
pub use plan::{plan, plan_within, Plan, FIRST_ROUND};
pub use ranking::{contenders, Row};
