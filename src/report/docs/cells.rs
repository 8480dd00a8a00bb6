//! The `cells` block: a table of a kept run's cells' figures, a row per target and connection
//! count (the median of its repeats), a column per figure (a metric, of a request class or of
//! every request, or a counter no verdict ranks).

use serde::Deserialize;

use super::ctx::Ctx;
use super::error::DocsError;
use super::kept::Kept;
use super::markdown::{table_head, table_row};
use crate::bench::judge::{as_class, Metric};
use crate::bench::record::Cell;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CellsSpec {
    result: String,
    /// The experiments whose cells it shows (one table; an `experiment` column with more than
    /// one).
    experiments: Vec<String>,
    /// Metrics by name or column head (`throughput`, `p99`, `CPU/request`, `KiB/conn`), a
    /// class's before its head (`short p99`).
    figures: Vec<String>,
    /// Only these targets (labels as the results name them), in this order.
    #[serde(default)]
    targets: Vec<String>,
    /// Only these connection counts.
    #[serde(default)]
    connections: Vec<usize>,
    /// The figures to show the design's predicted value beside (`p99`, `short p99`).
    #[serde(default)]
    predicted: Vec<String>,
    /// Calibration cells too (never ranked; labelled as such).
    #[serde(default)]
    calibration: bool,
}

/// A figure a table shows: a metric, of one request class or of every request, or a counter
/// no verdict ranks.
pub(super) struct Figure {
    pub(super) key: String,
    pub(super) class: Option<String>,
    pub(super) what: What,
}

/// What a figure reads.
#[derive(Clone, Copy)]
pub(super) enum What {
    Metric(&'static Metric),
    Counter(&'static Counter),
}

/// A cell's counter a table may show beside the metrics.
pub(super) struct Counter {
    head: &'static str,
    read: fn(&Cell) -> Option<f64>,
    show: fn(f64) -> String,
}

/// The counters a table may show.
const COUNTERS: [Counter; 11] = [
    Counter {
        head: "held",
        read: |c| Some(c.figures.established as f64),
        show: |v| crate::units::thousands(v as u64),
    },
    Counter {
        head: "server held",
        read: |c| c.server_stats.as_ref().and_then(|s| s.held_peak).map(|n| n as f64),
        show: |v| crate::units::thousands(v as u64),
    },
    Counter {
        head: "TCP KiB/conn",
        read: |c| c.ok().then_some(c.figures.kernel_tcp_kib_per_conn),
        show: |v| format!("{v:.2} KiB"),
    },
    Counter {
        head: "user B/conn",
        read: |c| c.figures.mem_per_conn_kib.map(|k| k * 1024.0),
        show: |v| format!("{v:.0} B"),
    },
    Counter {
        head: "kernel KiB/conn",
        read: |c| c.figures.kernel_slab_kib_per_conn,
        show: |v| format!("{v:.2} KiB"),
    },
    Counter {
        head: "time to open",
        read: |c| c.load.as_ref().map(|d| d.results.connections.connecting_s),
        show: |v| format!("{v:.1} s"),
    },
    Counter {
        head: "errors",
        read: |c| c.ok().then_some(c.figures.errors as f64),
        show: |v| crate::units::thousands(v as u64),
    },
    Counter {
        head: "Jain workers",
        read: |c| c.figures.jain_workers,
        show: |v| format!("{v:.3}"),
    },
    Counter {
        head: "races/accept",
        read: |c| c.figures.lost_races_per_accept,
        show: |v| format!("{v:.2}"),
    },
    Counter {
        head: "switches/request",
        read: |c| c.figures.switches_per_req(),
        show: |v| format!("{v:.2}"),
    },
    Counter {
        head: "useful",
        read: |c| c.figures.useful_ratio.map(|u| u * 100.0),
        show: |v| format!("{v:.2}%"),
    },
];

impl What {
    fn named(key: &str) -> Option<What> {
        let m = crate::bench::judge::metric::ALL
            .into_iter()
            .find(|m| m.name == key || m.short == key);
        m.map(What::Metric)
            .or_else(|| COUNTERS.iter().find(|c| c.head == key).map(What::Counter))
    }

    fn head(self) -> &'static str {
        match self {
            What::Metric(m) => m.short,
            What::Counter(c) => c.head,
        }
    }

    fn value(self, c: &Cell) -> Option<f64> {
        match self {
            What::Metric(m) => m.value(c),
            What::Counter(k) => (k.read)(c),
        }
    }

    fn predicted(self, c: &Cell) -> Option<f64> {
        match self {
            What::Metric(m) => m.predicted(c),
            What::Counter(_) => None,
        }
    }

    fn whole(self, v: f64) -> String {
        match self {
            What::Metric(m) => m.whole(v),
            What::Counter(k) => (k.show)(v),
        }
    }
}

impl Figure {
    fn parse(key: &str) -> Result<Figure, DocsError> {
        if let Some(what) = What::named(key) {
            return Ok(Figure {
                key: key.into(),
                class: None,
                what,
            });
        }
        match key
            .split_once(' ')
            .and_then(|(class, m)| Some((class, What::named(m)?)))
        {
            Some((class, what @ What::Metric(_))) => Ok(Figure {
                key: key.into(),
                class: Some(class.into()),
                what,
            }),
            _ => Err(DocsError::NoFigure {
                key: key.to_string(),
                metrics: crate::bench::judge::metric::ALL.iter().map(|m| m.short).collect(),
                counters: COUNTERS.iter().map(|c| c.head).collect(),
            }),
        }
    }

    fn head(&self) -> String {
        match &self.class {
            Some(c) => format!("{c} {}", self.what.head()),
            None => self.what.head().to_string(),
        }
    }

    fn cell(&self, c: &Cell) -> Cell {
        match &self.class {
            Some(k) => as_class(c, k),
            None => c.clone(),
        }
    }

    /// The median over `cells` (repeats of one target and count), measured and predicted.
    pub(super) fn values(&self, cells: &[&Cell]) -> (Option<f64>, Option<f64>) {
        let seen: Vec<Cell> = cells.iter().filter(|c| c.ok()).map(|c| self.cell(c)).collect();
        (
            median(seen.iter().filter_map(|c| self.what.value(c)).collect()),
            median(seen.iter().filter_map(|c| self.what.predicted(c)).collect()),
        )
    }
}

/// `cells`: a row per target and connection count (the median of its repeats), a column per
/// figure, and what the terminal table notes of it. "–": not measured.
pub fn cells(ctx: &Ctx, spec: &str) -> Result<String, DocsError> {
    let s: CellsSpec = toml::from_str(spec)?;
    let k = Kept::read(ctx, &s.result)?;
    let figures = s
        .figures
        .iter()
        .map(|f| Figure::parse(f))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(p) = s.predicted.iter().find(|p| !s.figures.contains(p)) {
        return Err(DocsError::PredictedNotShown {
            key: p.clone(),
            figures: s.figures.clone(),
        });
    }
    for x in &s.experiments {
        k.verdict(x)?;
    }
    let all: Vec<&Cell> = k
        .results
        .cells
        .iter()
        .filter(|c| s.experiments.contains(&c.experiment) && !c.twin && (s.calibration || c.calibration.is_none()))
        .filter(|c| s.connections.is_empty() || s.connections.contains(&c.connections))
        .collect();
    for t in &s.targets {
        if !all.iter().any(|c| &c.label() == t) {
            return Err(DocsError::NoTarget {
                result: k.name.clone(),
                target: t.clone(),
                experiments: s.experiments.clone(),
            });
        }
    }
    // Rows in the order the run made them (or the spec's), repeats together.
    let mut rows: Vec<(String, String, usize)> = Vec::new();
    for c in &all {
        let key = (c.experiment.clone(), c.label(), c.connections);
        if !rows.contains(&key) && (s.targets.is_empty() || s.targets.contains(&key.1)) {
            rows.push(key);
        }
    }
    if !s.targets.is_empty() {
        rows.sort_by_key(|r| s.targets.iter().position(|t| *t == r.1));
    }
    let several = s.experiments.len() > 1;
    let mut head: Vec<String> = Vec::new();
    if several {
        head.push("experiment".into());
    }
    head.extend(["design".into(), "conns".into()]);
    head.extend(figures.iter().map(|f| f.head()));
    head.push("notes".into());
    let mut out = table_head(&head);
    for (x, label, n) in rows {
        let group: Vec<&Cell> = all
            .iter()
            .copied()
            .filter(|c| c.experiment == x && c.label() == label && c.connections == n)
            .collect();
        let mut row: Vec<String> = Vec::new();
        if several {
            row.push(x.clone());
        }
        row.push(label.clone());
        row.push(crate::units::thousands(n as u64));
        for f in &figures {
            let (v, p) = f.values(&group);
            let mut text = v.map_or("–".to_string(), |v| f.what.whole(v));
            if s.predicted.contains(&f.key) {
                text.push_str(&format!(" ({})", p.map_or("–".to_string(), |p| f.what.whole(p))));
            }
            row.push(text);
        }
        row.push(notes(&group));
        out.push_str(&table_row(&row));
    }
    Ok(out)
}

/// The notes of a target's cells: one cell's as the terminal says them; over repeats, each
/// with how many of the cells it held for.
fn notes(cells: &[&Cell]) -> String {
    let each: Vec<Vec<String>> = cells.iter().map(|c| crate::report::notes(c)).collect();
    let mut seen: Vec<String> = Vec::new();
    for n in each.iter().flatten() {
        if !seen.contains(n) {
            seen.push(n.clone());
        }
    }
    seen.iter()
        .map(|n| match cells.len() {
            1 => n.clone(),
            all => format!("{n} ({} of {all})", each.iter().filter(|e| e.contains(n)).count()),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The median of `xs` (`None`: empty).
pub fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => None,
        n if n % 2 == 1 => Some(xs[n / 2]),
        n => Some((xs[n / 2 - 1] + xs[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![3.0, 1.0, 2.0, 10.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
    }
}
