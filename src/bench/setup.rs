//! Where a run's server and client go and what the run holds for its length: the CPUs and
//! hosts (placement), the machine as the results record it, loopback steered and idle CPUs
//! polling (released when the run ends).

use super::*;

/// Where the server and the client run. On this machine: the server on `server_cpus`, the
/// client on `client_cpus` with `client_threads` engine threads; by default, on 2 cores, CPU 0
/// and CPU 1 with one thread, and on more cores the first half for the server and the rest for
/// the client, a thread per CPU. On a server host the server may use all its CPUs.
pub(super) fn placement(sc: &Scenario, hosts: Option<hosts::Hosts>) -> Placement {
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

/// The machine and the placement of a run.
pub(super) fn environment(place: &Placement) -> Environment {
    let (kernel, cpu_model) = sys::procfs::machine();
    // What a syscall and a context switch cost on the server's CPU, for the verdicts' why
    // (measured only where the server runs on this machine).
    let unit_costs = (!place.remote_server())
        .then(|| crate::units::parse_cpus(&place.server_cpus).ok()?.first().copied())
        .flatten()
        .and_then(super::unit_costs::measure);
    let (slice, slice_from) = crate::queueing::base_slice();
    Environment {
        kernel,
        cpu_model,
        unit_costs,
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        server_cpus: place.server_cpus.clone(),
        threaded_cpus: place.threaded_cpus.clone().filter(|_| !place.remote_server()),
        client_cpus: place.client_cpus.clone(),
        client_threads: place.client_threads,
        server_addr: place.server_addr.clone(),
        hosts: place.hosts.as_ref().map(|h| results::HostsEnvironment {
            server: h.server.as_ref().map(|p| p.host.clone()),
            clients: h.clients.clone(),
            machines: h.machines.clone(),
        }),
        muxlab_version: env!("CARGO_PKG_VERSION").into(),
        // The binary's own origin, fixed when it was built: not the git state of wherever it
        // runs.
        git_revision: crate::origin::revision(),
        build_commit: crate::origin::commit().map(String::from),
        build_dirty: crate::origin::dirty(),
        steer_rx: None,
        cpu_idle: None,
        sched_slice_us: Some(slice.as_secs_f64() * 1e6),
        round_trip: None,
        sched_slice_from: Some(slice_from),
    }
}

/// Where the server and the client run, in words.
pub(super) fn placement_text(place: &Placement) -> String {
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

/// What a run holds for its length: loopback steered (`steer_rx`), idle CPUs polling. Dropped
/// at the end (or on an error), which puts both back.
pub(super) struct Held {
    _steered: Option<steer::Steered>,
    _polling: Option<sys::cpuidle::PollingIdle>,
}

/// The round trip between the first server and client CPUs, where both are this machine's
/// and apart.
fn round_trip(place: &Placement) -> Option<crate::bench::record::costs::RoundTrip> {
    if place.remote_server() || place.hosts.as_ref().is_some_and(|h| !h.clients.is_empty()) {
        return None;
    }
    let first = |cpus: &str| crate::units::parse_cpus(cpus).ok()?.first().copied();
    let (server, client) = (first(&place.server_cpus)?, first(&place.client_cpus)?);
    (server != client)
        .then(|| super::unit_costs::round_trip(server, client))
        .flatten()
}

/// Takes what the run holds, records it in `env` and says it in `notes`.
pub(super) fn hold(
    sc: &Scenario,
    opts: &Options,
    place: &Placement,
    env: &mut Environment,
    notes: &mut Vec<String>,
) -> Result<Held, Error> {
    if place.server_cpus == place.client_cpus && place.hosts.is_none() {
        notes.push("only one CPU is available, so server and client share it; compare ratios only".into());
    }
    let steered = match sc.steer_rx {
        true => Some(steer::Steered::apply(&place.client_cpus)?),
        false => None,
    };
    if let Some(s) = &steered {
        env.steer_rx = Some(s.said.clone());
        notes.push(s.said.clone());
    }
    // Idle CPUs poll, so a wake-up costs the waker no hypervisor exit (see `sys::cpuidle`).
    let here = if place.remote_server() {
        " on this machine (not the server's host)"
    } else {
        ""
    };
    let (polling, idle) = match opts.deep_idle {
        true => (None, "halt (--deep-idle)".to_string()),
        false => match sys::cpuidle::PollingIdle::hold() {
            Ok(p) => (
                Some(p),
                format!("poll{here} (/dev/cpu_dma_latency 0 held for the run; --deep-idle to let them halt)"),
            ),
            Err(e) => (None, format!("halt (cannot make them poll: {e})")),
        },
    };
    notes.push(format!("idle CPUs {idle}"));
    env.cpu_idle = Some(idle);
    // The loopback round trip between the server's and the client's CPUs, idle as the run keeps
    // them (measured here, after the hold): the least a request's time outside the server is.
    env.round_trip = round_trip(place);
    Ok(Held {
        _steered: steered,
        _polling: polling,
    })
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
