//! Lossless merging: the pieces of one run (shard processes, hosts, `--shard I/N` runs started
//! by any scheduler) add up to the run's result. Counts add, histograms add (HdrHistogram V2
//! travels between them), per-second series align by wall-clock second. Percentiles are never
//! averaged: they are read from the merged histogram.

use std::time::Duration;

use super::error::Error;
use super::unmergeable::{Difference, Unmergeable};
use super::Tally;
use super::{Document, Outcome, Part};

/// Where the pieces ran: on one machine their CPUs are shared, on separate hosts they add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Machines {
    Same,
    Separate,
}

/// Adds the pieces up. The merged window runs from the earliest start to the latest end;
/// each piece's per-second series is shifted by its start's whole seconds after the earliest.
pub fn outcomes(parts: &[Outcome], machines: Machines) -> Option<Outcome> {
    let start = parts.iter().map(|o| o.window_start_ms).min()?;
    let end_ms = |o: &Outcome| o.window_start_ms as f64 + o.elapsed.as_secs_f64() * 1e3;
    let end = parts.iter().map(end_ms).fold(start as f64, f64::max);
    let mut tally = Tally::default();
    for o in parts {
        let shift = ((o.window_start_ms - start) as f64 / 1e3).round() as usize;
        let mut t = o.tally.clone();
        t.per_second.splice(0..0, std::iter::repeat_n(0, shift));
        // The series shifts by the intervals its start is after the earliest.
        if let Some(us) = t.series_every_us.filter(|&us| us > 0) {
            let by = ((o.window_start_ms - start) as f64 * 1e3 / us as f64).round() as usize;
            let series = std::mem::take(&mut t.series);
            crate::load::series::merge(&mut t.series, &series, by);
        }
        tally.merge(&t);
    }
    // On one machine the parts share the CPUs this process may run on (its affinity, which
    // they inherit), not every CPU of the machine.
    let cores = crate::sys::affinity::get().map(|c| c.len()).unwrap_or(1).max(1);
    let slots: usize = parts.iter().map(|o| o.cpu_slots).sum();
    let offered: Vec<f64> = parts.iter().filter_map(|o| o.offered_rps).collect();
    Some(Outcome {
        tally,
        connections: parts.iter().map(|o| o.connections).sum(),
        offered_rps: (!offered.is_empty()).then(|| offered.iter().sum()),
        window_start_ms: start,
        elapsed: Duration::from_secs_f64((end - start as f64).max(0.0) / 1e3),
        connecting: parts.iter().map(|o| o.connecting).max().unwrap_or_default(),
        client_cpu: parts.iter().map(|o| o.client_cpu).sum(),
        cpu_slots: match machines {
            Machines::Same => slots.min(cores),
            Machines::Separate => slots,
        },
        threads: parts.iter().map(|o| o.threads).max().unwrap_or(1),
        shards: parts.iter().map(|o| o.shards).sum(),
        interrupted: parts.iter().any(|o| o.interrupted),
    })
}

/// `muxlab merge`: adds documents up into one of the same form (itself mergeable). The flags
/// are the first document's; when the documents are the shares `--shard 0/N` .. `N-1/N` of one
/// run they describe that run, otherwise the totals (connections, requests, rate) are summed.
pub fn documents(docs: &[(String, Document)]) -> Result<Document, Error> {
    let (first_name, first) = docs.first().ok_or(Unmergeable::Nothing)?;
    for (name, doc) in docs {
        let differ = |difference| Unmergeable::Differ {
            name: name.clone(),
            first: first_name.clone(),
            difference,
        };
        if doc.config.kind != first.config.kind {
            return Err(differ(Difference::Kind {
                kind: doc.config.kind.clone(),
                first: first.config.kind.clone(),
            })
            .into());
        }
        // Classes add up by their place in the mix: the mixes must be the same.
        let names = |d: &Document| d.config.classes.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        if names(doc) != names(first) {
            return Err(differ(Difference::Classes {
                classes: names(doc),
                first: names(first),
            })
            .into());
        }
        // Series add up interval by interval: every piece keeps one, of the same interval.
        let every = |d: &Document| d.outcome().tally.series_every_us;
        if every(doc) != every(first) {
            return Err(differ(Difference::Series {
                every_us: every(doc),
                first: every(first),
            })
            .into());
        }
    }
    let parts: Vec<Outcome> = docs.iter().map(|(_, d)| d.outcome().clone()).collect();
    let merged = outcomes(&parts, Machines::Separate).expect("at least one part");
    let mut out = first.clone();
    // A piece's gates were judged on that piece, not on the sum.
    out.gates.clear();
    let n = docs.len();
    let mut shares: Vec<Option<&str>> = docs.iter().map(|(_, d)| d.config.shard.as_deref()).collect();
    shares.sort();
    shares.dedup();
    let whole_run = shares.len() == n
        && (0..n).all(|i| shares.contains(&Some(format!("{i}/{n}").as_str())))
        && docs
            .iter()
            .all(|(_, d)| d.config.connections == first.config.connections);
    if !whole_run {
        let all =
            |get: fn(&Document) -> Option<f64>| -> Option<Vec<f64>> { docs.iter().map(|(_, d)| get(d)).collect() };
        out.config.connections = merged.connections;
        out.config.requests = all(|d| d.config.requests.map(|n| n as f64)).map(|xs| xs.iter().sum::<f64>() as u64);
        out.config.rate = all(|d| d.config.rate).map(|xs| xs.iter().sum());
    }
    out.config.shard = None;
    out.config.shards = merged.shards;
    let saturated = parts.iter().any(Outcome::saturated);
    out.set_outcome(merged);
    out.parts = docs
        .iter()
        .zip(&parts)
        .map(|((name, d), o)| Part::of(name, o, Some(d.environment.clone())))
        .collect();
    out.results.client_saturated |= saturated;
    Ok(out)
}

#[cfg(test)]
mod client_bound {
    use std::time::Duration;

    use crate::load::merge::{outcomes, Machines};
    use crate::load::{Outcome, Tally};

    fn utilization(o: &Outcome) -> f64 {
        o.utilization()
    }

    fn outcome(cpu_ms: u64, slots: usize) -> Outcome {
        Outcome {
            tally: Tally::default(),
            connections: 1,
            offered_rps: None,
            window_start_ms: 0,
            elapsed: Duration::from_secs(1),
            connecting: Duration::ZERO,
            client_cpu: Duration::from_millis(cpu_ms),
            cpu_slots: slots,
            threads: slots,
            shards: 1,
            interrupted: false,
        }
    }

    /// The flag divides the window's client CPU by the CPUs the client could use: a client
    /// busy 95 % of one CPU is bound; the same CPU time over two CPUs is not.
    #[test]
    fn utilization_counts_the_cpus_the_client_may_use_both_ways() {
        assert!(utilization(&outcome(950, 1)) > 0.9);
        assert!(utilization(&outcome(950, 2)) < 0.5);
        assert!(utilization(&outcome(100, 1)) < 0.9);
    }

    /// Parts of a split run on one machine share the CPUs this process may use (its affinity,
    /// which they inherit): two parts pinned to one CPU, each busy half the window, are one
    /// saturated CPU, not half of two.
    #[test]
    fn a_split_run_on_one_pinned_cpu_is_flagged() {
        let me = crate::sys::affinity::get().unwrap();
        crate::sys::affinity::set(&me[..1]).unwrap();
        let merged = outcomes(&[outcome(480, 1), outcome(480, 1)], Machines::Same).unwrap();
        crate::sys::affinity::set(&me).unwrap();
        assert_eq!(merged.cpu_slots, 1);
        assert!(utilization(&merged) > 0.9, "{}", utilization(&merged));
    }
}
