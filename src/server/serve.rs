//! The top of `server`: `muxlab serve` from flags to exit. Validates the configuration against
//! the model, sets up the process (CPUs, descriptor limit, signals, counters, listener), prints
//! the `listening` line, runs the model and prints the `stats` line.

use std::io::Write;
use std::time::Instant;

use super::classes::Classes;
use super::config::{Config, ServeArgs, Workers};
use super::ctx::Ctx;
use super::error::{io_err, Error};
use super::gate::Gate;
use super::lines::{DurationSummary, Listening, StatsLine};
use super::registry::Model;
use super::stats::{Counter, Stats};
use crate::sys;

/// Raises the descriptor limit (or lowers it to `--nofile`) and returns the soft limit.
fn apply_nofile(cfg: &Config) -> Result<u64, Error> {
    let (_, hard) = sys::rlimit::nofile().map_err(io_err("reading RLIMIT_NOFILE"))?;
    let want = cfg.nofile.unwrap_or(hard).min(hard);
    sys::rlimit::set_nofile(want).map_err(io_err("setting RLIMIT_NOFILE"))?;
    Ok(want)
}

/// `--reserve` must leave a worker of the pool for the long work.
fn check_reserve(cfg: &Config, workers: usize) -> Result<(), Error> {
    match cfg.reserve.filter(|r| r.workers >= workers) {
        Some(r) => Err(Error::ReserveTakesAll {
            under: r.under,
            reserved: r.workers,
            workers,
        }),
        None => Ok(()),
    }
}

/// Binds the listener, turning the usual failures into what the user should do.
fn listen(cfg: &Config, reuseport: bool) -> Result<std::os::fd::OwnedFd, Error> {
    let addr = cfg.listen_addr();
    let fd = sys::socket::listen(addr, cfg.backlog(), reuseport).map_err(|e| match e.raw_os_error() {
        Some(libc::EADDRINUSE) => Error::AddrInUse { addr },
        Some(libc::EADDRNOTAVAIL) => Error::NotOurAddress { addr: cfg.addr },
        Some(libc::EACCES) => Error::PortNeedsPrivileges { port: cfg.port },
        _ => io_err(format!("listening on {addr}"))(e),
    })?;
    super::drivers::accept::defer_accept(cfg, &fd)?;
    Ok(fd)
}

/// `--procs` past 1: a design that forms groups, with no keyed store (it would be a keyspace
/// per process).
pub fn check_group(model: &Model, cfg: &Config) -> Result<(), Error> {
    if cfg.procs == 1 {
        return Ok(());
    }
    super::group::forms(model).map_err(|why| Error::NoGroup { model: model.name, why })?;
    if cfg.proto.keyed() {
        return Err(Error::GroupKeyspaces { procs: cfg.procs });
    }
    Ok(())
}

/// `--max-conns` (or its default) and the connections one process may hold before it leaves
/// new ones to its siblings, for `workers` workers in each of `--procs` processes under a
/// descriptor limit of `nofile`.
fn connection_limits(model: &Model, cfg: &Config, workers: usize, nofile: u64) -> (usize, usize) {
    if cfg.procs > 1 {
        // A group's members cannot pass connections to each other (the port's hash picks the
        // member): each holds what its own descriptor table allows, and sheds the rest.
        let each = nofile.saturating_sub(super::group::reserve(cfg.procs, workers)).max(1) as usize;
        return (cfg.max_conns.unwrap_or(each * cfg.procs), usize::MAX);
    }
    // Leave room for listeners, epoll, spares and the process's own files.
    let fd_default = (nofile as usize * 9 / 10).saturating_sub(32).max(1);
    // Each process has its own descriptor table: the server as a whole holds one share per
    // worker process.
    let processes = if model.workers == Workers::Processes {
        workers
    } else {
        1
    };
    // A thread or process per connection: no more by default than the machine's mappings or
    // pids hold (an explicit --max-conns past them is refused, see `ceiling`).
    let design_most = super::ceiling::of(model, 1, workers, &crate::sys::settings::Settings::read())
        .filter(|(_, b)| {
            matches!(
                b,
                super::bound::Bound::Mappings { .. } | super::bound::Bound::Pids { .. }
            )
        })
        .map_or(usize::MAX, |(n, _)| n as usize);
    let max_conns = cfg.max_conns.unwrap_or_else(|| {
        model
            .default_max_conns
            .map_or(fd_default * processes, |d| d.min(fd_default))
            .min(design_most)
    });
    (max_conns, if processes > 1 { fd_default } else { usize::MAX })
}

/// The line a server prints once it can accept.
fn listening(ctx: &Ctx, model: &Model, metrics: Option<std::net::SocketAddr>) -> String {
    let line = Listening {
        event: "listening".into(),
        addr: ctx.addr,
        pid: sys::process::pid(),
        model: model.name.into(),
        proto: ctx.cfg.proto.name().into(),
        workers: ctx.workers,
        procs: ctx.cfg.procs,
        max_conns: ctx.max_conns,
        store: ctx.store.as_ref().map(|s| s.kind().to_string()),
        metrics,
    };
    serde_json::to_string(&line).expect("a line serialises")
}

/// resp and memcache: the store the design keeps, `--store` or its own (`None` for the other
/// protocols). `owned` is refused where more than one thread would touch it.
fn keyed_store(model: &Model, cfg: &Config, workers: usize) -> Result<Option<crate::store::Store>, Error> {
    if !cfg.proto.keyed() {
        return Ok(None);
    }
    let kind = cfg.store_kind.unwrap_or(model.data.default_store(workers));
    if kind == crate::store::Kind::Sharded && !model.shards {
        return Err(Error::NoShards {
            store: kind,
            model: model.name,
        });
    }
    if !model.data.allows(kind, workers) {
        return Err(Error::StoreNotShared {
            store: kind,
            model: model.name,
            workers,
            data: model.data,
        });
    }
    // Each table of a striped or sharded store holds its share of --max-keys: one with none
    // could hold no key at all.
    let tables = match kind {
        crate::store::Kind::Striped(n) => n,
        crate::store::Kind::Sharded => workers,
        _ => 1,
    };
    if let Some(max_keys) = cfg.max_keys.filter(|&m| m < tables) {
        return Err(Error::MaxKeysUnderTables {
            max_keys,
            store: kind,
            tables,
        });
    }
    let bounds = crate::store::Bounds {
        max_keys: cfg.max_keys,
        max_bytes: cfg.max_memory,
    };
    Ok(Some(crate::store::Store::new(kind, workers, bounds)))
}

/// A sharded store's workers send each other commands: their inboxes.
fn sharded(ctx: &Ctx) -> Result<(), Error> {
    if ctx
        .store
        .as_ref()
        .is_some_and(|s| s.kind() == crate::store::Kind::Sharded)
    {
        let hops = super::crossing::hops::Hops::sharded(ctx.workers).map_err(io_err("eventfd"))?;
        let _ = ctx.hops.set(Box::leak(Box::new(hops)));
    }
    Ok(())
}

/// Runs `model` until SIGTERM / SIGINT: prints the `listening` line to `out` once it can accept
/// and the `stats` line when every worker has stopped. Call it once per process: the context
/// it builds lives until the process exits.
pub fn serve(model: &'static Model, args: ServeArgs, out: &mut dyn Write) -> Result<(), Error> {
    let cfg = args.validate(model.name, model.workers, model.flags)?;
    // The CPUs it may run on: those of --cpus, or else those the process was given.
    let cpus = match &cfg.cpus {
        Some(cpus) => cpus.0.len(),
        None => sys::affinity::get().map(|c| c.len()).unwrap_or(1),
    };
    // Its threads beside `--workers` (io-threads' executor) are workers too, the last ones:
    // counters, a place at the start gate.
    let workers = model.worker_count(cfg.workers, cpus) + model.extra_threads;
    check_reserve(&cfg, workers)?;
    check_group(model, &cfg)?;
    super::ceiling::check(model, &cfg, workers)?;
    let store = keyed_store(model, &cfg, workers)?;
    if let Some(cpus) = &cfg.cpus {
        sys::affinity::set(&cpus.0).map_err(|source| Error::Pin {
            cpus: cpus.clone(),
            source,
        })?;
    }
    let nofile = apply_nofile(&cfg)?;
    // What an idle or stalled connection does not use leaves the process (see `sys::mem`).
    sys::mem::large_blocks_from_the_kernel();
    let (max_conns, process_conns) = connection_limits(model, &cfg, workers, nofile);
    // A group's counter blocks are mapped before it forks: `procs × workers`, process by process.
    let stats = Stats::new(workers * cfg.procs).map_err(io_err("mapping the shared counters"))?;
    sys::signal::install_stop_handler(stats.stop_flag()).map_err(io_err("installing signal handlers"))?;
    let listener = listen(&cfg, model.reuseport || cfg.procs > 1)?;
    let addr = sys::socket::local_addr(&listener).map_err(io_err("reading the listening address"))?;
    let others = super::group::listeners(&cfg, addr)?;
    let gate = Gate::new(if model.workers == Workers::Threads {
        workers + 1
    } else {
        0
    });
    // One server per process: the context lives as long as the process, so every worker
    // (thread, forked process or tokio task) can hold `&'static Ctx`.
    let ctx: &'static Ctx = Box::leak(Box::new(Ctx {
        cfg,
        listener,
        addr,
        workers,
        max_conns,
        process_conns,
        stats,
        gate,
        classes: Classes::new().map_err(io_err("mapping the class table"))?,
        main_pid: sys::process::pid(),
        offload: std::sync::OnceLock::new(),
        hops: std::sync::OnceLock::new(),
        store,
        first_block: Default::default(),
        metrics_pid: Default::default(),
    }));
    sharded(ctx)?;
    let scraper = super::metrics::Scraper::start(model, ctx, &others)?;

    let started = Instant::now();
    writeln!(out, "{}", listening(ctx, model, scraper.as_ref().map(|s| s.addr)))
        .and_then(|_| out.flush())
        .map_err(io_err("writing the listening line"))?;

    let result = if ctx.cfg.procs > 1 {
        super::group::run(model, ctx, &others, out)
    } else {
        (model.run)(ctx)
    };
    if let Some(s) = scraper {
        ctx.request_stop();
        s.end();
    }
    // Stop listening before the stats line: nothing is accepted after it (an io_uring accept
    // can outlive its ring's owner for a moment).
    let _ = sys::socket::shutdown(&ctx.listener);

    let line = stats_line(model, ctx, started, &result);
    writeln!(out, "{}", serde_json::to_string(&line).expect("a line serialises"))
        .and_then(|_| out.flush())
        .map_err(io_err("writing the stats line"))?;
    result
}

/// The line a server prints when it stops: its counters, with what it did not measure null.
fn stats_line(model: &Model, ctx: &Ctx, started: Instant, result: &Result<(), Error>) -> StatsLine {
    let (mut totals, mut per_worker) = ctx.stats.values();
    if !model.counts_syscalls {
        // Not measured is null, never 0 (a verdict must not call a runtime syscall-free).
        totals.not_counted(Counter::Syscalls);
        for w in &mut per_worker {
            w.not_counted(Counter::Syscalls);
        }
    }
    // green's counters are that model's; its marks are kept in worker 0's block.
    let greens: &[Counter] = match model.queueing {
        super::Discipline::Green => &Counter::GREEN_MARKS,
        _ => &Counter::GREEN,
    };
    for (i, w) in per_worker.iter_mut().enumerate() {
        for &c in greens
            .iter()
            .filter(|_| model.queueing != super::Discipline::Green || i > 0)
        {
            w.not_counted(c);
        }
    }
    if model.queueing != super::Discipline::Green {
        for c in Counter::GREEN {
            totals.not_counted(c);
        }
    }
    StatsLine {
        event: "stats".into(),
        model: model.name.into(),
        pid: sys::process::pid(),
        workers: ctx.workers,
        procs: ctx.cfg.procs,
        held_peak: Some(ctx.stats.held_peak()),
        uptime_s: started.elapsed().as_secs_f64(),
        ok: result.is_ok(),
        error: result.as_ref().err().map(|e| e.to_string()),
        totals,
        per_worker,
        classes: ctx.classes.counts(),
        request_duration: ctx.cfg.metrics.map(|_| DurationSummary::of(&ctx.stats)),
    }
}
