//! The summary a wrk or ab user reads at a glance, from a run's [`Document`].

use std::time::Duration;

use super::Tally;
use super::{Document, Outcome};
use crate::hist::Hist;
use crate::units::{fmt_us, thousands};

/// What the summary's first two lines say about the run's flags.
struct Heading {
    url: String,
    length: String,
    pacing: String,
    mode: String,
}

impl Heading {
    fn of(doc: &Document) -> Heading {
        let c = &doc.config;
        let length = match (c.duration_s, c.requests) {
            (Some(d), _) => crate::units::format_duration(Duration::from_secs_f64(d)),
            (None, Some(n)) => format!("{} requests", thousands(n)),
            _ => String::new(),
        };
        Heading {
            url: doc.target.clone(),
            length,
            pacing: c.pacing.clone(),
            mode: match (c.h2, c.close, c.streams) {
                (true, true, _) => "HTTP/2, one request per connection".to_string(),
                (true, false, 1) => "HTTP/2, 1 stream per connection".to_string(),
                (true, false, n) => format!("HTTP/2, {n} streams per connection"),
                (false, ..) => match &c.keyed {
                    Some(k) => format!(
                        "{} {} keys, values of {} B{}",
                        thousands(k.keys),
                        k.key_dist,
                        k.value_size,
                        match c.pipeline {
                            1 => String::new(),
                            n => format!(", pipeline {n} (batches)"),
                        }
                    ),
                    None => mode(c.close, &c.kind, c.pipeline as u64, c.size as u64),
                },
            },
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

/// The human summary of a run's document (a merged one included).
pub fn human(doc: &Document) -> String {
    let text = summary_text(&Heading::of(doc), doc.outcome(), &class_lines(doc));
    match &doc.capacity {
        // An --slo search: the probe the summary shows, then the answer.
        Some(c) => format!(
            "{text}(the probe above is the last that held, or the last run)\n{}",
            super::slo::describe(c)
        ),
        None => text,
    }
}

/// A line per request class (`--mix`), in the mix's order.
fn class_lines(doc: &Document) -> String {
    let mut s = String::new();
    for c in &doc.config.classes {
        let Some(f) = doc.results.classes.get(&c.name) else {
            continue;
        };
        let q = |v: Option<f64>| v.map_or("-".to_string(), fmt_us);
        s.push_str(&format!(
            "  class {:<6} {:>10} requests  p50 {}  p99 {}  p99.9 {}  max {}{}  ({})\n",
            c.name,
            thousands(f.requests),
            q(f.latency_us.p50),
            q(f.latency_us.p99),
            q(f.latency_us.p999),
            q(f.latency_us.max),
            [(f.errors, "errors"), (f.non_2xx_3xx, "non-2xx/3xx")]
                .iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, what)| format!("  {} {what}", thousands(*n)))
                .collect::<String>(),
            format!("{} {}", c.method, c.path).trim_end()
        ));
    }
    s
}

fn summary_text(h: &Heading, o: &Outcome, classes: &str) -> String {
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
    s.push_str(&latency_lines(o, rps));
    s.push_str(classes);
    s.push_str(&connection_lines(o));
    s.push_str(&format!(
        "  fairness     Jain {} over {} connections, {} starved\n",
        t.jain().map_or("–".to_string(), |j| format!("{j:.3}")),
        thousands(t.per_conn.len() as u64),
        t.starved()
    ));
    if let Some(h) = &t.h2 {
        s.push_str(&h2_lines(&super::H2Figures::of(h, t.requests, secs, o.connections)));
    }
    if let Some(e) = &t.sse {
        s.push_str(&sse_lines(e, secs));
    }
    if let Some(k) = &t.keyed {
        s.push_str(&keyed_lines(&super::keyed::KeyedFigures::of(k)));
    }
    s.push_str(&format!(
        "  transfer     {:.1} MB in, {:.1} MB out\n",
        t.bytes_in as f64 / 1e6,
        t.bytes_out as f64 / 1e6
    ));
    s.push_str(&format!(
        "  client CPU   {:.2}s, {:.0}% of its {} threads, {} per request\n",
        o.client_cpu.as_secs_f64(),
        o.utilization() * 100.0,
        o.threads * o.shards,
        if t.requests > 0 {
            fmt_us(o.client_cpu.as_secs_f64() * 1e6 / t.requests as f64)
        } else {
            "-".into()
        }
    ));
    if o.saturated() {
        s.push_str("  WARNING      the client was saturated: the server may be faster than this shows (add CPUs or threads to the client)\n");
    }
    s.push_str(&outcome_lines(t));
    s
}

/// What an HTTP/2 run's streams did: in flight, refusals, frames, HPACK, fairness over lanes.
fn h2_lines(h: &super::H2Figures) -> String {
    let f1 = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.1}"));
    let pct = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{:.0}%", v * 100.0));
    format!(
        "  streams      {} opened, {} in flight on average (max {}); {} refused, {} reset, {} GOAWAY, {} retried\n\
         \x20 frames       {} in, {} out per request\n\
         \x20 HPACK        request headers {} B against {} B as HTTP/1.1 ({} saved), response headers {} B against {} B ({} saved)\n\
         \x20 fairness     Jain {} over {} stream lanes, {} starved\n",
        thousands(h.streams),
        f1(h.in_flight_mean),
        h.in_flight_max.map_or("–".to_string(), |m| m.to_string()),
        thousands(h.refused),
        thousands(h.reset),
        thousands(h.goaway),
        thousands(h.retried),
        f1(h.frames_in_per_request),
        f1(h.frames_out_per_request),
        f1(h.request_header_bytes),
        f1(h.request_text_bytes),
        pct(h.request_hpack_saved),
        f1(h.response_header_bytes),
        f1(h.response_text_bytes),
        pct(h.response_hpack_saved),
        h.lanes_jain.map_or("–".to_string(), |j| format!("{j:.3}")),
        thousands(h.lanes as u64),
        thousands(h.lanes_starved as u64),
    )
}

/// What a keyed run's GETs found and how their values were checked.
fn keyed_lines(k: &super::keyed::KeyedFigures) -> String {
    let mut s = format!(
        "  keyed        {} GETs: {} hits, {} misses (hit ratio {}); {} SETs stored; {} refused by the server\n",
        thousands(k.gets),
        thousands(k.hits),
        thousands(k.misses),
        k.hit_ratio.map_or("–".to_string(), |r| format!("{:.1} %", r * 100.0)),
        thousands(k.sets),
        thousands(k.refused)
    );
    let how = match k.checks.as_str() {
        "exact" => "each against the write its key must hold",
        "integrity" => "for key, length and checksum only: zipf keys are shared, the last write is not known",
        _ => "not checked (--no-verify)",
    };
    s.push_str(&format!(
        "  values       {} checked exactly, {} for integrity, {} wrong ({how})\n",
        thousands(k.checked_exact),
        thousands(k.checked_integrity),
        thousands(k.wrong_values)
    ));
    if let Some(w) = &k.first_wrong {
        s.push_str(&format!("  first wrong  {w}\n"));
    }
    if k.prefilled_keys > 0 {
        s.push_str(&format!(
            "  prefill      {} keys written before the window\n",
            thousands(k.prefilled_keys)
        ));
    }
    s
}

/// What a run's event streams delivered: streams, events, loss, then time to first event and
/// the gaps between events.
fn sse_lines(e: &super::sse::SseTally, secs: f64) -> String {
    let mut s = format!(
        "  sse          {} streams ended ({} cut by the server, with {} events), {} events = {} events/s, {} lost, {} out of order\n",
        thousands(e.streams),
        thousands(e.cut),
        thousands(e.cut_events),
        thousands(e.events),
        thousands(if secs > 0.0 { (e.events as f64 / secs).round() as u64 } else { 0 }),
        thousands(e.lost),
        thousands(e.out_of_order)
    );
    s.push_str(&latency_line("first event", &e.ttfe));
    s.push_str(&latency_line("event gap", &e.gap));
    s.push_str(&latency_line("stream", &e.duration));
    s
}

/// A latency distribution's line.
fn latency_line(name: &str, h: &Hist) -> String {
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
}

/// The latency lines: corrected, and for an open loop the uncorrected latency, the rate and
/// the schedule's accounting.
fn latency_lines(o: &Outcome, rps: f64) -> String {
    let t = &o.tally;
    let mut s = latency_line("latency", &t.latency);
    if let Some(r) = o.offered_rps {
        s.push_str(&latency_line("uncorrected", &t.uncorrected));
        s.push_str(&format!(
            "  rate         offered {} req/s, achieved {} req/s, send lag p99 {}\n",
            thousands(r as u64),
            thousands(rps as u64),
            fmt_us(t.send_lag.0.value_at_quantile(0.99) as f64 / 1000.0)
        ));
        if t.waited_for_connection > 0 {
            s.push_str(&format!(
                "  waits        {} requests found all {} connections busy and waited for one (in their latency: \
                 the server's backlog; more -c would send them at once)\n",
                thousands(t.waited_for_connection),
                thousands(o.connections as u64)
            ));
        }
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
    s
}

/// The connection lines: connect and handshake times, how many came up, how long opening
/// them took, and a hint for those that did not.
fn connection_lines(o: &Outcome) -> String {
    let t = &o.tally;
    let mut s = latency_line("connect", &t.connect);
    if t.tls_handshake.count() > 0 {
        s.push_str(&latency_line("tls handshake", &t.tls_handshake));
    }
    let established = o.connections as u64 - t.never_connected;
    s.push_str(&format!(
        "  connections  {} of {} established",
        thousands(established),
        thousands(o.connections as u64)
    ));
    if let (Some(active), Some(held)) = (t.active, t.held) {
        s.push_str(&format!(
            " ({} sending, {} holding)",
            thousands(active),
            thousands(held)
        ));
    }
    if t.never_connected > 0 {
        s.push_str(&format!(" -- {} could not connect", thousands(t.never_connected)));
    }
    if t.held_closed > 0 {
        s.push_str(&format!(
            "; the server closed held connections {} times while they were idle, each opened again (its idle timeout is shorter than the run: muxlab serve's --idle-timeout is {} unless set)",
            thousands(t.held_closed),
            crate::units::format_duration(crate::server::DEFAULT_IDLE_TIMEOUT)
        ));
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
             passed and the window began{}\n",
            thousands(t.unresolved_at_start),
            if t.never_connected == 0 {
                " (every one came up later)"
            } else {
                ""
            }
        ));
    }
    if t.never_connected > 0 {
        if let Some(h) = connect_hint(t) {
            s.push_str(&format!("  hint         {h}\n"));
        }
    }
    s
}

/// The status classes of the responses and the errors, by class.
fn outcome_lines(t: &Tally) -> String {
    let mut s = String::new();
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
        let list: Vec<String> = super::ERROR_CLASSES
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
    use super::ErrorClass::*;
    let n = |c: super::ErrorClass| t.errors[c as usize];
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
    use crate::load::ErrorClass;

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
