//! Tests that cannot run here, and host facts that choose a branch: the crate's one
//! implementation ([`muxlab::testing`]), which the unit tests use too.

#[allow(unused_imports)]
pub use muxlab::testing::{host_fact, required, skip, REQUIRE_ALL};

/// This run's ledger of `kind` ([`muxlab::testing::SKIPPED`] or
/// [`muxlab::testing::HOST_FACTS`]).
pub fn ledger(kind: &str) -> std::path::PathBuf {
    muxlab::testing::ledger(kind).expect("a test binary under target/")
}
