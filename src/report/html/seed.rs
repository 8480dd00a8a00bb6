//! Seed scenarios in the report: the seed's published numbers beside ours, and a sentence on
//! what agrees (orderings at each connection count, and each model's scaling).

use crate::bench::judge::metric::{rankable, Ranked, THROUGHPUT};
use crate::bench::record::scenario::{model_name, Experiment};
use crate::bench::record::{Cell, Summary};
use crate::report::esc;
use crate::units::thousands;

/// The seed's numbers beside ours, and a sentence on what agrees. Our throughput is shown as
/// measured; it is ordered, and set against the seed's scaling, only where the judge may rank
/// it ([`rankable`]: not where the client bound a cell, a design lost requests, or targets ran
/// placed differently).
pub fn comparison(x: &Experiment, summary: &[Summary]) -> String {
    let cells: Vec<&Cell> = summary.iter().map(|s| &s.cell).collect();
    let cell = |model: &str, n: usize| {
        cells
            .iter()
            .copied()
            .find(|c| model_name(&c.target) == model && c.connections == n && c.ok())
    };
    let measured = |model: &str, n: usize| cell(model, n).and_then(|c| rankable(&THROUGHPUT, c, &cells).measured());
    let ranked = |model: &str, n: usize| cell(model, n).and_then(|c| rankable(&THROUGHPUT, c, &cells).ranked());
    let mut h = String::new();
    if let Some(note) = &x.seed_note {
        h.push_str(&format!("<p class=\"note\"><b>The seed:</b> {}</p>\n", esc(note)));
    }
    if x.published.is_empty() {
        return h;
    }
    h.push_str("<table><tr><th class=\"l\">model</th><th>conns</th><th>seed req/s</th><th>measured req/s</th><th>measured / seed</th></tr>\n");
    for p in &x.published {
        let m = measured(&p.model, p.connections);
        h.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&p.model),
            p.connections,
            thousands(p.rps as u64),
            m.map(|v| thousands(v as u64)).unwrap_or_else(|| "-".into()),
            m.map(|v| format!("{:.2}×", v / p.rps)).unwrap_or_else(|| "-".into())
        ));
    }
    h.push_str("</table>\n");
    h.push_str(&format!("<p>{}</p>\n", esc(&verdict(x, &ranked))));
    h
}

/// Compares the order of models at each connection count the seed published two or more for,
/// ours by their ranked throughput (a model not ranked there leaves that count out).
fn verdict(x: &Experiment, ranked: &dyn Fn(&str, usize) -> Option<Ranked>) -> String {
    let mut conns: Vec<usize> = x.published.iter().map(|p| p.connections).collect();
    conns.sort_unstable();
    conns.dedup();
    let mut agree = Vec::new();
    let mut differ = Vec::new();
    for n in conns {
        let mut pubs: Vec<(&str, f64)> = x
            .published
            .iter()
            .filter(|p| p.connections == n)
            .map(|p| (p.model.as_str(), p.rps))
            .collect();
        if pubs.len() < 2 {
            continue;
        }
        let mut ours: Vec<(&str, Ranked)> = pubs.iter().filter_map(|(m, _)| ranked(m, n).map(|v| (*m, v))).collect();
        let alike = ours.windows(2).all(|w| w[0].1.alike(w[1].1));
        if ours.len() < pubs.len() || !alike {
            continue;
        }
        pubs.sort_by(|a, b| b.1.total_cmp(&a.1));
        let mut values: Vec<Ranked> = ours.iter().map(|(_, v)| *v).collect();
        Ranked::best_first(&THROUGHPUT, &mut values);
        ours.sort_by_key(|(_, v)| values.iter().position(|x| x == v));
        let ours: Vec<(&str, f64)> = ours.iter().map(|(m, v)| (*m, v.get())).collect();
        let order = |v: &[(&str, f64)]| v.iter().map(|(m, _)| *m).collect::<Vec<_>>().join(" > ");
        if order(&pubs) == order(&ours) {
            agree.push(format!("at {n} connections the order is the seed's ({})", order(&ours)));
        } else {
            differ.push(format!(
                "at {n} connections the seed has {} but we measure {}",
                order(&pubs),
                order(&ours)
            ));
        }
    }
    // Within-model shape: the seed's change from its lowest to highest connection count.
    let mut shapes = Vec::new();
    let mut models: Vec<&str> = x.published.iter().map(|p| p.model.as_str()).collect();
    models.dedup();
    for m in models {
        let pts: Vec<(usize, f64)> = x
            .published
            .iter()
            .filter(|p| p.model == m)
            .map(|p| (p.connections, p.rps))
            .collect();
        if pts.len() < 2 {
            continue;
        }
        let (a, b) = (pts.first().unwrap(), pts.last().unwrap());
        if let (Some(ma), Some(mb)) = (ranked(m, a.0), ranked(m, b.0)) {
            let (ma, mb) = (ma.get(), mb.get());
            shapes.push(format!(
                "{m} from {} to {} connections: seed {:+.0}%, measured {:+.0}%",
                a.0,
                b.0,
                (b.1 / a.1 - 1.0) * 100.0,
                (mb / ma - 1.0) * 100.0
            ));
        }
    }
    let mut s = String::new();
    if !agree.is_empty() {
        s.push_str(&format!("Agrees: {}. ", agree.join("; ")));
    }
    if !differ.is_empty() {
        s.push_str(&format!("Differs: {}. ", differ.join("; ")));
    }
    if !shapes.is_empty() {
        s.push_str(&format!("Scaling: {}. ", shapes.join("; ")));
    }
    if s.is_empty() {
        s = "Not enough measured cells to compare with the seed.".into();
    }
    s.push_str("Absolute numbers differ with the machine (the seeds ran on other hardware, with ab or their own clients), so compare shapes and orderings.");
    s
}
