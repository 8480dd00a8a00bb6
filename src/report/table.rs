//! The terminal table `muxlab bench` prints as cells finish, and each verdict as the terminal
//! prints it.

use crate::bench::judge::metric::{P50, P99, THROUGHPUT};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{Cell, ClassFigure};
use crate::units::{fmt_us, or_dash, thousands};

/// Steal time (per cent of the machine's CPU time over a window) above which a row says so.
pub const STEAL_SHOWN: f64 = 2.0;

/// The heading of an experiment's table.
pub fn header(x: &Experiment) -> String {
    format!(
        "== {} ({}){}\n{:<28} {:>6} {:>10} {:>9} {:>9} {:>9} {:>7} {:>7} {:>8}  {}",
        x.name,
        x.proto,
        if x.description.is_empty() {
            String::new()
        } else {
            format!(": {}", x.description)
        },
        "target",
        "conns",
        "req/s",
        "p50",
        "p99",
        "srv us/rq",
        "srv CPU",
        "client",
        "KiB/conn",
        "notes"
    )
}

/// What a cell's row says beside its figures: its status, errors, the client's limit, what
/// bound it, steal, starved connections, a low useful share.
pub fn notes(c: &Cell) -> Vec<String> {
    let f = &c.figures;
    let mut notes = Vec::new();
    if !c.ok() {
        notes.push(c.status.text().to_string());
    }
    // A cell not run has no figures to note (its server may have stood, idle).
    if c.skipped() {
        return notes;
    }
    if f.errors > 0 {
        // By cause, where the load says: "3 errors (timeout 2, reset 1)".
        let causes: Vec<String> = c
            .load
            .as_ref()
            .map(|d| {
                d.results
                    .errors
                    .iter()
                    .filter(|(_, n)| **n > 0)
                    .map(|(k, n)| format!("{k} {}", thousands(*n)))
                    .collect()
            })
            .unwrap_or_default();
        notes.push(match causes.is_empty() {
            true => format!("{} errors", thousands(f.errors)),
            false => format!("{} errors ({})", thousands(f.errors), causes.join(", ")),
        });
    }
    if crate::bench::judge::bound::client_limit(c).is_some() {
        notes.push("client-bound".into());
    }
    if let Some(b) = crate::bench::judge::bound::of(c).filter(|b| b.bound != crate::bench::judge::bound::Bound::Client)
    {
        notes.push(format!("bound by {}", b.bound.name()));
    }
    if let Some(st) = f.steal_pct.filter(|s| *s > STEAL_SHOWN) {
        notes.push(format!("steal {st:.1}%"));
    }
    if f.starved_conns > 0 {
        notes.push(format!("{} starved", thousands(f.starved_conns)));
    }
    if let Some(u) = f.useful_ratio.filter(|u| *u < 0.5) {
        notes.push(format!("useful {:.2}%", u * 100.0));
    }
    // The experiment's gates (`fail_if`): those that failed, or that all held.
    let gates = c.load.as_ref().map_or(&[][..], |d| &d.gates[..]);
    let failed: Vec<&str> = gates.iter().filter(|g| !g.held).map(|g| g.gate.as_str()).collect();
    match (gates.is_empty(), failed.is_empty()) {
        (true, _) => {}
        (false, true) => notes.push(format!("gates held ({})", gates.len())),
        (false, false) => notes.push(format!("gate failed: {}", failed.join(", "))),
    }
    notes
}

/// One finished cell.
pub fn row(c: &Cell) -> String {
    let f = &c.figures;
    let notes = notes(c);
    if c.figures.requests == 0 && c.load.is_none() {
        return format!(
            "{:<28} {:>6} {:>10}  {}",
            c.label(),
            c.connections,
            "-",
            notes.join("; ")
        );
    }
    let line = format!(
        "{:<28} {:>6} {:>10} {:>9} {:>9} {:>9} {:>7} {:>6.0}% {:>8}  {}",
        c.label(),
        c.connections,
        // Not measured (a stream cell that completed no request) is "–", never 0.
        THROUGHPUT.value(c).map_or("–".into(), |v| thousands(v.round() as u64)),
        P50.value(c).map_or("–".into(), fmt_us),
        P99.value(c).map_or("–".into(), fmt_us),
        or_dash(f.cpu_per_req(), 1),
        f.server_cpu_cores
            .map(|c| format!("{:.0}%", c * 100.0))
            .unwrap_or_else(|| "–".into()),
        f.client_cpu_util * 100.0,
        or_dash(f.mem_per_conn(), 1),
        notes.join("; ")
    );
    f.classes.iter().fold(line, |s, k| s + "\n" + &class_row(k))
}

/// A request class's line under its cell's: its requests, errors and latency.
fn class_row(k: &ClassFigure) -> String {
    let us = |v: Option<f64>| v.map_or_else(|| "–".to_string(), fmt_us);
    format!(
        "  {:<26} {:>6} {:>10} {:>9} {:>9}  {}{}",
        format!("class {}", k.name),
        "",
        format!("{} req", thousands(k.requests)),
        us(k.p50_us),
        us(k.p99_us),
        k.path,
        [(k.errors, "errors"), (k.refused, "refused (non-2xx/3xx)")]
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("; {} {what}", thousands(*n)))
            .collect::<String>()
    )
}

/// A verdict as the terminal prints it: the experiment and its headline, a row per ranked
/// metric (who fell behind on a line beneath it), then the whole verdict.
pub fn verdict_lines(v: &crate::bench::judge::Verdict) -> String {
    let mut s = match v.headline.is_empty() {
        true => format!("  {}\n", v.experiment),
        false => format!("  {}: {}\n", v.experiment, v.headline),
    };
    if !v.table.is_empty() {
        s.push_str(&format!(
            "    {:<34} {:<30} {:<30} {:>7}  {:<10} {:<17} bound by\n",
            "metric", "best", "runner-up", "ratio", "confidence", "reason"
        ));
        for r in &v.table {
            s.push_str(&format!(
                "    {:<34} {:<30} {:<30} {:>6.2}×  {:<10} {:<17} {}\n",
                r.metric,
                r.best,
                r.runner_up,
                r.ratio,
                r.confidence,
                r.reason,
                r.bound_by.as_deref().unwrap_or("–")
            ));
            if let Some(b) = &r.behind {
                s.push_str(&format!("      fell behind: {b}\n"));
            }
        }
    }
    if !v.fidelity.is_empty() {
        // Every column but the last, "why": the sentences below say it in full.
        let cols = crate::bench::judge::fidelity::COLUMNS;
        let n = cols.len() - 1;
        s.push_str(&format!("    {}\n", cols[..n].join(" | ")));
        for r in &v.fidelity {
            let c = r.cells();
            s.push_str(&format!("    {}\n", c[..n].join(" | ")));
        }
    }
    s.push_str(&format!("    {}\n", v.text));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_says_steal_time_above_two_percent_and_dashes_what_was_not_measured() {
        let mut c = Cell::new("e", "epoll", 10, 0);
        c.figures.throughput_rps = 1000.0;
        c.figures.requests = 1000;
        c.figures.server_cpu_us_per_req = Some(5.0);
        c.figures.steal_pct = Some(3.46);
        assert!(row(&c).contains("steal 3.5%"));
        c.figures.steal_pct = Some(1.9);
        assert!(!row(&c).contains("steal"));
        c.figures.server_cpu_us_per_req = None;
        c.figures.server_cpu_cores = None;
        let row = row(&c);
        assert!(row.contains(" – ") && !row.contains(" 0.0 "), "{row}");
    }
}
