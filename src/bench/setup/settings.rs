//! The kernel settings a run needs (issue 81): those its scenario declares (`settings`) and
//! those its counts of connections bind, each with why; raised for the run as root, only
//! where they fall short, and always put back. Settings each network namespace keeps its own
//! of are raised inside a private namespace the run enters (they vanish with it); the
//! machine's are saved and put back by `sys::raised` (at the end, on SIGINT and SIGTERM, and by
//! the next muxlab command after a kill). Without root the run is refused before anything
//! starts, naming each setting.

use crate::bench::record::scenario::{model_name, Scenario};
use crate::bench::record::{FlagError, SettingFault};
use crate::sys;
use crate::sys::sysctl;

/// One setting the run needs at least, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Want {
    pub name: String,
    pub value: String,
    pub why: String,
}

/// Connections past which a run's opening is fast enough to overflow the default backlogs.
const MANY: usize = 200_000;

/// Descriptors a machine keeps beyond a run's sockets.
const SPARE_FILES: u64 = 65_536;

/// What `sc` needs of this machine's settings, each with why (whether it falls short now or
/// not: [`short`] says which do).
pub fn needs(sc: &Scenario) -> Result<Vec<Want>, FlagError> {
    let mut wants = Vec::new();
    for (name, value) in &sc.settings {
        if !sysctl::PER_NAMESPACE.contains(&name.as_str()) && !sysctl::GLOBAL.contains(&name.as_str()) {
            return Err(FlagError::Setting {
                name: name.clone(),
                fault: SettingFault::Unknown,
            });
        }
        wants.push(Want {
            name: name.clone(),
            value: sysctl::normal(value),
            why: "the scenario declares it".into(),
        });
    }
    let local = sc.server_host.is_none() && sc.client_hosts.is_empty();
    for x in &sc.experiments {
        let most = x.connections.iter().copied().max().unwrap_or(0);
        let ends = if local { 2 } else { 1 };
        let files_open = sys::settings::Settings::read().files_open.unwrap_or(0);
        wants.push(Want {
            name: "fs.file-max".into(),
            value: (files_open + ends * most as u64 + SPARE_FILES).to_string(),
            why: format!("{}: {most} connections, {ends} socket(s) each on this machine", x.name),
        });
        if most >= MANY {
            for name in ["net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog"] {
                wants.push(Want {
                    name: name.into(),
                    value: "65535".into(),
                    why: format!(
                        "{}: {most} connections open at once overflow a backlog of thousands",
                        x.name
                    ),
                });
            }
        }
        for entry in &x.models {
            let Some(model) = crate::models::find(model_name(entry)) else {
                continue;
            };
            let mappings = match model.streams {
                crate::server::Streams::ThreadEach => 4,
                crate::server::Streams::GreenEach => 2,
                _ => continue,
            };
            wants.push(Want {
                name: "vm.max_map_count".into(),
                value: (mappings * most as u64 + SPARE_FILES).to_string(),
                why: format!(
                    "{}: {} at {most} connections, {mappings} mappings each",
                    x.name, model.name
                ),
            });
            if mappings == 4 {
                wants.push(Want {
                    name: "kernel.pid_max".into(),
                    value: (most as u64 + SPARE_FILES).min(4_194_304).to_string(),
                    why: format!("{}: {} at {most} connections, a thread each", x.name, model.name),
                });
            }
        }
    }
    Ok(wants)
}

/// Of `wants`, those the machine falls short of now: `(name, value to set)`, one per setting
/// (the largest asked).
pub fn short(wants: &[Want]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for w in wants {
        let Ok(now) = sysctl::read(&w.name) else { continue };
        let base = out
            .iter()
            .find(|(n, _)| *n == w.name)
            .map(|(_, v)| v.clone())
            .unwrap_or(now);
        if let Some(v) = sysctl::raised(&w.name, &base, &w.value) {
            out.retain(|(n, _)| *n != w.name);
            out.push((w.name.clone(), v));
        }
    }
    out
}

/// What a run holds of raised settings; dropping it puts the machine's back (the namespace's
/// go with the namespace).
pub(in crate::bench) struct Holding {
    _raised: Option<sys::raised::Raised>,
}

/// Raises what `sc` needs for the run and says so in `notes`; refuses without root, or where a
/// namespace's own setting is needed on other hosts.
pub(in crate::bench) fn hold(sc: &Scenario, notes: &mut Vec<String>) -> Result<Holding, crate::bench::record::Error> {
    let wants = short(&needs(sc)?);
    if wants.is_empty() {
        return Ok(Holding { _raised: None });
    }
    if !sys::process::is_root() {
        return Err(FlagError::NeedsRoot { wants }.into());
    }
    let (spaced, global): (Vec<_>, Vec<_>) = wants
        .into_iter()
        .partition(|(n, _)| sysctl::PER_NAMESPACE.contains(&n.as_str()));
    if !spaced.is_empty() {
        if let Some((name, _)) = spaced
            .iter()
            .find(|_| sc.server_host.is_some() || !sc.client_hosts.is_empty())
        {
            return Err(FlagError::Setting {
                name: name.clone(),
                fault: SettingFault::NamespacedOnHosts,
            }
            .into());
        }
        let io = crate::bench::record::error::io_err;
        sys::netns::enter_private().map_err(io("entering a private network namespace for the run"))?;
        for (name, value) in &spaced {
            sysctl::write(name, value).map_err(|e| {
                let named = std::io::Error::new(e.kind(), format!("{name}: {e}"));
                io("setting a namespace's own setting for the run")(named)
            })?;
            notes.push(format!(
                "{name} = {value} for the run, in a network namespace of its own (gone with it)"
            ));
        }
    }
    let raised = sys::raised::raise(&global).map_err(crate::bench::record::error::io_err(
        "raising the machine's settings for the run",
    ))?;
    for (name, before, now) in &raised.changed {
        notes.push(format!(
            "{name} raised from {before} to {now} for the run (put back after it)"
        ));
    }
    Ok(Holding { _raised: Some(raised) })
}
