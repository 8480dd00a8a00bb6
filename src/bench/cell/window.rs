//! One load run against a standing server, and the server sampled over its measured window:
//! the load child started (the harness's sampling thread then moved onto the server's CPUs),
//! the server tree read every 50 ms for its peak, and at the window's two edges in full (every
//! thread's switches and schedstat, the server CPUs' times, the harness's own CPU time).

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::bench::process::{exe, line_reader, Owned};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{CellError, Error};
use crate::bench::setup::{Placement, Sampler};
use crate::load::{Document, Line, Said};
use crate::sys;
use crate::sys::machine::CpuTimes;
use crate::sys::procfs::ProcSample;

/// What a load run measured: the load's document, the server samples at the window's ends, the
/// time between them, and the machine's steal time over it (per cent of all CPU time).
pub(super) struct Window {
    pub(super) doc: Document,
    pub(super) begin: ProcSample,
    pub(super) end: ProcSample,
    pub(super) span: Duration,
    pub(super) steal_pct: Option<f64>,
    /// The server's CPUs' times at the two ends.
    pub(super) cpus: Option<(CpuTimes, CpuTimes)>,
    /// The harness's own CPU time on the server's CPUs between them (`None`: not there).
    pub(super) harness: Option<Duration>,
    /// The kernel's memory on the server's host at the window's end (its connections all
    /// still open), as PSS is read then.
    pub(super) kernel_end: crate::sys::machine::KernelMem,
}

/// Where the harness samples from, and the server's CPUs whose times it reads at the window's
/// ends (each `None` where it does not apply).
#[derive(Clone, Copy)]
pub(super) struct Cpus<'a> {
    pub(super) harness: Option<&'a [usize]>,
    pub(super) server: Option<&'a [usize]>,
}

pub(super) type Measured = Result<Window, Error>;

/// One end of the window: the server tree's sample, when it was taken, and the machine's steal
/// and total CPU time then.
#[derive(Clone, Copy)]
struct Mark {
    sample: ProcSample,
    /// When its CPU time was read.
    at: Instant,
    /// The machine's steal and total CPU time then (`/proc/stat`), where readable.
    steal: Option<(u64, u64)>,
    /// The server's CPUs' times then.
    cpus: Option<CpuTimes>,
    /// This (sampling) thread's CPU time then: on the server's CPUs where it is pinned there.
    harness: Duration,
    /// The kernel's memory then.
    kernel: crate::sys::machine::KernelMem,
}

/// How long before the window closes its end is sampled (a quarter of the window at most).
const END_EARLY: Duration = Duration::from_millis(300);

/// Where the harness samples the server while a load runs: on the server's CPUs, never the
/// client's. Its reads of `/proc` (every server process every 50 ms: 256 of them for `fork`)
/// on the client's CPU delayed the client, and that lateness was charged to the probe. `None`
/// (where it was): a server on another host, or sharing the client's CPUs.
pub(super) fn harness_cpus(place: &Placement) -> Option<Vec<usize>> {
    let server = local_server_cpus(place)?;
    let client = crate::units::parse_cpus(&place.client_cpus).ok()?;
    server.iter().all(|c| !client.contains(c)).then_some(server)
}

/// The server's CPUs where they are this machine's (`None`: on another host, or no list).
pub(super) fn local_server_cpus(place: &Placement) -> Option<Vec<usize>> {
    if place.remote_server() {
        return None;
    }
    crate::units::parse_cpus(&place.server_cpus)
        .ok()
        .filter(|c| !c.is_empty())
}

/// Runs the load child, sampling the server tree every 50 ms (from `harness` CPUs, where
/// given); the CPU window starts when the warm-up ends.
pub(super) fn run_load(
    x: &Experiment,
    args: Vec<String>,
    on: Cpus,
    stop_flag: &AtomicU64,
    sampler: &mut Sampler,
    mut on_sample: impl FnMut(&ProcSample, crate::sys::machine::KernelMem),
) -> Measured {
    let mut child = Owned(
        Command::new(exe()?)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| CellError::LoadSpawn { source })?,
    );
    // Moved after the spawn: the load starts where this thread was and pins itself. On the
    // server's CPUs the sampling must not wait behind the server's own threads (thousands of
    // them, runnable, in a thread per connection): it runs at the highest priority it may.
    let _pinned = on.harness.and_then(|cpus| sys::affinity::Pinned::to(cpus).ok());
    let _urgent = on.harness.and_then(|_| sys::process::Urgent::raise());
    let out = line_reader(child.stdout.take().expect("piped"));
    let err = line_reader(child.stderr.take().expect("piped"));
    // The load says when it starts (over ssh, the hosts start at an agreed instant, later).
    let mut doc = None;
    loop {
        match out.recv_timeout(Duration::from_millis(50)).map(|l| Line::read(&l)) {
            Ok(Said::Event(Line::Started)) | Err(RecvTimeoutError::Disconnected) => break,
            Ok(Said::Document(d)) => doc = Some(d),
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
        }
        on_sample(&sampler.tree()?, sampler.kernel_mem());
        if stop_flag.load(Ordering::Relaxed) != 0 {
            let _ = sys::process::kill(child.id() as i32, sys::signal::SIGINT);
        }
    }
    let (begin, end) = sample_window(x, &mut child, stop_flag, sampler, on.server, &mut on_sample)?;
    for l in drain(&out) {
        if let Said::Document(d) = Line::read(&l) {
            doc = Some(d);
        }
    }
    let Some(doc) = doc else {
        return Err(CellError::NoDocument {
            status: child.try_wait().ok().flatten(),
            said: drain(&err).join(" ").trim().to_string(),
        }
        .into());
    };
    let span = end.at.saturating_duration_since(begin.at);
    let steal = match (begin.steal, end.steal) {
        (Some((s0, t0)), Some((s1, t1))) if t1 > t0 => Some((s1.saturating_sub(s0)) as f64 * 100.0 / (t1 - t0) as f64),
        _ => None,
    };
    Ok(Window {
        doc: *doc,
        begin: begin.sample,
        end: end.sample,
        span,
        steal_pct: steal,
        cpus: begin.cpus.zip(end.cpus),
        harness: on.harness.map(|_| end.harness.saturating_sub(begin.harness)),
        kernel_end: end.kernel,
    })
}

/// One end of the window: a sample with every thread's context switches (a file per thread:
/// with 15,000 threads that takes a while), stamped when the CPU times are read, at its start.
fn mark(sampler: &mut Sampler, server: Option<&[usize]>) -> Result<Mark, Error> {
    let at = Instant::now();
    let steal = sys::machine::steal_and_total();
    let cpus = server.and_then(sys::machine::cpu_times);
    Ok(Mark {
        sample: sampler.all()?,
        at,
        steal,
        cpus,
        harness: sys::process::thread_cpu_time(),
        kernel: sampler.kernel_mem(),
    })
}

/// Samples the server from the load's start until it exits: the window's ends, and the tree
/// every 50 ms between. The end is sampled just before the window closes, while the
/// connections (and their threads) are still there; the CPU time is scaled to the window by
/// the samples' span. Ctrl-C is passed on to the load.
fn sample_window(
    x: &Experiment,
    child: &mut Owned,
    stop_flag: &AtomicU64,
    sampler: &mut Sampler,
    server: Option<&[usize]>,
    on_sample: &mut impl FnMut(&ProcSample, crate::sys::machine::KernelMem),
) -> Result<(Mark, Mark), Error> {
    let warm_end = Instant::now() + x.warmup();
    let mut begin = if x.warmup().is_zero() {
        Some(mark(sampler, server)?)
    } else {
        None
    };
    // The window ends when the duration does, not when the load generator has finished
    // closing its connections (which can take long with thousands of them).
    let mut window_end = x.duration().map(|d| warm_end + d.saturating_sub(END_EARLY.min(d / 4)));
    let mut end: Option<Mark> = None;
    let mut signalled = false;
    while child
        .try_wait()
        .map_err(|source| CellError::LoadWait { source })?
        .is_none()
    {
        std::thread::sleep(Duration::from_millis(50));
        let s = sampler.tree()?;
        on_sample(&s, sampler.kernel_mem());
        if begin.is_none() && Instant::now() >= warm_end {
            let b = mark(sampler, server)?;
            // The end's scan must finish before the connections close: start it earlier by
            // twice what this one took (a quarter of the window at most).
            let cost = b.at.elapsed() * 2;
            if let (Some(w), Some(d)) = (window_end.as_mut(), x.duration()) {
                *w = (*w).min(warm_end + d.saturating_sub(cost.min(d / 4)));
            }
            begin = Some(b);
        }
        if end.is_none() && window_end.is_some_and(|w| Instant::now() >= w) {
            end = Some(mark(sampler, server)?);
        }
        if stop_flag.load(Ordering::Relaxed) != 0 && !signalled {
            let _ = sys::process::kill(child.id() as i32, sys::signal::SIGINT);
            signalled = true;
        }
    }
    let end = match end {
        Some(e) => e,
        None => mark(sampler, server)?,
    };
    Ok((begin.unwrap_or(end), end))
}

/// Every line a reader thread delivers until its pipe closes (bounded: 5 s).
fn drain(rx: &Receiver<String>) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut lines = Vec::new();
    while let Ok(l) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        lines.push(l);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The harness samples from the server's CPUs, never the client's (before: wherever the
    /// scheduler put it, the client's CPU included); where they share CPUs or the server is on
    /// another host it stays where it was.
    #[test]
    fn the_harness_samples_on_the_servers_cpus_never_the_clients() {
        let place = |server: &str, client: &str| Placement {
            server_cpus: server.into(),
            threaded_cpus: None,
            client_cpus: client.into(),
            client_threads: 1,
            server_addr: "127.0.0.1:0".into(),
            hosts: None,
            round_trip: None,
            metrics: None,
        };
        assert_eq!(harness_cpus(&place("0", "1")), Some(vec![0]));
        assert_eq!(harness_cpus(&place("0-3", "4,5")), Some(vec![0, 1, 2, 3]));
        assert_eq!(harness_cpus(&place("0", "0")), None);
        assert_eq!(harness_cpus(&place("0,1", "1")), None);
    }
}
