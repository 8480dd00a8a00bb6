//! `muxlab limits SCENARIO`: what a run of the scenario needs of this machine, run nothing.

use std::fmt::Write;

use crate::bench::record::scenario::{self, model_name};
use crate::bench::settings;

/// The preflight of `name` (a built-in scenario or a file) as text.
pub(super) fn text(name: &str) -> anyhow::Result<String> {
    let sc = scenario::load(name)?;
    let wants = settings::needs(&sc)?;
    let short = settings::short(&wants);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: what a run needs of this machine (settings as read now)\n",
        sc.name
    );
    let _ = writeln!(s, "SETTINGS");
    for w in &wants {
        let now = crate::sys::sysctl::read(&w.name).unwrap_or_else(|_| "?".into());
        let verdict = match short.iter().find(|(n, _)| *n == w.name) {
            Some((_, v)) => format!("SHORT: raised to {v} for the run"),
            None => "enough".into(),
        };
        let _ = writeln!(
            s,
            "  {:<30} now {:<22} needs {:<12} {verdict}  ({})",
            w.name, now, w.value, w.why
        );
    }
    if wants.is_empty() {
        let _ = writeln!(s, "  none beyond what the machine has");
    }
    let _ = writeln!(
        s,
        "{}",
        match (short.is_empty(), crate::sys::process::is_root()) {
            (true, _) => "  nothing to raise",
            (false, true) => "  bench raises the SHORT ones for the run (root) and puts them back after",
            (false, false) => "  bench would refuse: raising them takes root",
        }
    );
    let _ = writeln!(
        s,
        "\nCEILINGS (connections one server holds here, against the most an experiment asks)"
    );
    let read = crate::sys::settings::Settings::read();
    let cpus = crate::sys::affinity::get().map(|c| c.len()).unwrap_or(1);
    for x in &sc.experiments {
        let most = x.connections.iter().copied().max().unwrap_or(0) as u64;
        for entry in &x.models {
            let Some(model) = crate::models::find(model_name(entry)) else {
                continue;
            };
            let flag = |f: &str| {
                let mut w = entry.split_whitespace().skip_while(|w| *w != f);
                w.next();
                w.next().and_then(|v| v.parse::<usize>().ok())
            };
            let procs = flag("--procs").unwrap_or(1);
            let workers = model.worker_count(flag("--workers").or(x.workers), cpus) + model.extra_threads;
            // What no setting bench raises changes first (one process's descriptors, memory:
            // what bench skips a cell for), then the settings as read now.
            let ceiling = |s: &crate::sys::settings::Settings| crate::server::ceiling(model, procs, workers, s);
            let line = match ceiling(&read.unraisable())
                .filter(|(cap, _)| *cap < most)
                .or_else(|| ceiling(&read))
            {
                Some((cap, bound)) if cap < most => format!("holds {cap} < {most}: REFUSED ({bound})"),
                Some((cap, _)) => format!("holds {cap} ≥ {most}"),
                None => "one connection at a time per worker".into(),
            };
            let _ = writeln!(s, "  {:<24} {:<32} {line}", x.name, entry);
        }
    }
    Ok(s)
}
