//! "Where the time went" in the report: each cell's card as a stacked bar of its mean latency
//! (its disjoint intervals: waiting inside the server, handling, run-queue wait, outside it,
//! and what is left), with its prediction's mean beside it and what bound it
//! (`bench::judge::card`).

use crate::bench::judge::card::{self, Card};
use crate::bench::record::Cell;
use crate::report::esc;
use crate::units::fmt_us;

/// The segments' colours, in the card's part order, then the unexplained rest.
const COLOURS: [&str; 5] = ["#b07aa1", "#4e79a7", "#e15759", "#bab0ac", "#eeeeee"];

/// The widest bar, in pixels (the longest mean of the experiment).
const WIDTH: f64 = 480.0;

/// The section; empty where no cell has a card.
pub(super) fn section(cells: &[Cell]) -> String {
    let cards: Vec<Card> = cells
        .iter()
        .filter(|c| c.ok() && c.repeat == 0)
        .filter_map(card::of)
        .collect();
    let longest = cards.iter().filter_map(|c| c.mean_us).fold(0.0, f64::max);
    if cards.is_empty() || longest <= 0.0 {
        return String::new();
    }
    let mut h = String::from(
        "<h3>Where the time went</h3>\n<p class=\"how\">Each bar is a cell's mean latency in parts per request \
         (first repeat); the tick is its prediction's mean. <code>muxlab explain DIR</code> prints the cards.</p>\n\
         <div class=\"tw\"><table><tr><th class=\"l\">target</th><th>conns</th><th class=\"l\">bound by</th>\
         <th>mean</th><th class=\"l\">parts</th></tr>\n",
    );
    let legend: Vec<String> = card::INTERVALS
        .iter()
        .chain(["unexplained"].iter())
        .zip(COLOURS)
        .map(|(n, col)| format!("<span style=\"background:{col}\">&nbsp;&nbsp;</span> {n}"))
        .collect();
    for c in &cards {
        h.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td>{}</td><td class=\"l\" title=\"{}\">{}</td><td>{}</td><td class=\"l\">{}</td></tr>\n",
            esc(&c.target),
            c.connections,
            esc(c.bound_by.as_ref().map_or("", |b| b.evidence.as_str())),
            c.bound_by.as_ref().map_or("–", |b| b.bound.name()),
            c.mean_us.map_or("–".into(), fmt_us),
            bar(c, longest)
        ));
    }
    h.push_str("</table></div>\n");
    h.push_str(&format!("<p class=\"how\">{}</p>\n", legend.join(" &nbsp; ")));
    h
}

/// One card's bar: a segment per measured part (and the unexplained rest where positive), and
/// the prediction's mean as a tick.
fn bar(c: &Card, longest: f64) -> String {
    let px = |us: f64| (us / longest * WIDTH).max(0.0);
    let mut segs: Vec<(String, f64, &str)> = c
        .parts
        .iter()
        .zip(COLOURS)
        .filter_map(|(p, col)| Some((p.name.to_string(), p.us?, col)))
        .collect();
    if let Some(u) = c.unexplained_us.filter(|u| *u > 0.0) {
        segs.push(("unexplained".into(), u, COLOURS[4]));
    }
    let mut h = format!("<div style=\"position:relative;width:{WIDTH}px;height:14px;display:flex\">");
    for (name, us, col) in segs.iter().filter(|s| s.1 > 0.0) {
        h.push_str(&format!(
            "<div title=\"{} {}\" style=\"width:{:.1}px;background:{col}\"></div>",
            esc(name),
            fmt_us(*us),
            px(*us)
        ));
    }
    if let Some(p) = c.predicted_mean_us {
        h.push_str(&format!(
            "<div title=\"predicted mean {}\" style=\"position:absolute;left:{:.1}px;top:-2px;width:2px;height:18px;background:#000\"></div>",
            fmt_us(p),
            px(p).min(WIDTH)
        ));
    }
    h + "</div>"
}
