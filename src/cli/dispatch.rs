//! Runs the command line: each [`Command`] to what runs it.

use super::args::{Cli, Command};
use super::bench::{run_advise, run_bench};
use super::docs::run_docs;
use super::load_run::{run_load, run_merge};
use super::models::print_models;
use crate::models;
use crate::server;

/// Runs the command line.
pub fn main(cli: Cli) -> anyhow::Result<()> {
    // Settings a killed bench left raised go back first, whatever this command is (root only:
    // no one else could have raised them, nor put them back).
    match crate::sys::process::is_root()
        .then(crate::sys::raised::recover)
        .unwrap_or(Ok(Vec::new()))
    {
        Ok(put) if !put.is_empty() => eprintln!(
            "muxlab: a run that was killed left settings raised; put back: {}",
            put.iter()
                .map(|(n, v)| format!("{n} = {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Ok(_) => {}
        Err(e) => eprintln!("muxlab: could not put back the settings a killed run left raised: {e}"),
    }
    match cli.command {
        Command::Models { json } => print_models(json),
        Command::Limits { scenario } => print!("{}", super::limits::text(&scenario)?),
        Command::Serve(args) => {
            // clap has checked the name against the registry already.
            let model = models::find(&args.model).expect("clap checks model names");
            if model.name != args.model {
                eprintln!(
                    "muxlab: model '{}' is now called '{}'; the old name goes in a later release",
                    args.model, model.name
                );
            }
            server::serve(model, args.args, &mut std::io::stdout())?;
        }
        Command::Load(args) => run_load(&args)?,
        Command::Merge {
            files,
            human,
            timeseries,
        } => run_merge(&files, human, timeseries.as_deref())?,
        Command::Guard(args) => std::process::exit(crate::remote::guard::run(&args)?),
        Command::Sample => crate::remote::sample::serve()?,
        Command::Bench(args) => run_bench(&args)?,
        Command::Predict(args) => print!("{}", crate::queueing::command::run(&args)?),
        Command::Advise(args) => run_advise(&args)?,
        Command::Explain { dir, json } => {
            let results = crate::bench::read(&dir)?;
            let cards: Vec<_> = results.cells.iter().filter_map(crate::bench::judge::card::of).collect();
            match json {
                true => println!("{}", serde_json::to_string_pretty(&cards)?),
                false if cards.is_empty() => println!("no cell of {} has server figures to explain", dir.display()),
                false => {
                    // The answer first: each experiment's headline, then its cells' cards.
                    for v in results.verdicts.iter().filter(|v| !v.headline.is_empty()) {
                        println!("{}: {}", v.experiment, v.headline);
                    }
                    println!();
                    for c in &cards {
                        println!("{}", c.text());
                    }
                }
            }
        }
        Command::Docs { check, root, files } => run_docs(&root, files, check)?,
        Command::Report { dirs } => match dirs.as_slice() {
            [file] if crate::report::series::document(file).is_some() => {
                let doc = crate::report::series::document(file).expect("read just above");
                let (page, table) = crate::report::series::draw(file, &doc)?;
                print!("{table}");
                println!("{}", page.display());
            }
            [dir] => {
                println!("{}", crate::report::rebuild(dir)?.display());
                // A run with --baseline: its before/after too.
                if let Some((page, table)) = crate::report::against_baseline(dir, &crate::bench::read(dir)?)? {
                    print!("{table}");
                    println!("compare: {}", page.display());
                }
            }
            [a, b] => {
                let (page, table) = crate::report::compare_runs(a, b)?;
                print!("{table}");
                println!("compare: {}", page.display());
            }
            _ => unreachable!("clap takes one or two"),
        },
    }
    Ok(())
}
