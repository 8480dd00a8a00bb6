//! Results of a load run: the summary a wrk or ab user reads at a glance, and the
//! self-describing JSON document of DESIGN.md.

use serde_json::{json, Value};

use std::time::Duration;

use super::pacing::Pacing;
use super::tally::Tally;
use super::{LoadConfig, Outcome, Payload, Shard};
use crate::sys;

/// When the client used more than this share of its threads' CPU, it may have been the bottleneck.
const SATURATED: f64 = 0.90;

/// `1234567` -> `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Microseconds, shown in the most readable unit.
pub fn fmt_us(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0}us")
    } else if us < 1e6 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// The machine, and where client and server may run.
pub fn environment(cfg: &LoadConfig) -> Value {
    let (kernel, cpu) = sys::procfs::machine();
    let server_pid = sys::procfs::listening_pid(cfg.target.addr.port()).filter(|_| cfg.target.addr.ip().is_loopback());
    json!({
        "kernel": kernel,
        "cpu_model": cpu,
        "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        "client_cpus": sys::procfs::cpus_allowed(sys::process::pid()),
        "server_pid": server_pid,
        "server_cpus": server_pid.and_then(sys::procfs::cpus_allowed),
    })
}

/// Client CPU use as a share of the time its threads had.
pub fn utilization(o: &Outcome) -> f64 {
    let secs = o.elapsed.as_secs_f64();
    if secs <= 0.0 || o.cpu_slots == 0 {
        return 0.0;
    }
    o.client_cpu.as_secs_f64() / (secs * o.cpu_slots as f64)
}

/// Whether the client may have been the bottleneck.
pub fn saturated(o: &Outcome) -> bool {
    utilization(o) > SATURATED
}

/// The flags of the run, as the JSON document records them.
fn config_json(cfg: &LoadConfig, o: &Outcome) -> Value {
    json!({
        "kind": cfg.target.kind.name(), "connections": cfg.connections, "threads": o.threads, "shards": o.shards,
        "shard": cfg.shard.map(|Shard(i, n)| format!("{i}/{n}")),
        "duration_s": cfg.duration.map(|d| d.as_secs_f64()), "requests": cfg.requests,
        "warmup_s": cfg.warmup.as_secs_f64(), "pacing": cfg.pacing.describe(),
        "rate": if let Pacing::Rate(r) = cfg.pacing { Some(r) } else { None },
        "think_s": if let Pacing::Think(d) = cfg.pacing { Some(d.as_secs_f64()) } else { None },
        "pipeline": cfg.pipeline, "close": cfg.close, "requests_per_conn": cfg.requests_per_conn,
        "timeout_s": cfg.timeout.as_secs_f64(),
        "bind": cfg.sources().iter().map(|a| a.to_string()).collect::<Vec<_>>(), "size": cfg.size,
        "method": cfg.method, "headers": cfg.headers, "body_bytes": cfg.payload.len(),
        "body_generated": matches!(cfg.payload, Payload::Generated(_)), "chunked": cfg.chunked,
        "connect_rate": cfg.connect_rate, "connect_first": cfg.connect_first,
    })
}

/// The JSON document of `--json`.
pub fn to_json(cfg: &LoadConfig, o: &Outcome) -> Value {
    let mut doc = json!({
        "tool": TOOL,
        "version": env!("CARGO_PKG_VERSION"),
        "target": cfg.target.url,
        "config": config_json(cfg, o),
        "environment": environment(cfg),
    });
    results_into(&mut doc, o);
    doc
}

/// What the document's `tool` key says.
pub const TOOL: &str = "muxlab load";

/// Writes the result keys of `o` into `doc` (replacing any there): everything but the
/// flags and the environment, ending with the lossless `interchange` form `merge` reads.
pub fn results_into(doc: &mut Value, o: &Outcome) {
    let t = &o.tally;
    let secs = o.elapsed.as_secs_f64();
    let rps = if secs > 0.0 { t.requests as f64 / secs } else { 0.0 };
    let util = utilization(o);
    let results = json!({
        "requests": t.requests,
        "sent": t.sent,
        "errors": t.errors_json(),
        "error_total": t.error_total(),
        "status_classes": t.status_json(),
        "non_2xx_3xx": t.non_2xx_3xx(),
        "duration_s": secs,
        "throughput_rps": rps,
        "latency_us": t.latency.summary_us(),
        "connect_latency_us": t.connect.summary_us(),
        "tls_handshake_us": t.tls_handshake.summary_us(),
        // established: open at some point (warm-up included), as the summary line says.
        "connections": {"requested": o.connections, "established": o.connections as u64 - t.never_connected,
            "connects_in_window": t.connects, "never_connected": t.never_connected,
            "connecting_s": o.connecting.as_secs_f64(), "unresolved_at_start": t.unresolved_at_start},
        "per_second": t.per_second,
        "fairness": {"jain": t.jain(), "connections": t.per_conn.len(), "starved": t.starved(),
            "min": t.per_conn.iter().min(), "max": t.per_conn.iter().max()},
        "bytes_in": t.bytes_in,
        "bytes_out": t.bytes_out,
        "client_cpu_s": o.client_cpu.as_secs_f64(),
        "client_cpu_per_request_us": if t.requests > 0 { o.client_cpu.as_secs_f64() * 1e6 / t.requests as f64 } else { 0.0 },
        "client_cpu_utilization": util,
        "client_saturated": util > SATURATED,
        "interrupted": o.interrupted,
    });
    let map = doc.as_object_mut().expect("a load document is an object");
    for k in [
        "uncorrected_latency_us",
        "send_lag_us",
        "offered_rps",
        "achieved_rps",
        "scheduled",
        "not_completed",
    ] {
        map.remove(k);
    }
    map.extend(results.as_object().expect("object").clone());
    if let Some(offered) = o.offered_rps {
        map.insert("uncorrected_latency_us".into(), t.uncorrected.summary_us());
        map.insert("send_lag_us".into(), t.send_lag.summary_us());
        map.insert("offered_rps".into(), json!(offered));
        map.insert("achieved_rps".into(), json!(rps));
        // Measured only where the window's schedule is known (a duration run): else null.
        map.insert("scheduled".into(), json!(t.scheduled));
        map.insert("not_completed".into(), json!(t.not_completed));
    }
    map.insert("interchange".into(), super::merge::to_value(o));
}

/// What the summary's first two lines say about the run's flags.
struct Heading {
    url: String,
    length: String,
    pacing: String,
    mode: String,
}

impl Heading {
    fn of(cfg: &LoadConfig) -> Heading {
        let length = match (cfg.duration, cfg.requests) {
            (Some(d), _) => crate::units::format_duration(d),
            (None, Some(n)) => format!("{} requests", thousands(n)),
            _ => String::new(),
        };
        Heading {
            url: cfg.target.url.clone(),
            length,
            pacing: cfg.pacing.describe(),
            mode: mode(cfg.close, cfg.target.kind.name(), cfg.pipeline as u64, cfg.size as u64),
        }
    }

    /// The same from a document's `config` (what `muxlab merge --human` has).
    fn of_document(doc: &Value) -> Heading {
        let c = &doc["config"];
        let length = match (c["duration_s"].as_f64(), c["requests"].as_u64()) {
            (Some(d), _) => crate::units::format_duration(std::time::Duration::from_secs_f64(d)),
            (None, Some(n)) => format!("{} requests", thousands(n)),
            _ => String::new(),
        };
        Heading {
            url: doc["target"].as_str().unwrap_or("?").into(),
            length,
            pacing: c["pacing"].as_str().unwrap_or("?").into(),
            mode: mode(
                c["close"].as_bool().unwrap_or(false),
                c["kind"].as_str().unwrap_or("http"),
                c["pipeline"].as_u64().unwrap_or(1),
                c["size"].as_u64().unwrap_or(0),
            ),
        }
    }
}

fn mode(close: bool, kind: &str, pipeline: u64, size: u64) -> String {
    let pipe = if pipeline > 1 {
        format!(", pipeline {pipeline}")
    } else {
        String::new()
    };
    if close {
        "one request per connection".to_string()
    } else if kind == "http" {
        format!("keep-alive{pipe}")
    } else {
        format!("{size} B messages{pipe}")
    }
}

/// The human summary.
pub fn human(cfg: &LoadConfig, o: &Outcome) -> String {
    summary_text(&Heading::of(cfg), o)
}

/// The human summary of a (merged) document.
pub fn human_of_document(doc: &Value, o: &Outcome) -> String {
    summary_text(&Heading::of_document(doc), o)
}

fn summary_text(h: &Heading, o: &Outcome) -> String {
    let t = &o.tally;
    let secs = o.elapsed.as_secs_f64();
    let rps = if secs > 0.0 { t.requests as f64 / secs } else { 0.0 };
    let mut s = format!(
        "muxlab load {}\n  {} connections, {} threads{}, {}, {}, {}\n",
        h.url,
        thousands(o.connections as u64),
        o.threads * o.shards,
        if o.shards > 1 {
            format!(" in {} processes", o.shards)
        } else {
            String::new()
        },
        h.length,
        h.pacing,
        h.mode
    );
    if o.interrupted {
        s.push_str("  (interrupted: the figures cover the part that ran)\n");
    }
    s.push_str(&format!(
        "  requests     {} in {:.2}s = {} req/s\n",
        thousands(t.requests),
        secs,
        thousands(rps.round() as u64)
    ));
    let lat = |name: &str, h: &super::histogram::Hist| {
        if h.count() == 0 {
            return format!("  {name:<12} -\n");
        }
        let q = |p: f64| fmt_us(h.0.value_at_quantile(p) as f64 / 1000.0);
        format!(
            "  {name:<12} p50 {}  p90 {}  p99 {}  p99.9 {}  max {}\n",
            q(0.5),
            q(0.9),
            q(0.99),
            q(0.999),
            fmt_us(h.0.max() as f64 / 1000.0)
        )
    };
    s.push_str(&lat("latency", &t.latency));
    if let Some(r) = o.offered_rps {
        s.push_str(&lat("uncorrected", &t.uncorrected));
        s.push_str(&format!(
            "  rate         offered {} req/s, achieved {} req/s, send lag p99 {}\n",
            thousands(r as u64),
            thousands(rps as u64),
            fmt_us(t.send_lag.0.value_at_quantile(0.99) as f64 / 1000.0)
        ));
        if let (Some(sch), Some(nc)) = (t.scheduled, t.not_completed) {
            s.push_str(&format!(
                "  schedule     {} requests scheduled in the window, {} not completed by its close{}\n",
                thousands(sch),
                thousands(nc),
                if nc > 0 {
                    " (in the corrected latency at the close less their intended time: a lower bound)"
                } else {
                    ""
                }
            ));
        }
    }
    s.push_str(&lat("connect", &t.connect));
    if t.tls_handshake.count() > 0 {
        s.push_str(&lat("tls handshake", &t.tls_handshake));
    }
    let established = o.connections as u64 - t.never_connected;
    s.push_str(&format!(
        "  connections  {} of {} established",
        thousands(established),
        thousands(o.connections as u64)
    ));
    if t.never_connected > 0 {
        s.push_str(&format!(" -- {} could not connect", thousands(t.never_connected)));
    }
    s.push_str(&format!(", {} connects in the window", thousands(t.connects)));
    if o.connecting >= Duration::from_millis(500) {
        s.push_str(&format!(
            "; opening them took {:.1}s, before the warm-up",
            o.connecting.as_secs_f64()
        ));
    }
    s.push('\n');
    if t.unresolved_at_start > 0 {
        s.push_str(&format!(
            "  connecting   had not finished: {} connections were still connecting when the connect timeout \
             passed and the window began\n",
            thousands(t.unresolved_at_start)
        ));
    }
    if t.never_connected > 0 || t.unresolved_at_start > 0 {
        if let Some(h) = connect_hint(t) {
            s.push_str(&format!("  hint         {h}\n"));
        }
    }
    s.push_str(&format!(
        "  fairness     Jain {} over {} connections, {} starved\n",
        t.jain().map_or("–".to_string(), |j| format!("{j:.3}")),
        thousands(t.per_conn.len() as u64),
        t.starved()
    ));
    s.push_str(&format!(
        "  transfer     {:.1} MB in, {:.1} MB out\n",
        t.bytes_in as f64 / 1e6,
        t.bytes_out as f64 / 1e6
    ));
    let util = utilization(o);
    s.push_str(&format!(
        "  client CPU   {:.2}s, {:.0}% of its {} threads, {} per request\n",
        o.client_cpu.as_secs_f64(),
        util * 100.0,
        o.threads * o.shards,
        if t.requests > 0 {
            fmt_us(o.client_cpu.as_secs_f64() * 1e6 / t.requests as f64)
        } else {
            "-".into()
        }
    ));
    if util > SATURATED {
        s.push_str("  WARNING      the client was saturated: the server may be faster than this shows (add CPUs or threads to the client)\n");
    }
    if t.status.iter().sum::<u64>() > 0 {
        let classes: Vec<String> = t
            .status
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(i, n)| format!("{}xx {}", i + 1, thousands(*n)))
            .collect();
        s.push_str(&format!("  status       {}\n", classes.join(", ")));
        if t.non_2xx_3xx() > 0 {
            s.push_str(&format!(
                "  WARNING      {} responses were not 2xx or 3xx (counted in the figures above)\n",
                thousands(t.non_2xx_3xx())
            ));
        }
    }
    if t.error_total() == 0 {
        s.push_str("  errors       none\n");
    } else {
        let list: Vec<String> = super::tally::ERROR_CLASSES
            .iter()
            .filter(|(c, _)| t.errors[*c as usize] > 0)
            .map(|(c, n)| format!("{n} {}", thousands(t.errors[*c as usize])))
            .collect();
        s.push_str(&format!("  errors       {}\n", list.join(", ")));
    }
    s
}

/// What to do about connections that did not come up, from the errors seen.
fn connect_hint(t: &Tally) -> Option<&'static str> {
    use super::tally::ErrorClass::*;
    let n = |c: super::tally::ErrorClass| t.errors[c as usize];
    let classes = [PortExhaustion, LocalLimit, Refused, Timeout];
    let worst = classes.into_iter().filter(|c| n(*c) > 0).max_by_key(|c| n(*c));
    Some(match worst {
        Some(PortExhaustion) => {
            "out of local ports toward the target (port_exhaustion): spread the sources with --bind \
             127.0.0.2-127.0.0.20 on loopback, or wait for TIME_WAIT sockets to clear"
        }
        Some(LocalLimit) => "this process's descriptor limit (local_fd_limit): raise ulimit -n",
        Some(Refused) => "refused: nothing listens there, or its accept backlog overflowed (raise --backlog / somaxconn)",
        Some(Timeout) => {
            "connects timed out: SYNs dropped by a full listen backlog, or the server is not accepting; \
             lower --connect-rate or raise --timeout"
        }
        _ => "no connect error was seen: the connects had not completed when the run ended (raise --timeout or --duration)",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::tally::ErrorClass;

    #[test]
    fn connections_that_did_not_come_up_get_the_hint_of_the_commonest_connect_error() {
        let mut t = Tally::default();
        assert!(connect_hint(&t).unwrap().contains("no connect error was seen"));
        t.error(ErrorClass::Timeout);
        assert!(connect_hint(&t).unwrap().contains("lower --connect-rate"));
        t.error(ErrorClass::PortExhaustion);
        t.error(ErrorClass::PortExhaustion);
        assert!(connect_hint(&t).unwrap().contains("--bind"));
        t.error(ErrorClass::Reset);
        t.error(ErrorClass::Reset);
        t.error(ErrorClass::Reset);
        assert!(
            connect_hint(&t).unwrap().contains("--bind"),
            "a reset is no connect error"
        );
    }
}
