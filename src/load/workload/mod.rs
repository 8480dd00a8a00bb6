//! The workload as a person writes it: `muxlab load`'s flags (clap) and a scenario's
//! experiment keys (serde) are one struct, [`Workload`]; a key has the flag's name, default,
//! meaning and check. [`Workload::to_args`] writes it back as flags.

mod class;
mod flags;
mod rate;
mod slo;

pub(super) use class::read_mix_file;
pub use class::{Class, MixEntry};
pub(super) use flags::message_size;
pub use flags::{Arrivals, Workload, MAX_STREAMS};
pub use rate::{BadRate, Rate};
pub use slo::{Bound, Quantile, Slo};
