//! What a run holds for its length ([`Held`]: loopback steered and idle CPUs polling,
//! released when the run ends), and the machine and the placement as the results record them
//! (`environment`).

use super::placement::Placement;
use super::steer;
use crate::bench::record::scenario::Scenario;
use crate::bench::record::{Environment, Error};
use crate::bench::Options;
use crate::sys;

/// The machine and the placement of a run.
pub(in crate::bench) fn environment(place: &Placement) -> Environment {
    let (kernel, cpu_model) = sys::machine::machine();
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
        hosts: place.hosts.as_ref().map(|h| crate::bench::record::HostsEnvironment {
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

/// What a run holds for its length: loopback steered (`steer_rx`), idle CPUs polling. Dropped
/// at the end (or on an error), which puts both back.
pub(in crate::bench) struct Held {
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
pub(in crate::bench) fn hold(
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
