//! A run: the scenario read and checked against the flags, the machine set up and held, the
//! planned cells run in order (a paired group's servers up together, each cell given its
//! prediction and a `rate_of` its rate), the verdicts worked out after every cell and the
//! results saved; and a kept run read back with today's verdicts ([`read`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use super::cell::{run_cell, Standing};
use super::event::Event;
use super::judge;
use super::options::{Options, Which};
use super::plan::{estimate, guess, plan, scraped, targets, Step, LONGEST};
use super::predict::{calibration, keyed_prediction, predicted};
use super::record::scenario::{self, Experiment, Scenario};
use super::record::{self, Cell, Error, FlagError};
use super::setup::{self, environment, hold, placement, placement_text, Placement};
use super::target::{At, Target};
use crate::sys;

/// A run's results, judged.
pub type Results = record::Results<judge::Verdict>;

/// Reads `DIR/results.json` and works out its verdicts (a file's own are never read: results
/// written before a verdict rule changed get today's).
pub fn read(dir: &Path) -> Result<Results, Error> {
    Ok(judge::judged(record::results::read::<judge::Verdict>(dir)?))
}

/// How a run ended.
pub struct Finished {
    /// The results directory.
    pub dir: PathBuf,
    /// What was measured (the contents of `results.json`).
    pub results: Results,
    pub failed: usize,
    pub interrupted: bool,
}

static STOP: AtomicU64 = AtomicU64::new(0);

/// Checks `--baseline`: a muxlab binary this machine can run.
fn check_baseline(path: &Path, sc: &Scenario) -> Result<(), FlagError> {
    if sc.server_host.is_some() {
        return Err(FlagError::BaselineRemote);
    }
    let out = std::process::Command::new(path)
        .arg("--version")
        .output()
        .map_err(|source| FlagError::BaselineRun {
            path: path.to_path_buf(),
            source,
        })?;
    let version = String::from_utf8_lossy(&out.stdout);
    if !version.starts_with("muxlab ") {
        return Err(FlagError::BaselineNotMuxlab {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

/// Runs the scenario, telling `on_event` what happens (the caller prints it).
pub fn run(opts: &Options, on_event: &mut dyn FnMut(Event)) -> Result<Finished, Error> {
    let mut sc = match &opts.scenario {
        Which::Named(name) => scenario::load(name)?,
        Which::Given(sc) => (**sc).clone(),
    };
    if let Some(r) = opts.repeats {
        if r == 0 {
            return Err(FlagError::ZeroRepeats.into());
        }
        sc.repeats = r;
    }
    if let Some(b) = &opts.baseline {
        check_baseline(b, &sc)?;
    }
    if opts.steer_rx {
        sc.steerable().map_err(FlagError::SteerRx)?;
        sc.steer_rx = true;
    }
    // A run of days is refused before anything starts (a typo in `repeats` or `duration`),
    // unless asked for; its estimate is said at the start of every run.
    let (cells, estimate) = estimate(&sc, opts);
    if estimate > LONGEST && !opts.yes_long {
        return Err(FlagError::TooLong {
            scenario: sc.name.clone(),
            cells,
            estimate,
            longest: LONGEST,
        }
        .into());
    }
    let _ = sys::signal::install_stop_handler(&STOP);
    let mut notes = sc.notes.clone();
    // Settings the run needs, raised (or refused) before anything starts, hosts included; put
    // back when this is dropped, after everything the run started.
    let _settings = setup::settings::hold(&sc, &mut notes)?;
    let hosts = setup::Hosts::prepare(&sc, opts.ssh_config.clone(), opts.push, &opts.remote_bin)?;
    let mut place = placement(&sc, hosts);
    // CPU groups an earlier bench made and could not remove (it was killed).
    sys::cgroup::remove_stale();
    let plan = plan(&sc, opts);
    let mut env = environment(&place);
    for x in sc.experiments.iter() {
        if let Some(t) = x.idle_timeout() {
            notes.push(format!(
                "{}: connections are held for {}, past muxlab serve's --idle-timeout of {}: its servers run with --idle-timeout {} (a model's own wins)",
                x.name,
                crate::units::format_duration(x.hold()),
                crate::units::format_duration(crate::server::DEFAULT_IDLE_TIMEOUT),
                crate::units::format_duration(t)
            ));
        }
    }
    let _held = hold(&sc, opts, &place, &mut env, &mut notes)?;
    place.round_trip = env.round_trip;
    let dir = record::results::new_dir(&opts.out, &sc.name)
        .map_err(record::error::io_err(format!("creating {}", opts.out.display())))?;
    if sc.prometheus {
        let watch = setup::Watch::start(&dir, &scraped(&sc, opts))?;
        notes.push(format!(
            "prometheus: scraping every model and load each second into {} (http://{} while the run goes)",
            watch.dir.display(),
            watch.addr
        ));
        place.metrics = Some(std::sync::Arc::new(watch));
    }
    on_event(Event::Started {
        scenario: &sc,
        cells: plan.len(),
        estimate,
        placement: placement_text(&place),
        dir: &dir,
        notes: &notes,
    });
    let started = Instant::now();
    let mut results = Results::new(sc, env, Vec::new(), false, Vec::new());
    run_plan(&mut results, opts, &plan, &place, &dir, on_event)?;
    results.interrupted = STOP.load(Ordering::Relaxed) != 0;
    let interrupted = results.interrupted;
    if let Some(h) = &place.hosts {
        h.finish();
    }
    results.verdicts = judge::verdicts(&results);
    results.save(&dir)?;
    let failed = results.cells.iter().filter(|c| !c.ok() && !c.skipped()).count();
    on_event(Event::Finished {
        done: results.cells.len(),
        planned: plan.len(),
        elapsed: started.elapsed(),
        failed,
        skipped: results.cells.iter().filter(|c| c.skipped()).count(),
        interrupted,
    });
    Ok(Finished {
        dir,
        results,
        failed,
        interrupted,
    })
}

/// The prediction of `cell` (of experiment `x`, whose rate is worked out), its design's cost
/// from its calibration cell among `cells`; where there is none, no prediction, and why.
fn predict(cell: &mut Cell, x: &Experiment, target: &Target, cells: &[Cell], place: &Placement) {
    let Some(entry) = target.model_entry() else { return };
    if !calibration::wanted(x) || cell.twin {
        return;
    }
    match calibration::cost(cells, x, &cell.target, cell.connections) {
        Ok(c) => {
            let predicted = match x.proto.is_keyed() {
                true => keyed_prediction::prediction(x, entry, cell.connections, &place.server_cpus, c.cpu, c.hold_us),
                false => predicted::prediction(x, entry, cell.connections, &place.server_cpus, Some(c.cpu)),
            };
            if predicted.is_none() && x.proto.is_keyed() {
                cell.figures.unpredicted = Some(keyed_prediction::not_modelled(entry).into());
            }
            cell.figures.predicted = predicted.map(|p| crate::queueing::Prediction {
                costs_from: Some(c.from),
                ..p
            });
        }
        Err(why) => cell.figures.unpredicted = Some(format!("not modelled: {why}")),
    }
}

/// `rate_of` worked out for experiment `x` at `conns` connections: its share of the lowest
/// throughput the named experiment's finished cells reached there (those that served every
/// connection); why not, where none did.
fn derived_rate(x: &Experiment, cells: &[Cell], conns: usize) -> Result<f64, NoRate> {
    let spec = x.rate_of.as_deref().expect("called for rate_of");
    let (share, of) = record::scenario::rate_of(spec).map_err(NoRate::Spec)?;
    cells
        .iter()
        // A target that starved connections served only some of them: its rate is not its
        // capacity at this count.
        .filter(|c| {
            c.experiment == of && c.connections == conns && c.ok() && c.compared() && c.figures.starved_conns == 0
        })
        .filter_map(|c| Some(c.figures.throughput_rps).filter(|t| *t > 0.0))
        .reduce(f64::min)
        .map(|lowest| (share * lowest).max(1.0))
        .ok_or_else(|| NoRate::Unmeasured {
            of: of.to_string(),
            conns,
            spec: spec.to_string(),
        })
}

/// `busy_of` worked out for `target` in experiment `x` at `conns` connections: the rate that
/// keeps its server's CPUs the given share busy by its own CPU per request in the named
/// experiment (the median over its finished cells there, and the CPUs they had): λ = share ×
/// CPUs ÷ E[S]. Why not, where it measured none.
pub(super) fn busy_rate(x: &Experiment, cells: &[Cell], target: &str, conns: usize) -> Result<f64, NoRate> {
    let spec = x.busy_of.as_deref().expect("called for busy_of");
    let (share, of) = record::scenario::rate_of(spec).map_err(NoRate::Spec)?;
    let mine: Vec<&Cell> = cells
        .iter()
        .filter(|c| c.experiment == of && c.target == target && c.connections == conns && c.compared())
        .collect();
    // A target whose cells there were skipped (its product not installed) is skipped here too.
    if let Some(c) = mine.first().filter(|_| mine.iter().all(|c| c.skipped())) {
        if let record::CellStatus::Skipped(why) = &c.status {
            return Err(NoRate::Skipped(why.clone()));
        }
    }
    let costs: Vec<(f64, usize)> = mine
        .iter()
        .filter(|c| c.ok())
        .filter_map(|c| Some((c.figures.cpu_per_req()?, c.figures.why.as_ref()?.server_cpus?)))
        .collect();
    let Some(&(_, cpus)) = costs.first() else {
        return Err(NoRate::NoCost {
            of: of.to_string(),
            target: target.to_string(),
            conns,
            spec: spec.to_string(),
        });
    };
    // The median (of an even count, the mean of the middle two), as fidelity reads E[S].
    let cpu = record::median(costs.iter().map(|c| c.0).collect());
    Ok((share * cpus.max(1) as f64 * 1e6 / cpu).max(1.0))
}

/// Why an experiment's `rate_of` or `busy_of` gives no rate: its cell fails with it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum NoRate {
    /// The value is not a share of an experiment (the scenario's check refuses it first).
    Spec(record::scenario::BadRateOf),
    /// The experiment it names measured no throughput at these connections.
    Unmeasured { of: String, conns: usize, spec: String },
    /// The target's cells in the experiment it names were skipped: why.
    Skipped(String),
    /// The experiment it names measured no server CPU per request (or its CPUs) for the
    /// target there.
    NoCost {
        of: String,
        target: String,
        conns: usize,
        spec: String,
    },
}

impl std::fmt::Display for NoRate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoRate::Spec(e) => e.fmt(f),
            NoRate::Unmeasured { of, conns, spec } => write!(
                f,
                "no rate: '{of}' measured no throughput at {conns} connections (rate_of = \"{spec}\")"
            ),
            NoRate::NoCost {
                of,
                target,
                conns,
                spec,
            } => write!(
                f,
                "no rate: '{of}' measured no server CPU per request (or the CPUs it had) for {target} at {conns} connections (busy_of = \"{spec}\")"
            ),
            NoRate::Skipped(why) => f.write_str(why),
        }
    }
}

/// Runs the planned cells in order (a paired group's servers up for its cells), saving the
/// results after every cell so nothing finished is lost.
fn run_plan(
    r: &mut Results,
    opts: &Options,
    plan: &[Step],
    place: &Placement,
    dir: &Path,
    on_event: &mut dyn FnMut(Event),
) -> Result<(), Error> {
    let sc = &r.scenario;
    let started = Instant::now();
    let mut current_x = usize::MAX;
    let mut group: Option<Group> = None;
    for (k, step) in plan.iter().enumerate() {
        if STOP.load(Ordering::Relaxed) != 0 {
            break;
        }
        let x = &sc.experiments[step.xi];
        let key = x.paired.then_some((step.xi, step.conns));
        if group.as_ref().map(|g| g.key) != key {
            if let Some(g) = group.take() {
                g.stop(&mut r.cells);
            }
            group = key.map(|key| Group::start(key, x, &targets(x, opts.target, opts.baseline.as_ref()), place));
        }
        if step.xi != current_x {
            current_x = step.xi;
            on_event(Event::Experiment(x));
        }
        let elapsed = started.elapsed();
        on_event(Event::Progress {
            number: k,
            of: plan.len(),
            experiment: &x.name,
            target: step.target.label(),
            connections: step.conns,
            elapsed,
            left: match k {
                0 => plan.iter().map(|s| guess(&sc.experiments[s.xi])).sum(),
                _ => elapsed / k as u32 * (plan.len() - k) as u32,
            },
        });
        let at = At {
            number: k,
            conns: step.conns,
            repeat: step.repeat,
        };
        // `rate_of` and `busy_of`: the rate from what an earlier experiment of this run measured.
        let derived = match (&x.rate_of, &x.busy_of) {
            (Some(_), _) => Some(derived_rate(x, &r.cells, step.conns)),
            (None, Some(_)) => Some(busy_rate(x, &r.cells, &step.target.name(), step.conns)),
            (None, None) => None,
        };
        let with_rate;
        let x = match derived {
            Some(Ok(rate)) => {
                let mut e = x.clone();
                e.load.rate = Some(rate.into());
                with_rate = e;
                &with_rate
            }
            _ => x,
        };
        let mut cell = match (derived, group.as_mut()) {
            (Some(Err(why)), _) => {
                let mut c = step.target.cell(&x.name, at);
                c.status = match why {
                    NoRate::Skipped(s) => record::CellStatus::Skipped(s),
                    why => record::CellStatus::Failed(why.to_string()),
                };
                c
            }
            _ if step.calibration => {
                let (cx, conns, said) = calibration::conditions(x, step.conns);
                let mut c = run_cell(At { conns, ..at }, &cx, &step.target, place, &STOP);
                c.calibration = Some(said);
                c
            }
            (_, Some(g)) => g.burst(step.ti, r.cells.len(), at, x),
            (_, None) => run_cell(at, x, &step.target, place, &STOP),
        };
        if !step.calibration && x.load.slo.is_none() {
            predict(&mut cell, x, &step.target, &r.cells, &place.of_target(x, &step.target));
        }
        on_event(Event::Cell(&cell));
        record::settle_one(sc, &r.environment, &mut cell);
        r.cells.push(cell);
        r.verdicts = judge::verdicts(r);
        r.save(dir)?;
    }
    if let Some(g) = group {
        g.stop(&mut r.cells);
    }
    Ok(())
}

/// A paired group: every target's server up at once for one experiment and connection count,
/// and the cells measured against each, which its stop completes (the counters of a server
/// cover all its bursts).
struct Group {
    /// (experiment, connections).
    key: (usize, usize),
    servers: Vec<Standing>,
    /// (target, index of the cell in the run's cells).
    cells: Vec<(usize, usize)>,
}

impl Group {
    fn start(key: (usize, usize), x: &Experiment, targets: &[Target], place: &Placement) -> Group {
        Group {
            key,
            servers: targets.iter().map(|t| Standing::start(x, t, place)).collect(),
            cells: Vec::new(),
        }
    }

    /// A burst against target `ti`'s server: the cell that will be `cells[index]`.
    fn burst(&mut self, ti: usize, index: usize, at: At, x: &Experiment) -> Cell {
        self.cells.push((ti, index));
        self.servers[ti].burst(at, x, &STOP)
    }

    /// Stops every server; each completes the cells measured against it.
    fn stop(self, cells: &mut [Cell]) {
        for (ti, server) in self.servers.into_iter().enumerate() {
            let mine: Vec<usize> = self.cells.iter().filter(|(t, _)| *t == ti).map(|(_, i)| *i).collect();
            let mut refs: Vec<&mut Cell> = cells
                .iter_mut()
                .enumerate()
                .filter(|(i, _)| mine.contains(i))
                .map(|(_, c)| c)
                .collect();
            server.stop(&mut refs);
        }
    }
}

#[cfg(test)]
mod rate_of {
    use super::*;

    /// Half of the lowest rate the named experiment's designs reached at the count, those that
    /// starved connections left out; none there is a reason, not a rate of 0.
    #[test]
    fn a_derived_rate_is_its_share_of_the_slowest_design_that_served_everyone() {
        let mut x = record::scenario::experiment_of("\"epoll\"", "100", "").unwrap();
        x.rate_of = Some("50% of ka".into());
        let cell = |t: &str, rps: f64, starved: u64| {
            let mut c = Cell::new("ka", t, 100, 0);
            c.status = record::CellStatus::Ok;
            c.figures.throughput_rps = rps;
            c.figures.starved_conns = starved;
            c
        };
        let cells = [
            cell("epoll", 1000.0, 0),
            cell("prefork", 20.0, 98),
            cell("thread", 800.0, 0),
        ];
        assert_eq!(derived_rate(&x, &cells, 100), Ok(400.0));
        let e = derived_rate(&x, &cells, 10).unwrap_err();
        assert!(
            matches!(&e, NoRate::Unmeasured { of, conns: 10, .. } if of == "ka"),
            "{e}"
        );
        assert!(
            e.to_string().contains("'ka' measured no throughput at 10 connections"),
            "{e}"
        );
    }

    /// Each target its own rate: the share of its CPUs over its own median CPU per request in
    /// the named experiment (a costlier design offered less, to the same utilization); a
    /// target that measured none there is a reason, not a rate.
    #[test]
    fn a_busy_rate_keeps_each_targets_cpus_the_share_busy_by_its_own_cost() {
        let mut x = record::scenario::experiment_of("\"epoll\"", "100", "").unwrap();
        x.busy_of = Some("70% of cal".into());
        let cell = |t: &str, cpu: f64, cpus: usize| {
            let mut c = Cell::new("cal", t, 100, 0);
            c.status = record::CellStatus::Ok;
            c.figures.server_cpu_us_per_req = Some(cpu);
            c.figures.why = Some(Default::default());
            c.figures.why.as_mut().unwrap().server_cpus = Some(cpus);
            c
        };
        let cells = [
            cell("epoll", 10.0, 1),
            cell("epoll", 12.0, 1),
            cell("epoll", 50.0, 1),
            cell("node", 40.0, 2),
        ];
        let epoll = busy_rate(&x, &cells, "epoll", 100).unwrap();
        assert!((epoll - 0.7 * 1e6 / 12.0).abs() < 1e-6, "{epoll}");
        // Of an even count, the mean of the middle two (as fidelity's median).
        let even = [cell("epoll", 10.0, 1), cell("epoll", 14.0, 1)];
        let r = busy_rate(&x, &even, "epoll", 100).unwrap();
        assert!((r - 0.7 * 1e6 / 12.0).abs() < 1e-6, "{r}");
        // Skipped there (not installed): skipped here, for the same reason.
        let mut skipped = cell("go", 0.0, 1);
        skipped.status = record::CellStatus::Skipped("go is not installed".into());
        assert_eq!(
            busy_rate(&x, &[skipped], "go", 100),
            Err(NoRate::Skipped("go is not installed".into()))
        );
        let node = busy_rate(&x, &cells, "node", 100).unwrap();
        assert!((node - 0.7 * 2.0 * 1e6 / 40.0).abs() < 1e-6, "{node}");
        let e = busy_rate(&x, &cells, "thread", 100).unwrap_err();
        assert!(matches!(&e, NoRate::NoCost { target, .. } if target == "thread"), "{e}");
        assert!(
            e.to_string()
                .contains("no server CPU per request (or the CPUs it had) for thread"),
            "{e}"
        );
    }
}
