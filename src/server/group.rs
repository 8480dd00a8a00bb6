//! Process groups (`--procs N`): N copies of one design, each a process with its own descriptor
//! table, so that one server holds more connections than one process may open.
//!
//! **How they share the port.** Each process gets its own SO_REUSEPORT listener, all bound by
//! the parent before any fork, so the whole group listens once the `listening` line is out; the
//! kernel picks a listener for each connection by a hash of its addresses. One inherited
//! listener would wake every process's loop for each connection (most designs watch it
//! level-triggered). The price: the hash cannot move a connection off a process whose
//! descriptors are used up; that process sheds it (counted in `rejected_emfile`).
//!
//! **Fork first.** The parent has one thread when it forks; each child builds its design's
//! threads and runtime itself. The counter blocks of procs × workers are mapped before the
//! fork; process `p` counts in blocks `p × W ..`. A keyed store would be one keyspace per
//! process: refused (see [`super::Error::GroupKeyspaces`]).
//!
//! **The parent serves nothing.** It supervises (a process that ends stops the group) and,
//! while the group runs, prints a [`Held`] line when the count has changed, at most once a
//! second: connections open now (accepted − closed, over every process), the peak, and the
//! group's memory and CPU.

use std::io::Write;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use super::config::Config;
use super::ctx::Ctx;
use super::error::{io_err, Error, NoGroup};
use super::lines::Held;
use super::registry::{Family, Model};
use super::workers::{fork_child, supervise};
use crate::sys;

/// Whether `model` runs as a process group, and if not why.
pub fn forms(model: &Model) -> Result<(), NoGroup> {
    match (model.family, model.workers, model.queueing) {
        (Family::Blocking, _, _) => Err(NoGroup::Blocking),
        (_, super::Workers::Processes, _) => Err(NoGroup::Processes),
        (_, _, super::Discipline::Green) => Err(NoGroup::Green),
        _ => Ok(()),
    }
}

/// Descriptors a member keeps beyond its connections: stdio, its listener and its siblings'
/// (left as `/dev/null`), each worker's poller, wake-ups, rings and listener, and spares.
pub fn reserve(procs: usize, workers: usize) -> u64 {
    64 + procs as u64 + 8 * workers as u64
}

/// The name of a group: "epoll ×16 processes".
pub fn name(model: &Model, procs: usize) -> String {
    format!("{} ×{procs} processes", model.name)
}

/// The other members' listeners: `procs − 1` more SO_REUSEPORT listeners on `addr` (the first
/// member's, bound already).
pub fn listeners(cfg: &Config, addr: std::net::SocketAddr) -> Result<Vec<OwnedFd>, Error> {
    (1..cfg.procs)
        .map(|p| {
            let fd = sys::socket::listen(addr, cfg.backlog(), true)
                .map_err(io_err(format!("binding the listener of process {p} on {addr}")))?;
            super::drivers::accept::defer_accept(cfg, &fd)?;
            Ok(fd)
        })
        .collect()
}

/// Runs `model` as a group: process 0 serves `ctx.listener`, process `p > 0` the listener
/// `others[p − 1]` moved onto the same descriptor. Returns once every member has ended; a
/// member that ends while the group runs stops it, and is the error.
pub fn run(model: &'static Model, ctx: &'static Ctx, others: &[OwnedFd], out: &mut dyn Write) -> Result<(), Error> {
    let procs = others.len() + 1;
    let spawn = |p: usize| {
        let pid = fork_child(&format!("process {p} of {}", name(model, procs)), || {
            if p > 0 {
                sys::fd::dup_onto(&others[p - 1], &ctx.listener).map_err(io_err("taking this process's listener"))?;
            }
            for l in others {
                sys::fd::replace_with_null(l).map_err(io_err("leaving the siblings' listeners"))?;
            }
            ctx.join_group(p);
            (model.run)(ctx)
        })?;
        // Process p holds its listener now; the parent keeps none of the others, so a listener
        // lives only as long as the process that accepts from it.
        if p > 0 {
            sys::fd::replace_with_null(&others[p - 1]).map_err(io_err("leaving a member's listener"))?;
        }
        Ok(pid)
    };
    let mut report = Report::new(ctx, procs, out);
    let ended = supervise(
        ctx,
        procs,
        spawn,
        false,
        &|p| format!("process {p} of the group"),
        || report.tick(),
    );
    match ended? {
        Some((index, pid, exit)) => Err(Error::MemberEnded { index, pid, exit }),
        None => Ok(()),
    }
}

/// The parent's `held` lines.
struct Report<'a> {
    ctx: &'a Ctx,
    procs: usize,
    out: &'a mut dyn Write,
    said: Option<(u64, u64)>,
    at: Instant,
    stopped: bool,
}

/// The most often a `held` line is printed.
const EVERY: Duration = Duration::from_secs(1);

impl<'a> Report<'a> {
    fn new(ctx: &'a Ctx, procs: usize, out: &'a mut dyn Write) -> Report<'a> {
        Report {
            ctx,
            procs,
            out,
            said: None,
            at: Instant::now(),
            stopped: false,
        }
    }

    /// Prints a line when the count moved and a second has passed since the last, and once
    /// when the group is stopping (before its members close what they hold).
    fn tick(&mut self) {
        if self.ctx.stopping() {
            if !self.stopped {
                self.stopped = true;
                self.say();
            }
            return;
        }
        let now = (
            self.ctx.stats.live().load(std::sync::atomic::Ordering::Relaxed),
            self.ctx.stats.held_peak(),
        );
        if self.said != Some(now) && self.at.elapsed() >= EVERY {
            self.say();
        }
    }

    /// Prints a line now.
    fn say(&mut self) {
        let held = self.ctx.stats.live().load(std::sync::atomic::Ordering::Relaxed);
        let peak = self.ctx.stats.held_peak();
        let group = sys::procfs::sample_tree(sys::process::pid()).ok();
        let line = Held {
            event: "held".into(),
            procs: self.procs,
            held,
            peak,
            rss_bytes: group.map(|g| g.rss),
            cpu_s: group.map(|g| g.cpu().as_secs_f64()),
        };
        let _ = writeln!(self.out, "{}", serde_json::to_string(&line).expect("a line serialises"));
        let _ = self.out.flush();
        self.said = Some((held, peak));
        self.at = Instant::now();
    }
}
