//! `muxlab load` and `muxlab merge` run: the summary or the document, `--hgrm`, `--slo`'s
//! search, and the exit code their errors make.

use super::args::LoadCommand;
use super::exit::{Exit, Failure};
use crate::load::{self, Document};

pub(super) fn run_load(cmd: &LoadCommand) -> Result<(), anyhow::Error> {
    let mut args = cmd.args.clone();
    if cmd.timeseries.is_some() && args.interval.is_none() {
        args.interval = Some(std::time::Duration::from_secs(1));
    }
    let spec = crate::load::resolve(args)?;
    let slo = spec.args().workload.slo.is_some();
    check_outputs(cmd, &spec, slo)?;
    if let Some(path) = &cmd.hgrm {
        std::fs::write(path, "").map_err(|source| load::Error::Unwritable {
            flag: "--hgrm",
            path: path.clone(),
            source,
        })?;
    }
    if slo {
        return run_slo(cmd);
    }
    let show = match (cmd.progress_json, cmd.json) {
        (true, _) => load::Show::JsonLines,
        (false, true) => load::Show::Nothing,
        (false, false) if spec.subshard().is_some() => load::Show::Nothing,
        (false, false) => load::Show::Terminal,
    };
    if !cmd.remote.hosts.is_empty() && cmd.args.metrics.is_some() {
        return Err(load::Error::MetricsWithHosts.into());
    }
    if !cmd.remote.hosts.is_empty() {
        let mut fanned = crate::remote::fanout::run(&spec, &cmd.remote, show)?;
        let gated = gate(cmd, &mut fanned.doc);
        if cmd.json {
            println!("{}", json_line(&fanned.doc));
        } else {
            print!("{}", load::summary::human(&fanned.doc));
            print!("{}", crate::remote::fanout::host_lines(&fanned));
        }
        write_hgrm(cmd, fanned.doc.outcome())?;
        write_series(cmd, fanned.doc.outcome())?;
        // Interrupted, as a run here: it fails, whatever the gates said.
        if fanned.doc.outcome().interrupted {
            return Err(interrupted(&spec, fanned.doc.outcome()).into());
        }
        // A host that failed fails the run, whatever the gates said of the rest.
        if let (Some(gated), Ok(())) = (gated, fanned.verdict()) {
            return gated;
        }
        return fanned.verdict().map_err(|e| {
            Failure {
                exit: Exit::Failed,
                message: e.to_string(),
            }
            .into()
        });
    }
    let outcome = load::run_here(&spec, show, !cmd.json)?;
    let mut doc = Document::new(&spec, &outcome);
    let gated = gate(cmd, &mut doc);
    if cmd.json {
        println!("{}", json_line(&doc));
    } else {
        print!("{}", load::summary::human(&doc));
    }
    write_hgrm(cmd, &outcome)?;
    write_series(cmd, &outcome)?;
    // An interrupted run is not what was asked: it fails, whatever the gates said.
    if let Some(gated) = gated.filter(|_| !outcome.interrupted) {
        return gated;
    }
    // Event streams longer than the window complete no request in it; their events are what
    // was measured.
    let events = outcome.tally.sse.as_ref().map_or(0, |s| s.events);
    if outcome.interrupted {
        return Err(interrupted(&spec, &outcome).into());
    }
    // A run that holds every connection (`--active 0%`) measured holding: it fails where a
    // connection never came up or was closed under it, not for sending nothing.
    let holds_all = spec.args().workload.active.is_some_and(|a| a.holds_all());
    let t = &outcome.tally;
    let unheld = t.never_connected + t.held_closed;
    if t.error_total() > 0 || (t.requests == 0 && events == 0 && !holds_all) || (holds_all && unheld > 0) {
        return Err(Failure {
            exit: Exit::Failed,
            message: match holds_all {
                true => format!(
                    "{} errors, {} connections never up and {} closed by the server while held",
                    t.error_total(),
                    t.never_connected,
                    t.held_closed
                ),
                false => format!("{} errors, {} requests completed", t.error_total(), t.requests),
            },
        }
        .into());
    }
    Ok(())
}

/// A run stopped by a signal before it was done: not what was asked, whatever it measured.
fn interrupted(spec: &load::Spec, outcome: &load::Outcome) -> Failure {
    Failure {
        exit: Exit::Failed,
        message: format!(
            "interrupted before the run was done: {} requests completed{}, {} errors",
            outcome.tally.requests,
            spec.requests.map_or(String::new(), |n| format!(" of {n} asked")),
            outcome.tally.error_total()
        ),
    }
}

/// What the run will write and judge, checked before it starts: `--fail-if` and
/// `--timeseries` are of one run (not `--slo`'s search), a gate's class is one of the run's,
/// and the series' file can be written (nothing in it lost before there is a series).
fn check_outputs(cmd: &LoadCommand, spec: &load::Spec, slo: bool) -> Result<(), anyhow::Error> {
    if slo && (cmd.args.workload.fail_if.is_some() || cmd.timeseries.is_some()) {
        return Err(load::Error::SloWithOneRunOutputs.into());
    }
    if let Some(gates) = &cmd.args.workload.fail_if {
        let names: Vec<&str> = spec.classes.iter().map(|c| c.name.as_str()).collect();
        gates.check_classes(&names).map_err(load::Error::from)?;
    }
    if let Some(path) = &cmd.timeseries {
        // Writable, and nothing in it lost before the run has a series to put there.
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|source| load::Error::Unwritable {
                flag: "--timeseries",
                path: path.clone(),
                source,
            })?;
    }
    Ok(())
}

/// `--timeseries FILE`: the run's series, a JSON line per interval.
fn write_series(cmd: &LoadCommand, o: &load::Outcome) -> Result<(), load::Error> {
    match &cmd.timeseries {
        Some(path) => series_to(path, o),
        None => Ok(()),
    }
}

/// `o`'s series, a JSON line per interval, to `path`.
fn series_to(path: &std::path::Path, o: &load::Outcome) -> Result<(), load::Error> {
    let every = std::time::Duration::from_micros(o.tally.series_every_us.unwrap_or(1_000_000));
    let text: String = load::series::lines(&o.tally.series, every, o.elapsed)
        .iter()
        .map(|l| serde_json::to_string(l).expect("a series line serialises") + "\n")
        .collect();
    std::fs::write(path, text).map_err(|source| load::Error::Unwritable {
        flag: "--timeseries",
        path: path.to_path_buf(),
        source,
    })
}

/// `--fail-if`: judges `doc` by its gates (kept in it), says each on stderr, and gives the exit
/// they decide alone: 0 when all hold, 3 naming the failed ones. `None` without gates.
fn gate(cmd: &LoadCommand, doc: &mut Document) -> Option<Result<(), anyhow::Error>> {
    let gates = cmd.args.workload.fail_if.as_ref()?;
    doc.gates = crate::load::gates::judge_all(gates, doc);
    let mut failed = Vec::new();
    for (g, j) in gates.0.iter().zip(&doc.gates) {
        eprintln!("muxlab: {}", j.said(g));
        if !j.held {
            failed.push(j.gate.clone());
        }
    }
    Some(match failed.is_empty() {
        true => Ok(()),
        false => Err(Failure {
            exit: Exit::GatesFailed,
            message: format!("failed gates: {}", failed.join(", ")),
        }
        .into()),
    })
}

/// `muxlab load --slo`: the capacity search, a line per probe on stderr as it ends.
pub(super) fn run_slo(cmd: &LoadCommand) -> Result<(), anyhow::Error> {
    if !cmd.remote.hosts.is_empty() {
        return Err(load::Error::SloWithHosts.into());
    }
    if cmd.args.metrics.is_some() {
        return Err(load::Error::MetricsWithSlo.into());
    }
    let quiet = cmd.json || cmd.progress_json;
    let doc = load::slo::run(&cmd.args, |p| {
        if !quiet {
            eprintln!(
                "probe {} req/s: p99 {}, {}",
                crate::units::thousands(p.offered_rps.round() as u64),
                p.p99_us.map_or("–".into(), crate::units::fmt_us),
                match p.holds {
                    Some(true) => "holds".to_string(),
                    Some(false) => format!("fails ({})", p.note.as_deref().unwrap_or("")),
                    None => format!("says nothing of the server ({})", p.note.as_deref().unwrap_or("")),
                }
            );
        }
    })?;
    if cmd.json {
        println!("{}", json_line(&doc));
    } else {
        print!("{}", load::summary::human(&doc));
    }
    write_hgrm(cmd, doc.outcome())?;
    let c = doc.capacity.as_ref().expect("a search has an answer");
    match (c.rps, &c.inconclusive) {
        (Some(_), None) => Ok(()),
        (_, Some(why)) => Err(Failure {
            exit: Exit::Failed,
            message: format!("no capacity: {why}"),
        }
        .into()),
        (None, None) => Err(Failure {
            exit: Exit::Failed,
            message: format!("no probed rate held {}", c.slo),
        }
        .into()),
    }
}

/// A document on one line.
fn json_line(doc: &Document) -> String {
    serde_json::to_string(doc).expect("a document serialises")
}

fn write_hgrm(cmd: &LoadCommand, o: &load::Outcome) -> Result<(), load::Error> {
    if let Some(path) = &cmd.hgrm {
        std::fs::write(path, o.tally.latency.hgrm()).map_err(load::io_err(format!("writing {}", path.display())))?;
    }
    Ok(())
}

/// `muxlab merge FILE...`.
pub(super) fn run_merge(
    files: &[std::path::PathBuf],
    human: bool,
    timeseries: Option<&std::path::Path>,
) -> Result<(), anyhow::Error> {
    let mut docs = Vec::new();
    for f in files {
        let name = f.display().to_string();
        let text = std::fs::read_to_string(f).map_err(|source| load::Error::Unreadable {
            path: f.clone(),
            source,
        })?;
        docs.push((name.clone(), Document::read(&name, &text)?));
    }
    let merged = load::merge::documents(&docs)?;
    if let Some(path) = timeseries {
        series_to(path, merged.outcome())?;
    }
    if human {
        print!("{}", load::summary::human(&merged));
    } else {
        println!("{}", json_line(&merged));
    }
    Ok(())
}
