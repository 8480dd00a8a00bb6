//! The self-contained HTML report: environment, one section per experiment with a table and
//! charts (throughput, p99 latency, server CPU per request, fairness vs connections), and for seed
//! scenarios the published numbers beside the measured ones with a sentence on what agrees.

use crate::bench::judge::metric::{self, Metric};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::Environment;
use crate::bench::record::{spread, summarize, within_rounds, Cell, Summary};
use crate::bench::Results;
use crate::units::si;
use crate::units::{fmt_us, or_dash, thousands};

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1220px;margin:2em auto;padding:0 1em;color:#222}\
.tw{max-width:100%;overflow-x:auto}table{border-collapse:collapse;margin:1em 0;font-size:12.5px}\
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}\
th{background:#f3f3f3;position:sticky;top:0;z-index:1}tr.groups th{background:#e6e9ef}td.l,th.l{text-align:left}\
td.best{font-weight:bold;background:#e3f6e3}tr.bound td{font-style:italic;color:#555}\
.bad{color:#b00}.note{background:#fff8e0;padding:.5em 1em;border-left:4px solid #e0b000}\
.verdicts li{margin:.4em 0}.how{font-size:13px;color:#444}\
.charts{display:flex;flex-wrap:wrap;gap:8px}.chart{border:1px solid #ddd}.chart svg{max-width:100%;height:auto}\
h2{border-bottom:2px solid #444;margin-top:2em}\
.headline{font-size:17px;font-weight:600;margin:.3em 0}.verdict h3{margin:.8em 0 .2em}\
table{max-width:100%}table.cells{table-layout:fixed;width:100%;font-size:12px}\
table.cells td,table.cells th{white-space:normal;overflow-wrap:anywhere}\
table.vt{font-size:13px}table.vt td,table.vt th{text-align:left;white-space:normal;overflow-wrap:anywhere}";

/// The answers first: one verdict per experiment, worked out from the results.
fn verdicts(d: &Results) -> String {
    let mut h = String::from("<section class=\"verdicts\"><h2>Verdicts</h2>\n");
    for v in &d.verdicts {
        h.push_str(&format!("<div class=\"verdict\"><h3>{}</h3>\n", esc(&v.experiment)));
        if !v.headline.is_empty() {
            h.push_str(&format!("<p class=\"headline\">{}</p>\n", esc(&v.headline)));
        }
        h.push_str(&verdict_table(&v.table));
        h.push_str(&fidelity_table(&v.fidelity));
        // The prose, for those who want it; a verdict across experiments puts each target on
        // a line of its own.
        h.push_str(&format!(
            "<details><summary>The whole verdict</summary><p>{}</p></details></div>\n",
            esc(&v.text).replace('\n', "<br>")
        ));
    }
    h.push_str(
        "<p class=\"how\"><b>How to read this.</b> Each verdict compares the best target with the \
         runner-up on the geometric mean of their ratios over the connection counts both ran; \
         \"no clear difference\" means the gap lies inside the spread of the repeats (or, with one run, \
         under 10%). When the client was the limit (marked client-bound, drawn hollow), throughput and \
         latency say as much about the client as about the server; server CPU per request still \
         compares servers. A latency from a cell that starved connections covers only the connections it \
         served: it is drawn hollow, never marked best, and not ranked. The reasons come from the servers' own \
         counters.</p></section>\n",
    );
    h
}

/// A verdict's table: a row per ranked metric.
fn verdict_table(rows: &[crate::bench::judge::headline::Row]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut h = String::from(
        "<table class=\"vt\"><tr><th>metric</th><th>best</th><th>runner-up</th><th>ratio</th>\
         <th>confidence</th><th>reason</th><th>bound by</th></tr>\n",
    );
    for r in rows {
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:.2}×</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            esc(&r.metric),
            esc(&r.best),
            esc(&r.runner_up),
            r.ratio,
            esc(&r.confidence),
            esc(&r.reason),
            esc(r.bound_by.as_deref().unwrap_or("–"))
        ));
    }
    h.push_str("</table>\n");
    h
}

/// The fidelity verdict's table: a row per product beside its model.
fn fidelity_table(rows: &[crate::bench::judge::fidelity::Row]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut h = String::from("<div class=\"tw\"><table class=\"vt\"><tr>");
    for c in crate::bench::judge::fidelity::COLUMNS {
        h.push_str(&format!("<th>{}</th>", esc(c)));
    }
    h.push_str("</tr>\n");
    for r in rows {
        h.push_str("<tr>");
        for (i, c) in r.cells().iter().enumerate() {
            let bad = i == 10 && r.stands == Some(false);
            h.push_str(&format!(
                "<td{}>{}</td>",
                if bad { " class=\"bad\"" } else { "" },
                esc(c)
            ));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n");
    h
}

/// Each experiment with a `reference`: every other target against it, in words and a table.
fn against_reference(d: &Results) -> String {
    use super::compare;
    let all = compare::against_reference(d);
    if all.is_empty() {
        return String::new();
    }
    let mut h = String::from(
        "<section class=\"reference\"><h2>Against the reference</h2>\n<p class=\"how\">Each \
        cell: the ratio of the target's median to the reference's, and in brackets the lowest and highest ratio \
        (a paired experiment: of its rounds; green: better beyond the noise, red: worse; a paired experiment \
        calls it by a sign test over its rounds). Throughput: higher is better; p99 and CPU per request: lower.</p>\n",
    );
    for a in &all {
        h.push_str(&format!(
            "<p class=\"verdict\">{}</p>\n{}",
            esc(&a.sentence()),
            compare::html_table(&format!("/ {}", a.reference), &a.rows)
        ));
    }
    h.push_str("</section>\n");
    h
}

/// The run's environment, a row per entry; a run across hosts gets a line per host.
fn environment(env: &Environment) -> String {
    let mut h = String::from("<table><tr><th class=\"l\" colspan=\"2\">Environment</th></tr>\n");
    let mut row = |k: &str, v: String| {
        h.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
            esc(k),
            esc(&v)
        ));
    };
    row("kernel", env.kernel.clone());
    row("cpu_model", env.cpu_model.clone());
    row("cores", env.cores.to_string());
    row("server_cpus", env.server_cpus.clone());
    row("client_cpus", env.client_cpus.clone());
    row("client_threads", env.client_threads.to_string());
    row("server_addr", env.server_addr.clone());
    if let Some(u) = &env.unit_costs {
        row(
            "unit_costs",
            format!(
                "a syscall {:.2} µs, a context switch {:.2} µs{}",
                u.syscall_us,
                u.context_switch_us,
                if u.measured { "" } else { " (documented, not measured)" }
            ),
        );
    }
    if let Some(hosts) = &env.hosts {
        let lines: Vec<String> = hosts
            .machines
            .iter()
            .map(|m| {
                let role = if hosts.server.as_deref() == Some(m.host.as_str()) {
                    "server"
                } else {
                    "client"
                };
                format!(
                    "{} ({role}, {}): kernel {}, {}, {} cores",
                    m.host,
                    m.address.as_deref().unwrap_or("?"),
                    m.kernel,
                    m.cpu_model,
                    m.cores.map_or("?".to_string(), |c| c.to_string())
                )
            })
            .collect();
        row("hosts", lines.join("; "));
    }
    for (k, v) in [("steer_rx", &env.steer_rx), ("cpu_idle", &env.cpu_idle)] {
        if let Some(v) = v {
            row(k, v.clone());
        }
    }
    if let (Some(us), Some(from)) = (env.sched_slice_us, &env.sched_slice_from) {
        row(
            "sched_slice",
            format!(
                "{} ({from}): predictions share the CPUs in it",
                crate::units::fmt_us(us)
            ),
        );
    }
    row("muxlab_version", env.muxlab_version.clone());
    row("git_revision", env.git_revision.clone());
    h.push_str("</table>\n");
    h
}

/// Renders the whole page.
pub fn render(d: &Results) -> String {
    let mut h = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>muxlab bench: {}</title><style>{STYLE}{CLASSES}</style></head><body>\n\
         <h1>muxlab bench: {}</h1><p>{}</p>\n",
        esc(&d.scenario.name),
        esc(&d.scenario.name),
        esc(&d.scenario.description),
        CLASSES = super::compare::CLASSES
    );
    if d.interrupted {
        h.push_str(
            "<p class=\"note\">This run was interrupted (Ctrl-C): only the cells that finished are shown.</p>\n",
        );
    }
    h.push_str(&verdicts(d));
    h.push_str(&against_reference(d));
    h.push_str(&environment(&d.environment));
    h.push_str("<p>Server CPU per request is the user + system time of the server's whole process tree \
        (from /proc, over the measured window) divided by the requests completed in it. When the client is marked \
        client-bound, the throughput says more about the client than the server; CPU per request still compares servers.</p>\n");
    for x in &d.scenario.experiments {
        let cells: Vec<Cell> = d.cells.iter().filter(|c| c.experiment == x.name).cloned().collect();
        h.push_str(&experiment(x, &cells));
    }
    h.push_str(
        "<script>(function(){var s=document.querySelectorAll('svg.chart-svg, .chart svg');var ok=0;\
         s.forEach(function(e){var b=e.getBBox?e.getBBox():null;if(b&&b.width>0&&b.height>0&&e.querySelectorAll('path,polyline,circle,line').length>0)ok++;});\
         document.body.setAttribute('data-charts-total',s.length);document.body.setAttribute('data-charts-rendered',ok);\
         document.body.setAttribute('data-overflow-x',document.documentElement.scrollWidth>window.innerWidth?'yes':'no');\
         var w=0,over=0,page=document.documentElement.clientWidth;\
         document.querySelectorAll('table,svg').forEach(function(t){var r=t.getBoundingClientRect();w=Math.max(w,Math.ceil(r.width));if(r.right>page+1)over++;});\
         document.querySelectorAll('td,th,.tw').forEach(function(e){if(e.scrollWidth>e.clientWidth+1)over++;});\
         document.body.setAttribute('data-widest-table',w);document.body.setAttribute('data-overflowing',over);\
         var v=document.querySelector('.verdict');var b=v?v.querySelector('table.vt')||v.querySelector('.headline'):null;\
         document.body.setAttribute('data-first-screen',b&&b.getBoundingClientRect().bottom<=window.innerHeight?'yes':'no');})();</script>\n",
    );
    h.push_str("</body></html>\n");
    h
}

/// A column that gets a best mark: its index, and the metric it shows.
type Best = (usize, &'static Metric);

/// The columns that get a best mark.
const MARKED: [Best; 8] = [
    (2, &metric::THROUGHPUT),
    (3, &metric::P50),
    (4, &metric::P99),
    (5, &metric::P999),
    (6, &metric::CPU),
    (8, &metric::MEMORY),
    (10, &metric::FAIRNESS),
    (13, &metric::SYSCALLS),
];

/// Which value of a table is the best of its column at its connection count. A column ranks
/// a row by its median; in paired rounds, by its median within rounds (the verdicts' ranking),
/// so the mark does not follow a round's drift. An A/A twin is the machine's noise, not a
/// target: it never takes a mark.
struct Marks<'a> {
    summary: &'a [Summary],
    ok: Vec<&'a Cell>,
    paired: bool,
}

impl Marks<'_> {
    fn ranked(c: &Cell) -> bool {
        c.ok() && c.compared()
    }

    /// What `c` is ranked by in column `col`: the metric's value where the verdicts may rank
    /// it ([`metric::rankable`], the one rule: a cell the client bound, a design that starved
    /// connections anywhere, too few samples never take a mark).
    fn rank(&self, c: &Cell, col: &Best) -> Option<f64> {
        let m = col.1;
        let rank = |c: &Cell| metric::rankable(m, c, &self.ok).ranked();
        rank(c)?;
        match self.paired {
            true => within_rounds(&self.ok, &rank, &c.label(), c.connections),
            false => rank(c),
        }
    }

    /// The best value of column `col` at `n`, where it stands apart from the runner-up by
    /// what the measurement resolves (memory: a mebibyte over all the connections).
    fn best_at(&self, n: usize, col: &Best) -> Option<f64> {
        let mut values: Vec<f64> = self
            .summary
            .iter()
            .filter(|s| s.cell.connections == n && Self::ranked(&s.cell))
            .filter_map(|s| self.rank(&s.cell, col))
            .collect();
        let m = col.1;
        values.sort_by(|a, b| match m.higher_is_better {
            true => b.total_cmp(a),
            false => a.total_cmp(b),
        });
        let best = *values.first()?;
        match values.get(1) {
            Some(&second) if !metric::resolved(m, best, second, n) => None,
            _ => Some(best),
        }
    }

    /// Whether column `i` of `c`'s row is the best of its count.
    fn best(&self, c: &Cell, i: usize) -> bool {
        let several = self
            .summary
            .iter()
            .filter(|s| s.cell.connections == c.connections && Self::ranked(&s.cell))
            .count()
            > 1;
        Self::ranked(c)
            && several
            && MARKED.iter().find(|m| m.0 == i).is_some_and(|m| {
                let r = self.rank(c, m);
                r.is_some() && r == self.best_at(c.connections, m)
            })
    }
}

/// The experiment's table: columns grouped, the header sticky, the best value of each column
/// at each connection count in bold, client-bound rows in italics.
fn table(summary: &[Summary], cells: &[Cell], paired: bool) -> String {
    let marks = Marks {
        summary,
        ok: cells.iter().filter(|c| c.ok()).collect(),
        paired,
    };
    let mut h = String::from(
        "<div class=\"tw\"><table class=\"cells\"><tr class=\"groups\"><th colspan=\"2\"></th><th>throughput</th>\
         <th colspan=\"3\">latency</th><th colspan=\"3\">server</th><th>client</th><th colspan=\"2\">fairness (Jain)</th>\
         <th colspan=\"4\">counters</th><th></th><th></th></tr>\n<tr><th class=\"l\">target</th><th>conns</th>\
         <th title=\"median of the repeats; below: their range\">req/s</th><th>p50</th><th>p99</th><th>p99.9</th>\
         <th title=\"server CPU per request\">µs/req</th><th>CPU</th><th>KiB/conn</th><th>CPU</th>\
         <th>conns</th><th>workers</th><th title=\"useful events / events examined\">useful</th><th>syscalls/req</th>\
         <th title=\"context switches per request\">cs/req</th>\
         <th title=\"lost accept races per accepted connection\">lost races</th>\
         <th class=\"l\" title=\"what bound the cell: muxlab explain says why\">bound by</th><th class=\"l\">notes</th></tr>\n",
    );
    for s in summary {
        let c = &s.cell;
        h.push_str(if metric::client_limit(c).is_some() {
            "<tr class=\"bound\">"
        } else {
            "<tr>"
        });
        for (i, text) in columns(s, cells).iter().enumerate() {
            let class = match (i, marks.best(c, i)) {
                (0, _) => " class=\"l\"",
                (_, true) => " class=\"best\"",
                _ => "",
            };
            h.push_str(&format!("<td{class}>{text}</td>"));
        }
        let by = crate::bench::judge::bound::of(c);
        h.push_str(&format!(
            "<td class=\"l\" title=\"{}\">{}</td><td class=\"l{}\">{}</td></tr>\n",
            esc(by.as_ref().map_or("", |b| b.evidence.as_str())),
            by.as_ref().map_or("–", |b| b.bound.name()),
            if c.ok() { "" } else { " bad" },
            esc(&notes(c).join(", "))
        ));
    }
    h.push_str("</table></div>\n");
    h
}

/// A row's notes: its status when not ok, client-bound, steal, errors.
fn notes(c: &Cell) -> Vec<String> {
    let f = &c.figures;
    let mut notes: Vec<String> = Vec::new();
    if !c.ok() {
        notes.push(c.status.text().to_string());
    }
    if metric::client_limit(c).is_some() {
        notes.push("client-bound".into());
    }
    if let Some(st) = f.steal_pct.filter(|s| *s > super::table::STEAL_SHOWN) {
        notes.push(format!("steal {st:.1}%"));
    }
    if f.errors > 0 {
        notes.push(format!("{} errors", thousands(f.errors)));
    }
    notes
}

/// A row's cells but the notes: the median figures, with the throughput's and the server
/// CPU's range over the repeats under them.
fn columns(s: &Summary, cells: &[Cell]) -> [String; 16] {
    let (c, f) = (&s.cell, &s.cell.figures);
    let opt = |v: Option<f64>, digits: usize| v.map(|x| format!("{x:.digits$}")).unwrap_or_else(|| "-".into());
    let rps_spread = if s.lowest_rps.is_finite() && s.highest_rps > s.lowest_rps {
        format!("<br><small>{}–{}</small>", si(s.lowest_rps), si(s.highest_rps))
    } else {
        String::new()
    };
    let cpus: Vec<f64> = cells
        .iter()
        .filter(|x| x.ok() && x.label() == c.label() && x.connections == c.connections)
        .filter_map(|x| x.figures.cpu_per_req())
        .collect();
    let runs = cpus.len();
    let cpu_spread = match spread(cpus) {
        Some(s) if runs > 1 && s.highest > s.lowest => {
            format!("<br><small>{:.1}–{:.1}</small>", s.lowest, s.highest)
        }
        _ => String::new(),
    };
    [
        esc(&c.label()),
        c.connections.to_string(),
        // Not measured (a stream cell that completed no request) is "–", never 0.
        match metric::THROUGHPUT.value(c) {
            Some(v) => format!("{}{rps_spread}", thousands(v.round() as u64)),
            None => "–".into(),
        },
        metric::P50.value(c).map_or("–".into(), fmt_us),
        metric::P99.value(c).map_or("–".into(), fmt_us),
        metric::P999.value(c).map_or("–".into(), fmt_us),
        format!("{}{cpu_spread}", or_dash(f.cpu_per_req(), 1)),
        or_dash(f.server_cpu_cores.map(|c| c * 100.0), 0) + if f.server_cpu_cores.is_some() { "%" } else { "" },
        or_dash(f.mem_per_conn(), 1),
        format!("{:.0}%", f.client_cpu_util * 100.0),
        opt(f.jain_conns, 3),
        opt(f.jain_workers, 3),
        f.useful_ratio
            .map(|u| format!("{:.2}%", u * 100.0))
            .unwrap_or_else(|| "-".into()),
        opt(f.syscalls_per_req, 1),
        opt(f.switches_per_req(), 2),
        opt(f.lost_races_per_accept, 3),
    ]
}

fn experiment(x: &Experiment, cells: &[Cell]) -> String {
    let mut h = format!(
        "<h2>{} <small>({})</small></h2><p>{}</p>\n",
        esc(&x.name),
        esc(x.proto.name()),
        esc(&x.description)
    );
    if cells.is_empty() {
        h.push_str("<p class=\"bad\">No cell of this experiment ran.</p>\n");
        return h;
    }
    let summary = summarize(cells);
    if !x.published.is_empty() || x.seed_note.is_some() {
        h.push_str(&super::seed::comparison(x, &summary));
    }
    h.push_str(&table(&summary, cells, x.paired));
    if x.paired {
        h.push_str(
            "<p class=\"how\">Paired rounds: this table shows each target's own medians and ranges, which the \
             machine's drift between rounds widens. The bold mark, the verdict and the comparison with the \
             reference compare the targets within each round instead (each value over its round's drift), so \
             a bold value need not be the smallest median.</p>\n",
        );
    }
    h.push_str(&super::capacity::section(x, cells));
    h.push_str(&super::classes::section(&summary, cells));
    h.push_str(&super::cards::section(cells));
    h.push_str("<div class=\"charts\">\n");
    h.push_str(&plots::charts(x, &summary));
    h.push_str("</div>\n");
    h
}

mod plots;

#[cfg(test)]
mod tests;
