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

use super::record::scenario::Experiment;
use super::record::Cell;
use crate::units::thousands;

/// Whether `x`'s cells get predictions, and so calibrations: a known work (the simulation
/// predicts nothing else), a load it models (no pipelining, no connection per request), and no
/// latency target (a capacity search takes its cost from a probe that is not its answer).
pub(super) fn wanted(x: &Experiment) -> bool {
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
pub(super) fn conditions(x: &Experiment, conns: usize) -> (Experiment, usize, String) {
    let mut c = x.clone();
    c.expect.clear();
    match x.load.rate {
        Some(rate) => {
            let half = (rate / 2.0).max(1.0);
            c.load.rate = Some(half);
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

/// The calibration cell of `target` in experiment `x` among `cells`, where it finished and
/// measured the server's CPU per request: that cost and its conditions.
pub(super) fn cost(cells: &[Cell], x: &str, target: &str) -> Result<(f64, String), String> {
    let c = cells
        .iter()
        .find(|c| c.experiment == x && c.target == target && c.calibration.is_some())
        .ok_or_else(|| "no calibration cell ran".to_string())?;
    if !c.ok() {
        return Err(format!("its calibration cell did not finish: {}", c.status.text()));
    }
    let cpu = c
        .figures
        .cpu_per_req()
        .ok_or_else(|| "its calibration cell measured no CPU per request".to_string())?;
    let said = c.calibration.clone().unwrap_or_default();
    Ok((
        cpu,
        format!("{target}'s calibration cell ({said}): {cpu:.1} µs of server CPU per request"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calibration_halves_the_rate_or_the_connections() {
        let open = super::super::record::scenario::experiment_of(
            "\"epoll\"",
            "100",
            "work = \"sleep:1ms\"\nrate = 5000\nexpect = [\"p99: epoll < epoll\"]\n",
        )
        .unwrap();
        assert!(wanted(&open));
        let (c, n, said) = conditions(&open, 100);
        assert_eq!((c.load.rate, n), (Some(2500.0), 100));
        assert!(c.expect.is_empty(), "a calibration checks no shape");
        assert_eq!(said, "2,500 req/s, half the experiment's 5,000");
        let closed =
            super::super::record::scenario::experiment_of("\"epoll\"", "1, 50", "work = \"cpu:20us\"\n").unwrap();
        assert_eq!(conditions(&closed, 50).1, 25);
        assert_eq!(conditions(&closed, 1).1, 1);
        let none = super::super::record::scenario::experiment_of("\"epoll\"", "50", "").unwrap();
        assert!(!wanted(&none), "no work: nothing to predict");
    }

    #[test]
    fn the_cost_comes_from_a_finished_calibration_cell_or_says_why_not() {
        let mut c = Cell::new("x", "epoll", 50, 0);
        c.calibration = Some("2,500 req/s, half the experiment's 5,000".into());
        c.figures.server_cpu_us_per_req = Some(12.5);
        let mut cells = vec![Cell::new("x", "epoll", 50, 0), c];
        let (cpu, said) = cost(&cells, "x", "epoll").unwrap();
        assert_eq!(cpu, 12.5);
        assert!(said.contains("epoll's calibration cell (2,500 req/s"), "{said}");
        assert_eq!(cost(&cells, "x", "thread").unwrap_err(), "no calibration cell ran");
        cells[1].status = crate::bench::record::CellStatus::Failed("boom".into());
        assert!(cost(&cells, "x", "epoll").unwrap_err().contains("did not finish: boom"));
    }
}
