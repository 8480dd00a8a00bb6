//! The whole page: its style, the answers first (the verdicts, every target against a
//! reference), the environment, then one section per experiment (its seed comparison, table,
//! capacity search, request classes, explain cards and charts).

use super::environment::environment;
use super::plots;
use super::table::table;
use super::verdicts::{against_reference, verdicts};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{summarize, Cell};
use crate::bench::Results;
use crate::report::esc;

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

/// Renders the whole page.
pub fn render(d: &Results) -> String {
    let mut h = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>muxlab bench: {}</title><style>{STYLE}{CLASSES}</style></head><body>\n\
         <h1>muxlab bench: {}</h1><p>{}</p>\n",
        esc(&d.scenario.name),
        esc(&d.scenario.name),
        esc(&d.scenario.description),
        CLASSES = crate::report::compare::CLASSES
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
