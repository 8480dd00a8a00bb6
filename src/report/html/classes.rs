//! An experiment's request classes in the report: a table of each class's requests and
//! latency per target and connection count, and their p99 as grouped bars (one group per
//! class, a bar per target) at the largest connection count; each figure the median of the
//! repeats, as the verdicts take it.

use crate::bench::record::{median, Cell, ClassFigure, Summary};
use crate::report::charts::{bar_chart, Series, Unit};
use crate::report::esc;
use crate::units::{fmt_us, thousands};

/// Class `name` of `target` at `n` connections over the repeats: each figure's median (a
/// latency over the repeats that have it; a class with refused requests has none).
fn over_repeats(cells: &[Cell], target: &str, n: usize, name: &str) -> Option<ClassFigure> {
    let ks: Vec<&ClassFigure> = cells
        .iter()
        .filter(|c| c.ok() && c.label() == target && c.connections == n)
        .filter_map(|c| c.figures.classes.iter().find(|k| k.name == name))
        .collect();
    let first = ks.first()?;
    let med = |get: fn(&ClassFigure) -> Option<f64>| {
        let xs: Vec<f64> = ks.iter().filter(|k| k.refused == 0).filter_map(|k| get(k)).collect();
        (!xs.is_empty()).then(|| median(xs))
    };
    let count = |get: fn(&ClassFigure) -> u64| median(ks.iter().map(|k| get(k) as f64).collect()).round() as u64;
    Some(ClassFigure {
        name: name.to_string(),
        path: first.path.clone(),
        requests: count(|k| k.requests),
        errors: count(|k| k.errors),
        refused: count(|k| k.refused),
        p50_us: med(|k| k.p50_us),
        p99_us: med(|k| k.p99_us),
        p999_us: med(|k| k.p999_us),
    })
}

/// The classes' section; empty where no cell had classes.
pub(super) fn section(summary: &[Summary], cells: &[Cell]) -> String {
    let mut names: Vec<String> = Vec::new();
    for k in summary.iter().flat_map(|s| &s.cell.figures.classes) {
        if !names.contains(&k.name) {
            names.push(k.name.clone());
        }
    }
    if names.is_empty() {
        return String::new();
    }
    let us = |v: Option<f64>| v.map_or_else(|| "–".to_string(), fmt_us);
    let mut h = String::from(
        "<h3>Request classes</h3>\n<div class=\"tw\"><table><tr><th class=\"l\">target</th><th>conns</th>\
         <th class=\"l\">class</th><th class=\"l\">path</th><th>requests</th><th>errors</th>\
         <th title=\"responses other than 2xx/3xx: a refused class has no latency\">refused</th><th>p50</th>\
         <th>p99</th><th>p99.9</th></tr>\n",
    );
    let of = |s: &Summary, n: &str| over_repeats(cells, &s.cell.label(), s.cell.connections, n);
    for s in summary.iter().filter(|s| s.cell.ok()) {
        for k in names.iter().filter_map(|n| of(s, n)) {
            h.push_str(&format!(
                "<tr><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                esc(&s.cell.label()),
                s.cell.connections,
                esc(&k.name),
                esc(&k.path),
                thousands(k.requests),
                thousands(k.errors),
                thousands(k.refused),
                us(k.p50_us),
                us(k.p99_us),
                us(k.p999_us)
            ));
        }
    }
    h.push_str("</table></div>\n");
    let largest = summary.iter().map(|s| s.cell.connections).max().unwrap_or(0);
    let at: Vec<&Summary> = summary
        .iter()
        .filter(|s| s.cell.ok() && s.cell.connections == largest)
        .collect();
    let series: Vec<Series> = at
        .iter()
        .map(|s| Series {
            name: s.cell.label(),
            values: names.iter().map(|n| of(s, n)?.p99_us).collect(),
            hollow: Vec::new(),
            reference: false,
            like: None,
        })
        .collect();
    let title = format!("p99 latency per request class, {largest} connections");
    h.push_str(&format!(
        "<div class=\"charts\"><div class=\"chart\">{}</div></div>\n",
        bar_chart(&title, "p99 latency", Unit::Micros, &names, &series)
    ));
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::{summarize, CellStatus};

    fn cell(target: &str, repeat: usize, short: Option<f64>) -> Cell {
        let mut c = Cell::new("e", target, 100, repeat);
        c.status = CellStatus::Ok;
        c.figures.classes = vec![ClassFigure {
            name: "short".into(),
            path: "/?cpu=20us".into(),
            requests: 995,
            p99_us: short,
            ..Default::default()
        }];
        c
    }

    #[test]
    fn classes_get_a_row_per_target_and_a_bar_each_and_none_without_classes() {
        let cells = [cell("reactor", 0, Some(4000.0)), cell("thread", 0, None)];
        let h = section(&summarize(&cells), &cells);
        assert!(
            h.contains("<td class=\"l\">short</td><td class=\"l\">/?cpu=20us</td><td>995</td>"),
            "{h}"
        );
        assert_eq!(
            h.matches("<title>").count(),
            1,
            "thread's short class has no p99: no bar"
        );
        assert!(h.contains("p99 latency per request class, 100 connections"));
        let mut plain = cell("reactor", 0, None);
        plain.figures.classes.clear();
        assert_eq!(section(&summarize(std::slice::from_ref(&plain)), &[plain]), "");
    }

    /// Three repeats: the bar is the median p99 (4 ms), whichever repeat the summary shows; a
    /// repeat whose class was refused has no latency to give.
    #[test]
    fn a_class_figure_is_the_median_of_the_repeats() {
        let mut cells = vec![
            cell("reactor", 0, Some(1000.0)),
            cell("reactor", 1, Some(4000.0)),
            cell("reactor", 2, Some(9000.0)),
        ];
        let h = section(&summarize(&cells), &cells);
        assert!(h.contains("<title>reactor: 4 ms</title>"), "{h}");
        let k = over_repeats(&cells, "reactor", 100, "short").unwrap();
        assert_eq!((k.p99_us, k.requests), (Some(4000.0), 995));
        cells[2].figures.classes[0].refused = 3;
        let k = over_repeats(&cells, "reactor", 100, "short").unwrap();
        assert_eq!((k.p99_us, k.refused), (Some(2500.0), 0));
    }
}
