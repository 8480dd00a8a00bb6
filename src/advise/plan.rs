//! What advise's flags make ([`Plan`]): the experiment they describe as a scenario bench
//! reads, the designs, and the time shared out between them (`plan`, `plan_within`).

use std::time::Duration;

use super::args::AdviseArgs;
use super::BadPlan;
use crate::bench::record::scenario::{Experiment, Protocol, Scenario};
use crate::load::{Slo, Workload};
use crate::server::Work;
use crate::units::thousands;

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

/// What the flags make: the scenario, and the designs.
pub struct Plan {
    pub scenario: Scenario,
    pub models: Vec<String>,
}

/// The share of `--time` the first round (every design once) takes; the rest re-runs the
/// contenders.
pub const FIRST_ROUND: f64 = 0.6;

/// The scenario `a` describes, the server on `server_cpus` CPUs (what bench's placement gives
/// it here), over `models` (`None`: `--models` or the defaults) within `time`.
pub fn plan(a: &AdviseArgs, server_cpus: usize) -> Result<Plan, BadPlan> {
    plan_within(a, server_cpus, a.time, None)
}

/// [`plan`] within `time`, over `models` where given.
pub fn plan_within(
    a: &AdviseArgs,
    server_cpus: usize,
    time: Duration,
    models: Option<&[String]>,
) -> Result<Plan, BadPlan> {
    let work: Work = a.work.parse().map_err(|source| BadPlan::Work { source })?;
    if work.is_none() {
        return Err(BadPlan::NoWork);
    }
    let slo: Slo = a.slo.parse().map_err(|source| BadPlan::Slo { source })?;
    if slo.classes().next().is_some() {
        return Err(BadPlan::SloOfAClass { slo });
    }
    if a.connections == 0 || a.workers == Some(0) {
        return Err(BadPlan::NoConnectionsOrWorkers {
            connections: a.connections,
            workers: a.workers,
        });
    }
    if let Some(rate) = a.rate.filter(|r| !(*r > 0.0 && r.is_finite())) {
        return Err(BadPlan::Rate { rate });
    }
    let models: Vec<String> = match (models, a.models.is_empty()) {
        (Some(m), _) => m.to_vec(),
        (None, true) => DEFAULT_MODELS.iter().map(|m| m.to_string()).collect(),
        (None, false) => a.models.clone(),
    };
    for m in &models {
        if crate::models::find(m.split_whitespace().next().unwrap_or(m)).is_none() {
            return Err(BadPlan::UnknownModel {
                given: m.clone(),
                flag: "--models",
            });
        }
    }
    let per_cell = time.checked_div(models.len() as u32).unwrap_or_default();
    let search = per_cell.saturating_sub(PER_CELL);
    if search < LEAST_SEARCH {
        return Err(BadPlan::TooShort {
            time,
            designs: models.len(),
            least: LEAST_SEARCH + PER_CELL,
        });
    }
    let workers = a.workers.unwrap_or(match work.sleep {
        Some(_) => 4 * server_cpus.max(1),
        None => server_cpus.max(1),
    });
    // A design given with its flags (a contender re-run) keeps them.
    let entries: Vec<String> = models
        .iter()
        .map(|m| {
            let model = crate::models::find(m.split_whitespace().next().unwrap_or(m)).expect("checked above");
            match model.workers {
                _ if m.contains(' ') => m.clone(),
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
        rate: a.rate.map(Into::into),
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
    // advise's rounds are its own bench runs (every design, then the contenders again): each
    // runs one search per design, and no twin (a twin search would take a design's share of the
    // budget; the searches of a design over advise's rounds are what its interval rests on).
    x.twin = Some(false);
    let description = format!(
        "muxlab advise: which design carries {rate} of {} at {} over {} connections",
        a.work, slo, a.connections
    );
    // What bench would refuse is refused here, in bench's words.
    let mut scenario = Scenario::of("advise", &description, vec![x]);
    scenario.repeats = 1;
    let scenario = crate::bench::scenario::check(scenario, "advise").map_err(|source| BadPlan::Scenario { source })?;
    Ok(Plan {
        scenario,
        models: entries,
    })
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
        assert_eq!((x.load.rate, x.connections.clone()), (Some(2800.0.into()), vec![200]));
        // 5 minutes over 8 designs: 37.5 s each, 4 s of it starting and stopping.
        assert_eq!(x.load.slo_time, Duration::from_millis(33_500));
        assert_eq!(x.load.slo.as_ref().unwrap().to_string(), "p99<=5ms");
        let cpu = plan(&args("--work cpu:exp(100us) --models reactor,dispatch"), 2).unwrap();
        assert_eq!(cpu.models, vec!["reactor", "dispatch --workers 2"]);
    }

    #[test]
    fn bad_flags_are_one_line() {
        type Is = fn(&BadPlan) -> bool;
        let cases: [(&str, Is, &str); 7] = [
            ("--work none", |e| matches!(e, BadPlan::NoWork), "--work none"),
            (
                "--work gpu:1ms",
                |e| matches!(e, BadPlan::Work { .. }),
                "'gpu' is not cpu or sleep",
            ),
            (
                "--work cpu:1ms --slo p99<5ms",
                |e| matches!(e, BadPlan::Slo { .. }),
                "no '<='",
            ),
            (
                "--work cpu:1ms --models reactor,nope",
                |e| matches!(e, BadPlan::UnknownModel { given, flag: "--models" } if given == "nope"),
                "unknown model 'nope'",
            ),
            (
                "--work cpu:1ms --time 20s",
                |e| matches!(e, BadPlan::TooShort { designs: 8, .. }),
                "too short for 8 designs",
            ),
            (
                "--work cpu:1ms --slo short:p99<=1ms",
                |e| matches!(e, BadPlan::SloOfAClass { .. }),
                "no class",
            ),
            (
                "--work cpu:1ms --rate=-5",
                |e| matches!(e, BadPlan::Rate { rate } if *rate == -5.0),
                "positive rate",
            ),
        ];
        for (line, is, says) in cases {
            let e = plan(&args(line), 1).err().unwrap_or_else(|| panic!("{line}: a plan"));
            assert!(is(&e), "{line}: {e:?}");
            assert!(e.to_string().contains(says), "{line}: {e}");
            assert!(e.is_usage(), "{line}");
        }
    }
}
