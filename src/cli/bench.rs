//! `muxlab bench` and `muxlab advise` run: the matrix, its live progress lines, the results
//! and the report.

use std::io::Write;

use super::args::BenchArgs;
use super::exit::{Exit, Failure, Refused};

pub(super) fn run_bench(args: &BenchArgs) -> Result<(), anyhow::Error> {
    if args.list {
        print!("{}", crate::bench::list());
        return Ok(());
    }
    let target = match &args.target {
        None => None,
        Some(t) => Some(
            std::net::ToSocketAddrs::to_socket_addrs(t.as_str())
                .ok()
                .and_then(|mut a| a.next())
                .ok_or_else(|| Refused(format!("--target '{t}' is not HOST:PORT")))?,
        ),
    };
    let opts = crate::bench::Options {
        scenario: crate::bench::Which::Named(args.scenario.clone().unwrap_or_else(|| "quick".into())),
        target,
        out: args.out.clone(),
        repeats: args.repeats,
        ssh_config: args.ssh_config.clone(),
        push: args.push,
        remote_bin: args.remote_bin.clone(),
        baseline: args.baseline.clone(),
        steer_rx: args.steer_rx,
        deep_idle: args.deep_idle,
        yes_long: args.yes_long,
    };
    let mut shown = BenchShow::new();
    let done = crate::bench::run(&opts, &mut |event| shown.event(event))?;
    let html = crate::report::write_html(&done.dir, &done.results)?;
    if !done.results.verdicts.is_empty() {
        println!("\nVerdicts:");
        for v in &done.results.verdicts {
            print!("{}", crate::report::verdict_lines(v));
        }
    }
    for a in crate::report::compare::against_reference(&done.results) {
        println!("\n{}", a.table());
    }
    println!("report: {}", html.display());
    if let Some((page, table)) = crate::report::against_baseline(&done.dir, &done.results)? {
        print!("\nThis binary (B) against --baseline (A):\n{table}");
        println!("compare: {}", page.display());
    }
    if done.interrupted {
        return Err(Failure {
            exit: Exit::Interrupted,
            message: format!("interrupted; finished cells are in {}", done.dir.display()),
        }
        .into());
    }
    if done.failed > 0 {
        return Err(Failure {
            exit: Exit::Failed,
            message: format!("{} cells failed; see {}", done.failed, done.dir.display()),
        }
        .into());
    }
    Ok(())
}

/// `muxlab advise`: the scenario its flags make, run as bench runs it in two rounds (every
/// design once within most of `--time`, then the contenders again within the rest), then the
/// answer from both.
pub(super) fn run_advise(args: &crate::advise::AdviseArgs) -> Result<(), anyhow::Error> {
    let cpus = crate::bench::default_server_cpus();
    let plan = crate::advise::plan(args, cpus)?;
    if args.print_scenario {
        print!("{}", plan.scenario.to_toml());
        return Ok(());
    }
    let started = std::time::Instant::now();
    let first_time = args.time.mul_f64(crate::advise::FIRST_ROUND);
    // The first round in its share of the time, or, where that is too short, the whole plan
    // (and no second round).
    let (first, whole) = match crate::advise::plan_within(args, cpus, first_time, None) {
        Ok(p) => (p, false),
        Err(_) => (plan, true),
    };
    let mut rounds = Vec::new();
    let mut done = Vec::new();
    let per_search = |p: &crate::advise::Plan| crate::units::format_duration(p.scenario.experiments[0].load.slo_time);
    let first_search = per_search(&first);
    let one = advise_round(args, first.scenario)?;
    let interrupted = one.interrupted;
    done.push(one);
    // The contenders again, in the time left: each a longer search than the first round's.
    let left = args.time.saturating_sub(started.elapsed());
    let contenders = crate::advise::contenders(&[&done[0].results]);
    let again = (!whole && !interrupted && !contenders.is_empty())
        .then(|| crate::advise::plan_within(args, cpus, left, Some(&contenders)).ok())
        .flatten();
    rounds.push(format!(
        "every design once in {} ({} per search)",
        crate::units::format_duration(if whole { args.time } else { first_time }),
        first_search
    ));
    match again {
        Some(p) => {
            rounds.push(format!(
                "{} again in {} ({} per search): {}",
                match contenders.len() {
                    1 => "the best".to_string(),
                    n => format!("the {n} contenders"),
                },
                crate::units::format_duration(left),
                per_search(&p),
                contenders.join(", ")
            ));
            let two = advise_round(args, p.scenario)?;
            done.push(two);
        }
        None => rounds.push(match contenders.is_empty() {
            true => "no second round: no design answered".to_string(),
            false => "no second round: the budget allowed one run of each design".to_string(),
        }),
    }
    let runs: Vec<(&crate::bench::Results, &std::path::Path)> =
        done.iter().map(|d| (&d.results, d.dir.as_path())).collect();
    let answer = crate::advise::Answer::of(args, &runs, rounds, started.elapsed().as_secs_f64());
    match args.json {
        true => println!("{}", serde_json::to_string_pretty(&answer)?),
        false => print!("{}", answer.text()),
    }
    if done.iter().any(|d| d.interrupted) {
        return Err(Failure {
            exit: Exit::Interrupted,
            message: format!("interrupted; finished cells are in {}", done[0].dir.display()),
        }
        .into());
    }
    Ok(())
}

/// One round of advise: its scenario run as bench runs it, its report written.
fn advise_round(
    args: &crate::advise::AdviseArgs,
    scenario: crate::bench::record::scenario::Scenario,
) -> Result<crate::bench::Finished, anyhow::Error> {
    let opts = crate::bench::Options {
        scenario: crate::bench::Which::Given(Box::new(scenario)),
        target: None,
        out: args.out.clone(),
        repeats: None,
        ssh_config: None,
        push: false,
        remote_bin: "muxlab".into(),
        baseline: None,
        steer_rx: false,
        deep_idle: false,
        yes_long: false,
    };
    // With --json, the progress goes to stderr only.
    let mut shown = BenchShow::new();
    let done = crate::bench::run(&opts, &mut |event| {
        if !args.json {
            shown.event(event)
        }
    })?;
    crate::report::write_html(&done.dir, &done.results)?;
    Ok(done)
}

/// How `muxlab bench` shows a run: what runs where and each finished cell on stdout, a line
/// of progress with the time left on stderr while a cell runs (when stderr is a terminal).
struct BenchShow {
    out: std::io::Stdout,
    progress: bool,
}

impl BenchShow {
    fn new() -> BenchShow {
        BenchShow {
            out: std::io::stdout(),
            progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        }
    }

    /// Shows one event. Never a panic on a terminal that went away (SIGHUP follows): the run
    /// cleans up.
    fn event(&mut self, event: crate::bench::Event) {
        use crate::bench::Event;
        use crate::units::clock;
        let out = &mut self.out;
        let _ = match event {
            Event::Started {
                scenario,
                cells,
                estimate,
                placement,
                dir,
                notes,
            } => {
                let _ = writeln!(
                    out,
                    "muxlab bench {}: {}\n{cells} cells, about {} (estimated), {placement}; results in {}\n",
                    scenario.name,
                    scenario.description,
                    crate::units::span(estimate),
                    dir.display()
                );
                notes.iter().try_for_each(|n| writeln!(out, "note: {n}\n"))
            }
            Event::Experiment(x) => writeln!(out, "{}", crate::report::table::header(x)),
            Event::Progress {
                number,
                of,
                experiment,
                target,
                connections,
                elapsed,
                left,
            } if self.progress => write!(
                std::io::stderr(),
                "\r\x1b[2K[{}/{of}] {experiment} {target} c={connections}  elapsed {}  ETA {}",
                number + 1,
                clock(elapsed),
                clock(left)
            ),
            Event::Progress { .. } => Ok(()),
            Event::Cell(cell) => {
                if self.progress {
                    let _ = write!(std::io::stderr(), "\r\x1b[2K");
                }
                writeln!(out, "{}", crate::report::table::row(cell))
            }
            Event::Finished {
                done,
                planned,
                elapsed,
                failed,
                skipped,
                interrupted,
            } => writeln!(
                out,
                "\n{done} of {planned} cells done in {}{}{}{}.",
                clock(elapsed),
                if failed > 0 {
                    format!(", {failed} failed (see the notes)")
                } else {
                    String::new()
                },
                if skipped > 0 {
                    format!(", {skipped} skipped")
                } else {
                    String::new()
                },
                if interrupted {
                    ", interrupted by Ctrl-C: what finished is saved"
                } else {
                    ""
                }
            ),
        };
        let _ = out.flush();
    }
}
