//! `bench`: three rooms, importing one way, run → judge → record.
//!
//! - **run** (this module and the files beside it): runs a scenario's matrix of cells — the
//!   servers (`process`, `own`, `nginx`, `hosts`), each cell (`runner`) or capacity search
//!   (`capacity`), placement and what is held for a run (`setup`, `steer`), the prediction
//!   each cell gets (`predicted`), the unit costs of a syscall and a switch (`unit_costs`) — shows progress, reports each finished cell to its caller
//!   (the CLI prints it as a table row), and writes `results/<scenario>-<timestamp>/`;
//! - **judge** (`judge/`): one `Metric` type, the verdicts and their reasons, worked out from
//!   the record;
//! - **record** (`record/`): the scenario, the cells and their figures, the results files: data
//!   only, imports neither of the others.
//!
//! It returns the results with their verdicts; rendering them (`report.html`) is the report
//! layer's job, above this one.

mod calibration;
mod capacity;
pub(crate) use record::error;
pub(crate) mod hosts;
pub mod judge;
mod keyed_prediction;
mod launch;
pub mod nginx;
mod own;
mod peers;
mod predicted;
pub(crate) mod process;
pub mod record;
pub(crate) mod runner;
pub mod runtimes;
mod setup;
pub mod steer;
mod stores;
mod unit_costs;
mod window;

pub use record::{results, scenario};

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use process::Placement;
use record::{Cell, Environment};
use runner::Target;
use scenario::{Experiment, Scenario};

pub use record::Error;
pub use setup::{default_server_cpus, default_split};
use setup::{environment, hold, placement, placement_text};

use crate::sys;

/// A run's results, judged.
pub type Results = record::Results<judge::Verdict>;

/// Reads `DIR/results.json` and works out its verdicts (a file's own are never read: results
/// written before a verdict rule changed get today's).
pub fn read(dir: &Path) -> Result<Results, Error> {
    Ok(judge::judged(record::results::read::<judge::Verdict>(dir)?))
}

/// The scenario a run runs.
#[derive(Debug, Clone)]
pub enum Which {
    /// A built-in scenario's name, or a TOML file's path.
    Named(String),
    /// One a program made (`muxlab advise`), checked as a file's is.
    Given(Box<Scenario>),
}

/// What `muxlab bench` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    pub scenario: Which,
    /// Benchmark this external server instead of the scenario's models.
    pub target: Option<SocketAddr>,
    /// Parent of the results directory.
    pub out: PathBuf,
    pub repeats: Option<usize>,
    /// ssh configuration for the scenario's hosts (`-F FILE`).
    pub ssh_config: Option<PathBuf>,
    /// Copy this binary to the scenario's hosts for the run.
    pub push: bool,
    /// The muxlab binary on the scenario's hosts (without `push`).
    pub remote_bin: String,
    /// Another muxlab binary: every model cell runs with it too, right after this one's
    /// (`MODEL @baseline`), for a before/after of the server in one sitting.
    pub baseline: Option<PathBuf>,
    /// Sets the scenario's `steer_rx`.
    pub steer_rx: bool,
    /// Lets idle CPUs halt as they usually do (by default they poll for the run: see
    /// [`sys::cpuidle`]).
    pub deep_idle: bool,
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

/// What a run tells its caller as it goes (the caller owns the terminal).
pub enum Event<'a> {
    /// The run starts: the scenario, its cells, where things run, where results go, and
    /// notes on what was set for the run.
    Started {
        scenario: &'a Scenario,
        cells: usize,
        placement: String,
        dir: &'a Path,
        notes: &'a [String],
    },
    /// The cells of this experiment come next.
    Experiment(&'a Experiment),
    /// Cell `number` (from 0) of `of` starts; `left` guesses the rest of the run.
    Progress {
        number: usize,
        of: usize,
        experiment: &'a str,
        target: String,
        connections: usize,
        elapsed: Duration,
        left: Duration,
    },
    /// A cell finished.
    Cell(&'a Cell),
    /// The run ended: cells done of those planned, how long it took, how many failed or were
    /// skipped, and whether Ctrl-C cut it short (what finished is saved).
    Finished {
        done: usize,
        planned: usize,
        elapsed: Duration,
        failed: usize,
        skipped: usize,
        interrupted: bool,
    },
}

/// `muxlab bench --list`.
pub fn list() -> String {
    let mut s = String::new();
    for (name, text) in scenario::BUILTIN {
        let sc = scenario::parse(text, name).expect("built-in scenarios parse (tested)");
        let cells: usize = sc
            .experiments
            .iter()
            .map(|x| (x.models.len() + x.peers.len()) * x.connections.len())
            .sum();
        s.push_str(&format!("{name:<26} {cells:>3} cells  {}\n", sc.description));
    }
    s.push_str(&peers::products());
    s.push_str("\nmuxlab bench NAME runs one; muxlab bench path/to/file.toml runs your own (see scenarios/).\n");
    s
}

static STOP: AtomicU64 = AtomicU64::new(0);

/// The targets of an experiment (with a baseline, each model twice in a row).
fn targets(x: &Experiment, external: Option<SocketAddr>, baseline: Option<&PathBuf>) -> Vec<Target> {
    match external {
        Some(a) => vec![Target::External(a)],
        None => x
            .models
            .iter()
            .flat_map(|m| {
                let base = baseline.map(|b| Target::Baseline(m.clone(), b.clone()));
                std::iter::once(Target::Model(m.clone())).chain(base)
            })
            .chain(x.peers.iter().map(|p| Target::Peer(p.clone())))
            // A paired experiment measures its first model twice in every round: A against A.
            .chain(x.models.first().filter(|_| x.paired).map(|m| Target::Twin(m.clone())))
            .collect(),
    }
}

/// Checks `--baseline`: a muxlab binary this machine can run.
fn check_baseline(path: &PathBuf, sc: &Scenario) -> Result<(), Error> {
    if sc.server_host.is_some() {
        return Err(Error::Usage(
            "--baseline runs servers on this machine: drop server_host".into(),
        ));
    }
    let out = std::process::Command::new(path)
        .arg("--version")
        .output()
        .map_err(|e| Error::Usage(format!("--baseline {}: cannot run it ({e})", path.display())))?;
    let version = String::from_utf8_lossy(&out.stdout);
    if !version.starts_with("muxlab ") {
        return Err(Error::Usage(format!(
            "--baseline {}: not a muxlab binary",
            path.display()
        )));
    }
    Ok(())
}

/// A guess of a cell's length, for the ETA before any cell finished.
fn guess(x: &Experiment) -> Duration {
    // A capacity search takes about its budget.
    if x.load.slo.is_some() {
        return x.load.slo_time + Duration::from_secs(2);
    }
    x.duration().unwrap_or(Duration::from_secs(5)) + x.warmup() + Duration::from_millis(700)
}

/// Runs the scenario, telling `on_event` what happens (the caller prints it).
pub fn run(opts: &Options, on_event: &mut dyn FnMut(Event)) -> Result<Finished, Error> {
    let mut sc = match &opts.scenario {
        Which::Named(name) => scenario::load(name)?,
        Which::Given(sc) => (**sc).clone(),
    };
    if let Some(r) = opts.repeats {
        if r == 0 {
            return Err(Error::Usage("--repeats must be at least 1".into()));
        }
        sc.repeats = r;
    }
    if let Some(b) = &opts.baseline {
        check_baseline(b, &sc)?;
    }
    if opts.steer_rx {
        sc.steerable()
            .map_err(|why| Error::Usage(format!("--steer-rx {why}")))?;
        sc.steer_rx = true;
    }
    let hosts = hosts::Hosts::prepare(&sc, opts.ssh_config.clone(), opts.push, &opts.remote_bin)?;
    let mut place = placement(&sc, hosts);
    let _ = sys::signal::install_stop_handler(&STOP);
    // CPU groups an earlier bench made and could not remove (it was killed).
    sys::cgroup::remove_stale();
    let plan = plan(&sc, opts);
    let mut env = environment(&place);
    let mut notes = sc.notes.clone();
    let _held = hold(&sc, opts, &place, &mut env, &mut notes)?;
    place.round_trip = env.round_trip;
    let dir = record::results::new_dir(&opts.out, &sc.name)
        .map_err(error::io_err(format!("creating {}", opts.out.display())))?;
    on_event(Event::Started {
        scenario: &sc,
        cells: plan.len(),
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

/// Runs the planned cells in order (a paired group's servers up for its cells), saving the
/// results after every cell so nothing finished is lost.
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
fn derived_rate(x: &Experiment, cells: &[Cell], conns: usize) -> Result<f64, String> {
    let spec = x.rate_of.as_deref().expect("called for rate_of");
    let (share, of) = record::scenario::rate_of(spec)?;
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
        .ok_or_else(|| format!("no rate: '{of}' measured no throughput at {conns} connections (rate_of = \"{spec}\")"))
}

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
        let at = runner::At {
            number: k,
            conns: step.conns,
            repeat: step.repeat,
        };
        // `rate_of`: the rate from what an earlier experiment of this run measured.
        let derived = x.rate_of.as_ref().map(|_| derived_rate(x, &r.cells, step.conns));
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
                c.status = record::CellStatus::Failed(why);
                c
            }
            _ if step.calibration => {
                let (cx, conns, said) = calibration::conditions(x, step.conns);
                let mut c = runner::run_cell(runner::At { conns, ..at }, &cx, &step.target, place, &STOP);
                c.calibration = Some(said);
                c
            }
            (_, Some(g)) => g.burst(step.ti, r.cells.len(), at, x),
            (_, None) => runner::run_cell(at, x, &step.target, place, &STOP),
        };
        if !step.calibration && x.load.slo.is_none() {
            predict(&mut cell, x, &step.target, &r.cells, &place.of_target(x, &step.target));
        }
        on_event(Event::Cell(&cell));
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
    servers: Vec<runner::Standing>,
    /// (target, index of the cell in the run's cells).
    cells: Vec<(usize, usize)>,
}

impl Group {
    fn start(key: (usize, usize), x: &Experiment, targets: &[Target], place: &Placement) -> Group {
        Group {
            key,
            servers: targets.iter().map(|t| runner::Standing::start(x, t, place)).collect(),
            cells: Vec::new(),
        }
    }

    /// A burst against target `ti`'s server: the cell that will be `cells[index]`.
    fn burst(&mut self, ti: usize, index: usize, at: runner::At, x: &Experiment) -> Cell {
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

/// One cell to run: experiment `xi`, its target `ti`, a connection count, a repeat.
struct Step {
    xi: usize,
    ti: usize,
    target: Target,
    conns: usize,
    repeat: usize,
    /// A calibration cell (`calibration`): the design under lighter load, for its predictions.
    calibration: bool,
}

/// The run's cells in order: per experiment and connection count, repeat after repeat, every
/// target in turn (a paired experiment reverses the order every other repeat).
fn plan(sc: &Scenario, opts: &Options) -> Vec<Step> {
    let mut steps = Vec::new();
    for (xi, x) in sc.experiments.iter().enumerate() {
        let ts = targets(x, opts.target, opts.baseline.as_ref());
        // Each model's calibration first (at the first connection count), so every cell of the
        // experiment is predicted from it.
        if calibration::wanted(x) && x.calibrate_by.is_none() {
            let models = ts
                .iter()
                .enumerate()
                .filter(|(_, t)| matches!(t, Target::Model(_) | Target::Baseline(..)));
            steps.extend(models.map(|(ti, t)| Step {
                xi,
                ti,
                target: t.clone(),
                conns: x.connections[0],
                repeat: 0,
                calibration: true,
            }));
        }
        for &conns in &x.connections {
            for repeat in 0..x.rounds(sc.repeats) {
                let mut order: Vec<usize> = (0..ts.len()).collect();
                if x.paired && repeat % 2 == 1 {
                    order.reverse();
                }
                steps.extend(order.into_iter().map(|ti| Step {
                    xi,
                    ti,
                    target: ts[ti].clone(),
                    conns,
                    repeat,
                    calibration: false,
                }));
            }
        }
    }
    steps
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
        assert!(e.contains("'ka' measured no throughput at 10 connections"), "{e}");
    }
}
