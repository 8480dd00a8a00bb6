//! `models`: one file per server architecture, each readable top to bottom.
//!
//! Every file starts with a header comment (mechanism, product, trade-offs, seed), then its
//! [`Model`] descriptor, then `run`. Shared plumbing lives in `server/`; a file holds only what
//! makes its architecture different. A model added to [`ALL`] is covered by the conformance
//! suite in `tests/` without touching it.

mod dispatch;
mod epoll;
mod fork;
mod green;
mod io_threads;
mod iterative;
mod multi_reactor;
mod offload;
mod poll;
mod prefork;
mod prethread;
mod procs_accept;
mod queue_pool;
mod reactor;
mod reuseport;
mod select;
mod thread;
mod threads_accept;
mod tokio;
mod uring;

use crate::server::Model;

/// Every registered model, in catalogue order.
pub static ALL: &[&Model] = &[
    &iterative::MODEL,
    &fork::MODEL,
    &thread::MODEL,
    &prefork::MODEL,
    &prethread::MODEL,
    &select::MODEL,
    &poll::MODEL,
    &epoll::MODEL,
    &reactor::MODEL,
    &queue_pool::MODEL,
    &dispatch::MODEL,
    &procs_accept::MODEL,
    &threads_accept::MODEL,
    &reuseport::MODEL,
    &multi_reactor::MODEL,
    &io_threads::MODEL,
    &offload::MODEL,
    &uring::MODEL,
    &tokio::MODEL,
    &green::MODEL,
];

/// Old names still accepted for one release: `(old, new)`.
pub const ALIASES: &[(&str, &str)] = &[("reactors", "multi-reactor")];

/// Looks a model up by its `--model` name (or an old name in [`ALIASES`]).
pub fn find(name: &str) -> Option<&'static Model> {
    let name = ALIASES
        .iter()
        .find(|(old, _)| *old == name)
        .map_or(name, |(_, new)| new);
    ALL.iter().copied().find(|m| m.name == name)
}
