//! A cell's figures: derived from the load's document and the server tree's samples at the
//! window's ends, and from the server's counters (its stats line) once it has stopped.

use std::time::Duration;

use super::cell::{ClassFigure, CpuSource, Figures, LockFigures, StreamFigures};
use super::why::Why;
use crate::load::{jain, Document};
use crate::server::lines::StatsLine;
use crate::server::stats::Counter;
use crate::sys::machine::CpuTimes;
use crate::sys::procfs::ProcSample;

/// The server tree's samples a cell's figures come from.
pub(in crate::bench) struct Samples<'a> {
    /// Before any load (PSS included).
    pub base: &'a ProcSample,
    /// The largest RSS and thread count seen while loaded.
    pub peak: &'a ProcSample,
    /// The window's ends, and the time between them.
    pub begin: &'a ProcSample,
    pub end: &'a ProcSample,
    pub span: Duration,
    /// The server's CPUs at the window's ends (where they are this machine's).
    pub cpus: Option<(CpuTimes, CpuTimes)>,
    /// The harness's own CPU time on the server's CPUs over the window, where it ran there.
    pub harness: Option<Duration>,
}

/// The cell's figures. `cpu`: how the server's CPU was sampled; `None` when it was not (a
/// server muxlab does not run), and then every server figure is `None`.
pub(in crate::bench) fn figures(doc: &Document, s: &Samples, cpu: Option<CpuSource>) -> Figures {
    let r = &doc.results;
    let requests = r.requests;
    let window = r.duration_s.max(1e-9);
    // The server's CPU time over the window: the samples' difference, scaled from their span to
    // the window's length.
    let scale = if s.span.is_zero() {
        1.0
    } else {
        window / s.span.as_secs_f64()
    };
    let watched = cpu.is_some();
    let cpu_s = s.end.cpu().saturating_sub(s.begin.cpu()).as_secs_f64() * scale;
    // Context switches cover the window only if the same threads lived at both ends.
    let same_threads = s.begin.thread_set.is_some() && s.begin.thread_set == s.end.thread_set;
    let switches = (s.end.voluntary_switches + s.end.involuntary_switches)
        .saturating_sub(s.begin.voluntary_switches + s.begin.involuntary_switches);
    // Per connection that came up; a tree whose data shrank measured no growth (`None`).
    let established = r.connections.established;
    let pss_growth = match (s.base.pss, s.end.pss) {
        (Some(b), Some(e)) if watched && e >= b && established > 0 => {
            Some((e - b) as f64 / 1024.0 / established as f64)
        }
        _ => None,
    };
    Figures {
        throughput_rps: r.throughput_rps,
        requests,
        // A server that answers 4xx / 5xx is not serving: those count as errors here.
        errors: r.error_total + r.non_2xx_3xx,
        p50_us: r.latency_us.p50.filter(|_| r.requests > 0),
        p99_us: r.latency_us.p99.filter(|_| r.requests > 0),
        p999_us: r.latency_us.p999.filter(|_| r.requests > 0),
        server_cpu_us_per_req: (watched && requests > 0).then(|| cpu_s * 1e6 / requests as f64),
        server_cpu_cores: watched.then_some(cpu_s / window),
        cpu_source: cpu,
        client_cpu_util: r.client_cpu_utilization,
        client_bound: r.client_saturated,
        mem_per_conn_kib: pss_growth,
        kernel_tcp_kib_per_conn: 0.0,
        kernel_slab_kib_per_conn: None,
        peak_rss_mib: watched.then_some(s.peak.rss as f64 / (1 << 20) as f64),
        peak_threads: watched.then_some(s.peak.threads),
        context_switches: (watched && same_threads).then_some((switches as f64 * scale) as u64),
        jain_workers: None,
        jain_conns: r.fairness.jain,
        // Event streams: a connection is starved when no event came to it (its stream may
        // rightly still be going at the window's end).
        starved_conns: r.sse.as_ref().map_or(r.fairness.starved as u64, |s| s.starved),
        useful_ratio: None,
        syscalls_per_req: None,
        lost_races_per_accept: None,
        locks: None,
        hops_per_req: None,
        established,
        steal_pct: None,
        predicted: None,
        unpredicted: None,
        capacity: None,
        why: watched.then(|| why(doc, s, scale)),
        streams: r.sse.as_ref().map(|e| StreamFigures {
            events: e.events,
            events_per_s: e.events_per_s,
            lost: e.lost,
            cut: e.cut,
            ttfe_p50_us: e.ttfe.p50,
            ttfe_p99_us: e.ttfe.p99,
            gap_p50_us: e.gap.p50,
            gap_p99_us: e.gap.p99,
            window_s: window,
            first_events: Some(e.ttfe.count),
            gaps: Some(e.gap.count),
            server_events: None,
            server_late: None,
        }),
        classes: doc
            .config
            .classes
            .iter()
            .filter_map(|c| {
                let k = r.classes.get(&c.name)?;
                Some(ClassFigure {
                    name: c.name.clone(),
                    path: c.path.clone(),
                    requests: k.requests,
                    errors: k.errors,
                    refused: k.non_2xx_3xx,
                    p50_us: k.latency_us.p50,
                    p99_us: k.latency_us.p99,
                    p999_us: k.latency_us.p999,
                })
            })
            .collect(),
    }
}

/// Where the time went, as measured at the window's two edges.
fn why(doc: &Document, s: &Samples, scale: f64) -> Why {
    let r = &doc.results;
    let hz = crate::sys::procfs::ticks_per_second();
    let ticks = |a: u64, b: u64| Some(b.saturating_sub(a) as f64 / hz * scale);
    let sched = match (s.begin.sched, s.end.sched) {
        // Over the window only if the same threads lived at both ends.
        (Some(a), Some(b)) if s.begin.thread_set.is_some() && s.begin.thread_set == s.end.thread_set => Some((a, b)),
        _ => None,
    };
    let open = r.open_loop.as_ref();
    let cpus = s.cpus.filter(|(a, b)| b.total > a.total);
    let of_cpus = |f: fn(&CpuTimes) -> u64| cpus.and_then(|(a, b)| ticks(f(&a), f(&b)));
    Why {
        latency_mean_us: r.latency_us.mean,
        open_loop: open.is_some(),
        offered_completed: crate::load::limit::completed_schedule(r),
        on_cpu_s: sched.map(|(a, b)| b.run_ns.saturating_sub(a.run_ns) as f64 / 1e9 * scale),
        runq_wait_s: sched.map(|(a, b)| b.wait_ns.saturating_sub(a.wait_ns) as f64 / 1e9 * scale),
        slices: sched.map(|(a, b)| (b.slices.saturating_sub(a.slices) as f64 * scale) as u64),
        user_s: ticks(s.begin.user_ticks, s.end.user_ticks),
        system_s: ticks(s.begin.system_ticks, s.end.system_ticks),
        cpus_busy_s: of_cpus(|c| c.busy),
        cpus_softirq_s: of_cpus(|c| c.softirq),
        cpus_steal_s: of_cpus(|c| c.steal),
        cpus_total_s: of_cpus(|c| c.total),
        harness_s: s.harness.map(|h| h.as_secs_f64() * scale),
        client_cpu_us: (r.requests > 0 && doc.outcome().client_cpu > std::time::Duration::ZERO)
            .then(|| doc.outcome().client_cpu.as_secs_f64() * 1e6 / r.requests as f64),
        ..Why::default()
    }
}

/// The figures that come from the server's counters (its stats line when it stops).
/// `alone`: the server served this cell's load only, so its time per request is the cell's.
pub(in crate::bench) fn counters(f: &mut Figures, stats: &StatsLine, alone: bool) {
    let total = |c: Counter| stats.totals.get(c);
    let ratio = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) if b > 0 => Some(a as f64 / b as f64),
        _ => None,
    };
    let per_worker: Vec<u64> = stats
        .per_worker
        .iter()
        .filter_map(|w| w.get(Counter::Requests))
        .collect();
    f.jain_workers = (per_worker.len() > 1).then(|| jain(&per_worker)).flatten();
    f.useful_ratio = ratio(total(Counter::Useful), total(Counter::Events));
    f.syscalls_per_req = ratio(total(Counter::Syscalls), total(Counter::Requests));
    f.lost_races_per_accept = ratio(total(Counter::AcceptLost), total(Counter::Accepted));
    let commands = total(Counter::KeyedExecuted);
    f.hops_per_req = ratio(total(Counter::KeyedHops), commands);
    f.locks = match (total(Counter::KeyedLocks), commands) {
        (Some(locks), Some(n)) if locks > 0 && n > 0 => {
            let timed = total(Counter::KeyedLockTimed).filter(|t| *t > 0);
            let mean = |c: Counter| Some(total(c)? as f64 / timed? as f64 / 1e3);
            Some(LockFigures {
                per_req: locks as f64 / n as f64,
                contended: total(Counter::KeyedLockContended).unwrap_or(0) as f64 / locks as f64,
                hold_us: mean(Counter::KeyedLockHeldNs),
                wait_us: mean(Counter::KeyedLockWaitedNs),
            })
        }
        _ => None,
    };
    if let Some(st) = f.streams.as_mut() {
        st.server_events = total(Counter::SseEvents);
        st.server_late = total(Counter::SseLate);
    }
    if let Some(w) = f.why.as_mut().filter(|_| alone) {
        w.server_requests = total(Counter::TimedRequests);
        w.residence_ns = total(Counter::ResidenceNs);
        w.wait_inside_ns = total(Counter::WaitInsideNs);
        let (most, fewest) = (per_worker.iter().max(), per_worker.iter().min());
        w.imbalance = match (most, fewest) {
            (Some(&m), Some(&f)) if per_worker.len() > 1 && f > 0 => Some(m as f64 / f as f64),
            _ => None,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(cpu_ms: u64, switches: u64, threads: Option<u64>, pss: Option<u64>) -> ProcSample {
        ProcSample {
            cpu: Duration::from_millis(cpu_ms),
            voluntary_switches: switches,
            thread_set: threads,
            pss,
            ..Default::default()
        }
    }

    /// A window of one second whose peak is its end.
    fn over_a_second<'a>(base: &'a ProcSample, begin: &'a ProcSample, end: &'a ProcSample) -> Samples<'a> {
        Samples {
            base,
            peak: end,
            begin,
            end,
            span: Duration::from_secs(1),
            cpus: None,
            harness: None,
        }
    }

    /// A run of a second that completed 1,000 requests over `established` of 4 connections.
    fn load_of(established: usize) -> Document {
        let spec = crate::load::resolve(crate::load::LoadArgs::new(
            crate::load::Target::parse("http://127.0.0.1:1/").unwrap(),
            4,
            Default::default(),
        ))
        .unwrap();
        let mut o = crate::load::Outcome::empty(4, false);
        o.elapsed = Duration::from_secs(1);
        o.tally.requests = 1000;
        o.tally.never_connected = (4 - established) as u64;
        Document::new(&spec, &o)
    }

    fn load() -> Document {
        load_of(4)
    }

    #[test]
    fn server_figures_come_from_the_window_and_are_none_where_nothing_was_sampled() {
        let base = sample(0, 0, Some(1), Some(1 << 20));
        let (begin, end) = (sample(100, 10, Some(7), None), sample(600, 510, Some(7), Some(3 << 20)));
        let s = over_a_second(&base, &begin, &end);
        let f = figures(&load(), &s, Some(CpuSource::Cgroup));
        assert_eq!(f.server_cpu_us_per_req, Some(500.0));
        assert_eq!(f.server_cpu_cores, Some(0.5));
        assert_eq!(f.context_switches, Some(500));
        assert_eq!(
            f.mem_per_conn_kib,
            Some(512.0),
            "PSS growth from before the load, per connection"
        );
        // Data that shrank measured no growth: not a figure of 0.
        let shrunk = sample(600, 510, Some(7), Some(0));
        let f = figures(&load(), &over_a_second(&base, &begin, &shrunk), Some(CpuSource::Cgroup));
        assert_eq!(f.mem_per_conn_kib, None);
        // Per connection that came up: 2 of 4 established.
        let f = figures(&load_of(2), &s, Some(CpuSource::Cgroup));
        assert_eq!(f.mem_per_conn_kib, Some(1024.0));
        let f = figures(&load(), &s, None);
        assert_eq!(
            (
                f.server_cpu_us_per_req,
                f.server_cpu_cores,
                f.context_switches,
                f.mem_per_conn_kib
            ),
            (None, None, None, None)
        );
    }

    #[test]
    fn context_switches_are_not_measured_when_threads_came_or_went_in_the_window() {
        let base = sample(0, 0, Some(1), Some(0));
        let (begin, end) = (sample(0, 10, Some(7), None), sample(500, 900, Some(8), None));
        let s = over_a_second(&base, &begin, &end);
        let f = figures(&load(), &s, Some(CpuSource::ProcessClocks));
        assert_eq!(f.context_switches, None);
        assert_eq!(f.mem_per_conn_kib, None, "no PSS at the window's end");
        assert!(f.server_cpu_us_per_req.is_some());
    }
}
