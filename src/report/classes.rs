//! An experiment's request classes in the report: a table of each class's requests and
//! latency per target and connection count, and their p99 as grouped bars (one group per
//! class, a bar per target) at the largest connection count.

use super::charts::{bar_chart, Series, Unit};
use super::html::esc;
use crate::bench::results::Summary;
use crate::units::{fmt_us, thousands};

/// The classes' section; empty where no cell had classes.
pub(super) fn section(summary: &[Summary]) -> String {
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
         <th class=\"l\">class</th><th class=\"l\">path</th><th>requests</th><th>errors</th><th>p50</th><th>p99</th>\
         <th>p99.9</th></tr>\n",
    );
    for s in summary.iter().filter(|s| s.cell.ok()) {
        for k in &s.cell.figures.classes {
            h.push_str(&format!(
                "<tr><td class=\"l\">{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>\
                 <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                esc(&s.cell.target),
                s.cell.connections,
                esc(&k.name),
                esc(&k.path),
                thousands(k.requests),
                thousands(k.errors),
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
            name: s.cell.target.clone(),
            values: names
                .iter()
                .map(|n| s.cell.figures.classes.iter().find(|k| &k.name == n)?.p99_us)
                .collect(),
            hollow: Vec::new(),
            reference: false,
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
    use crate::bench::results::{summarize, Cell, CellStatus, ClassFigure};

    fn cell(target: &str, short: Option<f64>) -> Cell {
        let mut c = Cell::new("e", target, 100, 0);
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
        let h = section(&summarize(&[cell("reactor", Some(4000.0)), cell("thread", None)]));
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
        let mut plain = cell("reactor", None);
        plain.figures.classes.clear();
        assert_eq!(section(&summarize(&[plain])), "");
    }
}
