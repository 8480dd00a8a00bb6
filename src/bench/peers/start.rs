//! Starting a peer, a production server beside the models: its entry read (`record::peer`),
//! then the product started — nginx (`nginx`), redis-server or memcached (`stores`), Go's or
//! Node's server from `products/` (`runtimes`). A peer
//! that cannot run here (a server on another host, its binary not installed) is a visible
//! skip of its cells, with the reason and what to install.

use crate::bench::process::Server;
use crate::bench::record::peer::Peer;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{Error, PeerError, SkipReason};
use crate::bench::setup::Placement;

/// Starts `entry` for experiment `x`, on `place`'s server CPUs.
pub(in crate::bench) fn start(entry: &str, x: &Experiment, place: &Placement) -> Result<Server, Error> {
    let peer = Peer::parse(entry).map_err(PeerError::Entry)?;
    if place.remote_server() {
        return Err(Error::Skipped(SkipReason::RemoteServer {
            product: peer.product(),
        }));
    }
    if !peer.speaks(x.proto) {
        return Err(Error::Skipped(SkipReason::Speaks { peer, proto: x.proto }));
    }
    match peer {
        Peer::Nginx { deferred } => super::nginx::start_nginx(deferred, x, place),
        Peer::Redis { io_threads } => super::stores::start_redis(io_threads, place),
        Peer::Memcached { threads } => super::stores::start_memcached(threads, place),
        Peer::Go { procs, time_sleep } => super::runtimes::start_go(procs, time_sleep, x, place),
        Peer::Node { worker_threads } => super::runtimes::start_node(worker_threads, x, place),
    }
}

/// The products a scenario's `peers` may name, each with the models that stand for it and
/// whether it is installed here (`bench --list`).
pub(in crate::bench) fn products() -> String {
    use crate::bench::record::peer::PRODUCTS;
    let mut s = String::from(
        "\nProducts a scenario sets beside their models (peers = [...]; the fidelity verdict compares them):\n",
    );
    for (product, model) in PRODUCTS {
        let (here, install) = match *product {
            "nginx" => (super::nginx::nginx_binary().is_some(), "nginx-light"),
            "go" => (super::launch::binary("go").is_some(), "golang-go"),
            "node" => (
                super::launch::binary("node")
                    .or_else(|| super::launch::binary("nodejs"))
                    .is_some(),
                "nodejs",
            ),
            other => (super::launch::binary(other).is_some(), *product),
        };
        let state = match here {
            true => "installed".to_string(),
            false => format!("not installed: its cells are skipped (apt-get install {install})"),
        };
        s.push_str(&format!("  {product:<14} beside {model:<40} {state}\n"));
    }
    s
}
