//! Where cells run ([`Placement`]): the server's and the client's CPUs and the client's
//! threads (on this machine split by default, a scenario's own where it sets them), the
//! address, the other hosts; where one target runs (a target serving on several threads on
//! `threaded_cpus`); and the placement in words.

use super::hosts::Hosts;
use crate::bench::record::scenario::{Experiment, Scenario};
use crate::bench::Target;
use crate::sys;

/// Where cells run.
#[derive(Clone)]
pub struct Placement {
    pub server_cpus: String,
    /// The CPUs of the targets that serve on several threads (`threaded_cpus`, `"all"` read as
    /// this machine's list); `None`: every target on `server_cpus`.
    pub threaded_cpus: Option<String>,
    pub client_cpus: String,
    pub client_threads: usize,
    /// The address servers listen on and clients connect to.
    pub server_addr: String,
    /// Other hosts the scenario names (none: everything runs here).
    pub hosts: Option<std::sync::Arc<Hosts>>,
    /// The loopback round trip between the server's and the client's CPUs, measured once the
    /// run holds what it holds (idle CPUs polling or not); each cell's card reads it.
    pub round_trip: Option<crate::bench::record::costs::RoundTrip>,
    /// The run's Prometheus (`prometheus = true`): where each model and the load serve their
    /// metrics for it.
    pub metrics: Option<std::sync::Arc<super::Watch>>,
}

impl Placement {
    /// Whether the server runs on another host.
    pub fn remote_server(&self) -> bool {
        self.hosts.as_ref().is_some_and(|h| h.server.is_some())
    }

    /// Where `target` of `x` runs: on `threaded_cpus` where it serves on more than one thread
    /// and the scenario sets them, else as every target does.
    pub fn of_target(&self, x: &Experiment, target: &Target) -> Placement {
        let wide = self
            .threaded_cpus
            .as_ref()
            .filter(|_| !self.remote_server())
            .filter(|cpus| target_threads(x, target, cpus) > 1);
        match wide {
            Some(cpus) => Placement {
                server_cpus: cpus.clone(),
                ..self.clone()
            },
            None => self.clone(),
        }
    }
}

/// The threads that serve requests in `target` of `x` on `cpus`: a peer's, or a model's
/// workers and the threads it runs beside them (io-threads' executor).
fn target_threads(x: &Experiment, target: &Target, cpus: &str) -> usize {
    match target {
        Target::Peer(p) => {
            let n = crate::units::parse_cpus(cpus).map_or(1, |c| c.len());
            crate::bench::record::peer::Peer::parse(p).map_or(1, |p| p.threads(x.workers, n))
        }
        Target::External(_) => 1,
        t => {
            let entry = t.model_entry().expect("a model target");
            let Ok((model, args)) = crate::bench::record::serve_line(entry, x, "127.0.0.1", cpus) else {
                return 1;
            };
            let n = crate::units::parse_cpus(cpus).map_or(1, |c| c.len());
            model.worker_count(args.workers, n) + model.extra_threads
        }
    }
}

/// Where the server and the client run. On this machine: the server on `server_cpus`, the
/// client on `client_cpus` with `client_threads` engine threads; by default, on 2 cores, CPU 0
/// and CPU 1 with one thread, and on more cores the first half for the server and the rest for
/// the client, a thread per CPU. On a server host the server may use all its CPUs.
pub(in crate::bench) fn placement(sc: &Scenario, hosts: Option<Hosts>) -> Placement {
    let cpus = sys::affinity::get().unwrap_or_else(|_| vec![0]);
    let (s, client_cpus, client_threads) = default_split(&cpus, sc);
    let remote_server = hosts.as_ref().and_then(|h| h.server.as_ref().map(|_| h));
    let server_cpus = match (&sc.server_cpus, remote_server) {
        (Some(_), _) | (None, None) => s,
        (None, Some(h)) => {
            let cores = h.machines.first().and_then(|m| m.cores).unwrap_or(1);
            format!("0-{}", cores.saturating_sub(1))
        }
    };
    let server_addr = sc
        .server_addr
        .clone()
        .or_else(|| remote_server.and_then(|h| h.server_addr.clone()))
        .unwrap_or_else(|| "127.0.0.1".into());
    let threaded_cpus = sc.threaded_cpus.as_ref().map(|c| match c.as_str() {
        "all" => cpus.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(","),
        list => list.to_string(),
    });
    Placement {
        server_cpus,
        threaded_cpus,
        client_cpus,
        client_threads,
        server_addr,
        hosts: hosts.map(std::sync::Arc::new),
        round_trip: None,
        metrics: None,
    }
}

/// How many CPUs bench gives the server on this machine when a scenario does not say.
pub fn default_server_cpus() -> usize {
    let cpus = sys::affinity::get().unwrap_or_else(|_| vec![0]);
    match cpus.len() {
        0..=2 => 1,
        n => n / 2,
    }
}

/// The CPUs this machine gives the server and the client, and the client's threads: the
/// scenario's `server_cpus`, `client_cpus`, `client_threads` where it sets them; otherwise on
/// 2 CPUs one each and one client thread (as the seeds' comparisons assume), on more the first
/// half for the server and the rest for the client, one engine thread per client CPU.
pub fn default_split(cpus: &[usize], sc: &Scenario) -> (String, String, usize) {
    let list = |c: &[usize]| c.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    let (s, c) = match cpus.len() {
        0 => ("0".to_string(), "0".to_string()),
        1 => (list(cpus), list(cpus)),
        2 => (cpus[0].to_string(), cpus[1].to_string()),
        n => (list(&cpus[..n / 2]), list(&cpus[n / 2..])),
    };
    let client_cpus = sc.client_cpus.clone().unwrap_or(c);
    let threads = if cpus.len() > 2 {
        crate::units::parse_cpus(&client_cpus).map_or(1, |c| c.len().max(1))
    } else {
        1
    };
    (
        sc.server_cpus.clone().unwrap_or(s),
        client_cpus,
        sc.client_threads.unwrap_or(threads),
    )
}

/// Where the server and the client run, in words.
pub(in crate::bench) fn placement_text(place: &Placement) -> String {
    let server = match place.hosts.as_ref().and_then(|h| h.server.as_ref()) {
        Some(p) => format!(
            "server on {} ({}) CPUs {}",
            p.host, place.server_addr, place.server_cpus
        ),
        None => format!("server on CPU {}", place.server_cpus),
    };
    let server = match place.threaded_cpus.as_ref().filter(|_| !place.remote_server()) {
        Some(wide) => format!("{server} (those serving on several threads on CPUs {wide})"),
        None => server,
    };
    let client = match place.hosts.as_ref().filter(|h| !h.clients.is_empty()) {
        Some(h) => format!("client on {} (every CPU there)", h.clients.join(", ")),
        None => format!(
            "client on CPU {} ({} thread{})",
            place.client_cpus,
            place.client_threads,
            if place.client_threads == 1 { "" } else { "s" }
        ),
    };
    format!("{server}, {client}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_splits_bigger_machines_and_keeps_two_cores_as_they_were() {
        let base = "name = \"x\"\ndescription = \"d\"\n";
        let exp = "[[experiment]]\nname = \"e\"\nproto = \"http\"\nmodels = [\"epoll\"]\nconnections = [1]\nduration = \"1s\"\n";
        let sc = crate::bench::record::scenario::parse(&format!("{base}{exp}"), "f").unwrap();
        let split = default_split;
        assert_eq!(split(&[0, 1], &sc), ("0".into(), "1".into(), 1));
        assert_eq!(split(&[0], &sc), ("0".into(), "0".into(), 1));
        let cpus: Vec<usize> = (0..16).collect();
        assert_eq!(
            split(&cpus, &sc),
            ("0,1,2,3,4,5,6,7".into(), "8,9,10,11,12,13,14,15".into(), 8)
        );
        let set = crate::bench::record::scenario::parse(
            &format!("{base}server_cpus = \"0-3\"\nclient_cpus = \"4,5\"\n{exp}"),
            "f",
        )
        .unwrap();
        assert_eq!(split(&cpus, &set), ("0-3".into(), "4,5".into(), 2));
    }
}
