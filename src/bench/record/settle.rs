//! What the record knows of a cell beside its figures ([`settle`]): where its target ran, where
//! the run did not record it (results written before runs did), whether its target does the
//! experiment's work at all, and that a latency nothing was measured for is none (not 0).

use super::cell::Cell;
use super::environment::Environment;
use super::placed::Placed;
use super::scenario::peer::Peer;
use super::scenario::Scenario;

/// Gives `cells` what the record knows of them beside their figures: where each ran, where the
/// run did not record it (from `env`: a target that served on as many CPUs as `threaded_cpus`
/// hold ran there, the others on `server_cpus`), and whether its target does none of its
/// experiment's work (a peer that serves a fixed body beside designs doing `work`).
pub fn settle(scenario: &Scenario, env: &Environment, cells: &mut [Cell]) {
    for c in cells {
        settle_one(scenario, env, c);
    }
}

/// [`settle`] for one cell. A latency of a cell that completed no request was not measured,
/// whatever an older version wrote for it (0).
pub fn settle_one(scenario: &Scenario, env: &Environment, c: &mut Cell) {
    if c.figures.requests == 0 {
        let f = &mut c.figures;
        (f.p50_us, f.p99_us, f.p999_us) = (None, None, None);
    }
    if c.placed.is_none() && !env.server_cpus.is_empty() {
        let on = c.figures.why.as_ref().and_then(|w| w.server_cpus);
        let threaded = env
            .threaded_cpus
            .clone()
            .filter(|_| on.is_some() && on == env.threaded_cpu_count() && on != env.server_cpu_count());
        c.placed = Some(Placed {
            server_cpus: threaded.unwrap_or_else(|| env.server_cpus.clone()),
            client_cpus: env.client_cpus.clone(),
        });
    }
    let x = scenario.experiments.iter().find(|x| x.name == c.experiment);
    c.does_no_work =
        x.is_some_and(|x| x.peers.contains(&c.target) && Peer::parse(&c.target).is_ok_and(|p| p.idle_in(x)));
}
