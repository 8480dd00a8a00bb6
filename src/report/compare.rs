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

/// A figure's spread over the repeats that measured it where it may be ranked (a latency of a
/// cell that starved connections covers only the served ones), and how many did.
fn stats(cells: &[&Cell], m: &Metric) -> Option<(Spread, usize)> {
    let xs: Vec<f64> = cells.iter().filter_map(|c| m.ranked(c)).collect();
    let n = xs.len();
    spread(xs).map(|s| (s, n))
}

fn change(a: &[&Cell], b: &[&Cell], m: &Metric) -> Option<Change> {
    let higher = &m.higher_is_better;
    let (sa, an) = stats(a, m)?;
    let (sb, bn) = stats(b, m)?;
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
        verdict: beyond.then_some(up == *higher),
        rounds: None,
    })
}

/// B against A where both ran in one paired run (`bench --baseline` of a `paired = true`
/// experiment: the two servers measured in the same round, one right after the other): the
/// ratio of each round, their median and range; beyond the noise when B moved the same way in
/// so many rounds that chance would do it less than one time in 20 (a sign test).
fn paired_change(a: &[&Cell], b: &[&Cell], m: &Metric) -> Option<Change> {
    let higher = &m.higher_is_better;
    let ratios: Vec<f64> = b
        .iter()
        .filter_map(|cb| {
            let ca = a.iter().find(|ca| ca.repeat == cb.repeat)?;
            Some(m.ranked(cb)? / m.ranked(ca)?)
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
    let verdict = if sign(ups, n) < CHANCE {
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
                changes: METRICS.map(|m| compare(&ra, &rb, m)),
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

/// The terminal table.
pub fn table(a_name: &str, b_name: &str, rows: &[Row]) -> String {
    let mut s = format!(
        "B = {b_name}\nA = {a_name}\nB/A per cell: median ratio [range the repeats allow; a paired run: of its rounds' ratios]; better / WORSE when beyond the noise\n\
         (runs made at different times also differ by the machine's drift, which repeats within one run do\n\
         not show: for a before/after, alternate A and B runs and compare the combined sets)\n\n"
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
         <h1>B against A</h1><p>A: {}<br>B: {}</p>\
         <p>Each cell: the ratio of B's median to A's, and in brackets the lowest and highest ratio the repeats \
         allow. Green: better beyond the noise; red: worse beyond it (the repeats' ranges do not overlap; with one \
         run each, a change over 10%). Throughput: higher is better; p99 and server CPU per request: lower.</p>\
         <p>{}</p>{}</body></html>\n",
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
                        changes: METRICS.map(|m| compare(&base, &cells, m)),
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
mod tests {
    use crate::bench::record::scenario::parse;
    use crate::bench::record::{Cell, Figures};
    use crate::bench::Results;
    use crate::report::compare::{html, rows, table};

    fn results(rps: &[(&str, f64)]) -> Results {
        let text = "name = \"x\"\ndescription = \"d\"\nrepeats = 2\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"epoll\", \"poll\"]\nconnections = [10]\nduration = \"1s\"\n";
        let scenario = parse(text, "t").unwrap();
        let cells = rps
            .iter()
            .enumerate()
            .map(|(i, (t, v))| Cell {
                experiment: "e".into(),
                target: t.to_string(),
                twin: false,
                connections: 10,
                repeat: i,
                status: crate::bench::record::CellStatus::Ok,
                seconds: 1.0,
                figures: Figures {
                    throughput_rps: *v,
                    p99_us: 100.0,
                    server_cpu_us_per_req: Some(1e6 / v),
                    ..Figures::default()
                },
                load: None,
                server_stats: None,
            })
            .collect();
        Results::new(scenario, Default::default(), cells, false, Vec::new())
    }

    #[test]
    fn changes_beyond_the_noise_are_marked_and_the_rest_are_not() {
        let a = results(&[("epoll", 100.0), ("epoll", 104.0), ("poll", 100.0), ("poll", 110.0)]);
        let b = results(&[("epoll", 120.0), ("epoll", 124.0), ("poll", 105.0), ("poll", 95.0)]);
        let r = rows(&a, &b, false);
        assert_eq!(r.len(), 2);
        let epoll = &r[0].changes[0].as_ref().unwrap();
        assert!((epoll.ratio - 122.0 / 102.0).abs() < 1e-9);
        assert_eq!(epoll.verdict, Some(true), "throughput up beyond the spread is better");
        assert_eq!(
            r[0].changes[2].as_ref().unwrap().verdict,
            Some(true),
            "less CPU is better"
        );
        assert_eq!(
            r[1].changes[0].as_ref().unwrap().verdict,
            None,
            "overlapping ranges are noise"
        );
        let t = table("A", "B", &r);
        assert!(t.contains("better") && t.contains("1 better and 0 worse"), "{t}");
        assert!(html("A", "B", &r).contains("class=\"better\""));
    }

    /// `reference = "epoll"` in a paired experiment: poll at 0.9× epoll's CPU in each of 8
    /// drifting rounds is cheaper beyond the noise, said in words, in the terminal table and in
    /// the report; the reference is not compared with itself.
    #[test]
    fn every_target_is_compared_with_the_reference_round_by_round() {
        use crate::report::compare::against_reference;
        let drift = [100.0, 150.0, 80.0, 120.0, 95.0, 130.0, 90.0, 110.0];
        let mut r = results(&[]);
        r.scenario.experiments[0].paired = true;
        r.scenario.experiments[0].reference = Some("epoll".into());
        let mut all = results(&drift.map(|v| ("epoll", v)));
        all.cells.extend(results(&drift.map(|v| ("poll", v / 0.9))).cells);
        r.cells = all.cells;
        let a = against_reference(&r);
        assert_eq!(a.len(), 1);
        assert_eq!(
            a[0].rows.len(),
            1,
            "only poll: the reference is not compared with itself"
        );
        let cpu = a[0].rows[0].changes[2].as_ref().unwrap();
        assert!((cpu.ratio - 0.9).abs() < 1e-9, "{cpu:?}");
        assert_eq!(cpu.verdict, Some(true), "cheaper in 8 of 8 rounds");
        let words = a[0].sentence();
        assert!(
            words.contains("1 of 1 cells cheaper") && words.contains("the cheapest is poll at 10 connections, 0.90×"),
            "{words}"
        );
        assert!(words.contains("cheaper in 8 of 8 paired rounds"), "{words}");
        assert!(a[0].table().contains("lowest–highest round"));
        let page = crate::report::html::render(&r);
        assert!(page.contains("Against the reference") && page.contains("CPU/request / epoll"));
        assert!(page.contains("Paired rounds: this table shows each target's own medians"));
        // Without a reference, nothing is said.
        r.scenario.experiments[0].reference = None;
        assert!(against_reference(&r).is_empty());
        assert!(!crate::report::html::render(&r).contains("Against the reference"));
    }

    /// A reference that is not one of the experiment's targets is refused, naming the field.
    #[test]
    fn a_reference_that_is_not_a_target_is_refused() {
        let text = "name = \"x\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"epoll\"]\npeers = [\"nginx\"]\nreference = \"ngnix\"\nconnections = [10]\nduration = \"1s\"\n";
        let e = parse(text, "t").unwrap_err().to_string();
        assert!(
            e.contains("field 'reference'") && e.contains("\"ngnix\" is not one of its models or peers"),
            "{e}"
        );
        assert!(parse(&text.replace("ngnix", "nginx"), "t").is_ok());
    }

    /// One paired run with a baseline: each round's B/A counts. B 5% faster in every one of
    /// five rounds is beyond the noise though the machine's drift makes the ranges overlap;
    /// compared as two separate runs, it is not.
    #[test]
    fn paired_rounds_of_one_run_compare_round_by_round() {
        let drift = [100.0, 150.0, 80.0, 120.0, 95.0];
        let a = results(&drift.map(|v| ("epoll", v)));
        let b = results(&drift.map(|v| ("epoll", v * 1.05)));
        let (mut pa, mut pb) = (a.clone(), b.clone());
        pa.scenario.experiments[0].paired = true;
        pb.scenario.experiments[0].paired = true;
        let paired = rows(&pa, &pb, true);
        let t = paired[0].changes[0].as_ref().unwrap();
        assert!(
            (t.ratio - 1.05).abs() < 1e-9 && (t.spread.0 - 1.05).abs() < 1e-9,
            "{t:?}"
        );
        assert_eq!(t.verdict, Some(true));
        assert_eq!(rows(&pa, &pb, false)[0].changes[0].as_ref().unwrap().verdict, None);
        assert_eq!(rows(&a, &b, true)[0].changes[0].as_ref().unwrap().verdict, None);
    }

    /// A latency from a cell that starved connections is not compared: B's p99 against A's
    /// says nothing when either covers only the connections it served.
    #[test]
    fn a_starved_latency_is_not_compared() {
        let a = results(&[("epoll", 100.0), ("epoll", 104.0)]);
        let mut b = results(&[("epoll", 120.0), ("epoll", 124.0)]);
        b.cells.iter_mut().for_each(|c| c.figures.starved_conns = 3);
        let r = rows(&a, &b, false);
        assert!(r[0].changes[1].is_none(), "p99 not compared: {:?}", r[0].changes[1]);
        assert!(
            r[0].changes[0].is_some() && r[0].changes[2].is_some(),
            "throughput and CPU still are"
        );
    }
}
