//! One [`Metric`]: what a figure is called, its unit, which way is better, how to read it from a
//! cell (measured, and as the design's queueing predicts it), and which cells may be ranked on
//! it. The verdicts, the predictions, `report A B`, the report's tables and its charts all read
//! figures through these, so a rule about what may be ranked is made once, here.

use crate::bench::record::Cell;
use crate::units::{fmt_us, si, thousands};

/// A page: the growth of memory PSS resolves. A difference in memory per connection smaller
/// than a page over all the connections is not one the measurement can see.
const PAGE_KIB: f64 = 4.0;

/// Why a cell's value may not be ranked on a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unranked {
    /// Connections starved: a latency covers only the requests that were served, so it
    /// flatters the cell.
    Starved,
    /// Under what the measurement resolves (memory: under a page over all the connections):
    /// no ratio can be taken of it, though it is still the least of the values beside it.
    Unresolved,
    /// The cell was bound by something other than the server (the client, or another task on
    /// its CPUs: `judge::bound`): its throughput and latency are not the server's.
    NotTheServer,
    /// Requests failed (errors, or answers other than 2xx/3xx): its latency and memory cover
    /// only what it served.
    Lost,
}

/// The least memory difference the measurement resolves between two designs, over all their
/// connections (KiB): PSS growth moves by pages, and a run's allocator and kernel buffers by
/// more; under a mebibyte in all, two designs are not told apart.
pub const MEMORY_RESOLVES_KIB: f64 = 1024.0;

/// Whether `best` and `second` of metric `m` at `connections` differ by more than the
/// measurement resolves (memory: [`MEMORY_RESOLVES_KIB`] over all the connections; the others:
/// always).
pub fn resolved(m: &Metric, best: f64, second: f64, connections: usize) -> bool {
    m.name != MEMORY.name || (second - best).abs() * connections as f64 >= MEMORY_RESOLVES_KIB
}

/// A figure of a cell that targets are compared on.
#[derive(Debug)]
pub struct Metric {
    /// As the verdicts and `results.json` name it ("p99 latency").
    pub name: &'static str,
    /// As a table's column heads it ("p99").
    pub short: &'static str,
    pub higher_is_better: bool,
    /// Compared at the largest connection count only (memory per connection is noise at few).
    pub largest_only: bool,
    /// The value measured in a cell (`None`: not measured).
    read: fn(&Cell) -> Option<f64>,
    /// The value the design's queueing alone predicts for the cell (`None`: no prediction).
    predicted: fn(&Cell) -> Option<f64>,
    /// Why a measured value may not be ranked (`None`: it may).
    unranked: fn(&Cell, f64) -> Option<Unranked>,
    /// The value in its unit, as a sentence gives it ("17.5k req/s", "4.73ms", "12.3 µs").
    show: fn(f64) -> String,
    /// The same with every digit ("17,500 req/s"), where one measurement is quoted exactly.
    whole: fn(f64) -> String,
}

/// Measured and above zero: a figure of 0 here is one that was not measured.
fn positive(v: f64) -> Option<f64> {
    Some(v).filter(|v| *v > 0.0)
}

fn rate(v: f64) -> String {
    format!("{} req/s", si(v))
}

fn whole_rate(v: f64) -> String {
    format!("{} req/s", thousands(v.round() as u64))
}

fn none(_: &Cell) -> Option<f64> {
    None
}

fn always(_: &Cell, _: f64) -> Option<Unranked> {
    None
}

/// A latency of a cell that starved connections covers only the served ones; one bound by
/// the client or by another task is not the server's.
fn latency_rule(c: &Cell, v: f64) -> Option<Unranked> {
    served_rule(c).or_else(|| server_rule(c, v))
}

/// A cell that starved connections or lost requests covers only what it served.
fn served_rule(c: &Cell) -> Option<Unranked> {
    if c.figures.starved_conns > 0 {
        Some(Unranked::Starved)
    } else if c.figures.errors > 0 {
        Some(Unranked::Lost)
    } else {
        None
    }
}

/// A throughput or latency of a cell the server did not bound (`judge::bound`) is not ranked.
fn server_rule(c: &Cell, _: f64) -> Option<Unranked> {
    super::bound::of(c)
        .filter(|b| !b.bound.speaks_for_the_server())
        .map(|_| Unranked::NotTheServer)
}

pub const THROUGHPUT: Metric = Metric {
    name: "throughput",
    short: "throughput",
    higher_is_better: true,
    largest_only: false,
    read: |c| positive(c.figures.throughput_rps),
    predicted: none,
    unranked: server_rule,
    show: rate,
    whole: whole_rate,
};

pub const P50: Metric = Metric {
    name: "p50 latency",
    short: "p50",
    higher_is_better: false,
    largest_only: false,
    read: |c| positive(c.figures.p50_us),
    predicted: |c| c.figures.predicted.as_ref()?.p50_us,
    unranked: latency_rule,
    show: fmt_us,
    whole: fmt_us,
};

pub const P99: Metric = Metric {
    name: "p99 latency",
    short: "p99",
    higher_is_better: false,
    largest_only: false,
    read: |c| positive(c.figures.p99_us),
    predicted: |c| c.figures.predicted.as_ref()?.p99_us,
    unranked: latency_rule,
    show: fmt_us,
    whole: fmt_us,
};

pub const P999: Metric = Metric {
    name: "p99.9 latency",
    short: "p99.9",
    higher_is_better: false,
    largest_only: false,
    read: |c| positive(c.figures.p999_us),
    predicted: none,
    unranked: latency_rule,
    show: fmt_us,
    whole: fmt_us,
};

pub const CPU: Metric = Metric {
    name: "server CPU per request",
    short: "CPU/request",
    higher_is_better: false,
    largest_only: false,
    read: |c| c.figures.cpu_per_req(),
    predicted: none,
    unranked: always,
    show: |v| format!("{v:.1} µs"),
    whole: |v| format!("{v:.1} µs"),
};

pub const MEMORY: Metric = Metric {
    name: "memory per connection",
    short: "KiB/conn",
    higher_is_better: false,
    largest_only: true,
    read: |c| c.figures.mem_per_conn(),
    predicted: none,
    unranked: |c, v| served_rule(c).or((v * (c.figures.established as f64) < PAGE_KIB).then_some(Unranked::Unresolved)),
    show: |v| match v < 1.0 {
        true => format!("{v:.2} KiB"),
        false => format!("{v:.1} KiB"),
    },
    whole: |v| format!("{v:.2} KiB"),
};

pub const CAPACITY: Metric = Metric {
    name: "capacity at the target",
    short: "capacity",
    higher_is_better: true,
    largest_only: false,
    read: |c| c.figures.capacity_rps(),
    predicted: |c| Some(c.figures.predicted.as_ref()?.capacity_rps),
    unranked: always,
    show: rate,
    whole: whole_rate,
};

pub const FAIRNESS: Metric = Metric {
    name: "fairness across connections",
    short: "Jain",
    higher_is_better: true,
    largest_only: false,
    read: |c| c.figures.jain_conns,
    predicted: none,
    unranked: always,
    show: |v| format!("{v:.3}"),
    whole: |v| format!("{v:.3}"),
};

pub const SYSCALLS: Metric = Metric {
    name: "syscalls per request",
    short: "syscalls/req",
    higher_is_better: false,
    largest_only: false,
    read: |c| c.figures.syscalls_per_req,
    predicted: none,
    unranked: always,
    show: |v| format!("{v:.1}"),
    whole: |v| format!("{v:.2}"),
};

/// Event streams: the tail of the gaps between a stream's events as the client saw them (the
/// lateness at the tail, every design being asked for the same gaps).
pub const GAP_P99: Metric = Metric {
    name: "event gap p99",
    short: "gap p99",
    higher_is_better: false,
    largest_only: false,
    read: |c| positive(c.figures.streams.as_ref()?.gap_p99_us?),
    predicted: none,
    unranked: latency_rule,
    show: fmt_us,
    whole: fmt_us,
};

/// Event streams: time to first event (from the intended start), at the tail.
pub const TTFE_P99: Metric = Metric {
    name: "first event p99",
    short: "TTFE p99",
    higher_is_better: false,
    largest_only: false,
    read: |c| positive(c.figures.streams.as_ref()?.ttfe_p99_us?),
    predicted: none,
    unranked: latency_rule,
    show: fmt_us,
    whole: fmt_us,
};

/// Event streams: the share of events the server sent within `--stream-slack` of their due
/// time (its own clock, its stats line, over the whole run, warm-up included): 100 % is every
/// event on time; 0 % (every event late) is a measured figure, not an absent one.
pub const ON_TIME: Metric = Metric {
    name: "events on time",
    short: "on time",
    higher_is_better: true,
    largest_only: false,
    read: |c| Some(100.0 - c.figures.streams.as_ref()?.late_pct()?),
    predicted: none,
    unranked: always,
    show: |v| format!("{v:.2}%"),
    whole: |v| format!("{v:.3}%"),
};

/// Event streams: server CPU per event sent.
pub const CPU_EVENT: Metric = Metric {
    name: "server CPU per event",
    short: "CPU/event",
    higher_is_better: false,
    largest_only: false,
    read: |c| c.figures.cpu_per_event(),
    predicted: none,
    unranked: always,
    show: |v| format!("{v:.1} µs"),
    whole: |v| format!("{v:.2} µs"),
};

/// Every metric, for finding one by name.
pub const ALL: [&Metric; 13] = [
    &THROUGHPUT,
    &P50,
    &P99,
    &P999,
    &CPU,
    &MEMORY,
    &CAPACITY,
    &FAIRNESS,
    &SYSCALLS,
    &GAP_P99,
    &TTFE_P99,
    &ON_TIME,
    &CPU_EVENT,
];

impl Metric {
    /// The metric called `name` (as a finding records it).
    pub fn named(name: &str) -> Option<&'static Metric> {
        ALL.into_iter().find(|m| m.name == name)
    }

    /// The value measured in `c` (`None`: not measured).
    pub fn value(&self, c: &Cell) -> Option<f64> {
        (self.read)(c)
    }

    /// The value of `c` where it may be ranked: measured, and not [`Unranked`].
    pub fn ranked(&self, c: &Cell) -> Option<f64> {
        self.value(c).filter(|v| (self.unranked)(c, *v).is_none())
    }

    /// Why `c`'s measured value may not be ranked (`None`: it may, or nothing was measured).
    pub fn unranked(&self, c: &Cell) -> Option<Unranked> {
        self.value(c).and_then(|v| (self.unranked)(c, v))
    }

    /// The value of `c` where it may stand beside others' as the best of them (a table's mark):
    /// measured, and not one that flatters its cell (a latency of a cell that starved
    /// connections). A value under what the measurement resolves may: it is the least.
    pub fn comparable(&self, c: &Cell) -> Option<f64> {
        // A cell that starved connections or lost requests is never marked best (its figures
        // cover only what it served), on any metric.
        let spoiled = c.figures.starved_conns > 0 || c.figures.errors > 0;
        self.value(c)
            .filter(|v| !spoiled && !matches!((self.unranked)(c, *v), Some(Unranked::Starved | Unranked::Lost)))
    }

    /// The value the design's queueing alone predicts for `c`.
    pub fn predicted(&self, c: &Cell) -> Option<f64> {
        (self.predicted)(c)
    }

    /// How many times better `a` is than `b` (≥ 1: `a` is better).
    pub fn better(&self, a: f64, b: f64) -> f64 {
        if self.higher_is_better {
            a / b
        } else {
            b / a
        }
    }

    /// The better of two values.
    pub fn best_of(&self, a: f64, b: f64) -> f64 {
        if self.better(b, a) > 1.0 {
            b
        } else {
            a
        }
    }

    /// `v` in the metric's unit, as a sentence gives it.
    pub fn show(&self, v: f64) -> String {
        (self.show)(v)
    }

    /// `v` with every digit, where one measurement is quoted exactly.
    pub fn whole(&self, v: f64) -> String {
        (self.whole)(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_starved_latency_is_measured_but_not_ranked_and_other_metrics_do_not_care() {
        let mut c = Cell::new("e", "t", 10, 0);
        c.figures.p99_us = 900.0;
        c.figures.throughput_rps = 1000.0;
        c.figures.starved_conns = 3;
        assert_eq!(P99.value(&c), Some(900.0));
        assert_eq!(P99.ranked(&c), None);
        assert_eq!(P99.unranked(&c), Some(Unranked::Starved));
        assert_eq!(P99.comparable(&c), None, "a flattering latency is never the best");
        assert_eq!(THROUGHPUT.ranked(&c), Some(1000.0));
        c.figures.starved_conns = 0;
        assert_eq!(P99.ranked(&c), Some(900.0));
        // Not measured is not a value, least of all 0.
        c.figures.p99_us = 0.0;
        assert_eq!(P99.value(&c), None);
    }

    /// A design that starved connections or lost requests is ranked on neither memory nor
    /// latency; a memory difference under a mebibyte over all the connections is none (the
    /// reactor's 0.04 KiB against 0.8 KiB at 100 connections is 76 KiB: not "20×").
    #[test]
    fn memory_and_latency_of_designs_that_did_not_serve_everyone_are_not_ranked() {
        let mut c = Cell::new("e", "prefork", 1000, 0);
        c.figures.mem_per_conn_kib = Some(0.5);
        c.figures.server_cpu_us_per_req = Some(10.0);
        c.figures.established = 1000;
        c.figures.p99_us = 900.0;
        assert_eq!(MEMORY.ranked(&c), Some(0.5));
        c.figures.starved_conns = 998;
        assert_eq!(MEMORY.unranked(&c), Some(Unranked::Starved));
        assert_eq!(MEMORY.comparable(&c), None, "never marked best");
        c.figures.starved_conns = 0;
        c.figures.errors = 3;
        assert_eq!(
            (MEMORY.unranked(&c), P99.unranked(&c)),
            (Some(Unranked::Lost), Some(Unranked::Lost))
        );
        assert!(!resolved(&MEMORY, 0.04, 0.8, 100), "76 KiB in all");
        assert!(resolved(&MEMORY, 1.0, 20.0, 100), "1,900 KiB in all");
        assert!(resolved(&P99, 1.0, 1.01, 1), "only memory has a floor");
    }

    /// Event streams: every event late is 0 % on time, a measured figure; no CPU read over the
    /// window is no CPU per event; a cell whose connections got no event is not ranked on its
    /// gaps or first events.
    #[test]
    fn stream_figures_at_their_edges() {
        use crate::bench::record::StreamFigures;
        let mut c = Cell::new("e", "t", 10, 0);
        c.figures.streams = Some(StreamFigures {
            events: 1000,
            window_s: 2.0,
            gap_p99_us: Some(21_000.0),
            server_events: Some(1000),
            server_late: Some(1000),
            ..StreamFigures::default()
        });
        assert_eq!(ON_TIME.value(&c), Some(0.0), "every event late is measured");
        c.figures.server_cpu_cores = Some(0.0);
        assert_eq!(CPU_EVENT.value(&c), None, "no CPU read is not a cost of 0");
        c.figures.server_cpu_cores = Some(0.01);
        assert!(
            (CPU_EVENT.value(&c).unwrap() - 20.0).abs() < 1e-9,
            "0.02 s of CPU over 1,000 events"
        );
        assert_eq!(GAP_P99.ranked(&c), Some(21_000.0));
        c.figures.starved_conns = 2;
        assert_eq!(GAP_P99.unranked(&c), Some(Unranked::Starved));
    }

    /// A cell the client bound (its CPUs busy) says nothing of the server's throughput or
    /// latency: measured, not ranked (before: ranked, and counted in a sentence).
    #[test]
    fn a_cell_the_client_bound_is_not_ranked_on_throughput_or_latency() {
        let mut c = Cell::new("e", "t", 10, 0);
        c.figures.p99_us = 900.0;
        c.figures.throughput_rps = 1000.0;
        c.figures.server_cpu_us_per_req = Some(20.0);
        c.figures.why = Some(crate::bench::record::Why::default());
        assert_eq!(THROUGHPUT.ranked(&c), Some(1000.0));
        c.figures.client_bound = true;
        assert_eq!(THROUGHPUT.unranked(&c), Some(Unranked::NotTheServer));
        assert_eq!((THROUGHPUT.ranked(&c), P99.ranked(&c)), (None, None));
        assert_eq!(P99.value(&c), Some(900.0), "still measured");
        assert_eq!(CPU.ranked(&c), Some(20.0), "its CPU per request is the server's own");
    }

    #[test]
    fn memory_under_a_page_over_all_connections_is_not_ranked() {
        let mut c = Cell::new("e", "t", 100, 0);
        c.figures.server_cpu_us_per_req = Some(5.0);
        c.figures.established = 100;
        c.figures.mem_per_conn_kib = Some(0.03);
        assert_eq!(MEMORY.value(&c), Some(0.03));
        assert_eq!(MEMORY.unranked(&c), Some(Unranked::Unresolved), "3 KiB in all");
        assert_eq!(MEMORY.ranked(&c), None, "no ratio of it");
        assert_eq!(MEMORY.comparable(&c), Some(0.03), "still the least beside larger ones");
        c.figures.mem_per_conn_kib = Some(0.05);
        assert_eq!(MEMORY.ranked(&c), Some(0.05), "5 KiB in all");
    }

    #[test]
    fn every_metric_is_found_by_its_name_and_better_follows_its_direction() {
        for m in ALL {
            assert_eq!(Metric::named(m.name).unwrap().short, m.short, "{}", m.name);
        }
        assert!(Metric::named("latency").is_none());
        assert_eq!(THROUGHPUT.better(200.0, 100.0), 2.0);
        assert_eq!(P99.better(100.0, 200.0), 2.0);
        assert_eq!(P99.best_of(300.0, 100.0), 100.0);
        assert_eq!(CAPACITY.whole(19_691.0), "19,691 req/s");
    }
}
