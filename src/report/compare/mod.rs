//! `muxlab report A B`: B against A, cell by cell (experiment, target, connections present in
//! both): the ratios B/A of throughput, p99 latency and server CPU per request, each with the
//! spread of both sides' repeats, and whether the change goes beyond the noise (the ranges of
//! the repeats do not overlap; with one run each, it is over 10%). The before/after view
//! around a change: a terminal table and `B/compare.html`.

use crate::bench::judge::metric::{self, Metric};
use crate::bench::record::{spread, Cell, Spread};
use crate::bench::Results;

use crate::bench::judge::SINGLE_RUN_NOISE;
use crate::bench::record::CHANCE;

/// One metric of one cell, on both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// B's median / A's median.
    pub ratio: f64,
    /// The lowest and highest B/A the repeats allow (B's range over A's; paired rounds: the
    /// lowest and highest round's ratio).
    pub spread: (f64, f64),
    /// `Some(true)`: better beyond the noise, `Some(false)`: worse, `None`: within it.
    pub verdict: Option<bool>,
    /// Paired rounds: in how many B was better, of how many.
    pub rounds: Option<(usize, usize)>,
}

/// A cell present in both runs.
#[derive(Debug, Clone)]
pub struct Row {
    pub experiment: String,
    pub target: String,
    pub connections: usize,
    /// Throughput, p99, CPU per request (a metric missing on either side is `None`).
    pub changes: [Option<Change>; 3],
}

/// The metrics compared, in the tables' order.
const METRICS: [&Metric; 3] = [&metric::THROUGHPUT, &metric::P99, &metric::CPU];

/// A figure's spread over the repeats that measured it where it may be ranked
/// ([`metric::rankable`], beside the rest of its run), and how many did.
fn stats(cells: &[&Cell], m: &Metric, run: &[&Cell]) -> Option<(Spread, usize)> {
    let xs: Vec<f64> = cells
        .iter()
        .filter_map(|c| metric::rankable(m, c, run).ranked())
        .collect();
    let n = xs.len();
    spread(xs).map(|s| (s, n))
}

fn change(a: &[&Cell], b: &[&Cell], m: &Metric, runs: (&[&Cell], &[&Cell])) -> Option<Change> {
    let higher = &m.higher_is_better;
    let offered = offered_both(a, b, m);
    let (sa, an) = stats(a, m, runs.0)?;
    let (sb, bn) = stats(b, m, runs.1)?;
    let ratio = sb.median / sa.median;
    let beyond = if an > 1 && bn > 1 {
        sb.lowest > sa.highest || sb.highest < sa.lowest
    } else {
        (ratio - 1.0).abs() > SINGLE_RUN_NOISE
    };
    let up = ratio > 1.0;
    Some(Change {
        ratio,
        spread: (sb.lowest / sa.highest, sb.highest / sa.lowest),
        verdict: (beyond && !offered).then_some(up == *higher),
        rounds: None,
    })
}

/// Throughput that the offered rate set on both sides (`metric::throughput_offered`): no change
/// to call, whatever the rounds say.
fn offered_both(a: &[&Cell], b: &[&Cell], m: &Metric) -> bool {
    m.name == metric::THROUGHPUT.name && a.iter().chain(b).all(|c| metric::throughput_offered(c))
}

/// B against A where both ran in one paired run (`bench --baseline` of a `paired = true`
/// experiment: the two servers measured in the same round, one right after the other): the
/// ratio of each round, their median and range; beyond the noise when B moved the same way in
/// so many rounds that chance would do it less than one time in 20 (a sign test).
fn paired_change(a: &[&Cell], b: &[&Cell], m: &Metric, runs: (&[&Cell], &[&Cell])) -> Option<Change> {
    let higher = &m.higher_is_better;
    let ratios: Vec<f64> = b
        .iter()
        .filter_map(|cb| {
            let ca = a.iter().find(|ca| ca.repeat == cb.repeat)?;
            Some(metric::rankable(m, cb, runs.1).ranked()? / metric::rankable(m, ca, runs.0).ranked()?)
        })
        .collect();
    let n = ratios.len();
    let ups = ratios.iter().filter(|r| **r > 1.0).count();
    let Spread {
        median: ratio,
        lowest: lo,
        highest: hi,
    } = spread(ratios)?;
    let sign = crate::bench::record::sign_test;
    let verdict = if offered_both(a, b, m) {
        None
    } else if sign(ups, n) < CHANCE {
        Some(*higher)
    } else if sign(n - ups, n) < CHANCE {
        Some(!*higher)
    } else {
        None
    };
    let better = if *higher { ups } else { n - ups };
    Some(Change {
        ratio,
        spread: (lo, hi),
        verdict,
        rounds: Some((better, n)),
    })
}

/// The cells of B that A also has, compared. `same_run`: A and B come from one run (`bench
/// --baseline`), so a paired experiment's rounds pair up.
pub fn rows(a: &Results, b: &Results, same_run: bool) -> Vec<Row> {
    let ok = |r: &Results| -> Vec<Cell> { r.cells.iter().filter(|c| c.ok()).cloned().collect() };
    let (ca, cb) = (ok(a), ok(b));
    let (run_a, run_b): (Vec<&Cell>, Vec<&Cell>) = (ca.iter().collect(), cb.iter().collect());
    let mut keys: Vec<(String, String, usize)> = Vec::new();
    for c in &cb {
        let k = (c.experiment.clone(), c.label(), c.connections);
        if !keys.contains(&k)
            && ca
                .iter()
                .any(|x| (&x.experiment, &x.label(), x.connections) == (&k.0, &k.1, k.2))
        {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(e, t, n)| {
            let pick = |cells: &[Cell]| -> Vec<Cell> {
                cells
                    .iter()
                    .filter(|c| c.experiment == e && c.label() == t && c.connections == n)
                    .cloned()
                    .collect()
            };
            let (pa, pb) = (pick(&ca), pick(&cb));
            let (ra, rb): (Vec<&Cell>, Vec<&Cell>) = (pa.iter().collect(), pb.iter().collect());
            let paired = same_run && a.scenario.experiments.iter().any(|x| x.name == e && x.paired);
            let compare = if paired { paired_change } else { change };
            Row {
                experiment: e,
                target: t,
                connections: n,
                changes: METRICS.map(|m| compare(&ra, &rb, m, (&run_a, &run_b))),
            }
        })
        .collect()
}

fn cell_text(c: &Option<Change>) -> String {
    match c {
        None => "-".into(),
        Some(c) => format!(
            "{:.2}× [{:.2}–{:.2}]{}",
            c.ratio,
            c.spread.0,
            c.spread.1,
            match c.verdict {
                Some(true) => " better",
                Some(false) => " WORSE",
                None => "",
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
fn grid(rows: &[Row]) -> String {
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
fn summary(rows: &[Row]) -> String {
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
         allow. Green: better beyond the noise; red: worse beyond it (the repeats' ranges do not overlap; with one \
         run each, a change over 10%). Throughput: higher is better; p99 and server CPU per request: lower.</p>\
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

/// An experiment with a `reference`: each other target against it.
#[derive(Debug, Clone)]
pub struct AgainstReference {
    pub experiment: String,
    pub reference: String,
    pub paired: bool,
    pub rows: Vec<Row>,
}

/// Every experiment with a `reference`: each other target against it, at each connection
/// count both ran (a paired experiment round by round), in the scenario's order of targets.
pub fn against_reference(r: &Results) -> Vec<AgainstReference> {
    let ok: Vec<&Cell> = r.cells.iter().filter(|c| c.ok()).collect();
    let mut out = Vec::new();
    for x in &r.scenario.experiments {
        let Some(reference) = &x.reference else { continue };
        let compare = if x.paired { paired_change } else { change };
        let mut rows = Vec::new();
        for n in &x.connections {
            let of = |t: &str| -> Vec<&Cell> {
                let mine = |c: &&&Cell| c.experiment == x.name && c.label() == t && c.connections == *n;
                ok.iter().filter(mine).copied().collect()
            };
            let base = of(reference);
            if base.is_empty() {
                continue;
            }
            for t in x.models.iter().chain(&x.peers).filter(|t| *t != reference) {
                let cells = of(t);
                if !cells.is_empty() {
                    rows.push(Row {
                        experiment: x.name.clone(),
                        target: t.clone(),
                        connections: *n,
                        changes: METRICS.map(|m| compare(&base, &cells, m, (&ok, &ok))),
                    });
                }
            }
        }
        out.push(AgainstReference {
            experiment: x.name.clone(),
            reference: reference.clone(),
            paired: x.paired,
            rows,
        });
    }
    out
}

impl AgainstReference {
    /// In words, for server CPU per request: how many targets are cheaper or dearer than the
    /// reference beyond the noise, and the cheapest.
    pub fn sentence(&self) -> String {
        let cpu: Vec<(&Row, &Change)> = self
            .rows
            .iter()
            .filter_map(|r| Some((r, r.changes[2].as_ref()?)))
            .collect();
        let Some((best, c)) = cpu.iter().min_by(|a, b| a.1.ratio.total_cmp(&b.1.ratio)) else {
            return format!("{}: no cell to compare with {}.", self.experiment, self.reference);
        };
        let cheaper = cpu.iter().filter(|(_, c)| c.verdict == Some(true)).count();
        let dearer = cpu.iter().filter(|(_, c)| c.verdict == Some(false)).count();
        let how = match (c.verdict, c.rounds) {
            (Some(true), Some((k, n))) => format!("cheaper in {k} of {n} paired rounds: beyond the noise"),
            (Some(true), None) => "beyond the noise".into(),
            (Some(false), _) => "yet dearer beyond the noise".into(),
            (None, Some((k, n))) => {
                format!("cheaper in {k} of {n} paired rounds: not enough to call, no clear difference")
            }
            (None, None) => "inside the noise: no difference".into(),
        };
        format!(
            "{}: server CPU per request against {}: {cheaper} of {} cells cheaper and {dearer} dearer beyond the noise; \
             the cheapest is {} at {} connections, {:.2}× [{:.2}–{:.2}] ({how}).",
            self.experiment,
            self.reference,
            cpu.len(),
            best.target,
            best.connections,
            c.ratio,
            c.spread.0,
            c.spread.1
        )
    }

    /// The terminal table, with its sentence.
    pub fn table(&self) -> String {
        let spread = if self.paired {
            "lowest–highest round"
        } else {
            "range the repeats allow"
        };
        format!(
            "{}\nEach target / {}: median ratio [{spread}]; better / WORSE when beyond the noise\n{}",
            self.sentence(),
            self.reference,
            grid(&self.rows)
        )
    }
}

#[cfg(test)]
mod tests;
