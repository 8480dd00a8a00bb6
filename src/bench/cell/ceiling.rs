//! A model cell past what its design holds on this machine is not run: skipped, with the
//! ceiling `server::ceiling` computes and what stops it there — first what no setting bench
//! raises changes (one process's descriptors, memory: a thread, green thread or process per
//! connection runs out of memory long before a million), then the settings as the run has
//! them (those bench raised included). A pool that serves one connection a worker at a time is
//! skipped where the experiment holds more connections than it has workers (`active`): held,
//! the rest would wait in its backlog for ever.

use crate::bench::record::scenario::{serve_line, Experiment};
use crate::bench::record::SkipReason;
use crate::server::bound::Bound;

/// Why model entry `entry` of `x` cannot hold `conns` connections on this machine with its
/// server on `cpus` CPUs; `None` where it can (or its entry does not read: the scenario's check
/// says so). Select's FD_SETSIZE is not a refusal: select refuses what it cannot watch,
/// counted, as its design does.
pub(super) fn over(entry: &str, x: &Experiment, conns: usize, cpus: usize) -> Option<SkipReason> {
    let (model, args) = serve_line(entry, x, "127.0.0.1", "0").ok()?;
    let cfg = args.validate(model.name, model.workers, model.flags).ok()?;
    let workers = model.worker_count(cfg.workers, cpus) + model.extra_threads;
    let now = crate::sys::settings::Settings::read();
    let over = |s: &crate::sys::settings::Settings| match crate::server::ceiling(model, cfg.procs, workers, s) {
        Some((most, bound)) if conns as u64 > most && bound != Bound::FdSetSize => Some(SkipReason::OverCeiling {
            model: model.name,
            connections: conns,
            most,
            bound,
        }),
        _ => None,
    };
    let held = x.load.active.is_some();
    // Past its --max-conns (given, or the design's default: fork's 1,000 children) a server
    // closes what it accepts: held connections would be closed and opened again.
    let cap = cfg.max_conns.or(model.default_max_conns);
    let capped = cap.filter(|&m| held && conns > m).map(|most| SkipReason::MaxConns {
        model: model.name,
        connections: conns,
        most,
        given: cfg.max_conns.is_some(),
    });
    over(&now.unraisable()).or_else(|| over(&now)).or(capped).or_else(|| {
        match model.one_conn_per_worker && held && conns > workers * cfg.procs {
            true => Some(SkipReason::OneAtATime {
                model: model.name,
                connections: conns,
                workers: workers * cfg.procs,
            }),
            false => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(entry: &str, conns: usize) -> Experiment {
        let text = format!(
            "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"echo\"\n\
             models = [\"{entry}\"]\nconnections = [{conns}]\nactive = \"0%\"\nduration = \"1s\"\n"
        );
        crate::bench::record::scenario::parse(&text, "t")
            .unwrap()
            .experiments
            .remove(0)
    }

    /// thread cannot hold a million here (one process's descriptors stop it, whatever the
    /// settings), a pool holds as many as it has workers, a group of 52 event loops holds a
    /// million; select's bit sets are its design, counted, not a reason to skip.
    #[test]
    fn a_design_past_its_ceiling_here_is_skipped_naming_what_stops_it() {
        let why = over("thread", &x("thread", 1_000_000), 1_000_000, 1)
            .unwrap()
            .to_string();
        // What stops thread is what no setting raises: one process's descriptors.
        assert!(
            why.starts_with("thread holds at most ") && why.contains("not 1,000,000: descriptors: 1 process of"),
            "{why}"
        );
        let pool = x("prethread --workers 4", 10);
        let why = over("prethread --workers 4", &pool, 10, 1).unwrap().to_string();
        assert!(
            why.contains("10 held connections would need as many workers, not 4"),
            "{why}"
        );
        assert!(over("prethread --workers 4", &pool, 4, 1).is_none());
        // Connections that come and go (not held): a pool serves them in turn, and an
        // iterative server one at a time (seed 000's short connections).
        let text = "name = \"s\"\ndescription = \"d\"\n[[experiment]]\nname = \"e\"\nproto = \"http\"\n\
                    models = [\"iterative\"]\nconnections = [10]\nclose = true\nduration = \"1s\"\n";
        let short = crate::bench::record::scenario::parse(text, "t")
            .unwrap()
            .experiments
            .remove(0);
        assert!(over("iterative", &short, 10, 1).is_none());
        // fork keeps 1,000 children by default: held past them, it would close the rest.
        let why = over("fork", &x("fork", 2_000), 2_000, 1).unwrap().to_string();
        assert!(
            why.contains("fork keeps at most 1,000 connections open (its --max-conns default)"),
            "{why}"
        );
        assert!(over("fork --max-conns 2000", &x("fork --max-conns 2000", 2_000), 2_000, 1).is_none());
        // The group's ceiling here (52 × 19,927 on a machine of ours): held, and one more not.
        let group = x("epoll --procs 52", 1_000_000);
        let epoll = crate::models::find("epoll").unwrap();
        let (most, _) = crate::server::ceiling(epoll, 52, 1, &crate::sys::settings::Settings::read()).unwrap();
        assert!(over("epoll --procs 52", &group, most as usize, 1).is_none());
        assert!(over("epoll --procs 52", &group, most as usize + 1, 1).is_some());
        assert!(over("select", &x("select", 5000), 5000, 1).is_none());
    }
}
