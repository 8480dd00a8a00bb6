//! An experiment with a latency target in the report: each target's capacity at it beside its
//! predicted capacity (with why a search was inconclusive), and the p99 of every probe against
//! the rate it offered, a line per target, the target dashed.

use crate::bench::record::scenario::Experiment;
use crate::bench::record::{median, Cell};
use crate::report::charts::{xy_chart, Unit};
use crate::report::esc;
use crate::units::thousands;

/// The capacity section; empty where no cell ran a search.
pub(super) fn section(x: &Experiment, cells: &[Cell]) -> String {
    let searched: Vec<&Cell> = cells.iter().filter(|c| c.figures.capacity.is_some()).collect();
    let Some(slo) = searched
        .first()
        .and_then(|c| c.figures.capacity.as_ref())
        .map(|c| c.slo.clone())
    else {
        return String::new();
    };
    let rps = |v: f64| thousands(v.round() as u64);
    let mut keys: Vec<(String, usize)> = Vec::new();
    for c in &searched {
        if !keys.contains(&(c.label(), c.connections)) {
            keys.push((c.label(), c.connections));
        }
    }
    let mut h = format!(
        "<h3>Capacity at {}</h3>\n<div class=\"tw\"><table><tr><th class=\"l\">target</th><th>conns</th>\
         <th title=\"the highest offered rate at which the target held (median of the repeats)\">capacity</th>\
         <th title=\"the same, in the simulation of its queueing alone\">predicted</th><th>probes</th>\
         <th class=\"l\">notes</th></tr>\n",
        esc(&slo)
    );
    for (t, n) in &keys {
        let of: Vec<&&Cell> = searched
            .iter()
            .filter(|c| &c.label() == t && c.connections == *n)
            .collect();
        let caps: Vec<f64> = of.iter().filter_map(|c| c.figures.capacity_rps()).collect();
        let predicted: Vec<f64> = of
            .iter()
            .filter_map(|c| Some(c.figures.predicted.as_ref()?.capacity_rps))
            .collect();
        let notes: Vec<String> = of
            .iter()
            .filter_map(|c| c.figures.capacity.as_ref()?.inconclusive.clone())
            .collect();
        let probes: usize = of
            .iter()
            .filter_map(|c| Some(c.figures.capacity.as_ref()?.probes.len()))
            .sum();
        h.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td>{n}</td><td>{}</td><td>{}</td><td>{probes}</td><td class=\"l\">{}</td></tr>\n",
            esc(t),
            if caps.is_empty() { "–".into() } else { rps(median(caps)) },
            if predicted.is_empty() { "–".into() } else { rps(median(predicted)) },
            esc(&notes.join("; "))
        ));
    }
    h.push_str("</table></div>\n");
    if x.peers.iter().any(|p| p.starts_with("nginx")) {
        h.push_str(
            "<p class=\"how\">nginx serves a fixed body and does none of the experiment's work: its capacity is \
             its own cost per request, not the work's.</p>\n",
        );
    }
    let largest = searched.iter().map(|c| c.connections).max().unwrap_or(0);
    let series: Vec<(String, Vec<(f64, f64)>)> = keys
        .iter()
        .filter(|(_, n)| *n == largest)
        .filter_map(|(t, _)| {
            let c = searched
                .iter()
                .find(|c| &c.label() == t && c.connections == largest && c.repeat == 0)?;
            let pts = c
                .figures
                .capacity
                .as_ref()?
                .probes
                .iter()
                .filter_map(|p| Some((p.offered_rps, p.p99_us?)))
                .collect();
            Some((t.clone(), pts))
        })
        .collect();
    let target = slo
        .split(',')
        .find(|b| b.trim().starts_with("p99<="))
        .and_then(|b| crate::units::parse_duration(b.trim().trim_start_matches("p99<=")).ok())
        .map(|d| d.as_secs_f64() * 1e6);
    let title = format!("p99 against offered load, {largest} connections (first repeat)");
    match xy_chart(
        &title,
        ("offered req/s", Unit::Count),
        ("p99", Unit::Micros),
        &series,
        target,
    ) {
        Ok(svg) => h.push_str(&format!(
            "<div class=\"charts\"><div class=\"chart\">{svg}</div></div>\n"
        )),
        Err(e) => h.push_str(&format!("<p class=\"bad\">chart failed: {}</p>\n", esc(&e.to_string()))),
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::record::CellStatus;
    use crate::load::slo::{Capacity, Probe};

    fn cell(target: &str, rps: Option<f64>, inconclusive: Option<&str>) -> Cell {
        let mut c = Cell::new("e", target, 50, 0);
        c.status = CellStatus::Ok;
        let probe = |r: f64, p99: f64| Probe {
            offered_rps: r,
            achieved_rps: Some(r),
            p50_us: Some(p99 / 3.0),
            p99_us: Some(p99),
            holds: Some(p99 <= 5000.0),
            ..Probe::default()
        };
        c.figures.capacity = Some(Capacity {
            slo: "p99<=5ms".into(),
            rps,
            low: None,
            high: None,
            probes: vec![probe(1000.0, 800.0), probe(2000.0, 7000.0)],
            inconclusive: inconclusive.map(String::from),
        });
        c
    }

    #[test]
    fn a_row_per_target_with_its_capacity_or_why_not_and_a_chart_of_the_probes() {
        let text = "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"reactor\", \"thread\"]\npeers = [\"nginx\"]\nconnections = [50]\nslo = \"p99<=5ms\"\n";
        let x = crate::bench::record::scenario::parse(text, "t")
            .unwrap()
            .experiments
            .remove(0);
        let cells = [
            cell("reactor", Some(1000.0), None),
            cell("thread", None, Some("the client could not offer more")),
        ];
        let h = section(&x, &cells);
        assert!(h.contains("<h3>Capacity at p99&lt;=5ms</h3>"), "{h}");
        assert!(
            h.contains("<td class=\"l\">reactor</td><td>50</td><td>1,000</td><td>–</td><td>2</td>"),
            "{h}"
        );
        assert!(h.contains("the client could not offer more") && h.contains("nginx serves a fixed body"));
        assert!(h.contains("<svg") && h.contains("target 5 ms"), "{h}");
        assert_eq!(section(&x, &[Cell::new("e", "reactor", 50, 0)]), "");
    }
}
