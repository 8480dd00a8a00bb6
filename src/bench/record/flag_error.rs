//! A run's flags asking for what cannot be done ([`FlagError`]): a `--baseline` that is not a
//! muxlab to run here, `--repeats 0`, `--steer-rx` where it cannot steer, or a run far longer
//! than one is let run unasked. Every one is exit 2.

use std::path::PathBuf;
use std::time::Duration;

use super::scenario::Unsteerable;

/// A flag that asks for something impossible (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    /// `--baseline` with a server on another host.
    #[error("--baseline runs servers on this machine: drop server_host")]
    BaselineRemote,
    /// `--baseline` that cannot be run.
    #[error("--baseline {}: cannot run it ({source})", path.display())]
    BaselineRun { path: PathBuf, source: std::io::Error },
    /// `--baseline` that runs, but is not muxlab.
    #[error("--baseline {}: not a muxlab binary", path.display())]
    BaselineNotMuxlab { path: PathBuf },
    /// `--repeats 0`.
    #[error("--repeats must be at least 1")]
    ZeroRepeats,
    /// `--steer-rx` where the scenario's loopback cannot be steered.
    #[error("--steer-rx {0}")]
    SteerRx(Unsteerable),
    /// Settings the run needs raised, without the rights to raise them: each, as `sysctl -w`
    /// would set it.
    #[error(
        "this run needs kernel settings raised, which takes root: {}; run bench as root (it raises them for the run and puts them back) or set them yourself (`muxlab limits SCENARIO` says why each)",
        wants.iter().map(|(n, v)| format!("sysctl -w {n}='{v}'")).collect::<Vec<_>>().join(", ")
    )]
    NeedsRoot { wants: Vec<(String, String)> },
    /// A setting the run needs that bench cannot raise for it.
    #[error("{}", setting_refused(name, *fault))]
    Setting { name: String, fault: SettingFault },
    /// A run estimated longer than `longest` without `--yes-long`.
    #[error(
        "{scenario}: {} cells of about {} in all (each cell's duration + warm-up + set-up), over the {} a run may take \
         unasked: check repeats, connections and duration, or pass --yes-long to run it",
        crate::units::thousands((*cells).min(u64::MAX as u128) as u64),
        crate::units::span(*estimate),
        crate::units::span(*longest)
    )]
    TooLong {
        scenario: String,
        cells: u128,
        estimate: Duration,
        longest: Duration,
    },
}

/// Why bench cannot raise a setting for a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SettingFault {
    /// Not one of the settings bench raises (`sys::sysctl::PER_NAMESPACE` and `GLOBAL`).
    Unknown,
    /// Each network namespace's own, for a run on other hosts: bench raises those only in a
    /// namespace of this machine's.
    NamespacedOnHosts,
    /// Each network namespace's own, for a run whose server address is not loopback: it
    /// would be gone inside the run's namespace.
    NotLoopback,
    /// Each network namespace's own, for a run that steers loopback: `/sys` inside the run's
    /// namespace is still the machine's, so steering would miss the run's loopback.
    Steered,
    /// Not numbers, or not as many as the setting has.
    BadValue,
}

fn setting_refused(name: &str, fault: SettingFault) -> String {
    match fault {
        SettingFault::Unknown => format!(
            "settings: '{name}' is not one bench raises (it raises {})",
            crate::sys::sysctl::PER_NAMESPACE
                .iter()
                .chain(crate::sys::sysctl::GLOBAL)
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        ),
        SettingFault::NamespacedOnHosts => format!(
            "{name} is each network namespace's own: bench raises it for runs on this machine only; set it on the hosts"
        ),
        SettingFault::NotLoopback => format!(
            "{name} is each network namespace's own: bench raises it in a namespace of the run's, where only loopback exists; use a 127.x server_addr or set it yourself"
        ),
        SettingFault::Steered => format!(
            "{name} is each network namespace's own, raised in a namespace of the run's, where steering loopback (steer_rx) would steer the machine's instead: drop one"
        ),
        SettingFault::BadValue => format!(
            "settings: '{name}' takes as many whole numbers as the machine's value has (e.g. \"32768 60999\" for a port range)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_days_says_its_cells_and_their_time() {
        let e = FlagError::TooLong {
            scenario: "s".into(),
            cells: 1_000_000,
            estimate: Duration::from_secs(12 * 86400),
            longest: Duration::from_secs(86400),
        };
        let said = e.to_string();
        assert!(
            said.starts_with("s: 1,000,000 cells of about ") && said.ends_with("or pass --yes-long to run it"),
            "{said}"
        );
        assert_eq!(
            FlagError::SteerRx(Unsteerable::NotLoopback).to_string(),
            "--steer-rx steers loopback: the server must listen on 127.x (server_addr)"
        );
    }
}
