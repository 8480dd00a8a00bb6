//! `muxlab advise`: a user's workload and latency target in, a ranked answer out. It writes
//! the experiment those flags describe as a scenario (`--print-scenario` shows it), runs it with
//! `muxlab bench` within the time given, and reads the answer off the results: which designs
//! meet the target, their capacity at it beside the capacity their queueing predicts, the
//! runner-up and why, what the answer depends on, and where the full results are.

use std::path::PathBuf;
use std::time::Duration;

use crate::bench::record::scenario::{Experiment, Protocol, Scenario};
use crate::bench::record::{median, Cell};
use crate::bench::Results;
use crate::load::{Slo, Workload};
use crate::server::Work;
use crate::units::{format_duration, parse_duration, thousands, BadValue};

/// The designs asked about when `--models` is not given: one of each way to dispatch.
const DEFAULT_MODELS: &[&str] = &[
    "reactor",
    "queue-pool",
    "dispatch",
    "multi-reactor",
    "reuseport",
    "thread",
    "uring",
    "tokio",
];

/// What a cell costs beside its search: starting and stopping its server.
const PER_CELL: Duration = Duration::from_secs(4);

/// The least search a design gets: a few probes.
const LEAST_SEARCH: Duration = Duration::from_secs(10);

/// `muxlab advise`'s flags.
#[derive(clap::Args, Debug)]
pub struct AdviseArgs {
    /// Work per request, as `muxlab serve --work` takes it: cpu:exp(100us), sleep:exp(1ms),
    /// cpu:50us+sleep:2ms, cpu:hist:measured.hgrm, ...
    #[arg(long)]
    pub work: String,
    /// The latency target, as `muxlab load --slo` takes it: p99<=5ms (several joined by ',').
    #[arg(long, default_value = "p99<=10ms")]
    pub slo: String,
    /// Keep-alive connections the clients hold.
    #[arg(long, short = 'c', default_value_t = 100)]
    pub connections: usize,
    /// The request rate the server must carry; without it, each design's capacity is found and
    /// ranked.
    #[arg(long)]
    pub rate: Option<f64>,
    /// The protocol: http (keep-alive requests) or echo (each message a request).
    #[arg(long, default_value = "http", value_parser = ["http", "echo"])]
    pub proto: String,
    /// Arrivals of the open loop.
    #[arg(long, value_enum, default_value_t = crate::load::Arrivals::Poisson)]
    pub arrivals: crate::load::Arrivals,
    /// The designs to compare, comma-separated [default: reactor, queue-pool, dispatch,
    /// multi-reactor, reuseport, thread, uring, tokio].
    #[arg(long, value_delimiter = ',')]
    pub models: Vec<String>,
    /// Workers of the designs that have them [default: the server's CPUs, four times that
    /// when the work waits (sleep:)].
    #[arg(long, short = 'w')]
    pub workers: Option<usize>,
    /// The time the whole answer may take.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub time: Duration,
    /// Print the scenario these flags make (a bench TOML file) and stop.
    #[arg(long)]
    pub print_scenario: bool,
    /// Parent directory of the results.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}

/// What the flags make: the scenario, and the designs.
pub struct Plan {
    pub scenario: Scenario,
    pub models: Vec<String>,
}

/// The scenario `a` describes, the server on `server_cpus` CPUs (what bench's placement gives
/// it here).
pub fn plan(a: &AdviseArgs, server_cpus: usize) -> Result<Plan, BadValue> {
    let work: Work = a.work.parse()?;
    if work.is_none() {
        return Err(BadValue(
            "--work none: give the work a request does (cpu:D, sleep:D, or both)".into(),
        ));
    }
    let slo: Slo = a.slo.parse()?;
    if slo.classes().next().is_some() {
        return Err(BadValue(
            "--slo: advise sends one kind of request; a class's bound has no class to name".into(),
        ));
    }
    if a.connections == 0 || a.workers == Some(0) {
        return Err(BadValue("-c and --workers must be at least 1".into()));
    }
    if let Some(r) = a.rate.filter(|r| !(*r > 0.0 && r.is_finite())) {
        return Err(BadValue(format!("--rate {r}: give a positive rate")));
    }
    let models: Vec<String> = match a.models.is_empty() {
        true => DEFAULT_MODELS.iter().map(|m| m.to_string()).collect(),
        false => a.models.clone(),
    };
    for m in &models {
        if crate::models::find(m).is_none() {
            return Err(BadValue(format!("--models: unknown model '{m}' (see muxlab models)")));
        }
    }
    let per_cell = a.time.checked_div(models.len() as u32).unwrap_or_default();
    let search = per_cell.saturating_sub(PER_CELL);
    if search < LEAST_SEARCH {
        return Err(BadValue(format!(
            "--time {}: too short for {} designs (each needs {} at least); give more time or fewer --models",
            format_duration(a.time),
            models.len(),
            format_duration(LEAST_SEARCH + PER_CELL)
        )));
    }
    let workers = a.workers.unwrap_or(match work.sleep {
        Some(_) => 4 * server_cpus.max(1),
        None => server_cpus.max(1),
    });
    let entries: Vec<String> = models
        .iter()
        .map(|m| {
            let model = crate::models::find(m).expect("checked above");
            match model.workers {
                crate::server::Workers::None => m.clone(),
                _ => format!("{m} --workers {workers}"),
            }
        })
        .collect();
    let rate = a.rate.map_or("the highest it carries".to_string(), |r| {
        format!("{} req/s", thousands(r.round() as u64))
    });
    let load = Workload {
        slo: Some(slo.clone()),
        slo_time: search,
        rate: a.rate,
        arrivals: a.arrivals,
        duration: Some(Duration::from_secs(1)),
        warmup: Duration::from_millis(300),
        ..Workload::default()
    };
    let proto = match a.proto.as_str() {
        "echo" => Protocol::Echo,
        _ => Protocol::Http,
    };
    let mut x = Experiment::new("advise", proto, entries.clone(), vec![a.connections], load);
    x.description = format!("Each design's capacity at {slo}, found by probes from the rate asked (or 1,000 req/s).");
    x.work = Some(a.work.clone());
    let description = format!(
        "muxlab advise: which design carries {rate} of {} at {} over {} connections",
        a.work, slo, a.connections
    );
    // What bench would refuse is refused here, in bench's words.
    let scenario = crate::bench::scenario::check(Scenario::of("advise", &description, vec![x]), "advise")
        .map_err(|e| BadValue(e.to_string()))?;
    Ok(Plan {
        scenario,
        models: entries,
    })
}

/// A design's line in the answer.
struct Row {
    target: String,
    capacity: Option<f64>,
    predicted: Option<f64>,
    /// The highest rate any of its probes held at (a search that ended inconclusive may still
    /// have held at the rate asked).
    held: Option<f64>,
    /// Its search ended at the client's limit.
    client_limited: bool,
    note: Option<String>,
}

fn rows(r: &Results) -> Vec<Row> {
    let mut targets: Vec<&str> = Vec::new();
    // An A/A twin is no design of its own (advise's experiment is not paired: none today).
    for c in r.cells.iter().filter(|c| !c.twin) {
        if !targets.contains(&c.target.as_str()) {
            targets.push(&c.target);
        }
    }
    let mut rows: Vec<Row> = targets
        .iter()
        .map(|t| {
            let of: Vec<&Cell> = r.cells.iter().filter(|c| c.target == *t && !c.twin).collect();
            let caps: Vec<f64> = of.iter().filter_map(|c| c.figures.capacity_rps()).collect();
            let predicted: Vec<f64> = of
                .iter()
                .filter_map(|c| Some(c.figures.predicted.as_ref()?.capacity_rps))
                .collect();
            let probes = || {
                of.iter()
                    .filter_map(|c| c.figures.capacity.as_ref())
                    .flat_map(|k| &k.probes)
            };
            let held = probes()
                .filter(|p| p.holds == Some(true))
                .map(|p| p.offered_rps)
                .fold(None, |a: Option<f64>, r| Some(a.map_or(r, |a| a.max(r))));
            let client_limited = probes().any(|p| p.holds.is_none());
            let note = of
                .iter()
                .find_map(|c| match (&c.status, &c.figures.capacity) {
                    (s, _) if !c.ok() => Some(s.text().to_string()),
                    (_, Some(k)) => k
                        .inconclusive
                        .clone()
                        .or_else(|| k.rps.is_none().then(|| format!("no probed rate held {}", k.slo))),
                    _ => None,
                })
                .or_else(|| {
                    of.iter()
                        .any(|c| c.figures.client_bound)
                        .then(|| "client-bound".to_string())
                });
            Row {
                target: t.to_string(),
                capacity: (!caps.is_empty()).then(|| median(caps)),
                predicted: (!predicted.is_empty()).then(|| median(predicted)),
                held,
                client_limited,
                note,
            }
        })
        .collect();
    rows.sort_by(|a, b| b.capacity.unwrap_or(-1.0).total_cmp(&a.capacity.unwrap_or(-1.0)));
    rows
}

/// The answer a person reads, from the results of the plan's run.
pub fn answer(a: &AdviseArgs, r: &Results, dir: &std::path::Path) -> String {
    let rps = |v: Option<f64>| v.map_or("–".to_string(), |v| thousands(v.round() as u64));
    let rows = rows(r);
    let slo = &a.slo;
    let mut s = format!(
        "\nAdvice for {} per request at {slo}, {} connections, {} arrivals, the server on {}:\n",
        a.work,
        a.connections,
        match a.arrivals {
            crate::load::Arrivals::Poisson => "Poisson",
            crate::load::Arrivals::Uniform => "uniform",
        },
        cpus_said(&r.environment.server_cpus)
    );
    s.push_str(&format!(
        "  {:<28} {:>12} {:>12}  {}\n",
        "design", "capacity", "predicted", "notes"
    ));
    for row in &rows {
        s.push_str(&format!(
            "  {:<28} {:>12} {:>12}  {}\n",
            row.target,
            rps(row.capacity),
            rps(row.predicted),
            row.note.clone().unwrap_or_default()
        ));
    }
    // Meeting the rate asked: a probe at it (or above) held, whether or not the search went on
    // to a finished capacity.
    let meeting: Vec<&Row> = rows
        .iter()
        .filter(|r| match a.rate {
            Some(rate) => r.held.is_some_and(|h| h >= rate),
            None => r.capacity.is_some(),
        })
        .collect();
    s.push_str(&match (a.rate, meeting.first()) {
        (_, None) => format!(
            "No design was measured meeting {slo}{}.\n",
            a.rate.map_or(String::new(), |r| format!(" at {} req/s", rps(Some(r))))
        ),
        (Some(rate), Some(best)) => format!(
            "At {} req/s, {} of {} designs meet {slo}: {}; the most headroom: {} ({} req/s).\n",
            rps(Some(rate)),
            meeting.len(),
            rows.len(),
            meeting.iter().map(|r| r.target.as_str()).collect::<Vec<_>>().join(", "),
            best.target,
            rps(best.capacity.or(best.held))
        ),
        (None, Some(best)) => format!(
            "Highest capacity at {slo}: {} ({} req/s).\n",
            best.target,
            rps(best.capacity)
        ),
    });
    if let Some(v) = r.verdicts.first() {
        s.push_str(&format!("Why (the verdict): {}\n", v.text));
    }
    let limited: Vec<&str> = rows
        .iter()
        .filter(|r| r.client_limited)
        .map(|r| r.target.as_str())
        .collect();
    s.push_str(&format!(
        "It depends on: the server on {} (designs with workers are compared on these; more CPUs change the \
         pools' answer: `--print-scenario`, set server_cpus, and run it with `muxlab bench FILE`); {}.\n",
        cpus_said(&r.environment.server_cpus),
        match limited.is_empty() {
            true => "the client was not the limit of any search".to_string(),
            false => format!(
                "the client was the limit of {} of {} searches ({}: their capacity is at least what they held, not \
                 measured)",
                limited.len(),
                rows.len(),
                limited.join(", ")
            ),
        }
    ));
    s.push_str(&format!("Full results: {}\n", dir.join("report.html").display()));
    s
}

/// A CPU list as a person reads it: "1 CPU (CPU 0)", "2 CPUs (0-1)".
fn cpus_said(list: &str) -> String {
    match crate::units::parse_cpus(list) {
        Ok(c) if c.len() == 1 => format!("1 CPU (CPU {list})"),
        Ok(c) => format!("{} CPUs ({list})", c.len()),
        Err(_) => format!("CPUs {list}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Line {
        #[command(flatten)]
        a: AdviseArgs,
    }

    fn args(line: &str) -> AdviseArgs {
        Line::try_parse_from(std::iter::once("advise").chain(line.split_whitespace()))
            .unwrap()
            .a
    }

    #[test]
    fn the_flags_make_a_scenario_bench_reads_with_the_time_shared_out() {
        let p = plan(&args("--work sleep:exp(1ms) --slo p99<=5ms -c 200 --rate 2800"), 1).unwrap();
        // Printed (--print-scenario), it is a file bench reads back as it is.
        let sc = crate::bench::record::scenario::parse(&p.scenario.to_toml(), "t").unwrap();
        assert_eq!(sc.experiments[0].load, p.scenario.experiments[0].load);
        let x = &sc.experiments[0];
        assert_eq!(x.models.len(), 8);
        assert!(
            x.models.contains(&"queue-pool --workers 4".to_string()),
            "sleep: four workers a CPU: {:?}",
            x.models
        );
        assert!(x.models.contains(&"reactor".to_string()));
        assert_eq!((x.load.rate, x.connections.clone()), (Some(2800.0), vec![200]));
        // 5 minutes over 8 designs: 37.5 s each, 4 s of it starting and stopping.
        assert_eq!(x.load.slo_time, Duration::from_millis(33_500));
        assert_eq!(x.load.slo.as_ref().unwrap().to_string(), "p99<=5ms");
        let cpu = plan(&args("--work cpu:exp(100us) --models reactor,dispatch"), 2).unwrap();
        assert_eq!(cpu.models, vec!["reactor", "dispatch --workers 2"]);
    }

    #[test]
    fn bad_flags_are_one_line() {
        for (line, says) in [
            ("--work none", "--work none"),
            ("--work gpu:1ms", "'gpu' is not cpu or sleep"),
            ("--work cpu:1ms --slo p99<5ms", "no '<='"),
            ("--work cpu:1ms --models reactor,nope", "unknown model 'nope'"),
            ("--work cpu:1ms --time 20s", "too short for 8 designs"),
            ("--work cpu:1ms --slo short:p99<=1ms", "no class"),
            ("--work cpu:1ms --rate=-5", "positive rate"),
        ] {
            let e = match Line::try_parse_from(std::iter::once("advise").chain(line.split_whitespace())) {
                Ok(l) => plan(&l.a, 1).err().map(|e| e.0).unwrap_or_default(),
                Err(e) => e.to_string(),
            };
            assert!(e.contains(says), "{line}: {e}");
        }
    }
}
