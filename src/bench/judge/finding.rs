//! What the judge finds, as data: a [`Finding`] per metric (the best, the runner-up, their
//! ratio and whether it is beyond the noise), the [`Reason`]s behind it, and the [`AaFigure`]
//! of a paired experiment; an experiment's verdict gathers them (`verdict`).

use serde::{Deserialize, Serialize};

use super::interval::Interval;
use super::metric::{Metric, P99};
use crate::units::thousands;

/// A throughput finding's reason where the client set the rate and both kept up with it.
pub const OFFERED: &str = "an open loop both kept up with";

/// One metric's finding.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    pub metric: String,
    pub best: String,
    pub runner_up: String,
    /// How many times better the best is: the geometric mean of its rounds' ratios (one round:
    /// of the shared counts). The best is ranked by its drift-freed medians, so where the
    /// rounds disagree with them this can be under 1, and the gap is then never clear.
    pub ratio: f64,
    /// The gap is clear: the interval of its rounds' ratios lies beyond 5 % (a share: its
    /// counts' Poisson intervals apart). One round is never clear: it is not judged.
    pub clear: bool,
    /// The two medians at the largest shared connection count (paired repeats: freed of each
    /// round's drift first), and that count.
    pub best_value: f64,
    pub runner_up_value: f64,
    pub connections: usize,
    /// Cells of the two targets (shared counts) where the client was saturated.
    pub client_bound_cells: usize,
    /// The last of the ranking and how many times worse than the best it is (when more than
    /// two targets ran).
    pub last: Option<(String, f64)>,
    /// Targets left out of the ranking: not measured at every connection count (for p99, a
    /// cell that starved connections does not count: its latency covers only the served ones).
    #[serde(default)]
    pub unranked: Vec<String>,
    /// The request class the finding is about (`None`: every request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Where the targets it ranks ran, where the experiment's targets were not all placed alike
    /// ("server on CPUs 0-1"): it ranks those alone (`None`: every target placed alike).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placed: Option<String>,
    /// Why it is clear or not, in a few words (the verdict table's reason).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
    /// A share (late events): the best's and the runner-up's counts at that count, how many of
    /// how many (`None`: not a share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<((u64, u64), (u64, u64))>,
    /// The interval of the rounds' ratios (`None`: one round, not judged; or a share, judged
    /// by its counts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// How many rounds the experiment ran (the interval says how many of them ranked both).
    #[serde(default)]
    pub rounds: usize,
    /// Who fell behind: the last of the ranking judged against the best over the rounds
    /// (`None`: only the best and the runner-up, which the finding itself judges).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<Behind>,
}

/// The last of a ranking against its best, judged as the finding is: over its rounds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Behind {
    pub target: String,
    /// How many times worse than the best (the rounds' geometric mean; one round: its ratio).
    pub ratio: f64,
    /// Its figure only bounds its cost from below (`metric::at_least`: memory of a design that
    /// starved connections), so it is at least this far behind.
    #[serde(default)]
    pub at_least: bool,
    /// The interval of its rounds' ratios (`None`: one round, not judged; or a share).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Interval>,
    /// Behind beyond the noise: its interval past 5 % (a share: counts apart), over what the
    /// measurement resolves.
    pub clear: bool,
}

impl Behind {
    /// "thread at least 35.00× behind (3 rounds, 14.20–90.10×)", "tokio 2.74× behind (one
    /// round: not judged)", with "within the noise" where the rounds do not put it behind; a
    /// share judged by its counts says so.
    pub fn said(&self, rounds: usize) -> String {
        let how = match (self.interval, self.clear) {
            (Some(i), true) => i.said(),
            (Some(i), false) => format!("within the noise: {}", i.said()),
            (None, true) => "counts' Poisson intervals apart".into(),
            (None, _) if rounds > 1 => {
                format!("ranked beside the best in fewer than 2 of its {rounds} rounds: not judged")
            }
            (None, _) => "one round: not judged".into(),
        };
        format!(
            "{}{} {:.2}× behind ({how})",
            self.target,
            if self.at_least { " at least" } else { "" },
            self.ratio
        )
    }
}

/// A counter given as the reason for a lead: its values for the best and the runner-up.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Reason {
    pub counter: String,
    pub best: f64,
    pub runner_up: f64,
}

/// How far apart one target measured against itself in the same rounds: differences smaller
/// than this are not resolved on this machine.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AaFigure {
    pub target: String,
    pub metric: String,
    /// Rounds (connection counts × repeats) with both measured.
    pub rounds: usize,
    /// The median and the largest difference of a round, per cent of the smaller value.
    #[serde(default)]
    pub median_diff_pct: f64,
    pub max_diff_pct: f64,
}

impl Finding {
    /// Where the targets it ranks ran, as a sentence adds it: " (server on CPUs 0-1)", or
    /// nothing where every target was placed alike.
    pub fn placed_said(&self) -> String {
        self.placed.as_ref().map_or(String::new(), |p| format!(" ({p})"))
    }

    /// Whether the gap is over what the measurement resolves (memory: a mebibyte over all the
    /// connections; every other metric: always).
    pub fn resolved(&self) -> bool {
        super::metric::resolved(self.metric(), self.best_value, self.runner_up_value, self.connections)
    }

    /// Why a finding is not clear, in a few words: under what the measurement resolves, one
    /// round (not judged), within 5 % over its rounds, or rounds that do not separate them.
    pub(super) fn noise(&self) -> String {
        let f = self;
        if f.counts.is_some() {
            return "their counts' 95% Poisson intervals overlap".into();
        }
        if !f.resolved() {
            return format!(
                "{} KiB apart over all {} connections: under the {} MiB the measurement resolves",
                ((f.runner_up_value - f.best_value).abs() * f.connections as f64).round(),
                thousands(f.connections as u64),
                super::metric::MEMORY_RESOLVES_KIB / 1024.0
            );
        }
        match f.interval {
            None => f.not_judged(),
            Some(i) if i.within_margin() => format!("within 5 %: {}", i.said()),
            Some(i) => format!("the rounds do not separate them: {}", i.said()),
        }
    }

    /// How sure the finding is, as the verdict table says it: the rounds and the interval, a
    /// share's counts, or one round.
    pub fn confidence(&self) -> String {
        match (self.interval, self.counts) {
            (Some(i), _) => i.said(),
            (None, Some(_)) => "counts' Poisson intervals".into(),
            (None, None) => self.not_judged(),
        }
    }

    /// Why a gap with no interval is not judged: one round, or fewer than two of its rounds
    /// ranked both targets (the others bound by the client, starved, or short of samples).
    pub fn not_judged(&self) -> String {
        match self.rounds > 1 {
            true => format!(
                "ranked together in fewer than 2 of its {} rounds: not judged",
                self.rounds
            ),
            false => "one round: not judged".into(),
        }
    }

    /// The metric the finding ranks.
    pub fn metric(&self) -> &'static Metric {
        Metric::named(&self.metric).expect("findings are made of the known metrics")
    }

    /// The finding in a sentence.
    pub(super) fn sentence(&self) -> String {
        let f = self;
        let m = f.metric();
        let at = format!("at {} connections", thousands(f.connections as u64));
        // The rank is over every connection count; at the largest the order can flip.
        let flipped = m.better(f.best_value, f.runner_up_value) < 1.0;
        let title = match &f.class {
            Some(c) => format!("{} of {c} requests", capitalized(&f.metric)),
            None => capitalized(&f.metric),
        };
        let mut s = if f.clear {
            format!(
                "{title}: {} is best{}, {:.2}× {} ({} against {} {at}{}; {})",
                f.best,
                if flipped { " over all counts" } else { "" },
                f.ratio,
                f.runner_up,
                f.value_said(true),
                f.value_said(false),
                if flipped { ", where the order flips" } else { "" },
                f.confidence()
            )
        } else {
            format!(
                "{title}: no clear difference between {} and {} ({:.2}×, {})",
                f.best,
                f.runner_up,
                f.ratio,
                f.noise()
            )
        };
        match (&f.behind, &f.last) {
            (Some(b), _) => s.push_str(&format!("; last is {}", b.said(f.rounds))),
            (None, Some((t, r))) => s.push_str(&format!("; last is {t} at {r:.2}× the best")),
            (None, None) => {}
        }
        if !f.unranked.is_empty() {
            s.push_str(&format!(
                "; not ranked: {} ({})",
                f.unranked.join(", "),
                if f.metric == P99.name {
                    "connections starved or requests lost in a cell, the client the limit, too few samples, or a count missing"
                } else {
                    "starved connections or lost requests in a cell, the client the limit, too few samples, or a count not measured"
                }
            ));
        }
        s + "."
    }

    /// The best's (or the runner-up's) value as a sentence gives it: a share by its counts
    /// (none at all as the rule of three's bound), the others in the metric's unit.
    fn value_said(&self, best: bool) -> String {
        match (self.counts, best) {
            (Some((b, _)), true) => super::metric::share_said(b.0, b.1),
            (Some((_, r)), false) => super::metric::share_said(r.0, r.1),
            (None, true) => self.metric().show(self.best_value),
            (None, false) => self.metric().show(self.runner_up_value),
        }
    }
}

impl AaFigure {
    /// The A/A figure in a sentence.
    pub(super) fn sentence(&self) -> String {
        let a = self;
        format!(
            "A/A: {} against itself in the same rounds was {:.1}% apart in {} (median; up to {:.1}%, {} \
             pair{}): no interval above assumes less noise than this.",
            a.target,
            a.median_diff_pct,
            a.metric,
            a.max_diff_pct,
            a.rounds,
            if a.rounds == 1 { "" } else { "s" }
        )
    }
}

/// `s` with its first letter in upper case.
fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
