//! Ranking targets on one metric: each target's medians per connection count (freed of a
//! paired round's drift), the counts every ranked target ran, the best and the runner-up by
//! the ratios over them, and whether their gap is clear: by the interval of their rounds'
//! ratios against the A/A twin's noise ([`interval`](super::interval)), or for a share of
//! events by its counts' Poisson intervals. One round is not judged.

use super::finding::{Behind, Finding};
use super::interval;
use super::metric::{at_least, rankable, shares_apart, Metric};
use crate::bench::record::{in_round, spread, Cell, Spread};

/// One target at one connection count: its median over the repeats, and their range.
#[derive(Debug, Clone, Copy)]
pub(super) struct Row {
    connections: usize,
    spread: Spread,
}

/// One target's rows of a metric, by connection count.
#[derive(Debug, Clone)]
pub(super) struct TargetRows {
    target: String,
    rows: Vec<Row>,
}

impl TargetRows {
    /// The row at `n` connections (a count every ranked target has).
    fn at(&self, n: usize) -> Spread {
        self.rows
            .iter()
            .find(|r| r.connections == n)
            .expect("shared count")
            .spread
    }

    fn has(&self, n: usize) -> bool {
        self.rows.iter().any(|r| r.connections == n)
    }
}

/// The medians and spreads of one metric, per target and connection count. Paired repeats
/// (every target measured in each round) are first freed of each round's drift: a value is
/// divided by its round's [`drift`], so targets are ranked by how they did against each other
/// within rounds, as the per-round ratios compare them, not by medians a drifting round skews.
pub(super) fn table(
    cells: &[&Cell],
    beside: &[&Cell],
    targets: &[String],
    m: &Metric,
    paired: bool,
) -> Vec<TargetRows> {
    // A share is ranked no finer than its counts resolve: below the rule of three's bound
    // (3 in its count) none late and a few late are the same figure, and a share of 0 would
    // make every ratio to it infinite.
    let get = |c: &Cell| {
        let v = rankable(m, c, beside).ranked()?.get();
        Some(match m.counts.and_then(|counts| counts(c)) {
            Some((_, of)) if of > 0 => v.max(300.0 / of as f64),
            _ => v,
        })
    };
    let value = |c: &Cell| match paired {
        true => in_round(cells, &get, c),
        false => get(c),
    };
    targets
        .iter()
        .map(|t| {
            let mut counts: Vec<usize> = cells.iter().filter(|c| &c.target == t).map(|c| c.connections).collect();
            counts.sort_unstable();
            counts.dedup();
            let rows = counts
                .into_iter()
                .filter_map(|n| {
                    let xs: Vec<f64> = cells
                        .iter()
                        .filter(|c| &c.target == t && c.connections == n)
                        .filter_map(|c| value(c))
                        .collect();
                    spread(xs).map(|spread| Row { connections: n, spread })
                })
                .collect();
            TargetRows {
                target: t.clone(),
                rows,
            }
        })
        .filter(|t| !t.rows.is_empty())
        .collect()
}

/// The targets ranked: those measured at every connection count (the others, when that leaves
/// two or more, are named as not ranked: a count failed, or its figure does not count there),
/// and the counts all of them share.
pub(super) fn complete_rows(all: Vec<TargetRows>) -> (Vec<TargetRows>, Vec<String>, Vec<usize>) {
    let mut union: Vec<usize> = all.iter().flat_map(|t| t.rows.iter().map(|r| r.connections)).collect();
    union.sort_unstable();
    union.dedup();
    let complete: Vec<TargetRows> = all.iter().filter(|t| t.rows.len() == union.len()).cloned().collect();
    let ranked = if complete.len() >= 2 { complete } else { all.clone() };
    let unranked = all
        .iter()
        .filter(|a| !ranked.iter().any(|r| r.target == a.target))
        .map(|a| a.target.clone())
        .collect();
    let shared = ranked[0]
        .rows
        .iter()
        .map(|r| r.connections)
        .filter(|&n| ranked.iter().all(|t| t.has(n)))
        .collect();
    (ranked, unranked, shared)
}

/// Each target scored by how far it is from the best at each shared count (the geometric mean
/// of the ratios; 0 is the best everywhere), best first.
pub(super) fn scored<'t>(m: &Metric, targets: &'t [TargetRows], shared: &[usize]) -> Vec<(f64, &'t TargetRows)> {
    let best_at = |n: usize| {
        targets
            .iter()
            .map(|t| t.at(n).median)
            .reduce(|a, v| m.best_of(a, v))
            .expect("two targets")
    };
    let score = |t: &TargetRows| {
        shared
            .iter()
            .map(|&n| m.better(best_at(n), t.at(n).median).ln())
            .sum::<f64>()
            / shared.len() as f64
    };
    let mut ranked: Vec<(f64, &TargetRows)> = targets.iter().map(|t| (score(t), t)).collect();
    ranked.sort_by(|a, b| a.0.total_cmp(&b.0));
    ranked
}

pub(super) fn finding(
    cells: &[&Cell],
    twins: &[&Cell],
    targets: &[String],
    m: &Metric,
    paired: bool,
) -> Option<Finding> {
    let largest = cells.iter().map(|c| c.connections).max()?;
    let beside = cells;
    let cells: Vec<&Cell> = cells
        .iter()
        .copied()
        .filter(|c| !m.largest_only || c.connections == largest)
        .collect();
    let cells = &cells[..];
    // What may be ranked is `metric::rankable`'s to say (a design that starved connections or
    // lost requests in any cell is named best on nothing; too few samples rank nothing).
    // Targets measured but ranked nowhere are named as not ranked.
    let all = table(cells, beside, targets, m, paired);
    let measured_only: Vec<String> = targets
        .iter()
        .filter(|t| !all.iter().any(|r| &r.target == *t))
        .filter(|t| cells.iter().any(|c| &c.target == *t && m.value(c).is_some()))
        .cloned()
        .collect();
    if all.len() < 2 {
        return None;
    }
    let (t, mut unranked, shared) = complete_rows(all);
    unranked.extend(measured_only);
    if shared.is_empty() {
        return None;
    }
    let ranked = scored(m, &t, &shared);
    let (best, second) = (ranked[0].1, ranked[1].1);
    let medians_ratio = (shared
        .iter()
        .map(|&n| ratio_at(m, cells, best, second, n).ln())
        .sum::<f64>()
        / shared.len() as f64)
        .exp();
    let (judged, clear) = judge_gap(cells, twins, m, &best.target, &second.target, &shared);
    let ratio = judged.and_then(|j| j.ratio()).unwrap_or(medians_ratio);
    // A difference under what the measurement resolves (memory: a mebibyte over all the
    // connections) is no difference, whatever its ratio.
    let n = *shared.last().expect("shared is not empty");
    let clear = clear && super::metric::resolved(m, best.at(n).median, second.at(n).median, n);
    let behind = behind(cells, beside, twins, m, &ranked, &unranked, &shared);
    let worst = behind.as_ref().map(|b| (b.target.clone(), b.ratio));
    let last = *shared.last().expect("not empty");
    let client_bound_cells = cells
        .iter()
        .filter(|c| (c.target == best.target || c.target == second.target) && shared.contains(&c.connections))
        .filter(|c| super::bound::client_limit(c).is_some())
        .count();
    Some(Finding {
        metric: m.name.into(),
        best: best.target.clone(),
        runner_up: second.target.clone(),
        ratio,
        clear,
        best_value: best.at(last).median,
        runner_up_value: second.at(last).median,
        connections: last,
        client_bound_cells,
        last: worst,
        unranked,
        class: None,
        placed: None,
        why: String::new(),
        counts: counts_at(m, cells, &best.target, last).zip(counts_at(m, cells, &second.target, last)),
        interval: judged.and_then(|j| j.interval()),
        rounds: rounds_of(cells),
        behind,
    })
}

/// Who fell behind, judged against the best as the finding is: the last of the ranking (with
/// three targets or more), or a target the rule does not rank whose figure only bounds its
/// cost from below ([`at_least`]) where that bound is already worse than every ranked target's
/// at every shared count (it can only be further behind).
fn behind(
    cells: &[&Cell],
    beside: &[&Cell],
    twins: &[&Cell],
    m: &Metric,
    ranked: &[(f64, &TargetRows)],
    unranked: &[String],
    shared: &[usize],
) -> Option<Behind> {
    let best = &ranked[0].1.target;
    let n = *shared.last()?;
    let best_at_n = ranked[0].1.at(n).median;
    let bound = |t: &str, n: usize, r: usize| -> Option<f64> {
        let c = cells
            .iter()
            .find(|c| c.target == t && c.connections == n && c.repeat == r)?;
        at_least(m, c, beside)
    };
    // The bounded targets' medians per shared count, where each is worse than every ranked one.
    let bounded = unranked
        .iter()
        .filter_map(|t| {
            let medians: Vec<f64> = shared
                .iter()
                .map(|&n| {
                    let xs: Vec<f64> = (0..rounds_of(cells)).filter_map(|r| bound(t, n, r)).collect();
                    spread(xs).map(|s| s.median)
                })
                .collect::<Option<_>>()?;
            let behind_all = shared
                .iter()
                .zip(&medians)
                .all(|(&n, &v)| ranked.iter().all(|(_, r)| m.better(r.at(n).median, v) > 1.0));
            behind_all.then_some((t, medians))
        })
        .max_by(|a, b| {
            let score = |ms: &[f64]| {
                ms.iter()
                    .zip(shared)
                    .map(|(&v, &n)| m.better(ranked[0].1.at(n).median, v).ln())
                    .sum::<f64>()
            };
            score(&a.1).total_cmp(&score(&b.1))
        });
    let (target, at_least, worst_at_n) = match bounded {
        Some((t, medians)) => (t.clone(), true, *medians.last()?),
        None if ranked.len() > 2 => {
            let w = ranked.last()?.1;
            (w.target.clone(), false, w.at(n).median)
        }
        None => return None,
    };
    let value = |t: &str, n: usize, r: usize| match at_least {
        true if t == target => bound(t, n, r),
        _ => in_round_value(cells, m, t, n, r),
    };
    let scored_ratio = (shared
        .iter()
        .map(|&n| {
            let v = match at_least {
                true => {
                    let xs: Vec<f64> = (0..rounds_of(cells)).filter_map(|r| bound(&target, n, r)).collect();
                    spread(xs).map_or(f64::NAN, |s| s.median)
                }
                false => ranked.last().expect("three or more").1.at(n).median,
            };
            m.better(ranked[0].1.at(n).median, v).ln()
        })
        .sum::<f64>()
        / shared.len() as f64)
        .exp();
    let (interval, clear) = match m.counts {
        Some(_) => {
            let apart = match (counts_at(m, cells, best, n), counts_at(m, cells, &target, n)) {
                (Some(a), Some(b)) => shares_apart(a, b),
                _ => false,
            };
            (None, apart)
        }
        None => {
            let logs = round_logs(shared, rounds_of(cells), |n, r| {
                Some(m.better(value(best, n, r)?, value(&target, n, r)?).ln())
            });
            let j = interval::judge(&logs, twin_sd(twins, cells, m, shared));
            (j.interval(), j.clear())
        }
    };
    Some(Behind {
        ratio: interval.map_or(scored_ratio, |i| i.ratio),
        clear: clear && super::metric::resolved(m, best_at_n, worst_at_n, n),
        target,
        at_least,
        interval,
    })
}

/// Whether `best` and `second` are apart on `m` over `shared`: a share by its counts' Poisson
/// intervals (at most of the counts); every other metric by the interval of its rounds, the
/// twin's noise beside the rounds' own (`None` for a share).
fn judge_gap(
    cells: &[&Cell],
    twins: &[&Cell],
    m: &Metric,
    best: &str,
    second: &str,
    shared: &[usize],
) -> (Option<interval::Judged>, bool) {
    match m.counts {
        Some(_) => {
            let apart = shared
                .iter()
                .filter(
                    |&&n| match (counts_at(m, cells, best, n), counts_at(m, cells, second, n)) {
                        (Some(a), Some(b)) => shares_apart(a, b),
                        _ => false,
                    },
                )
                .count();
            (None, apart * 2 > shared.len())
        }
        None => {
            let logs = round_logs(shared, rounds_of(cells), |n, r| {
                let b = in_round_value(cells, m, best, n, r)?;
                Some(m.better(b, in_round_value(cells, m, second, n, r)?).ln())
            });
            let j = interval::judge(&logs, twin_sd(twins, cells, m, shared));
            (Some(j), j.clear())
        }
    }
}

/// How many rounds `cells` ran (their repeats).
fn rounds_of(cells: &[&Cell]) -> usize {
    cells.iter().map(|c| c.repeat + 1).max().unwrap_or(0)
}

/// The value of `m` for `target` at `n` connections in round `r`, where the rule ranks it.
fn in_round_value(cells: &[&Cell], m: &Metric, target: &str, n: usize, r: usize) -> Option<f64> {
    cells
        .iter()
        .find(|c| c.target == target && c.connections == n && c.repeat == r)
        .and_then(|c| rankable(m, c, cells).ranked())
        .map(|v| v.get())
}

/// Per round, the mean over the shared counts of `log_at(count, round)` (the log of how many
/// times better one target was than the other there; `None` where either was not ranked): the
/// log of their geometric mean. Rounds with no count measured are left out.
fn round_logs(shared: &[usize], rounds: usize, log_at: impl Fn(usize, usize) -> Option<f64>) -> Vec<f64> {
    (0..rounds)
        .filter_map(|r| {
            let logs: Vec<f64> = shared
                .iter()
                .filter_map(|&n| log_at(n, r).filter(|l| l.is_finite()))
                .collect();
            (!logs.is_empty()).then(|| logs.iter().sum::<f64>() / logs.len() as f64)
        })
        .collect()
}

/// The A/A twin's noise on `m` at the shared counts: each twin cell against its original (the
/// same design, count and round), both ranked; `None` without a pair.
pub(super) fn twin_sd(twins: &[&Cell], cells: &[&Cell], m: &Metric, shared: &[usize]) -> Option<f64> {
    let logs: Vec<f64> = twins
        .iter()
        .filter(|t| shared.contains(&t.connections))
        .filter_map(|t| {
            let o = cells
                .iter()
                .find(|c| c.target == t.target && c.connections == t.connections && c.repeat == t.repeat)?;
            let (a, b) = (rankable(m, t, cells).ranked()?, rankable(m, o, cells).ranked()?);
            Some(m.better(a.get(), b.get()).ln()).filter(|l| l.is_finite())
        })
        .collect();
    interval::twin_sd(&logs)
}

/// A share's counts for `target` at `n` connections, over its ranked cells (how many of how
/// many); `None` for a metric that is no share.
fn counts_at(m: &Metric, cells: &[&Cell], target: &str, n: usize) -> Option<(u64, u64)> {
    let counts = m.counts?;
    cells
        .iter()
        .filter(|c| c.target == target && c.connections == n && rankable(m, c, cells).ranked().is_some())
        .filter_map(|c| counts(c))
        .reduce(|a, b| (a.0 + b.0, a.1 + b.1))
}

/// How many times better `best` is than `second` at `n`: their medians' ratio; for a share
/// whose best is none at all, against the rule of three's bound (3 in its count), so a ratio
/// is never infinite and never claims more than the counts support.
fn ratio_at(m: &Metric, cells: &[&Cell], best: &TargetRows, second: &TargetRows, n: usize) -> f64 {
    let (b, s) = (best.at(n).median, second.at(n).median);
    match counts_at(m, cells, &best.target, n) {
        Some((0, of)) if of > 0 => m.better((300.0 / of as f64).max(b), s).max(1.0),
        _ => m.better(b, s),
    }
}
