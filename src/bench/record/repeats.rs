//! The repeats of a cell taken together: medians and spreads, one summary row per (experiment,
//! target, connections), and for paired rounds each round's drift and values within rounds
//! (whether one target beat another is for the verdicts to say, from the rounds these keep).

use super::cell::Cell;

/// The median of `xs` (NaN when empty).
pub fn median(mut xs: Vec<f64>) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(|a, b| a.total_cmp(b));
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// A figure over its repeats (or rounds): the median, the lowest and the highest.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub lowest: f64,
    pub highest: f64,
}

/// The [`Spread`] of `xs` (None when empty).
pub fn spread(xs: Vec<f64>) -> Option<Spread> {
    let lowest = xs.iter().copied().reduce(f64::min)?;
    let highest = xs.iter().copied().reduce(f64::max)?;
    Some(Spread {
        median: median(xs),
        lowest,
        highest,
    })
}

/// How widely repeats spread: largest ÷ smallest − 1 (`None`: under two values, or a value not
/// above zero).
pub fn relative_spread(xs: &[f64]) -> Option<f64> {
    let s = spread(xs.to_vec()).filter(|_| xs.len() >= 2)?;
    (s.lowest > 0.0).then(|| s.highest / s.lowest - 1.0)
}

/// The repeats of one (experiment, target, connections) as one row: the cell of the median
/// throughput, and the lowest and highest throughput (NaN when no repeat finished).
#[derive(Debug, Clone)]
pub struct Summary {
    pub cell: Cell,
    pub lowest_rps: f64,
    pub highest_rps: f64,
}

/// Merges the repeats of each (experiment, target, connections) into a [`Summary`].
pub fn summarize(cells: &[Cell]) -> Vec<Summary> {
    let mut keys: Vec<(String, String, usize)> = Vec::new();
    for c in cells {
        let k = (c.experiment.clone(), c.label(), c.connections);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(e, t, n)| {
            let group: Vec<&Cell> = cells
                .iter()
                .filter(|c| c.experiment == e && c.label() == t && c.connections == n)
                .collect();
            let ok: Vec<&&Cell> = group.iter().filter(|c| c.ok()).collect();
            if ok.is_empty() {
                return Summary {
                    cell: (*group[0]).clone(),
                    lowest_rps: f64::NAN,
                    highest_rps: f64::NAN,
                };
            }
            let tps: Vec<f64> = ok.iter().map(|c| c.figures.throughput_rps).collect();
            let s = spread(tps).expect("ok is not empty");
            let pick = ok
                .iter()
                .min_by(|a, b| {
                    (a.figures.throughput_rps - s.median)
                        .abs()
                        .total_cmp(&(b.figures.throughput_rps - s.median).abs())
                })
                .unwrap();
            Summary {
                cell: (**pick).clone(),
                lowest_rps: s.lowest,
                highest_rps: s.highest,
            }
        })
        .collect()
}

/// A paired round's drift at `n` connections: the geometric mean of every target's value in
/// round `r` (`get` reads it), over the geometric mean of those of all rounds (1 for a round
/// like the others). Dividing by it compares targets within rounds.
pub fn drift(cells: &[&Cell], get: &dyn Fn(&Cell) -> Option<f64>, n: usize, r: usize) -> Option<f64> {
    let geo = |xs: Vec<f64>| (!xs.is_empty()).then(|| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp());
    let at_n = || cells.iter().filter(|c| c.connections == n);
    let round = |r: usize| geo(at_n().filter(|c| c.repeat == r).filter_map(|c| get(c)).collect());
    let mut rounds: Vec<usize> = at_n().map(|c| c.repeat).collect();
    rounds.sort_unstable();
    rounds.dedup();
    let all = geo(rounds.into_iter().filter_map(round).collect())?;
    Some(round(r)? / all)
}

/// Paired rounds: cell `c`'s value freed of its round's [`drift`] among `cells`.
pub fn in_round(cells: &[&Cell], get: &dyn Fn(&Cell) -> Option<f64>, c: &Cell) -> Option<f64> {
    Some(get(c)? / drift(cells, get, c.connections, c.repeat)?)
}

/// Paired rounds: `target`'s median at `n` connections of its values [`in_round`].
pub fn within_rounds(cells: &[&Cell], get: &dyn Fn(&Cell) -> Option<f64>, target: &str, n: usize) -> Option<f64> {
    let mine = cells.iter().filter(|c| c.label() == target && c.connections == n);
    spread(mine.filter_map(|c| in_round(cells, get, c)).collect()).map(|s| s.median)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_median_is_the_middle_value_or_the_mean_of_the_two_middle_ones() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(Vec::new()).is_nan(), "no value: no median");
    }
}
