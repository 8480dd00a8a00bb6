//! One cell measured: a target's server standing for its bursts (`standing`), each burst a load
//! run with the server sampled over its window (`window`), a cell run alone (`runner`) or as a
//! capacity search, a burst per probe (`capacity`).

mod capacity;
mod ceiling;
mod runner;
mod standing;
mod window;

pub(super) use runner::run_cell;
pub(super) use standing::Standing;
