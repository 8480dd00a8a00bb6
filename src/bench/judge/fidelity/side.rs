//! One target's side of a pair at one connection count: its finished rounds, its mean service
//! time E[S] (the unit its latency is read in), and per round what fidelity compares — p50
//! and p99 past the round trip, in its own E[S] — and what a gap is priced from (how busy it
//! kept its CPUs, how long its threads waited for one).

use super::super::card;
use super::super::metric::{median, rankable, Metric, Rank, Ranked, Unranked, CPU};
use crate::bench::record::{median as median_f64, Cell};
use crate::units::fmt_us;

/// One target at one connection count, as fidelity reads it.
pub(super) struct Side<'a> {
    pub(super) label: &'a str,
    /// Its finished rounds, by repeat.
    pub(super) rounds: Vec<&'a Cell>,
    /// Its mean service time (µs): its CPU per request in these cells and the work's mean
    /// blocking call; `None`: not measured.
    pub(super) service_us: Option<f64>,
    /// Where E[S] came from, in words.
    pub(super) service_from: String,
}

/// A figure of one round, in the side's own E[S], or why it is not compared.
/// With the shape, the figure as the rule ranked it: whether two were placed alike is its to say.
pub(super) type Shape = Result<(f64, Ranked), NotCompared>;

/// Why a side's figure of a round is not compared (said after the side's name: "node's ...").
#[derive(Debug, thiserror::Error)]
pub(super) enum NotCompared {
    #[error("E[S] was not measured")]
    NoService,
    #[error("{} is not compared: {}", metric.name, why.said())]
    Unranked { metric: &'static Metric, why: Unranked },
    #[error("{} was not measured", metric.name)]
    NotMeasured { metric: &'static Metric },
    #[error("{} ({}) is within the machine's round trip ({})", metric.name, fmt_us(*value), fmt_us(*rtt))]
    WithinRoundTrip {
        metric: &'static Metric,
        value: f64,
        rtt: f64,
    },
}

/// The median of the finite values of `xs` (`None`: none), as the repeats' rule takes it.
pub(super) fn median_of(mut xs: Vec<f64>) -> Option<f64> {
    xs.retain(|x| x.is_finite());
    Some(median_f64(xs)).filter(|m| !m.is_nan())
}

impl<'a> Side<'a> {
    /// `label`'s side at `conns`: its finished rounds among `beside` (the experiment's measured
    /// cells) and its E[S], their median CPU per request and `call`, the work's mean blocking
    /// call (µs, the same for both sides).
    pub(super) fn of(label: &'a str, conns: usize, beside: &[&'a Cell], call: f64) -> Side<'a> {
        let mut rounds: Vec<&Cell> = beside
            .iter()
            .copied()
            .filter(|c| c.target == label && c.connections == conns && c.ok())
            .collect();
        rounds.sort_by_key(|c| c.repeat);
        // Its cost at this very load: a cost read at another (a calibration cell, run for the
        // models alone; the experiment that set a `busy_of` rate) differs by what load makes of
        // it (a loop's batching, an idle runtime's housekeeping), and the busy share measured
        // here is this cost times the rate.
        let cpu = median_of(rounds.iter().filter_map(|c| c.figures.cpu_per_req()).collect());
        let rtt = rounds
            .iter()
            .all(|c| c.figures.why.as_ref().is_some_and(|w| w.round_trip_us.is_some()));
        let from = match rtt {
            true => "CPU per request in these cells".to_string(),
            false => "CPU per request in these cells (no round trip measured in a round: its latency taken whole)"
                .to_string(),
        };
        // A blocking call is served as much as the CPU: the mean call is part of E[S].
        let service_us = cpu.map(|c| c + call).filter(|s| *s > 0.0);
        let service_from = match (call > 0.0, service_us) {
            (_, None) => "no CPU per request measured".to_string(),
            (true, Some(_)) => format!("{from}, and the mean blocking call of {}", fmt_us(call)),
            (false, Some(_)) => from,
        };
        Side {
            label,
            rounds,
            service_us,
            service_from,
        }
    }

    /// The round of `repeat`, where it finished.
    pub(super) fn round(&self, repeat: usize) -> Option<&'a Cell> {
        self.rounds.iter().copied().find(|c| c.repeat == repeat)
    }

    /// `m` (p50 or p99) of round `c` past the round trip, in E[S]; why not where it may not be
    /// compared (`beside`: the experiment's cells, which say whether it may be ranked).
    pub(super) fn shape(&self, m: &'static Metric, c: &Cell, beside: &[&Cell]) -> Shape {
        let metric = m;
        let s = self.service_us.ok_or(NotCompared::NoService)?;
        let ranked = match rankable(m, c, beside) {
            Rank::Ranked(r) => r,
            Rank::Unranked(_, u) => return Err(NotCompared::Unranked { metric, why: u }),
            Rank::NotMeasured => return Err(NotCompared::NotMeasured { metric }),
        };
        let v = ranked.get();
        let rtt = c.figures.why.as_ref().and_then(|w| w.round_trip_us).unwrap_or(0.0);
        match v - rtt {
            r if r > 0.0 => Ok((r / s, ranked)),
            _ => Err(NotCompared::WithinRoundTrip { metric, value: v, rtt }),
        }
    }

    /// The share of its CPUs it kept busy in round `c`.
    pub(super) fn busy_in(c: &Cell) -> Option<f64> {
        let f = &c.figures;
        let n = f.why.as_ref()?.server_cpus?;
        Some(f.server_cpu_cores? / n.max(1) as f64).filter(|u| *u > 0.0)
    }

    /// The median share of its CPUs it kept busy over its rounds.
    pub(super) fn busy(&self) -> Option<f64> {
        median_of(self.rounds.iter().filter_map(|c| Side::busy_in(c)).collect())
    }

    /// Its threads' mean time waiting for a CPU per request, in E[S], the median over rounds.
    pub(super) fn run_queue(&self) -> Option<f64> {
        let s = self.service_us?;
        median_of(
            self.rounds
                .iter()
                .filter_map(|c| card::of(c)?.parts.into_iter().find(|p| p.name == "run-queue wait")?.us)
                .map(|us| us / s)
                .collect(),
        )
    }

    /// Its server CPU per request, the median over its finished rounds, as the rule ranks it.
    pub(super) fn cpu(&self, beside: &[&Cell]) -> Rank {
        if self.rounds.is_empty() {
            return Rank::NotMeasured;
        }
        let ranks: Vec<Rank> = self.rounds.iter().map(|c| rankable(&CPU, c, beside)).collect();
        median(&ranks)
    }
}
