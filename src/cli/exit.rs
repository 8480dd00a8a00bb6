//! How the program ends: each [`Exit`] kind with its code (as `muxlab --help` lists them), a
//! [`Failure`] that ends a run with one, and the exit of any error `main` returned.

use crate::load;
use crate::server;
use crate::units::BadValue;

/// How a run that did not succeed ends, by kind: what a user's script tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The run found errors: requests failed, cells failed, a host failed, a load run stopped
    /// before it was done, or a docs block differs or cannot render.
    Failed,
    /// What the user gave is refused: a flag, a scenario file, a document.
    BadInput,
    /// A `--fail-if` gate failed (the run itself went well).
    GatesFailed,
    /// `bench` or `advise` stopped by Ctrl-C; the finished cells are kept.
    Interrupted,
}

impl Exit {
    /// Every kind, in the order `--help` lists them.
    pub const ALL: [Exit; 4] = [Exit::Failed, Exit::BadInput, Exit::GatesFailed, Exit::Interrupted];

    /// The process's exit code.
    pub fn code(self) -> i32 {
        match self {
            Exit::Failed => 1,
            Exit::BadInput => 2,
            Exit::GatesFailed => 3,
            Exit::Interrupted => 130,
        }
    }
}

/// The exit codes as `muxlab --help` gives them (a test keeps them equal to [`Exit::code`]).
pub const EXIT_CODES: &str = "\
Exit codes:\n\
  0    done, nothing failed\n\
  1    the run found errors: failed requests (load), failed cells (bench), a host that failed,\n\
\x20      a load run interrupted before it was done, or (docs) a block that differs or cannot\n\
\x20      render, each named on stderr\n\
  2    bad input refused, the message saying why: a flag (--rate, --fail-if, ...), a scenario\n\
\x20      file, a document to merge\n\
  3    a --fail-if gate failed (load)\n\
  130  bench or advise interrupted by Ctrl-C; the finished cells are kept";

/// What the command line refuses itself (a `--target` that is not HOST:PORT): bad input, exit
/// 2. The CLI may format; the layers below it give types.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// An outcome that ends the program with the code of its [`Exit`] kind.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

/// The exit code for an error `main` returned: a [`Failure`]'s kind, 2 for what the user gave
/// (a layer's error that says so), 1 for everything else.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    exit_of(e).code()
}

fn exit_of(e: &anyhow::Error) -> Exit {
    if let Some(f) = e.downcast_ref::<Failure>() {
        f.exit
    } else if e.downcast_ref::<Refused>().is_some()
        || e.downcast_ref::<BadValue>().is_some()
        || e.downcast_ref::<server::Error>().is_some_and(server::Error::is_usage)
        || e.downcast_ref::<load::Error>().is_some_and(load::Error::is_usage)
        || e.downcast_ref::<crate::remote::Error>()
            .is_some_and(crate::remote::Error::is_usage)
        || e.downcast_ref::<crate::bench::Error>()
            .is_some_and(crate::bench::Error::is_usage)
        || e.downcast_ref::<crate::report::Error>()
            .is_some_and(crate::report::Error::is_usage)
        || e.downcast_ref::<crate::queueing::BadPrediction>()
            .is_some_and(crate::queueing::BadPrediction::is_usage)
        || e.downcast_ref::<crate::advise::BadPlan>()
            .is_some_and(crate::advise::BadPlan::is_usage)
    {
        Exit::BadInput
    } else {
        Exit::Failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `muxlab --help` lists every exit kind with the code it ends with.
    #[test]
    fn the_help_lists_every_exit_kind_with_its_code() {
        let help = crate::cli::Cli::command().render_long_help().to_string();
        for exit in Exit::ALL {
            let line = format!("\n{:<4} ", exit.code());
            assert!(
                help.contains(&line),
                "--help does not list exit code {} ({exit:?}):\n{help}",
                exit.code()
            );
        }
        assert!(help.contains("\n0    done"), "{help}");
        // And lists no other code.
        let listed: Vec<i32> = help
            .split("Exit codes:")
            .nth(1)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect();
        let mut known: Vec<i32> = Exit::ALL.iter().map(|e| e.code()).collect();
        known.insert(0, 0);
        assert_eq!(listed, known);
    }

    /// A failure ends with its kind's code; a bad value with 2; anything else with 1.
    #[test]
    fn each_error_kind_ends_with_its_documented_code() {
        let gates = anyhow::Error::from(Failure {
            exit: Exit::GatesFailed,
            message: "failed gates: p99<1ms".into(),
        });
        assert_eq!(exit_code(&gates), 3);
        let interrupted = anyhow::Error::from(Failure {
            exit: Exit::Interrupted,
            message: "interrupted".into(),
        });
        assert_eq!(exit_code(&interrupted), 130);
        let bad = anyhow::Error::from(crate::units::parse_duration("5xs").unwrap_err());
        assert_eq!(exit_code(&bad), 2);
        assert_eq!(exit_code(&anyhow::anyhow!("a system call failed")), 1);
    }

    /// Every layer's error that can reach `main` is read by kind: one the user can fix exits
    /// 2, one of the machine or the run exits 1.
    #[test]
    fn every_layers_error_exits_2_for_bad_input_and_1_for_the_rest() {
        let io = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let cases: Vec<(anyhow::Error, i32)> = vec![
            (Refused("--target 'x' is not HOST:PORT".into()).into(), 2),
            (server::Error::ZeroWorkers.into(), 2),
            (server::io_err("binding")(io()).into(), 1),
            (load::Error::SloWithHosts.into(), 2),
            (load::Error::EnginePanicked.into(), 1),
            (crate::remote::Error::HostsWithShard.into(), 2),
            (crate::remote::Error::NoSsh(io()).into(), 1),
            (
                crate::bench::Error::from(crate::bench::record::FlagError::ZeroRepeats).into(),
                2,
            ),
            (
                crate::bench::Error::Io(crate::sys::error::io_err("writing results.json")(io())).into(),
                1,
            ),
            (
                crate::report::Error::NoSeries {
                    path: "results.json".into(),
                }
                .into(),
                2,
            ),
            (
                crate::report::Error::Write {
                    path: "report.html".into(),
                    source: io(),
                }
                .into(),
                1,
            ),
            (crate::queueing::BadPrediction::RateAndThink.into(), 2),
            (crate::advise::BadPlan::NoWork.into(), 2),
        ];
        for (e, code) in cases {
            assert_eq!(exit_code(&e), code, "{e:?}");
        }
    }
}
