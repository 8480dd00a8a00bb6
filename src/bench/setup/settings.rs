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

/// Mappings and tasks a machine keeps beyond a run's threads.
const SPARE: u64 = 1_024;

/// The settings of a namespace's own copied from the machine into the run's namespace (which
/// starts with the kernel's defaults), so that only what the run raises differs.
const COPIED: &[&str] = &[
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.tcp_fin_timeout",
];

/// Tasks on the machine now (`/proc/loadavg`'s fourth field, after the slash).
fn tasks_now() -> u64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().nth(3)?.split('/').nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// A declared setting: one bench raises, with as many numbers as the machine's value.
fn declared(name: &str, value: &str) -> Result<Want, FlagError> {
    let bad = |fault| FlagError::Setting {
        name: name.to_string(),
        fault,
    };
    if !sysctl::PER_NAMESPACE.contains(&name) && !sysctl::GLOBAL.contains(&name) {
        return Err(bad(SettingFault::Unknown));
    }
    let value = sysctl::normal(value);
    let fields = |v: &str| v.split_whitespace().filter(|x| x.parse::<u64>().is_ok()).count();
    let now = sysctl::read(name).unwrap_or_default();
    let count = value.split_whitespace().count();
    if count == 0 || fields(&value) != count || (!now.is_empty() && count != now.split_whitespace().count()) {
        return Err(bad(SettingFault::BadValue));
    }
    Ok(Want {
        name: name.to_string(),
        value,
        why: "the scenario declares it".into(),
    })
}

/// What `sc` needs of this machine's settings, each with why (whether it falls short now or
/// not: [`short`] says which do). Only what binds on this machine: a server on another host
/// brings its own settings.
pub fn needs(sc: &Scenario) -> Result<Vec<Want>, FlagError> {
    let mut wants = sc
        .settings
        .iter()
        .map(|(n, v)| declared(n, v))
        .collect::<Result<Vec<_>, _>>()?;
    let server_here = sc.server_host.is_none();
    let ends = u64::from(server_here) + u64::from(sc.client_hosts.is_empty());
    let now = sys::settings::Settings::read();
    let files_open = now.files_open.unwrap_or(0);
    for x in &sc.experiments {
        let most = x.connections.iter().copied().max().unwrap_or(0) as u64;
        if ends > 0 {
            wants.push(Want {
                name: "fs.file-max".into(),
                value: (files_open + ends * most + SPARE_FILES).to_string(),
                why: format!("{}: {most} connections, {ends} socket(s) each on this machine", x.name),
            });
        }
        if !server_here {
            continue;
        }
        if most >= MANY as u64 {
            for name in ["net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog"] {
                wants.push(Want {
                    name: name.into(),
                    value: "65535".into(),
                    why: format!(
                        "{}: {most} connections opened at once overflow a backlog of thousands",
                        x.name
                    ),
                });
            }
        }
        for entry in &x.models {
            let Some(model) = crate::models::find(model_name(entry)) else {
                continue;
            };
            // A design held below `most` by what no setting here raises (one process's
            // descriptors, memory) raises nothing: its cells are skipped at that ceiling
            // (`bench::cell::ceiling`).
            if crate::server::ceiling(model, 1, 1, &now.unraisable()).is_some_and(|(n, _)| n < most) {
                continue;
            }
            let mappings = match model.streams {
                crate::server::Streams::ThreadEach => Some(4),
                crate::server::Streams::GreenEach => Some(2),
                _ => None,
            };
            if let Some(m) = mappings {
                wants.push(Want {
                    name: "vm.max_map_count".into(),
                    value: (m * most + SPARE).to_string(),
                    why: format!("{}: {} at {most} connections, {m} mappings each", x.name, model.name),
                });
            }
            if matches!(
                model.streams,
                crate::server::Streams::ThreadEach | crate::server::Streams::ProcessEach
            ) {
                wants.push(Want {
                    name: "kernel.pid_max".into(),
                    value: (tasks_now() + most + SPARE).min(4_194_304).to_string(),
                    why: format!("{}: {} at {most} connections, a task each", x.name, model.name),
                });
            }
        }
    }
    Ok(wants)
}

/// Of `wants`, the largest asked of each setting: `(name, value)`, never compared with the
/// machine's.
pub fn asked(wants: &[Want]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for w in wants {
        match out.iter_mut().find(|(n, _)| *n == w.name) {
            Some((_, v)) => {
                if let Some(more) = sysctl::raised(&w.name, v, &w.value) {
                    *v = more;
                }
            }
            None => out.push((w.name.clone(), w.value.clone())),
        }
    }
    out
}

/// Of `wants`, those the machine falls short of now: `(name, value to set)`, one per setting.
pub fn short(wants: &[Want]) -> Vec<(String, String)> {
    asked(wants)
        .into_iter()
        .filter_map(|(name, want)| {
            let now = sysctl::read(&name).ok()?;
            sysctl::raised(&name, &now, &want).map(|v| (name, v))
        })
        .collect()
}

/// What a run holds of raised settings: the namespace it entered (left first) and the
/// machine's settings it holds (put back when the last run holding them ends).
pub(in crate::bench) struct Holding {
    ns: Option<sys::netns::Private>,
    raised: Option<sys::raised::Raised>,
}

impl Drop for Holding {
    fn drop(&mut self) {
        // Back in the machine's namespace first: its net settings (tcp_mem) are not readable
        // from the run's.
        if let Some(ns) = self.ns.take() {
            if let Err(e) = ns.leave() {
                eprintln!("muxlab: could not leave the run's network namespace: {e}");
            }
        }
        drop(self.raised.take());
    }
}

/// Raises what `sc` needs for the run and says so in `notes`; refuses without root, or where a
/// namespace's own setting is needed where a namespace of this machine's cannot give it.
pub(in crate::bench) fn hold(sc: &Scenario, notes: &mut Vec<String>) -> Result<Holding, crate::bench::record::Error> {
    let wants = needs(sc)?;
    let short = short(&wants);
    if !sys::process::is_root() {
        if !short.is_empty() {
            return Err(FlagError::NeedsRoot { wants: short }.into());
        }
        return Ok(Holding { ns: None, raised: None });
    }
    let io = crate::bench::record::error::io_err;
    // The machine's first, from its own namespace; the run holds them even where another run
    // raised them already (see `sys::raised::raise`).
    let global: Vec<_> = asked(&wants)
        .into_iter()
        .filter(|(n, _)| sysctl::GLOBAL.contains(&n.as_str()))
        .collect();
    let raised = sys::raised::raise(&global).map_err(io("raising the machine's settings for the run"))?;
    for (name, before, now) in &raised.changed {
        notes.push(format!(
            "{name} raised from {before} to {now} for the run (put back after it)"
        ));
    }
    let mut holding = Holding {
        ns: None,
        raised: Some(raised),
    };
    let spaced: Vec<_> = short
        .into_iter()
        .filter(|(n, _)| sysctl::PER_NAMESPACE.contains(&n.as_str()))
        .collect();
    if let Some((name, _)) = spaced.first() {
        let refuse = |fault| FlagError::Setting {
            name: name.clone(),
            fault,
        };
        if sc.server_host.is_some() || !sc.client_hosts.is_empty() {
            return Err(refuse(SettingFault::NamespacedOnHosts).into());
        }
        if sc.server_addr.as_deref().is_some_and(|a| !a.starts_with("127.")) {
            return Err(refuse(SettingFault::NotLoopback).into());
        }
        if sc.steer_rx {
            return Err(refuse(SettingFault::Steered).into());
        }
        // The machine's values of a namespace's own settings, for the run's namespace (which
        // starts with the kernel's defaults).
        let host: Vec<(&str, String)> = sysctl::PER_NAMESPACE
            .iter()
            .chain(COPIED)
            .filter_map(|n| Some((*n, sysctl::read(n).ok()?)))
            .collect();
        holding.ns = Some(sys::netns::enter_private().map_err(io("entering a private network namespace for the run"))?);
        for (name, value) in &host {
            let _ = sysctl::write(name, value);
        }
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
    Ok(holding)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No built-in scenario but `c1m` needs a setting raised on a machine of ours: a run of
    /// them as root changes nothing, and without root none is refused (a spare of 65,536
    /// mappings once made every scenario with `thread` in it "short"). `c1m` needs the
    /// backlogs (a million connections opened at once) and TCP memory (their close), and
    /// nothing for the designs it skips (a thread per connection is bounded by memory first).
    #[test]
    fn no_builtin_scenario_but_c1m_needs_a_setting_raised_here() {
        for (name, _) in crate::bench::scenario::BUILTIN {
            let sc = crate::bench::scenario::load(name).unwrap();
            let wants = needs(&sc).unwrap();
            if *name != "c1m" {
                assert_eq!(short(&wants), Vec::<(String, String)>::new(), "{name}");
                continue;
            }
            // What c1m asks, whatever this machine has now (short of it or not).
            let asked = asked(&wants);
            let at_least = |n: &str, v: u64| {
                asked.iter().any(|(name, value)| {
                    name == n && value.split_whitespace().last().and_then(|x| x.parse::<u64>().ok()) >= Some(v)
                })
            };
            assert!(at_least("net.core.somaxconn", 65_535), "{asked:?}");
            assert!(at_least("net.ipv4.tcp_max_syn_backlog", 65_535), "{asked:?}");
            assert!(at_least("net.ipv4.tcp_mem", 1_572_864), "{asked:?}");
            for n in ["vm.max_map_count", "kernel.pid_max"] {
                assert!(
                    !asked.iter().any(|(name, _)| name == n),
                    "c1m raises {n} for a design it skips: {asked:?}"
                );
            }
        }
    }

    /// What a thread per connection needs grows with the count, and the largest ask of a
    /// setting is the one kept.
    #[test]
    fn a_thread_per_connection_needs_mappings_and_tasks_by_its_count() {
        let sc = |conns: usize| {
            let text = format!(
                "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                 models = [\"thread\", \"green\"]\nconnections = [10, {conns}]\nduration = \"1s\"\n"
            );
            crate::bench::record::scenario::parse(&text, "t").unwrap()
        };
        // (Under one process's descriptors, 19,927 here: past them a thread per connection is
        // skipped, and raises nothing.)
        let wants = needs(&sc(19_000)).unwrap();
        let maps = asked(&wants)
            .into_iter()
            .find(|(n, _)| n == "vm.max_map_count")
            .unwrap();
        assert_eq!(maps.1, (4 * 19_000 + SPARE).to_string());
        assert!(
            short(&wants).iter().any(|(n, _)| n == "vm.max_map_count"),
            "76,000 mappings pass 65,530"
        );
        assert!(short(&needs(&sc(1_000)).unwrap()).is_empty());
        // Ten million threads do not fit in a machine of ours (about 50 KiB each): nothing is
        // raised for them, their cells are skipped at the memory ceiling.
        let huge = needs(&sc(10_000_000)).unwrap();
        assert!(
            !huge
                .iter()
                .any(|w| w.name == "vm.max_map_count" || w.name == "kernel.pid_max"),
            "{huge:?}"
        );
    }

    #[test]
    fn a_declared_setting_must_be_one_bench_raises_with_numbers_like_the_machines() {
        let fault = |name: &str, value: &str| match declared(name, value) {
            Err(FlagError::Setting { fault, .. }) => Some(fault),
            _ => None,
        };
        assert_eq!(fault("kernel.hostname", "x"), Some(SettingFault::Unknown));
        assert_eq!(
            fault("net.ipv4.ip_local_port_range", "1024-65535"),
            Some(SettingFault::BadValue)
        );
        assert_eq!(fault("net.ipv4.tcp_mem", "500000"), Some(SettingFault::BadValue));
        assert_eq!(fault("vm.max_map_count", "70000"), None);
        assert_eq!(fault("net.ipv4.ip_local_port_range", " 1024   65535 "), None);
    }
}
