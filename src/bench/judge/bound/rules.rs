//! What bound a cell: one label with its evidence, decided from the cell's own figures by named
//! thresholds, in this order — the client, others delaying the server (steal, or other tasks on
//! its CPUs while it waited in their run queues), the server's CPUs, the offered rate, one
//! request in flight at a time (the round trip), the server waiting on something other than
//! the CPU — and `unclear` where none fits, never a guess.

use serde::Serialize;

use super::client::client_limit;
use crate::bench::record::Cell;

/// The server used at least this share of its CPUs: they were the limit (a loop at 90 % has
/// work waiting for the CPU in every burst).
pub const SATURATED: f64 = 0.90;

/// The server used under this share of its CPUs while requests took more than [`WAITED`] times
/// its CPU per request: they waited on something else (a blocking call, a lock, a full pool).
pub const IDLE: f64 = 0.50;

/// Latency over this many times the CPU per request is time not spent computing.
pub const WAITED: f64 = 2.0;

/// Steal over this share of the server CPUs' time: the hypervisor ran something else.
pub const STEAL: f64 = 0.05;

/// Other tasks' time on the server's CPUs over this share of it: they shared the CPUs. Only
/// with [`DELAYED`]: a neighbour using CPU the server did not want delays nothing.
pub const OTHERS: f64 = 0.10;

/// The server's threads runnable but waiting for a CPU over this share of the window (summed
/// over its threads): it was delayed. Alone it is no interference (a design's own threads
/// queue behind each other: a thread per connection at 100 connections waits 96 times its
/// window on a quiet machine); with [`OTHERS`] it is.
pub const DELAYED: f64 = 0.10;

/// What bound a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    Client,
    Interference,
    ServerCpu,
    ServerKernel,
    Offered,
    /// One request in flight at a time (a closed loop of one connection): each waits a whole
    /// round trip, and the server idles between them.
    RoundTrip,
    ServerWaiting,
    Unclear,
}

impl Bound {
    pub fn name(self) -> &'static str {
        match self {
            Bound::Client => "client",
            Bound::Interference => "interference",
            Bound::ServerCpu => "server-cpu",
            Bound::ServerKernel => "server-kernel",
            Bound::Offered => "offered",
            Bound::RoundTrip => "round-trip",
            Bound::ServerWaiting => "server-waiting",
            Bound::Unclear => "unclear",
        }
    }

    /// Whether a cell so bound says something of the server's throughput and latency.
    pub fn speaks_for_the_server(self) -> bool {
        !matches!(self, Bound::Client | Bound::Interference)
    }
}

/// The label and the figures that decided it, in words.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundBy {
    pub bound: Bound,
    pub evidence: String,
}

/// Whether steal (a `steal` share of the server CPUs' time, `busy` of it used) delayed the
/// server enough to bound the cell. A hypervisor steals only from a CPU that wanted to run, so
/// the share of the wanted time it took is `steal ÷ (busy + steal)`. A server using at least
/// [`IDLE`] of its CPUs lost capacity in that proportion; one mostly sleeping lost only that
/// share of its own CPU per request, which bounds nothing unless it is over [`STEAL`] of a
/// request's latency (a loop sleeping 1 ms per request on 95 µs of CPU, 6 % stolen, lost some
/// 60 µs of 2.4 ms: still server-waiting).
fn stole_from_the_server(c: &Cell, steal: f64, busy: f64) -> bool {
    let f = &c.figures;
    let used = f
        .server_cpu_cores
        .zip(f.why.as_ref().and_then(|w| w.server_cpus))
        .map(|(cores, n)| cores / n.max(1) as f64);
    if used.is_none_or(|u| u >= IDLE) {
        return true;
    }
    let taken = steal / (busy + steal).max(1e-12);
    let latency = f.why.as_ref().and_then(|w| w.latency_mean_us);
    match (f.server_cpu_us_per_req, latency) {
        (Some(cpu), Some(lat)) if lat > 0.0 => cpu * taken / (1.0 - taken).max(1e-3) > STEAL * lat,
        _ => true,
    }
}

/// What bound cell `c` (`None`: no server figures to say it from, as for a peer sampled nowhere).
pub fn of(c: &Cell) -> Option<BoundBy> {
    let f = &c.figures;
    let w = f.why.as_ref()?;
    let by = |bound, evidence: String| Some(BoundBy { bound, evidence });
    // The client's limit, as the one definition has it (`load::limit`, Little's law included).
    if let Some(limit) = client_limit(c) {
        let evidence = match limit {
            crate::load::limit::ClientLimit::Busy(u) => format!("the client's CPUs {:.0}% busy", u * 100.0),
            other => other.said(),
        };
        return by(Bound::Client, evidence);
    }
    if let (Some(total), Some(busy)) = (w.cpus_total_s, w.cpus_busy_s) {
        let steal = w.cpus_steal_s.unwrap_or(0.0) / total;
        if steal > STEAL && stole_from_the_server(c, steal, busy / total) {
            return by(
                Bound::Interference,
                format!("steal {:.0}% of the server CPUs' time", steal * 100.0),
            );
        }
        // The window's length in CPU-seconds is `total`; the server's own share of it is its
        // CPU use (cores × the window), the rest of the busy time is other tasks'.
        let window_s = total / w.server_cpus.unwrap_or(1).max(1) as f64;
        // The harness's own sampling, which runs there, is not another task's.
        let own = f.server_cpu_cores.map_or(0.0, |cores| cores * window_s) + w.harness_s.unwrap_or(0.0);
        let others = (busy - own).max(0.0) / total;
        let waited = w.runq_wait_s.map(|s| s / window_s);
        if let Some(waited) = waited.filter(|q| others > OTHERS && *q > DELAYED) {
            return by(
                Bound::Interference,
                format!(
                    "delayed by other tasks: at least {:.0}% (other tasks used {:.0}% of the server CPUs while the server's threads waited {:.0}% of the window for one)",
                    others.min(waited) * 100.0,
                    others * 100.0,
                    waited * 100.0
                ),
            );
        }
    }
    let used = f
        .server_cpu_cores
        .zip(w.server_cpus)
        .map(|(cores, n)| cores / n.max(1) as f64);
    if let Some(u) = used.filter(|u| *u >= SATURATED) {
        let (user, system) = (w.user_s.unwrap_or(0.0), w.system_s.unwrap_or(0.0));
        let (bound, share) = match system > user {
            true => (
                Bound::ServerKernel,
                format!("system time {:.0}% of it", system / (user + system) * 100.0),
            ),
            false => (
                Bound::ServerCpu,
                format!("user time {:.0}% of it", user / (user + system).max(1e-12) * 100.0),
            ),
        };
        return by(bound, format!("the server used {:.0}% of its CPUs, {share}", u * 100.0));
    }
    if w.open_loop && w.offered_completed == Some(true) {
        return by(
            Bound::Offered,
            format!(
                "an open loop that completed what it scheduled, the server at {}",
                used.map_or("–".into(), |u| format!("{:.0}% of its CPUs", u * 100.0))
            ),
        );
    }
    // One request in flight, no waiting work: the loop is its round trip.
    let one = w.closed_no_think && w.connections * w.per_connection.unwrap_or(1) == 1;
    if one && w.work_sleep_us.is_none_or(|s| s <= 0.0) && f.streams.is_none() {
        return by(
            Bound::RoundTrip,
            format!(
                "one request in flight at a time: each waits a whole round trip{} while the server is at {}",
                w.round_trip_us.map_or(String::new(), |rt| format!(
                    " (the loopback round trip alone is {rt:.1} µs here)"
                )),
                used.map_or("–".into(), |u| format!("{:.0}% of its CPUs", u * 100.0))
            ),
        );
    }
    if let (Some(u), Some(cpu), Some(mean)) = (used, f.server_cpu_us_per_req, w.latency_mean_us) {
        if u < IDLE && mean > WAITED * cpu {
            return by(
                Bound::ServerWaiting,
                format!(
                    "the server used {:.0}% of its CPUs while requests took {:.0} µs for {:.1} µs of its CPU each",
                    u * 100.0,
                    mean,
                    cpu
                ),
            );
        }
    }
    by(Bound::Unclear, "no threshold fits: none is guessed".into())
}
