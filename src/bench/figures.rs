//! A cell's figures: derived from the load's document and the server tree's samples at the
//! window's ends, and from the server's counters (its stats line) once it has stopped.

use std::time::Duration;

use serde_json::Value;

use super::results::{CpuSource, Figures};
use crate::load::tally::jain;
use crate::sys::procfs::ProcSample;

/// The server tree's samples a cell's figures come from.
pub(super) struct Samples<'a> {
    /// Before any load (PSS included).
    pub base: &'a ProcSample,
    /// The largest RSS and thread count seen while loaded.
    pub peak: &'a ProcSample,
    /// The window's ends, and the time between them.
    pub begin: &'a ProcSample,
    pub end: &'a ProcSample,
    pub span: Duration,
}

/// The cell's figures. `cpu`: how the server's CPU was sampled; `None` when it was not (a
/// server muxlab does not run), and then every server figure is `None`.
pub(super) fn figures(load: &Value, s: &Samples, cpu: Option<CpuSource>) -> Figures {
    let f64_at = |v: &Value| v.as_f64().unwrap_or(0.0);
    let requests = load["requests"].as_u64().unwrap_or(0);
    let window = f64_at(&load["duration_s"]).max(1e-9);
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
    let established = load["connections"]["established"].as_u64().unwrap_or(0);
    let pss_growth = match (s.base.pss, s.end.pss) {
        (Some(b), Some(e)) if watched && e >= b && established > 0 => {
            Some((e - b) as f64 / 1024.0 / established as f64)
        }
        _ => None,
    };
    Figures {
        throughput_rps: f64_at(&load["throughput_rps"]),
        requests,
        // A server that answers 4xx / 5xx is not serving: those count as errors here.
        errors: load["error_total"].as_u64().unwrap_or(0) + load["non_2xx_3xx"].as_u64().unwrap_or(0),
        p50_us: f64_at(&load["latency_us"]["p50"]),
        p99_us: f64_at(&load["latency_us"]["p99"]),
        p999_us: f64_at(&load["latency_us"]["p999"]),
        server_cpu_us_per_req: (watched && requests > 0).then(|| cpu_s * 1e6 / requests as f64),
        server_cpu_cores: watched.then_some(cpu_s / window),
        cpu_source: cpu,
        client_cpu_util: f64_at(&load["client_cpu_utilization"]),
        client_bound: load["client_saturated"].as_bool().unwrap_or(false),
        mem_per_conn_kib: pss_growth,
        kernel_tcp_kib_per_conn: 0.0,
        peak_rss_mib: watched.then_some(s.peak.rss as f64 / (1 << 20) as f64),
        peak_threads: watched.then_some(s.peak.threads),
        context_switches: (watched && same_threads).then_some((switches as f64 * scale) as u64),
        jain_workers: None,
        jain_conns: load["fairness"]["jain"].as_f64(),
        starved_conns: load["fairness"]["starved"].as_u64().unwrap_or(0),
        useful_ratio: None,
        syscalls_per_req: None,
        lost_races_per_accept: None,
        established,
        steal_pct: None,
    }
}

/// The figures that come from the server's counters (its stats line when it stops).
pub(super) fn counters(f: &mut Figures, stats: &Value) {
    let t = &stats["totals"];
    let total = |k: &str| t[k].as_u64();
    let ratio = |a: Option<u64>, b: Option<u64>| match (a, b) {
        (Some(a), Some(b)) if b > 0 => Some(a as f64 / b as f64),
        _ => None,
    };
    let per_worker: Vec<u64> = stats["per_worker"]
        .as_array()
        .map(|w| w.iter().filter_map(|x| x["requests"].as_u64()).collect())
        .unwrap_or_default();
    f.jain_workers = (per_worker.len() > 1).then(|| jain(&per_worker)).flatten();
    f.useful_ratio = ratio(total("useful_events"), total("events"));
    f.syscalls_per_req = ratio(total("syscalls"), total("requests"));
    f.lost_races_per_accept = ratio(total("accept_lost"), total("accepted"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        }
    }

    fn load() -> Value {
        json!({"requests": 1000, "duration_s": 1.0, "connections": {"established": 4}})
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
        let mut half = load();
        half["connections"]["established"] = json!(2);
        let f = figures(&half, &s, Some(CpuSource::Cgroup));
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
