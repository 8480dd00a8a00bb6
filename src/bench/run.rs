//! A run: the scenario read and checked against the flags, the machine set up and held, the
//! planned cells run in order (a paired group's servers up together, each cell given its
//! prediction and a `rate_of` or `busy_of` its rate, from `rates`), the verdicts worked out after every cell and the
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
use super::rates::{busy_rate, derived_rate, NoRate};
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
