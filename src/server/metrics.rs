//! `serve --metrics`: what a scrape of a running server reads. Rendered from the counter blocks
//! every worker (thread or process) counts into (`stats`), summed or by worker at scrape time,
//! so the request path adds to its own block only.

use std::sync::atomic::Ordering;

use super::registry::Model;
use super::stats::{Counter, Counters};
use super::{Ctx, Discipline};
use crate::metrics::{Exposition, Format, Labels, SLOTS};

/// The keyed commands' counters, by the kind a label gives them.
const KEYED_KINDS: [(Counter, &str); 5] = [
    (Counter::KeyedGets, "get"),
    (Counter::KeyedSets, "set"),
    (Counter::KeyedDels, "del"),
    (Counter::KeyedIncrs, "incr"),
    (Counter::KeyedOther, "other"),
];

/// The scrape endpoint of `--metrics`: a process of its own, forked before the model starts,
/// so a single-threaded design stays single-threaded (a second thread in its process made
/// epoll's requests dearer: glibc's allocator locks once a process has two) and the designs
/// that fork go on forking (a process with more than one thread may not). It reads the shared
/// counters, and ends when the server stops.
pub struct Scraper {
    pub addr: std::net::SocketAddr,
    ctx: &'static Ctx,
}

impl Scraper {
    /// Starts it where `--metrics` says; `None` without the flag.
    /// `others`: a group's other listeners, which it must not hold either.
    pub fn start(
        model: &'static Model,
        ctx: &'static Ctx,
        others: &[std::os::fd::OwnedFd],
    ) -> Result<Option<Scraper>, super::Error> {
        let Some(addr) = ctx.cfg.metrics else { return Ok(None) };
        let bind_err = |source| super::Error::MetricsAddr { addr, source };
        let listener = crate::metrics::bind(addr).map_err(bind_err)?;
        let bound = listener.local_addr().map_err(bind_err)?;
        let pid = super::workers::fork_child("the metrics endpoint", move || {
            // It must not hold the server's listeners: they stop listening with the server.
            for l in std::iter::once(&ctx.listener).chain(others) {
                crate::sys::fd::replace_with_null(l).map_err(super::io_err("closing the inherited listeners"))?;
            }
            crate::metrics::serve_until(listener, |f| render(model, ctx, f), || ctx.stopping());
            Ok(())
        })?;
        ctx.metrics_pid.store(pid, Ordering::Release);
        Ok(Some(Scraper { addr: bound, ctx }))
    }

    /// The server has stopped: so has it (it saw the stop flag), or it is made to; reaped,
    /// unless the design's own reaping took it already.
    pub fn end(self) {
        let pid = self.ctx.metrics_pid.swap(0, Ordering::AcqRel);
        if pid != 0 {
            let _ = crate::sys::process::kill(pid, crate::sys::signal::SIGTERM);
            let _ = crate::sys::process::wait(pid, false);
        }
    }
}

/// The request duration histogram's name: OpenTelemetry's for HTTP, muxlab's for the rest.
fn duration_name(ctx: &Ctx) -> &'static str {
    use crate::proto::Proto;
    match ctx.cfg.proto {
        Proto::Http | Proto::H2 => "http_server_request_duration_seconds",
        _ => "muxlab_request_duration_seconds",
    }
}

/// A scrape's body.
pub fn render(model: &Model, ctx: &Ctx, format: Format) -> String {
    let stats = &ctx.stats;
    let blocks: Vec<Counters> = (0..stats.workers()).map(|i| stats.worker(i)).collect();
    // A design with more than one block (workers, or a group's processes) labels them.
    let labels: Vec<Labels> = match blocks.len() {
        1 => vec![Labels::new()],
        n => (0..n).map(|i| vec![("worker", i.to_string())]).collect(),
    };
    let mut e = Exposition::new(format);
    let mut info: Labels = vec![("model", model.name.into()), ("proto", ctx.cfg.proto.name().into())];
    if let Some(s) = &ctx.store {
        info.push(("store", s.kind().to_string()));
    }
    e.gauge(
        "muxlab_server_info",
        "The server's design and protocol (always 1).",
        [(info, 1.0)],
    );
    e.gauge(
        "muxlab_connections_held",
        "Connections open now (accepted - closed), over every worker and process.",
        [(Labels::new(), stats.live().load(Ordering::Relaxed) as f64)],
    );
    e.gauge(
        "muxlab_connections_held_peak",
        "The most connections open at once so far.",
        [(Labels::new(), stats.held_peak() as f64)],
    );
    e.gauge(
        &format!("{}_active_requests", active_prefix(ctx)),
        "Requests in the server now that outlive a read: pool jobs queued or running, event streams open. A request a read answers is in and out within that read.",
        [(Labels::new(), active(stats) as f64)],
    );
    let series: Vec<([u64; SLOTS], f64)> = blocks
        .iter()
        .map(|b| {
            let (counts, sum_ns) = b.durations();
            (counts, sum_ns as f64 / 1e9)
        })
        .collect();
    e.histogram(
        duration_name(ctx),
        "Time in the server of the requests of one read in eight per thread (sampled; muxlab_requests_total counts every request): from when its loop learned of the input (the wait's return, else the read's) to when its response was ready for the kernel. Requests answered later (a pool's, a stream's events) are not in it.",
        series.iter().zip(&labels).map(|((c, s), l)| (l, c, *s)),
    );
    counters(&mut e, model, ctx, &blocks, &labels);
    e.finish()
}

/// HTTP's gauge by OpenTelemetry's name, the others' by muxlab's.
fn active_prefix(ctx: &Ctx) -> &'static str {
    match duration_name(ctx) {
        "http_server_request_duration_seconds" => "http_server",
        _ => "muxlab",
    }
}

/// Requests that outlive a read, now: pool jobs not done nor dropped, streams not ended.
fn active(stats: &super::Stats) -> u64 {
    let t = |c| stats.total(c);
    let jobs = t(Counter::OffloadQueued).saturating_sub(t(Counter::OffloadDone) + t(Counter::OffloadCancelled));
    let streams = t(Counter::SseStarted).saturating_sub(t(Counter::SseFinished) + t(Counter::SseCut));
    jobs + streams
}

/// How a counter of the stats line is exposed: its family's name and help, and its scale.
struct Family {
    counter: Counter,
    name: String,
    help: String,
    /// Nanoseconds exposed as seconds.
    scale: f64,
    /// green's marks (kept in worker 0's block) are gauges.
    gauge: bool,
}

/// The stats line's counters as families, made once (a scrape writes them all).
fn families() -> &'static [Family] {
    static FAMILIES: std::sync::OnceLock<Vec<Family>> = std::sync::OnceLock::new();
    FAMILIES.get_or_init(|| {
        Counter::ALL
            .iter()
            .filter(|c| !KEYED_KINDS.iter().any(|(k, _)| k == *c))
            .map(|&c| {
                let key = c.name();
                let (name, scale) = match key.strip_suffix("_ns") {
                    Some(stem) => (format!("muxlab_{stem}_seconds"), 1e-9),
                    None if c == Counter::GreenStackPeak => (format!("muxlab_{key}_bytes"), 1.0),
                    None => (format!("muxlab_{key}"), 1.0),
                };
                Family {
                    counter: c,
                    name,
                    help: format!("The stats line's {key}, by worker."),
                    scale,
                    gauge: Counter::GREEN_MARKS.contains(&c),
                }
            })
            .collect()
    })
}

/// Every counter of the stats line, by worker (`labels`, one per block): nanoseconds as
/// seconds, keyed commands by kind, green's marks as gauges; what the design does not measure
/// is absent.
fn counters(e: &mut Exposition, model: &Model, ctx: &Ctx, blocks: &[Counters], labels: &[Labels]) {
    let green = model.queueing == Discipline::Green;
    let none = Labels::new();
    for f in families() {
        let c = f.counter;
        if (c == Counter::Syscalls && !model.counts_syscalls) || (Counter::GREEN.contains(&c) && !green) {
            continue;
        }
        if f.gauge {
            // Kept in worker 0's block: the mark of the whole server.
            e.gauge(&f.name, &f.help, [(&none, blocks[0].get(c) as f64)]);
        } else {
            let samples = blocks.iter().zip(labels).map(|(b, l)| (l, b.get(c) as f64 * f.scale));
            e.counter(&f.name, &f.help, samples);
        }
    }
    if ctx.cfg.proto.keyed() {
        let samples: Vec<(Labels, f64)> = KEYED_KINDS
            .iter()
            .flat_map(|&(c, kind)| {
                blocks.iter().zip(labels).map(move |(b, l)| {
                    let mut l = l.clone();
                    l.insert(0, ("kind", kind.to_string()));
                    (l, b.get(c) as f64)
                })
            })
            .collect();
        e.counter(
            "muxlab_keyed_commands",
            "Keyed commands run against the store, by kind (get: GET, MGET, get, gets; set: SET, MSET, set, add, replace; del; incr: INCR, DECR; other) and worker.",
            samples,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(counts_syscalls: bool) -> Model {
        Model {
            name: "t",
            counts_syscalls,
            ..Model::BASE
        }
    }

    #[test]
    fn every_counter_of_the_stats_line_is_exposed_and_what_the_design_does_not_measure_is_absent() {
        let ctx = Ctx::for_tests(&["--metrics", "127.0.0.1:0"]);
        let w = ctx.worker(0);
        w.count(Counter::Requests, 3);
        w.count(Counter::ResidenceNs, 1_500_000_000);
        w.counters.observe(50_000, 3);
        let text = render(&model(false), ctx, Format::Text);
        assert!(text.contains("\nmuxlab_requests_total 3\n"), "{text}");
        assert!(text.contains("\nmuxlab_residence_seconds_total 1.5\n"), "{text}");
        assert!(
            text.contains("\nhttp_server_request_duration_seconds_count 3\n"),
            "{text}"
        );
        assert!(
            text.contains("\nhttp_server_request_duration_seconds_sum 0.00015\n"),
            "{text}"
        );
        assert!(
            !text.contains("muxlab_syscalls_total"),
            "not counted by this design: absent\n{text}"
        );
        assert!(!text.contains("green"), "green's counters are that model's\n{text}");
        assert!(!text.contains("keyed_commands"), "no keyed protocol\n{text}");
        for &c in Counter::ALL {
            let kept =
                !(KEYED_KINDS.iter().any(|(k, _)| *k == c) || c == Counter::Syscalls || Counter::GREEN.contains(&c));
            let stem = c
                .name()
                .strip_suffix("_ns")
                .map_or(c.name().to_string(), |s| format!("{s}_seconds"));
            assert_eq!(text.contains(&format!("\nmuxlab_{stem}_total ")), kept, "{}", c.name());
        }
        let counted = render(&model(true), ctx, Format::Text);
        assert!(counted.contains("\nmuxlab_syscalls_total "), "{counted}");
    }

    #[test]
    fn keyed_commands_are_one_family_labelled_by_kind_and_the_histogram_is_muxlabs() {
        let ctx = Ctx::for_tests(&["--proto", "resp", "--metrics", "127.0.0.1:0"]);
        let w = ctx.worker(0);
        w.count(Counter::KeyedGets, 4);
        w.count(Counter::KeyedSets, 2);
        let text = render(&model(true), ctx, Format::OpenMetrics);
        assert!(text.contains("# TYPE muxlab_keyed_commands counter\n"), "{text}");
        assert!(
            text.contains("\nmuxlab_keyed_commands_total{kind=\"get\"} 4\n"),
            "{text}"
        );
        assert!(
            text.contains("\nmuxlab_keyed_commands_total{kind=\"set\"} 2\n"),
            "{text}"
        );
        assert!(!text.contains("muxlab_keyed_gets"), "{text}");
        assert!(
            text.contains("# TYPE muxlab_request_duration_seconds histogram\n"),
            "{text}"
        );
        assert!(text.contains("\nmuxlab_active_requests 0\n"), "{text}");
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn requests_that_outlive_a_read_are_the_active_ones() {
        let ctx = Ctx::for_tests(&["--metrics", "127.0.0.1:0"]);
        let w = ctx.worker(0);
        w.count(Counter::OffloadQueued, 5);
        w.count(Counter::OffloadDone, 2);
        w.count(Counter::OffloadCancelled, 1);
        w.count(Counter::SseStarted, 3);
        w.count(Counter::SseFinished, 1);
        let text = render(&model(true), ctx, Format::Text);
        assert!(text.contains("\nhttp_server_active_requests 4\n"), "{text}");
    }
}
