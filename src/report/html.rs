//! The self-contained HTML report: environment, one section per experiment with a table and
//! charts (throughput, p99 latency, server CPU per request, fairness vs connections), and for seed
//! scenarios the published numbers beside the measured ones with a sentence on what agrees.

use super::charts::{line_chart, Series};
use crate::bench::results::Results;
use crate::bench::results::{summarize, Cell};
use crate::bench::scenario::{model_name, Experiment};
use crate::load::summary::{fmt_us, thousands};

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:14px}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#f3f3f3}td.l,th.l{text-align:left}.bad{color:#b00}.note{background:#fff8e0;padding:.5em 1em;border-left:4px solid #e0b000}\
.charts{display:flex;flex-wrap:wrap;gap:8px}.chart{border:1px solid #ddd}h2{border-bottom:2px solid #444;margin-top:2em}";

/// The answers first: one verdict per experiment, worked out from the results.
fn verdicts(d: &Results) -> String {
    let mut h = String::from("<section class=\"verdicts\"><h2>Verdicts</h2>\n<ul>\n");
    for v in &d.verdicts {
        h.push_str(&format!("<li class=\"verdict\">{}</li>\n", esc(&v.text)));
    }
    h.push_str(
        "</ul><p class=\"how\"><b>How to read this.</b> Each verdict compares the best target with the \
         runner-up on the geometric mean of their ratios over the connection counts both ran; \
         \"no clear difference\" means the gap lies inside the spread of the repeats (or, with one run, \
         under 10%). When the client was saturated (marked client-bound, drawn hollow), throughput and \
         latency say as much about the client as about the server; server CPU per request still \
         compares servers. The reasons come from the servers' own counters.</p></section>\n",
    );
    h
}

/// Renders the whole page.
pub fn render(d: &Results) -> String {
    let mut h = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>muxlab bench: {}</title><style>{STYLE}</style></head><body>\n\
         <h1>muxlab bench: {}</h1><p>{}</p>\n",
        esc(&d.scenario.name),
        esc(&d.scenario.name),
        esc(&d.scenario.description)
    );
    if d.interrupted {
        h.push_str(
            "<p class=\"note\">This run was interrupted (Ctrl-C): only the cells that finished are shown.</p>\n",
        );
    }
    h.push_str(&verdicts(d));
    h.push_str("<table><tr><th class=\"l\" colspan=\"2\">Environment</th></tr>\n");
    if let Some(env) = d.environment.as_object() {
        for (k, v) in env {
            let v = match (k.as_str(), v["machines"].as_array()) {
                // Every host of a run across hosts, one line each.
                ("hosts", Some(ms)) => ms
                    .iter()
                    .map(|m| {
                        let role = if v["server"] == m["host"] { "server" } else { "client" };
                        format!(
                            "{} ({role}, {}): kernel {}, {}, {} cores",
                            m["host"].as_str().unwrap_or("?"),
                            m["address"].as_str().unwrap_or("?"),
                            m["kernel"].as_str().unwrap_or("?"),
                            m["cpu_model"].as_str().unwrap_or("?"),
                            m["cores"]
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; "),
                _ => v.as_str().map(String::from).unwrap_or_else(|| v.to_string()),
            };
            h.push_str(&format!(
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
                esc(k),
                esc(&v)
            ));
        }
    }
    h.push_str("</table>\n<p>Server CPU per request is the user + system time of the server's whole process tree \
        (from /proc, over the measured window) divided by the requests completed in it. When the client is marked \
        client-bound, the throughput says more about the client than the server; CPU per request still compares servers.</p>\n");
    for x in &d.scenario.experiments {
        let cells: Vec<Cell> = d.cells.iter().filter(|c| c.experiment == x.name).cloned().collect();
        h.push_str(&experiment(x, &cells));
    }
    h.push_str(
        "<script>(function(){var s=document.querySelectorAll('svg.chart-svg, .chart svg');var ok=0;\
         s.forEach(function(e){var b=e.getBBox?e.getBBox():null;if(b&&b.width>0&&b.height>0&&e.querySelectorAll('path,polyline,circle,line').length>0)ok++;});\
         document.body.setAttribute('data-charts-total',s.length);document.body.setAttribute('data-charts-rendered',ok);})();</script>\n",
    );
    h.push_str("</body></html>\n");
    h
}

/// What a chart plots for one cell.
type Metric = Box<dyn Fn(&Cell) -> Option<f64>>;

fn experiment(x: &Experiment, cells: &[Cell]) -> String {
    let mut h = format!(
        "<h2>{} <small>({})</small></h2><p>{}</p>\n",
        esc(&x.name),
        esc(&x.proto),
        esc(&x.description)
    );
    if cells.is_empty() {
        h.push_str("<p class=\"bad\">No cell of this experiment ran.</p>\n");
        return h;
    }
    let summary = summarize(cells);
    if !x.published.is_empty() || x.seed_note.is_some() {
        h.push_str(&seed_comparison(x, &summary));
    }
    h.push_str("<table><tr><th class=\"l\">target</th><th>conns</th><th>req/s (median)</th><th>spread</th><th>p50</th><th>p99</th><th>p99.9</th>\
        <th>server µs/req</th><th>server CPU</th><th>client CPU</th><th>KiB/conn</th><th>Jain conns</th><th>Jain workers</th>\
        <th>useful events</th><th>syscalls/req</th><th>lost races/accept</th><th class=\"l\">status</th></tr>\n");
    let opt = |v: Option<f64>, digits: usize| v.map(|x| format!("{x:.digits$}")).unwrap_or_else(|| "-".into());
    for (c, lo, hi) in &summary {
        let f = &c.figures;
        let mut status = if c.ok() { String::from("ok") } else { c.status.clone() };
        if f.client_bound {
            status.push_str(", client-bound");
        }
        if f.errors > 0 {
            status.push_str(&format!(", {} errors", thousands(f.errors)));
        }
        let spread = if lo.is_finite() && hi > lo {
            format!("{}–{}", thousands(*lo as u64), thousands(*hi as u64))
        } else {
            "-".into()
        };
        h.push_str(&format!(
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.0}%</td><td>{:.0}%</td>\
             <td>{:.1}</td><td>{:.3}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l{}\">{}</td></tr>\n",
            esc(&c.target),
            c.connections,
            thousands(f.throughput_rps.round() as u64),
            spread,
            fmt_us(f.p50_us),
            fmt_us(f.p99_us),
            fmt_us(f.p999_us),
            f.server_cpu_us_per_req,
            f.server_cpu_cores * 100.0,
            f.client_cpu_util * 100.0,
            f.mem_per_conn_kib,
            f.jain_conns,
            opt(f.jain_workers, 3),
            f.useful_ratio.map(|u| format!("{:.2}%", u * 100.0)).unwrap_or_else(|| "-".into()),
            opt(f.syscalls_per_req, 1),
            opt(f.lost_races_per_accept, 3),
            if c.ok() { "" } else { " bad" },
            esc(&status)
        ));
    }
    h.push_str("</table>\n<div class=\"charts\">\n");
    let mut conns: Vec<usize> = summary.iter().map(|(c, ..)| c.connections).collect();
    conns.sort_unstable();
    conns.dedup();
    let mut targets: Vec<String> = Vec::new();
    for (c, ..) in &summary {
        if !targets.contains(&c.target) {
            targets.push(c.target.clone());
        }
    }
    let series = |metric: &dyn Fn(&Cell) -> Option<f64>| -> Vec<Series> {
        targets
            .iter()
            .map(|t| Series {
                name: t.clone(),
                values: conns
                    .iter()
                    .map(|n| {
                        summary
                            .iter()
                            .find(|(c, ..)| &c.target == t && c.connections == *n && c.ok())
                            .and_then(|(c, ..)| metric(c))
                    })
                    .collect(),
            })
            .collect()
    };
    let charts: [(&str, &str, Metric); 4] = [
        (
            "Throughput vs connections",
            "requests / s",
            Box::new(|c: &Cell| Some(c.figures.throughput_rps)),
        ),
        (
            "p99 latency vs connections",
            "p99 latency (ms)",
            Box::new(|c: &Cell| Some(c.figures.p99_us / 1000.0)),
        ),
        (
            "Server CPU per request",
            "server CPU (µs / request)",
            Box::new(|c: &Cell| Some(c.figures.server_cpu_us_per_req).filter(|v| *v > 0.0)),
        ),
        (
            "Fairness across connections",
            "Jain's index",
            Box::new(|c: &Cell| Some(c.figures.jain_conns)),
        ),
    ];
    for (title, y, metric) in charts.iter() {
        match line_chart(title, y, &conns, &series(metric.as_ref())) {
            Ok(svg) => h.push_str(&format!("<div class=\"chart\">{svg}</div>\n")),
            Err(e) => h.push_str(&format!(
                "<p class=\"bad\">chart '{title}' failed: {}</p>\n",
                esc(&e.to_string())
            )),
        }
    }
    h.push_str("</div>\n");
    h
}

/// The seed's numbers beside ours, and a sentence on what agrees.
fn seed_comparison(x: &Experiment, summary: &[(Cell, f64, f64)]) -> String {
    let measured = |model: &str, n: usize| {
        summary
            .iter()
            .find(|(c, ..)| model_name(&c.target) == model && c.connections == n && c.ok())
            .map(|(c, ..)| c.figures.throughput_rps)
    };
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
    h.push_str(&format!("<p>{}</p>\n", esc(&verdict(x, &measured))));
    h
}

/// Compares the order of models at each connection count the seed published two or more for.
fn verdict(x: &Experiment, measured: &dyn Fn(&str, usize) -> Option<f64>) -> String {
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
        let mut ours: Vec<(&str, f64)> = pubs
            .iter()
            .filter_map(|(m, _)| measured(m, n).map(|v| (*m, v)))
            .collect();
        if ours.len() < pubs.len() {
            continue;
        }
        pubs.sort_by(|a, b| b.1.total_cmp(&a.1));
        ours.sort_by(|a, b| b.1.total_cmp(&a.1));
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
        if let (Some(ma), Some(mb)) = (measured(m, a.0), measured(m, b.0)) {
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
