//! Calibration cells: where a prediction's costs come from. A prediction adds the design's own
//! CPU per request to the experiment's work and simulates its queueing; taking that cost from
//! the very cell it predicts makes the prediction agree by construction (a capacity of 10⁶ ÷
//! the cell's own cost, to the unit). So each experiment that predicts measures each design
//! once more, under lighter load than its cells — the same design, protocol, work and
//! connections at half the experiment's offered rate (a closed loop: half its connections) —
//! as a cell of its own ([`Cell::calibration`]: never ranked, never the cell it predicts), and
//! every prediction of that design's cells takes its cost from it. Half the load, not none: a
//! design's cost at no load misses what load makes of it (a pool's hand-offs, a thread's
//! sleep-induced switches, an event loop's batching) and adds what idle CPUs cost on a wake-up.
//! Without a calibration the prediction is not made, and the cell says why.

use crate::bench::record::scenario::Experiment;
use crate::bench::record::{Cell, CellStatus};
use crate::units::thousands;

/// Whether `x`'s cells get predictions, and so calibrations: a known work (the simulation
/// predicts nothing else), a load it models (no pipelining, no connection per request), and no
/// latency target (a capacity search takes its cost from a probe that is not its answer). A
/// keyed store's commands are its work: an open loop against one is predicted, pipelined or
/// not (a batch is one job: `keyed_prediction`).
pub(in crate::bench) fn wanted(x: &Experiment) -> bool {
    if x.proto.is_keyed() {
        return x.load.slo.is_none() && (x.load.rate.is_some() || x.rate_of.is_some());
    }
    let work = x
        .work
        .as_deref()
        .and_then(|w| w.parse::<crate::server::Work>().ok())
        .is_some_and(|w| !w.is_none());
    (work || x.work_from_request)
        && x.load.slo.is_none()
        && x.load.pipeline <= 1
        && !x.load.close
        && x.load.requests_per_conn.is_none()
        && x.stream.is_none()
}

/// The calibration of `x` (whose rate, where it has one, is already worked out) at `conns`
/// connections: the experiment it runs, the connections, and its conditions in words.
pub(in crate::bench) fn conditions(x: &Experiment, conns: usize) -> (Experiment, usize, String) {
    let mut c = x.clone();
    c.expect.clear();
    // A calibration is not the experiment's load: its gates are not judged on it.
    c.load.fail_if = None;
    match x.load.rate.map(|r| r.per_s()) {
        Some(rate) => {
            let half = (rate / 2.0).max(1.0);
            c.load.rate = Some(half.into());
            let said = format!(
                "{} req/s, half the experiment's {}",
                thousands(half.round() as u64),
                thousands(rate.round() as u64)
            );
            (c, conns, said)
        }
        None => {
            let half = (conns / 2).max(1);
            let said = format!("{half} connections, half the experiment's {conns}");
            (c, half, said)
        }
    }
}

/// What a design's calibration measured: its server CPU per request, its critical section
/// (a keyed store's mean timed lock hold, µs; `None`: no lock timed), and where they came from.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::bench) struct Costs {
    pub cpu: f64,
    pub hold_us: Option<f64>,
    pub from: String,
}

/// Why a cell has no calibration to predict from.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::bench) enum NoCalibration {
    /// With `calibrate_by`: no cell of that experiment ran for the target at these connections.
    NoCellOf { by: String, target: String, conns: usize },
    /// No calibration cell ran for the target.
    NoCell,
    /// The calibration (its own cell, or its cell of `by`) did not finish: its status.
    Unfinished { by: Option<String>, status: CellStatus },
    /// The calibration cell measured no CPU per request.
    NoCpu,
}

impl std::fmt::Display for NoCalibration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoCalibration::NoCellOf { by, target, conns } => {
                write!(
                    f,
                    "no cell of '{by}' (its calibration) ran for {target} at {conns} connections"
                )
            }
            NoCalibration::NoCell => f.write_str("no calibration cell ran"),
            NoCalibration::Unfinished { by: Some(by), status } => {
                write!(f, "its cell of '{by}' did not finish: {}", status.text())
            }
            NoCalibration::Unfinished { by: None, status } => {
                write!(f, "its calibration cell did not finish: {}", status.text())
            }
            NoCalibration::NoCpu => f.write_str("its calibration cell measured no CPU per request"),
        }
    }
}

/// The calibration of `target` in experiment `x` among `cells`, where it finished and measured
/// the server's CPU per request: its own calibration cell, or, with `calibrate_by`, its cell
/// of that lighter experiment at the same connections.
pub(in crate::bench) fn cost(
    cells: &[Cell],
    x: &Experiment,
    target: &str,
    conns: usize,
) -> Result<Costs, NoCalibration> {
    let (c, said) = match &x.calibrate_by {
        Some(by) => {
            let mine = |c: &&Cell| {
                &c.experiment == by && c.target == target && c.connections == conns && c.calibration.is_none()
            };
            // A repeat that finished, where one did.
            let c = cells
                .iter()
                .filter(mine)
                .find(|c| c.ok())
                .or_else(|| cells.iter().find(mine))
                .ok_or_else(|| NoCalibration::NoCellOf {
                    by: by.clone(),
                    target: target.to_string(),
                    conns,
                })?;
            let rate = c.load.as_ref().and_then(|d| d.config.rate);
            let said = match rate {
                Some(r) => format!("its cell of '{by}', {} req/s", thousands(r.round() as u64)),
                None => format!("its cell of '{by}'"),
            };
            (c, said)
        }
        None => {
            let c = cells
                .iter()
                .find(|c| c.experiment == x.name && c.target == target && c.calibration.is_some())
                .ok_or(NoCalibration::NoCell)?;
            (
                c,
                format!("calibration cell ({})", c.calibration.clone().unwrap_or_default()),
            )
        }
    };
    if !c.ok() {
        return Err(NoCalibration::Unfinished {
            by: x.calibrate_by.clone(),
            status: c.status.clone(),
        });
    }
    let cpu = c.figures.cpu_per_req().ok_or(NoCalibration::NoCpu)?;
    let hold_us = c.figures.locks.and_then(|l| l.hold_us);
    let held = hold_us.map_or(String::new(), |h| format!(", {h:.2} µs holding a lock"));
    Ok(Costs {
        cpu,
        hold_us,
        from: format!("{target}'s {said}: {cpu:.1} µs of server CPU per request{held}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calibration_halves_the_rate_or_the_connections() {
        let open = crate::bench::record::scenario::experiment_of(
            "\"epoll\"",
            "100",
            "work = \"sleep:1ms\"\nrate = 5000\nexpect = [\"p99: epoll < epoll\"]\n",
        )
        .unwrap();
        assert!(wanted(&open));
        let (c, n, said) = conditions(&open, 100);
        assert_eq!((c.load.rate, n), (Some(2500.0.into()), 100));
        assert!(c.expect.is_empty(), "a calibration checks no shape");
        assert_eq!(said, "2,500 req/s, half the experiment's 5,000");
        let closed =
            crate::bench::record::scenario::experiment_of("\"epoll\"", "1, 50", "work = \"cpu:20us\"\n").unwrap();
        assert_eq!(conditions(&closed, 50).1, 25);
        assert_eq!(conditions(&closed, 1).1, 1);
        let none = crate::bench::record::scenario::experiment_of("\"epoll\"", "50", "").unwrap();
        assert!(!wanted(&none), "no work: nothing to predict");
    }

    #[test]
    fn the_cost_comes_from_a_finished_calibration_cell_or_says_why_not() {
        let mut c = Cell::new("x", "epoll", 50, 0);
        c.calibration = Some("2,500 req/s, half the experiment's 5,000".into());
        c.figures.server_cpu_us_per_req = Some(12.5);
        let mut cells = vec![Cell::new("x", "epoll", 50, 0), c];
        let x = crate::bench::record::scenario::experiment_of("\"epoll\"", "50", "").unwrap();
        let mut x = x;
        x.name = "x".into();
        let Costs { cpu, from: said, .. } = cost(&cells, &x, "epoll", 50).unwrap();
        assert_eq!(cpu, 12.5);
        assert!(said.contains("epoll's calibration cell (2,500 req/s"), "{said}");
        assert_eq!(cost(&cells, &x, "thread", 50).unwrap_err(), NoCalibration::NoCell);
        cells[1].status = crate::bench::record::CellStatus::Failed("boom".into());
        let e = cost(&cells, &x, "epoll", 50).unwrap_err();
        assert!(
            matches!(&e, NoCalibration::Unfinished { by: None, status: CellStatus::Failed(s) } if s == "boom"),
            "{e}"
        );
        assert!(e.to_string().contains("did not finish: boom"), "{e}");
        // calibrate_by: the same target's cell of the lighter experiment, its lock hold with it.
        let mut light = Cell::new("light", "epoll", 50, 0);
        light.status = crate::bench::record::CellStatus::Ok;
        light.figures.server_cpu_us_per_req = Some(3.0);
        light.figures.locks = Some(crate::bench::record::LockFigures {
            per_req: 1.0,
            contended: 0.01,
            hold_us: Some(0.4),
            wait_us: Some(0.01),
        });
        let mut by = x.clone();
        by.calibrate_by = Some("light".into());
        let c = cost(&[light.clone()], &by, "epoll", 50).unwrap();
        assert_eq!((c.cpu, c.hold_us), (3.0, Some(0.4)));
        assert!(
            c.from.contains("its cell of 'light'") && c.from.contains("0.40 µs holding a lock"),
            "{}",
            c.from
        );
        let e = cost(&[light], &by, "epoll", 10).unwrap_err();
        assert_eq!(
            e,
            NoCalibration::NoCellOf {
                by: "light".into(),
                target: "epoll".into(),
                conns: 10
            }
        );
        assert!(e.to_string().contains("no cell of 'light'"), "{e}");
    }
}
