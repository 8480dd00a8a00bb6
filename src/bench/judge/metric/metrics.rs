//! One [`Metric`] type and every metric ([`ALL`]): what a figure is called, its unit, which way
//! is better, how to read it from a cell (measured, and as the design's queueing predicts it),
//! and why a cell's value of it may not be ranked, from the cell alone (the rule [`rankable`]
//! applies beside the rest).
//!
//! [`rankable`]: super::rankable

use super::share::pct;
use super::unranked::Unranked;
use crate::bench::judge::bound::client_limit;
use crate::bench::record::Cell;
use crate::units::{fmt_us, si, thousands};

/// A page: the growth of memory PSS resolves. A difference in memory per connection smaller
/// than a page over all the connections is not one the measurement can see.
const PAGE_KIB: f64 = 4.0;

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

/// Whether the offered rate, not the server, set cell `c`'s throughput: an open loop that
/// completed what it scheduled. Two such cells of one rate do not differ in throughput, however
/// small and steady the gap between their counts.
pub fn throughput_offered(c: &Cell) -> bool {
    c.figures
        .why
        .as_ref()
        .is_some_and(|w| w.open_loop && w.offered_completed == Some(true))
}

/// How many samples a cell took a quantile from (`None`: not counted).
pub(super) type Samples = fn(&Cell) -> Option<u64>;

/// A share's counts in a cell: how many of how many.
pub type Counts = fn(&Cell) -> Option<(u64, u64)>;

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
    /// Why a measured value may not be ranked (`None`: it may), from the cell alone.
    pub(super) unranked: fn(&Cell, f64) -> Option<Unranked>,
    /// A quantile: which (0.99 for a p99), and how many samples a cell took it from (`None`:
    /// not counted).
    pub(super) quantile: Option<(f64, Samples)>,
    /// A share of events: how many of how many, per cell (compared by Poisson intervals).
    pub counts: Option<Counts>,
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

/// A throughput or latency of a cell the server did not bound (`judge::bound`) is not ranked;
/// where the server was not watched (a peer sampled nowhere), the client's limit alone decides.
fn server_rule(c: &Cell, _: f64) -> Option<Unranked> {
    let not = match crate::bench::judge::bound::of(c) {
        Some(b) => !b.bound.speaks_for_the_server(),
        None => client_limit(c).is_some(),
    };
    not.then_some(Unranked::NotTheServer)
}

/// Requests answered: what every request's quantiles are taken from.
fn requests(c: &Cell) -> Option<u64> {
    Some(c.figures.requests)
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
    quantile: None,
    counts: None,
};

pub const P50: Metric = Metric {
    name: "p50 latency",
    short: "p50",
    higher_is_better: false,
    largest_only: false,
    read: |c| c.figures.p50_us.and_then(positive),
    predicted: |c| c.figures.predicted.as_ref()?.p50_us,
    unranked: latency_rule,
    show: fmt_us,
    whole: fmt_us,
    quantile: Some((0.5, requests)),
    counts: None,
};

pub const P99: Metric = Metric {
    name: "p99 latency",
    short: "p99",
    higher_is_better: false,
    largest_only: false,
    read: |c| c.figures.p99_us.and_then(positive),
    predicted: |c| c.figures.predicted.as_ref()?.p99_us,
    unranked: latency_rule,
    show: fmt_us,
    whole: fmt_us,
    quantile: Some((0.99, requests)),
    counts: None,
};

pub const P999: Metric = Metric {
    name: "p99.9 latency",
    short: "p99.9",
    higher_is_better: false,
    largest_only: false,
    read: |c| c.figures.p999_us.and_then(positive),
    predicted: none,
    unranked: latency_rule,
    show: fmt_us,
    whole: fmt_us,
    quantile: Some((0.999, requests)),
    counts: None,
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
    quantile: None,
    counts: None,
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
    quantile: None,
    counts: None,
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
    quantile: None,
    counts: None,
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
    quantile: None,
    counts: None,
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
    quantile: None,
    counts: None,
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
    quantile: Some((0.99, |c| c.figures.streams.as_ref()?.gaps)),
    counts: None,
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
    quantile: Some((0.99, |c| c.figures.streams.as_ref()?.first_events)),
    counts: None,
};

/// Event streams: the share of events the server sent more than `--stream-slack` after their
/// due time (its own clock, its stats line, over the whole run, warm-up included), ranked as a
/// share: 3.98 % late against 0.12 % is 34 times as often, not "1.04×" of the shares on time.
/// None late is a measured figure (the rule of three bounds it), not an absent one.
pub const LATE: Metric = Metric {
    name: "late events",
    short: "late",
    higher_is_better: false,
    largest_only: false,
    read: |c| c.figures.streams.as_ref()?.late_pct(),
    predicted: none,
    unranked: always,
    show: |v| pct(v),
    whole: |v| format!("{v:.4}%"),
    quantile: None,
    counts: Some(|c| {
        let s = c.figures.streams.as_ref()?;
        Some((s.server_late?, s.server_events.filter(|n| *n > 0)?))
    }),
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
    quantile: None,
    counts: None,
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
    &LATE,
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
