//! Starting a peer, a production server beside the models: its entry read (`record::peer`),
//! then the product started — nginx (`nginx`), redis-server or memcached (`stores`). A peer
//! that cannot run here (a server on another host, its binary not installed) is a visible
//! skip of its cells, with the reason and what to install.

use super::error::Error;
use super::process::{Placement, Server};
use crate::bench::record::peer::Peer;
use crate::bench::record::scenario::Experiment;

/// Starts `entry` for experiment `x`, on `place`'s server CPUs.
pub(super) fn start(entry: &str, x: &Experiment, place: &Placement) -> Result<Server, Error> {
    let peer = Peer::parse(entry).map_err(Error::Scenario)?;
    if place.remote_server() {
        return Err(Error::Skipped(format!(
            "the {} peer runs on this machine only",
            peer.product()
        )));
    }
    if !peer.speaks(x.proto) {
        return Err(Error::Skipped(format!(
            "{} speaks {}, not {}",
            peer.product(),
            peer.protocols(),
            x.proto
        )));
    }
    match peer {
        Peer::Nginx { deferred } => super::nginx::start_nginx(deferred, x, place),
        Peer::Redis { io_threads } => super::stores::start_redis(io_threads, place),
        Peer::Memcached { threads } => super::stores::start_memcached(threads, place),
    }
}
