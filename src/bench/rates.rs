//! The rate a cell runs at where its experiment derives it: `rate_of` (a share of the lowest
//! throughput another experiment's designs reached at the count: [`derived_rate`]) or
//! `busy_of` (the rate that keeps a target's CPUs a share busy by its own CPU per request
//! there: [`busy_rate`]), or why there is none ([`NoRate`]: the cell fails, or is skipped,
//! with it).

use super::record::scenario::Experiment;
use super::record::{self, Cell};

/// `rate_of` worked out for experiment `x` at `conns` connections: its share of the lowest
/// throughput the named experiment's finished cells reached there (those that served every
/// connection); why not, where none did.
pub(super) fn derived_rate(x: &Experiment, cells: &[Cell], conns: usize) -> Result<f64, NoRate> {
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

#[cfg(test)]
mod tests {
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
