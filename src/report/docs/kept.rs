//! A kept bench run (`docs/results/NAME.json`) as the blocks read it, its verdicts worked out
//! by the current judge ([`Kept`]), and the blocks that name the run: `run` (which run, how)
//! and `screen` (the picture of its report, and what made it).

use serde::Deserialize;

use super::ctx::Ctx;
use super::error::DocsError;
use super::made::Made;
use crate::bench::judge::Verdict;
use crate::bench::Results;

/// A kept run as the blocks read it.
pub struct Kept {
    pub name: String,
    pub results: Results,
    /// What it records of the binary that made it.
    pub made: Made,
    /// The run's own directory name (`quick-20261127-201601`).
    pub source: Option<String>,
}

impl Kept {
    pub fn read(ctx: &Ctx, name: &str) -> Result<Kept, DocsError> {
        let path = ctx.result(name, "json");
        let results = crate::bench::read(&path).map_err(|error| DocsError::Kept { error: Box::new(error) })?;
        let bytes = std::fs::read(&path).map_err(|error| DocsError::Read {
            path: path.clone(),
            error,
        })?;
        let raw: serde_json::Value = serde_json::from_slice(&bytes).map_err(|error| DocsError::Json { path, error })?;
        let text = |k: &str| raw.get(k).and_then(|v| v.as_str()).map(str::to_string);
        Ok(Kept {
            name: name.into(),
            made: Made::of(&raw),
            source: text("source"),
            results,
        })
    }

    pub(super) fn verdict(&self, experiment: &str) -> Result<&Verdict, DocsError> {
        self.results
            .verdicts
            .iter()
            .find(|v| v.experiment == experiment)
            .ok_or_else(|| DocsError::NoExperiment {
                result: self.name.clone(),
                experiment: experiment.to_string(),
                has: self.results.verdicts.iter().map(|v| v.experiment.clone()).collect(),
            })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunSpec {
    result: String,
}

/// `run`: the command, the binary's commit (or, where the run did not record its binary, the
/// commit written beside it, and that), the run, where the server and client ran, and the file.
pub fn run(ctx: &Ctx, spec: &str) -> Result<String, DocsError> {
    let s: RunSpec = toml::from_str(spec)?;
    let k = Kept::read(ctx, &s.result)?;
    Ok(caption(ctx, &k))
}

/// "CPU 0", "CPUs 0-1".
fn cpu_words(list: &str) -> String {
    match crate::units::parse_cpus(list).map(|c| c.len()) {
        Ok(1) => format!("CPU {list}"),
        _ => format!("CPUs {list}"),
    }
}

/// A run in one sentence.
pub fn caption(ctx: &Ctx, k: &Kept) -> String {
    let r = &k.results;
    let env = &r.environment;
    let cells = r.cells.iter().filter(|c| !c.skipped()).count();
    let repeats = match r.scenario.repeats {
        0 | 1 => String::new(),
        n => format!(", {n} repeats"),
    };
    let idle = match env.cpu_idle.as_deref() {
        Some(i) if i.starts_with("poll") => "; idle CPUs polling".to_string(),
        Some(i) if i.starts_with("halt") => "; idle CPUs halting".to_string(),
        Some(i) => format!("; idle CPUs: {i}"),
        None => "; idle CPUs halting (run before bench recorded it)".into(),
    };
    // Where the targets ran: every one on the server's CPUs, or those serving on several
    // threads on `threaded_cpus` (each placement is ranked apart).
    let placed = match &env.threaded_cpus {
        Some(t) if *t != env.server_cpus => format!(
            "server on {} (targets serving on several threads on {}: each placement ranked apart)",
            cpu_words(&env.server_cpus),
            cpu_words(t)
        ),
        _ => format!("server on {}", cpu_words(&env.server_cpus)),
    };
    format!(
        "`muxlab bench {}` {}, run `{}`: {cells} cells{repeats}; {placed}, client on {} ({} cores, {}){idle}. Figures: [{}]({}).",
        r.scenario.name,
        k.made.words(),
        k.source.as_deref().unwrap_or("unrecorded"),
        cpu_words(&env.client_cpus),
        env.cores,
        env.cpu_model.trim(),
        ctx.result_link(&k.name, "json"),
        ctx.result_link(&k.name, "json"),
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScreenSpec {
    result: String,
    /// The picture, relative to the repository.
    image: String,
    /// The script that makes it from the result.
    script: String,
}

/// `screen`: the first screen of a kept run's report, and a caption naming the run and the
/// script that made the picture from it.
pub fn screen(ctx: &Ctx, spec: &str) -> Result<String, DocsError> {
    let s: ScreenSpec = toml::from_str(spec)?;
    let k = Kept::read(ctx, &s.result)?;
    for p in [&s.image, &s.script] {
        if !ctx.root.join(p).is_file() {
            return Err(DocsError::Missing { path: p.into() });
        }
    }
    let path = ctx.root.join(&s.script);
    let script = std::fs::read_to_string(&path).map_err(|error| DocsError::Read { path, error })?;
    if !script.contains(&super::error::input_of(&k.name)) {
        return Err(DocsError::NotFrom {
            script: s.script.as_str().into(),
            result: k.name.clone(),
        });
    }
    Ok(format!(
        "![The first screen of the bench report of the run below: each experiment's headline and verdict table]({})\n\n*The report of {}; the picture made by [`{}`]({}) from it.*",
        ctx.link(&s.image),
        caption(ctx, &k).trim_end_matches('.'),
        s.script,
        ctx.link(&s.script)
    ))
}
