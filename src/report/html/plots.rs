//! The charts of one experiment's section: throughput (with the seed's published numbers
//! dashed), p99, server CPU per request and fairness against the connection count, a line per
//! target.

use crate::bench::judge::metric::{self, Metric};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{Cell, Summary};
use crate::report::charts::{line_chart, Series, Unit};
use crate::report::esc;

/// A chart of an experiment: its title, its y axis, and the metric it draws.
struct Chart {
    title: &'static str,
    y: &'static str,
    unit: Unit,
    metric: &'static Metric,
}

impl Chart {
    const fn of(title: &'static str, y: &'static str, unit: Unit, metric: &'static Metric) -> Chart {
        Chart { title, y, unit, metric }
    }
}

/// The charts of every experiment, against the connection count.
const CHARTS: [Chart; 4] = [
    Chart::of(
        "Throughput vs connections",
        "requests / s",
        Unit::Count,
        &metric::THROUGHPUT,
    ),
    Chart::of("p99 latency vs connections", "p99 latency", Unit::Micros, &metric::P99),
    Chart::of(
        "Server CPU per request",
        "server CPU per request",
        Unit::Micros,
        &metric::CPU,
    ),
    Chart::of(
        "Fairness across connections",
        "Jain's index",
        Unit::Plain,
        &metric::FAIRNESS,
    ),
];

/// The charts of an experiment whose cells received event streams: when the first event came
/// and the gaps between events, at the tail, per design.
const STREAM_CHARTS: [Chart; 2] = [
    Chart::of(
        "Time to first event (p99) vs connections",
        "first event p99",
        Unit::Micros,
        &metric::TTFE_P99,
    ),
    Chart::of(
        "Gap between events (p99) vs connections",
        "event gap p99",
        Unit::Micros,
        &metric::GAP_P99,
    ),
];

/// The experiment's charts against the connection count: throughput (with the seed's published
/// numbers dashed), p99, server CPU per request and fairness, a line per target.
pub(super) fn charts(x: &Experiment, summary: &[Summary]) -> String {
    // A calibration cell is the design under lighter load: in the table, not on the lines.
    let summary: Vec<Summary> = summary
        .iter()
        .filter(|s| s.cell.calibration.is_none())
        .cloned()
        .collect();
    let summary = &summary[..];
    let mut conns: Vec<usize> = summary.iter().map(|s| s.cell.connections).collect();
    conns.sort_unstable();
    conns.dedup();
    let mut targets: Vec<String> = Vec::new();
    for s in summary {
        if !targets.contains(&s.cell.label()) {
            targets.push(s.cell.label());
        }
    }
    // A point that may not be ranked on its metric (`metric::rankable`: the client was the
    // limit, a latency of a design that starved connections, too few samples) is drawn hollow.
    let beside: Vec<&Cell> = summary.iter().map(|s| &s.cell).collect();
    let series = |metric: &dyn Fn(&Cell) -> Option<f64>, unranked: &dyn Fn(&Cell) -> bool| -> Vec<Series> {
        targets
            .iter()
            .map(|t| {
                let cell = |n: &usize| {
                    summary
                        .iter()
                        .map(|s| &s.cell)
                        .find(|c| &c.label() == t && c.connections == *n && c.ok())
                };
                Series {
                    name: t.clone(),
                    values: conns.iter().map(|n| cell(n).and_then(metric)).collect(),
                    hollow: conns.iter().map(|n| cell(n).is_some_and(unranked)).collect(),
                    reference: false,
                    like: None,
                }
            })
            .collect()
    };
    let mut h = String::new();
    let streams = summary.iter().any(|s| s.cell.figures.streams.is_some());
    let extra: &[Chart] = if streams { &STREAM_CHARTS } else { &[] };
    for chart in CHARTS.iter().chain(extra) {
        let m = chart.metric;
        let mut lines = series(&|c: &Cell| m.value(c), &|c: &Cell| {
            metric::rankable(m, c, &beside).ranked().is_none()
        });
        if m.name == metric::THROUGHPUT.name {
            lines.extend(published(x, &conns));
        }
        // Each target's prediction (its queueing alone), dashed in its colour.
        let predicted = series(&|c: &Cell| m.predicted(c), &|_: &Cell| false);
        lines.extend(
            predicted
                .into_iter()
                .enumerate()
                .filter(|(_, p)| p.values.iter().any(Option::is_some))
                .map(|(i, p)| Series {
                    name: format!("{} (predicted)", p.name),
                    hollow: Vec::new(),
                    reference: true,
                    like: Some(i),
                    ..p
                }),
        );
        match line_chart(chart.title, chart.y, chart.unit, &conns, &lines) {
            Ok(svg) => h.push_str(&format!("<div class=\"chart\">{svg}</div>\n")),
            Err(e) => h.push_str(&format!(
                "<p class=\"bad\">chart '{}' failed: {}</p>\n",
                chart.title,
                esc(&e.to_string())
            )),
        }
    }
    h
}

/// The seed's published numbers at `conns`, as dashed reference lines.
fn published(x: &Experiment, conns: &[usize]) -> Vec<Series> {
    let mut models: Vec<String> = x.published.iter().map(|p| p.model.clone()).collect();
    models.dedup();
    models
        .iter()
        .map(|m| Series {
            name: format!("seed: {m}"),
            values: conns
                .iter()
                .map(|n| {
                    x.published
                        .iter()
                        .find(|p| &p.model == m && p.connections == *n)
                        .map(|p| p.rps)
                })
                .collect(),
            hollow: Vec::new(),
            reference: true,
            like: None,
        })
        .filter(|s| s.values.iter().any(Option::is_some))
        .collect()
}
