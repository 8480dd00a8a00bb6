//! A cell's figures: derived from the load's document and the server tree's samples at the
//! window's ends, and from the server's counters (its stats line) once it has stopped.

use std::time::Duration;

use serde_json::Value;

use super::results::Figures;
use crate::load::tally::jain;
use crate::sys::procfs::ProcSample;

#[allow(clippy::too_many_arguments)]
pub(super) fn figures(
    load: &Value,
    conns: usize,
    base: &ProcSample,
    peak: &ProcSample,
    begin: &ProcSample,
    end: &ProcSample,
    span: Duration,
    watched: bool,
) -> Figures {
    let f64_at = |v: &Value| v.as_f64().unwrap_or(0.0);
    let requests = load["requests"].as_u64().unwrap_or(0);
    let window = f64_at(&load["duration_s"]).max(1e-9);
    // The server's CPU time over the window: the samples' difference, scaled from their span to
    // the window's length.
    let scale = if span.is_zero() {
        1.0
    } else {
        window / span.as_secs_f64()
    };
    let cpu = end.cpu().saturating_sub(begin.cpu()).as_secs_f64() * scale;
    Figures {
        throughput_rps: f64_at(&load["throughput_rps"]),
        requests,
        // A server that answers 4xx / 5xx is not serving: those count as errors here.
        errors: load["error_total"].as_u64().unwrap_or(0) + load["non_2xx_3xx"].as_u64().unwrap_or(0),
        p50_us: f64_at(&load["latency_us"]["p50"]),
        p99_us: f64_at(&load["latency_us"]["p99"]),
        p999_us: f64_at(&load["latency_us"]["p999"]),
        server_cpu_us_per_req: if watched && requests > 0 {
            cpu * 1e6 / requests as f64
        } else {
            0.0
        },
        server_cpu_cores: if watched { cpu / window } else { 0.0 },
        client_cpu_util: f64_at(&load["client_cpu_utilization"]),
        client_bound: load["client_saturated"].as_bool().unwrap_or(false),
        mem_per_conn_kib: peak.rss.saturating_sub(base.rss) as f64 / 1024.0 / conns.max(1) as f64,
        kernel_tcp_kib_per_conn: 0.0,
        peak_rss_mib: peak.rss as f64 / (1 << 20) as f64,
        peak_threads: peak.threads,
        context_switches: ((end.voluntary_switches + end.involuntary_switches)
            .saturating_sub(begin.voluntary_switches + begin.involuntary_switches) as f64
            * scale) as u64,
        jain_workers: None,
        jain_conns: load["fairness"]["jain"].as_f64(),
        starved_conns: load["fairness"]["starved"].as_u64().unwrap_or(0),
        useful_ratio: None,
        syscalls_per_req: None,
        lost_races_per_accept: None,
        established: load["connections"]["established"].as_u64().unwrap_or(0),
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
