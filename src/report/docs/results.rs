//! Blocks rendered from a kept bench run (`docs/results/NAME.json`), its verdicts worked out
//! by the current judge: `run` (which run, how), `cells` (a table of its cells' figures),
//! `verdict` (the judge's headline, table and sentences), `glance` (a row per question: the
//! headline and the figures behind it) and `screen` (the picture of its report, and what made
//! it).

use serde::Deserialize;

use super::{median, Ctx};
use crate::bench::judge::{as_class, Metric, Verdict};
use crate::bench::record::Cell;
use crate::bench::Results;

/// A kept run as the blocks read it.
pub struct Kept {
    pub name: String,
    pub results: Results,
    /// The commit of the binary that made it (as `keep_results.py` recorded it).
    pub commit: Option<String>,
    /// The run's own directory name (`quick-20261127-201601`).
    pub source: Option<String>,
}

impl Kept {
    pub fn read(ctx: &Ctx, name: &str) -> Result<Kept, String> {
        let path = ctx.result(name, "json");
        let results = crate::bench::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let raw: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).map_err(|e| e.to_string())?)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let text = |k: &str| raw.get(k).and_then(|v| v.as_str()).map(str::to_string);
        Ok(Kept {
            name: name.into(),
            commit: text("commit"),
            source: text("source"),
            results,
        })
    }

    fn verdict(&self, experiment: &str) -> Result<&Verdict, String> {
        self.results
            .verdicts
            .iter()
            .find(|v| v.experiment == experiment)
            .ok_or_else(|| {
                format!(
                    "{} has no experiment '{experiment}' (it has: {})",
                    self.name,
                    self.results
                        .verdicts
                        .iter()
                        .map(|v| v.experiment.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunSpec {
    result: String,
}

/// `run`: the command, the binary's commit, the run, where the server and client ran, and the
/// file.
pub fn run(ctx: &Ctx, spec: &str) -> Result<String, String> {
    let s: RunSpec = toml::from_str(spec).map_err(|e| e.to_string())?;
    let k = Kept::read(ctx, &s.result)?;
    Ok(caption(ctx, &k))
}

/// A run in one sentence.
pub fn caption(ctx: &Ctx, k: &Kept) -> String {
    let r = &k.results;
    let env = &r.environment;
    let cells = r.cells.iter().filter(|c| !c.skipped()).count();
    let repeats = match r.scenario.repeats {
        0 | 1 => String::new(),
        n => format!(", {n} repeats"),
    };
    let idle = match env.cpu_idle.as_deref() {
        Some(i) if i.starts_with("poll") => "; idle CPUs polling".to_string(),
        Some(i) if i.starts_with("halt") => "; idle CPUs halting".to_string(),
        Some(i) => format!("; idle CPUs: {i}"),
        None => "; idle CPUs halting (run before bench recorded it)".into(),
    };
    format!(
        "`muxlab bench {}` by the binary of commit `{}`, run `{}`: {cells} cells{repeats}; server on CPU {}, client on CPU {} ({} cores, {}){idle}. Figures: [{}]({}).",
        r.scenario.name,
        k.commit.as_deref().map_or("unrecorded", |c| &c[..c.len().min(8)]),
        k.source.as_deref().unwrap_or("unrecorded"),
        env.server_cpus,
        env.client_cpus,
        env.cores,
        env.cpu_model.trim(),
        ctx.result_link(&k.name, "json"),
        ctx.result_link(&k.name, "json"),
    )
}

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
struct Figure {
    key: String,
    class: Option<String>,
    what: What,
}

/// What a figure reads.
#[derive(Clone, Copy)]
enum What {
    Metric(&'static Metric),
    Counter(&'static Counter),
}

/// A cell's counter a table may show beside the metrics.
struct Counter {
    head: &'static str,
    read: fn(&Cell) -> Option<f64>,
    show: fn(f64) -> String,
}

/// The counters a table may show.
const COUNTERS: [Counter; 4] = [
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
    fn parse(key: &str) -> Result<Figure, String> {
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
            _ => Err(format!(
                "no figure '{key}': a metric ({}), a class's name before one (`short p99`), or a counter ({})",
                crate::bench::judge::metric::ALL
                    .iter()
                    .map(|m| m.short)
                    .collect::<Vec<_>>()
                    .join(", "),
                COUNTERS.iter().map(|c| c.head).collect::<Vec<_>>().join(", ")
            )),
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
    fn values(&self, cells: &[&Cell]) -> (Option<f64>, Option<f64>) {
        let seen: Vec<Cell> = cells.iter().filter(|c| c.ok()).map(|c| self.cell(c)).collect();
        (
            median(seen.iter().filter_map(|c| self.what.value(c)).collect()),
            median(seen.iter().filter_map(|c| self.what.predicted(c)).collect()),
        )
    }
}

/// `cells`: a row per target and connection count (the median of its repeats), a column per
/// figure, and what the terminal table notes of it. "–": not measured.
pub fn cells(ctx: &Ctx, spec: &str) -> Result<String, String> {
    let s: CellsSpec = toml::from_str(spec).map_err(|e| e.to_string())?;
    let k = Kept::read(ctx, &s.result)?;
    let figures = s
        .figures
        .iter()
        .map(|f| Figure::parse(f))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(p) = s.predicted.iter().find(|p| !s.figures.contains(p)) {
        return Err(format!("predicted '{p}' is not one of the figures"));
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
            return Err(format!(
                "{} has no target '{t}' in {}",
                k.name,
                s.experiments.join(", ")
            ));
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
    let each: Vec<Vec<String>> = cells.iter().map(|c| crate::report::table::notes(c)).collect();
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

/// A Markdown table's head.
pub fn table_head(cols: &[String]) -> String {
    format!("{}|{}\n", table_row(cols), "---|".repeat(cols.len()))
}

/// A Markdown table's row (a `|` in a value escaped).
pub fn table_row(cols: &[String]) -> String {
    format!(
        "| {} |\n",
        cols.iter()
            .map(|c| c.replace('|', "\\|"))
            .collect::<Vec<_>>()
            .join(" | ")
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VerdictSpec {
    result: String,
    /// Default: every experiment's verdict.
    #[serde(default)]
    experiments: Vec<String>,
    /// Default: the headline, the verdict table and the sentences.
    #[serde(default)]
    parts: Vec<String>,
}

/// `verdict`: the current judge's verdict on the kept cells.
pub fn verdict(ctx: &Ctx, spec: &str) -> Result<String, String> {
    let s: VerdictSpec = toml::from_str(spec).map_err(|e| e.to_string())?;
    let k = Kept::read(ctx, &s.result)?;
    const PARTS: [&str; 3] = ["headline", "table", "text"];
    if let Some(p) = s.parts.iter().find(|p| !PARTS.contains(&p.as_str())) {
        return Err(format!("no part '{p}' of a verdict: {}", PARTS.join(", ")));
    }
    let want = |p: &str| s.parts.is_empty() || s.parts.iter().any(|q| q == p);
    let verdicts: Vec<&Verdict> = match s.experiments.is_empty() {
        true => k.results.verdicts.iter().collect(),
        false => s.experiments.iter().map(|x| k.verdict(x)).collect::<Result<_, _>>()?,
    };
    let mut out = String::new();
    for v in verdicts {
        let headline = match v.headline.is_empty() {
            true => v.text.as_str(),
            false => v.headline.as_str(),
        };
        if want("headline") {
            out.push_str(&format!("**{}**: {headline}\n\n", v.experiment));
        }
        if want("table") && !v.table.is_empty() {
            out.push_str(&table_head(
                &[
                    "metric",
                    "best",
                    "runner-up",
                    "ratio",
                    "confidence",
                    "reason",
                    "bound by",
                ]
                .map(String::from),
            ));
            for r in &v.table {
                out.push_str(&table_row(&[
                    r.metric.clone(),
                    r.best.clone(),
                    r.runner_up.clone(),
                    format!("{:.2}×", r.ratio),
                    r.confidence.clone(),
                    r.reason.clone(),
                    r.bound_by.clone().unwrap_or_else(|| "–".into()),
                ]));
            }
            out.push('\n');
        }
        if want("table") && !v.fidelity.is_empty() {
            out.push_str(&table_head(&crate::bench::judge::fidelity::COLUMNS.map(String::from)));
            for r in &v.fidelity {
                out.push_str(&table_row(&r.cells()));
            }
            out.push('\n');
        }
        if want("text") {
            out.push_str(&format!("> {}\n\n", v.text));
        }
    }
    Ok(out)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GlanceSpec {
    rows: Vec<GlanceRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GlanceRow {
    question: String,
    result: String,
    experiment: String,
}

/// `glance`: a row per question: the experiment's headline as the current judge says it, the
/// figures of its first ranked metric (best, runner-up, last) and the result it comes from.
pub fn glance(ctx: &Ctx, spec: &str) -> Result<String, String> {
    let s: GlanceSpec = toml::from_str(spec).map_err(|e| e.to_string())?;
    let mut out = table_head(&["question", "what this machine says", "its figures", "result"].map(String::from));
    for r in &s.rows {
        let k = Kept::read(ctx, &r.result)?;
        let v = k.verdict(&r.experiment)?;
        let says = match v.headline.is_empty() {
            true => v.text.clone(),
            false => v.headline.clone(),
        };
        out.push_str(&table_row(&[
            r.question.clone(),
            says,
            figures_of(&k, v),
            format!("[{}]({})", k.name, ctx.result_link(&k.name, "json")),
        ]));
    }
    Ok(out)
}

/// The figures behind the finding a verdict's headline leads with (the first clear one, else
/// the first with a design at least 1.5× behind, else the first): the best's, the runner-up's
/// and the last's value at the connection count compared, from their cells (the median of
/// repeats).
fn figures_of(k: &Kept, v: &Verdict) -> String {
    let behind = |f: &&crate::bench::judge::Finding| {
        f.last
            .as_ref()
            .is_some_and(|l| l.1 >= crate::bench::judge::headline::BEHIND)
    };
    let Some(f) = v
        .findings
        .iter()
        .find(|f| f.clear)
        .or_else(|| v.findings.iter().find(behind))
        .or_else(|| v.findings.first())
    else {
        return "–".into();
    };
    let m = f.metric();
    let figure = Figure {
        key: String::new(),
        class: f.class.clone(),
        what: What::Metric(m),
    };
    let at = |target: &str| -> Option<String> {
        let cells: Vec<&Cell> = k
            .results
            .cells
            .iter()
            .filter(|c| {
                c.experiment == v.experiment && c.compared() && c.label() == target && c.connections == f.connections
            })
            .collect();
        let value = figure.values(&cells).0?;
        Some(format!("{target} {}", m.whole(value)))
    };
    let mut parts: Vec<String> = [
        Some(f.best.as_str()),
        Some(f.runner_up.as_str()),
        f.last.as_ref().map(|l| l.0.as_str()),
    ]
    .into_iter()
    .flatten()
    .filter_map(at)
    .collect();
    parts.dedup();
    let what = match &f.class {
        Some(c) => format!("{} of {c}", f.metric),
        None => f.metric.clone(),
    };
    format!("{what} at {}: {}", connections(f.connections), parts.join(", "))
}

/// "1 connection", "1,000 connections".
fn connections(n: usize) -> String {
    match n {
        1 => "1 connection".into(),
        n => format!("{} connections", crate::units::thousands(n as u64)),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScreenSpec {
    result: String,
    /// The picture, relative to the repository.
    image: String,
    /// The script that makes it from the result.
    script: String,
}

/// `screen`: the first screen of a kept run's report, and a caption naming the run and the
/// script that made the picture from it.
pub fn screen(ctx: &Ctx, spec: &str) -> Result<String, String> {
    let s: ScreenSpec = toml::from_str(spec).map_err(|e| e.to_string())?;
    let k = Kept::read(ctx, &s.result)?;
    for p in [&s.image, &s.script] {
        if !ctx.root.join(p).is_file() {
            return Err(format!("{p} does not exist"));
        }
    }
    let script = std::fs::read_to_string(ctx.root.join(&s.script)).map_err(|e| e.to_string())?;
    let input = format!("docs/results/{}.json", k.name);
    if !script.contains(&input) {
        return Err(format!("{} does not make its picture from {input}", s.script));
    }
    Ok(format!(
        "![The first screen of the bench report of the run below: each experiment's headline and verdict table]({})\n\n*The report of {}; the picture made by [`{}`]({}) from it.*",
        ctx.link(&s.image),
        caption(ctx, &k).trim_end_matches('.'),
        s.script,
        ctx.link(&s.script)
    ))
}
