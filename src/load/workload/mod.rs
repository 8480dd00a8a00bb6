//! The workload as a person writes it: `muxlab load`'s flags (clap) and a scenario's
//! experiment keys (serde) are one struct, [`Workload`]; a key has the flag's name, default,
//! meaning and check. [`Workload::to_args`] writes it back as flags.

mod active;
mod bad_mix_file;
mod class;
mod flags;
mod rate;
mod slo;

pub use active::{Active, ActiveFault, BadActive};
pub use bad_mix_file::{BadMixFile, LineFault};
pub(super) use class::read_mix_file;
pub use class::{BadMixEntry, Class, MixEntry, MixEntryFault};
pub(super) use flags::message_size;
pub use flags::{Arrivals, Workload, MAX_STREAMS};
pub use rate::{BadRate, Rate};
pub use slo::{BadSlo, Bound, Quantile, Slo, SloFault};
