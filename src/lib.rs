//! muxlab: a laboratory for TCP server concurrency models.
//!
//! Layers, each using only those above it in this list (`tests/structure/` holds the code to
//! it, and `docs/code.md` maps every folder):
//!
//! - [`sys`]: syscall wrappers, the only layer with unchecked code; beside it the helpers every
//!   layer may use: [`hist`] (latency histograms), [`metrics`] (what a scraper reads), [`timer`] ("wake me at T", the one timer heap), `rng`,
//!   `units`, `sync`, [`origin`] (the commit the binary was built from);
//! - [`proto`]: sans-I/O sessions (HTTP/1.1, HTTP/2, echo, packet, TLS, RESP, memcache), and
//!   beside it `peer`: the client's side of them for tests, fuzz targets and tools;
//! - [`store`]: the keyed state RESP and memcache commands run against (`owned`, `locked`,
//!   `striped:N`, `sharded`);
//! - [`server`]: what models share, and the registry each model declares itself in (its
//!   mechanism, its workers, its queueing discipline);
//! - [`models`]: one file per architecture;
//! - [`load`]: the load generator (the workload, the engine, the capacity search, the one
//!   definition of "the client was the limit");
//! - `remote`: running a command on other hosts over ssh;
//! - [`queueing`]: the queueing simulation of each design's dispatch;
//! - [`bench`]: three rooms, importing one way: the run, the judge (one `Metric`, the
//!   verdicts), the record (data only);
//! - `report`: terminal tables, the HTML report, `report A B`;
//! - [`fuzz`] and [`advise`]: entry points over all of the above;
//! - [`cli`]: the command line.

pub mod hist;
pub mod metrics;
pub mod origin;
pub(crate) mod rng;
pub(crate) mod sync;
pub mod sys;
#[doc(hidden)]
pub mod testing;
pub mod timer;
pub(crate) mod units;

#[doc(hidden)]
pub mod peer;
pub mod proto;
pub mod server;
pub mod store;

pub mod models;

pub mod load;
pub(crate) mod remote;

pub mod queueing;

pub mod bench;
pub(crate) mod report;

pub mod fuzz;

pub mod advise;

pub mod cli;
