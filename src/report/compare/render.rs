//! The comparison as it is read: the headline first (what changed beyond the noise), the
//! terminal table, and `compare.html` with its HTML table.

use super::rows::{Change, Row, METRICS};

/// One metric's change as a table cell: the ratio, its spread, and better / WORSE beyond the
/// noise.
pub fn cell_text(c: &Option<Change>) -> String {
    match c {
        None => "-".into(),
        Some(c) => format!(
            "{:.2}× [{:.2}–{:.2}]{}",
            c.ratio,
            c.spread.0,
            c.spread.1,
            match (c.verdict, c.interval) {
                (Some(true), _) => " better",
                (Some(false), _) => " WORSE",
                (None, None) => " (one round: not judged)",
                (None, Some(_)) => "",
            }
        ),
    }
}

/// The answer first: what changed beyond the noise, metric by metric, or that nothing did.
pub fn headline(rows: &[Row]) -> String {
    let mut moved = Vec::new();
    for (i, m) in METRICS.iter().enumerate() {
        let cs: Vec<&Change> = rows.iter().filter_map(|r| r.changes[i].as_ref()).collect();
        let better = cs.iter().filter(|c| c.verdict == Some(true)).count();
        let worse = cs.iter().filter(|c| c.verdict == Some(false)).count();
        let n = cs.len();
        match (better, worse) {
            (0, 0) => {}
            (b, 0) => moved.push(format!("{} better in {b} of {n} cells", m.name)),
            (0, w) => moved.push(format!("{} WORSE in {w} of {n} cells", m.name)),
            (b, w) => moved.push(format!("{} better in {b} and WORSE in {w} of {n} cells", m.name)),
        }
    }
    match moved.is_empty() {
        true => format!("B against A: nothing changed beyond the noise in {} cells.", rows.len()),
        false => format!("B against A, beyond the noise: {}.", moved.join("; ")),
    }
}

/// The terminal table, its headline first.
pub fn table(a_name: &str, b_name: &str, rows: &[Row]) -> String {
    let mut s = format!(
        "{}\n\nB = {b_name}\nA = {a_name}\nB/A per cell: median ratio [range the repeats allow; a paired run: of its rounds' ratios]; better / WORSE when beyond the noise\n\
         (runs made at different times also differ by the machine's drift, which repeats within one run do\n\
         not show: for a before/after, alternate A and B runs and compare the combined sets)\n\n",
        headline(rows)
    );
    s.push_str(&grid(rows));
    s.push_str(&summary(rows));
    s
}

/// The rows as a terminal grid, a header line first.
pub(super) fn grid(rows: &[Row]) -> String {
    let mut s = format!(
        "{:<18} {:<28} {:>6}  {:<28} {:<28} {:<28}\n",
        "experiment", "target", "conns", "throughput", "p99", "CPU/request"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<18} {:<28} {:>6}  {:<28} {:<28} {:<28}\n",
            r.experiment,
            r.target,
            r.connections,
            cell_text(&r.changes[0]),
            cell_text(&r.changes[1]),
            cell_text(&r.changes[2])
        ));
    }
    s
}

/// Per metric: geometric mean of the ratios and the count of changes beyond the noise.
pub fn summary(rows: &[Row]) -> String {
    let mut s = String::new();
    for (i, name) in METRICS.iter().map(|m| m.short).enumerate() {
        let cs: Vec<&Change> = rows.iter().filter_map(|r| r.changes[i].as_ref()).collect();
        if cs.is_empty() {
            continue;
        }
        let geo = (cs.iter().map(|c| c.ratio.ln()).sum::<f64>() / cs.len() as f64).exp();
        let better = cs.iter().filter(|c| c.verdict == Some(true)).count();
        let worse = cs.iter().filter(|c| c.verdict == Some(false)).count();
        s.push_str(&format!(
            "{name}: geometric mean B/A {geo:.3} over {} cells; {better} better and {worse} worse beyond the noise\n",
            cs.len()
        ));
    }
    s
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// `compare.html`: the same table, self-contained.
pub fn html(a_name: &str, b_name: &str, rows: &[Row]) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>muxlab: B against A</title><style>\
         body{{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}}\
         table{{border-collapse:collapse;font-size:14px}}td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}\
         th{{background:#f3f3f3;position:sticky;top:0}}td.l,th.l{{text-align:left}}\
         {CLASSES}</style></head><body>\
         <h1>B against A</h1><p class=\"headline\"><b>{}</b></p><p>A: {}<br>B: {}</p>\
         <p>Each cell: the ratio of B's median to A's, and in brackets the lowest and highest ratio the repeats \
         allow. Green: better beyond the noise; red: worse beyond it (the interval of the two sides' rounds lies \
         past 5 %; one round a side is not judged). Throughput: higher is better; p99 and server CPU per request: lower.</p>\
         <p>{}</p>{}</body></html>\n",
        esc(&headline(rows)),
        esc(a_name),
        esc(b_name),
        esc(&summary(rows)).replace('\n', "<br>"),
        html_table("B/A", rows)
    )
}

/// The style of [`html_table`]'s verdicts.
pub const CLASSES: &str = ".better{background:#e3f6e3}.worse{background:#fbe3e3;font-weight:bold}";

/// The rows as an HTML table; `ratio` names the ratio in the headers ("B/A", "/ nginx").
pub fn html_table(ratio: &str, rows: &[Row]) -> String {
    let mut h = format!(
        "<div class=\"tw\"><table><tr><th class=\"l\">experiment</th><th class=\"l\">target</th><th>conns</th>\
         <th>throughput {r}</th><th>p99 {r}</th><th>CPU/request {r}</th></tr>\n",
        r = esc(ratio)
    );
    for r in rows {
        h.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>",
            esc(&r.experiment),
            esc(&r.target),
            r.connections
        ));
        for c in &r.changes {
            let class = match c.as_ref().and_then(|c| c.verdict) {
                Some(true) => " class=\"better\"",
                Some(false) => " class=\"worse\"",
                None => "",
            };
            h.push_str(&format!("<td{class}>{}</td>", esc(&cell_text(c))));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n");
    h
}
