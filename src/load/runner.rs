//! The runner: a run of a [`Spec`] on this process's engine threads (its connections split over
//! them, the keyspace prefilled, the start waited for, progress shown, the threads' tallies
//! merged into an [`Outcome`]), or over child processes where one process may not open enough
//! descriptors.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::engine::{Engine, Progress, Start, ThreadPlan};
use super::progress::{self, Line, Show};
use super::stop::STOP;
use super::{
    io_err, keyed, live, per_process, run_shards, shard_processes, sources, tls, unix_ms, Error, Outcome, Spec, Tally,
};
use crate::sys;

/// Runs `spec` from here: on this process's engine threads, or split over processes where its
/// connections need more descriptors than one process may open (said on stderr when `say`).
pub fn run_here(spec: &Spec, show: Show, say: bool) -> Result<Outcome, Error> {
    preflight(spec)?;
    // A part started by a parent runs its piece as it is.
    let shards = match spec.subshard() {
        Some(_) => 1,
        None => shard_processes(spec.share().connections),
    };
    if shards == 1 {
        return run(spec, show);
    }
    // The sources are chosen once, for every part: parts choosing their own would each pick
    // the same least-used addresses and run out of ports together.
    let spec = &*sources::with_room(spec, spec.share().connections);
    if say {
        eprintln!(
            "muxlab: {} connections need more descriptors than one process may open ({}): running {shards} processes",
            spec.share().connections,
            per_process()
        );
    }
    // The parts run on the CPUs this process was given (they inherit its affinity), and the
    // merge counts those CPUs, not the machine's, when it tells a saturated client.
    if let Some(cpus) = spec.cpus() {
        sys::affinity::set(&cpus.0).map_err(|source| Error::Pin {
            cpus: cpus.clone(),
            source,
        })?;
    }
    run_shards(spec, shards, show)
}

/// Runs this process's share of `spec` on its engine threads.
pub fn run(spec: &Spec, show: Show) -> Result<Outcome, Error> {
    if let Some(cpus) = spec.cpus() {
        sys::affinity::set(&cpus.0).map_err(|source| Error::Pin {
            cpus: cpus.clone(),
            source,
        })?;
    }
    let (_, hard) = sys::rlimit::nofile().map_err(io_err("reading RLIMIT_NOFILE"))?;
    let _ = sys::rlimit::set_nofile(hard);
    let _ = sys::signal::install_stop_handler(&STOP);
    if let (true, Some(cfg), None) = (spec.h2, spec.tls.as_ref(), spec.subshard()) {
        tls::alpn_check(spec.target(), cfg, spec.timeout())?;
    }
    let share = spec.share();
    let conns = share.connections;
    let spec = &*sources::with_room(spec, conns);
    let threads = spec.threads().min(conns).max(1);
    let progress: std::sync::Arc<[Progress]> = (0..threads).map(|_| Progress::default()).collect();
    let endpoint = match spec.args().metrics {
        Some(addr) => {
            let read = progress.clone();
            Some(live::serve(addr, live::Meta::of(spec), move || {
                live::Snapshot::read(&read)
            })?)
        }
        None => None,
    };
    let prefilled = prefill(spec, threads, show)?;
    if let Some(at) = spec.start_at() {
        progress::wait_until(at, show);
    }
    // Connections open first; the warm-up and the window start once they are (see `Start`).
    let launched = Instant::now();
    let start = Start::new(threads, spec.args().start_gate);
    let go = spec.args().start_gate.then(word_to_start);
    let warmup = spec.warmup();
    let (tallies, watched) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let plan = ThreadPlan::of(&share, threads, t, launched);
                let (p, start) = (&progress[t], &start);
                s.spawn(move || -> Result<(Tally, Duration), Error> {
                    // A thread that cannot start has ended its connecting: the others' window
                    // must not wait for it.
                    let engine = Engine::new(spec, plan, start).map_err(|e| {
                        start.thread_done(Instant::now());
                        io_err("starting an engine thread")(e)
                    })?;
                    Ok(engine.run(p, &STOP))
                })
            })
            .collect();
        let lines = spec.args().metrics_lines;
        let watched = watch(&handles, &start, go, (&progress, lines), show, warmup, launched);
        let tallies: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(Error::EnginePanicked)))
            .collect();
        (tallies, watched)
    });
    let end = Instant::now();
    if spec.args().metrics_lines {
        Line::Metrics(live::Snapshot::read(&progress)).print();
    }
    live::linger(endpoint, spec, show == Show::Terminal);
    let mut tally = Tally::default();
    let mut client_cpu = watched.cpu;
    for t in tallies {
        let (t, cpu) = t?;
        tally.merge(&t);
        client_cpu += cpu;
    }
    if let (Some(n), Some(k)) = (prefilled, tally.keyed.as_mut()) {
        k.prefilled = n;
    }
    let measure_from = watched.t0 + warmup;
    let window_end = spec.duration.map_or(end, |d| end.min(measure_from + d));
    // The CPUs this process may run on (its affinity), not the machine's.
    let cores = sys::affinity::get().map(|c| c.len()).unwrap_or(1).max(1);
    Ok(Outcome {
        tally,
        connections: conns,
        offered_rps: share.rate,
        window_start_ms: watched.wall0 + warmup.as_millis() as u64,
        elapsed: window_end.saturating_duration_since(measure_from),
        connecting: watched.t0.saturating_duration_since(launched),
        client_cpu,
        cpu_slots: threads.min(cores),
        threads,
        shards: 1,
        interrupted: STOP.load(Ordering::Relaxed) != 0,
    })
}

/// The keyspace is written before the start (and before a shared start time: every piece's
/// keys are in place when any piece's window opens): the keys written, where asked for.
fn prefill(spec: &Spec, threads: usize, show: Show) -> Result<Option<u64>, Error> {
    let Some(plan) = spec.keyed.as_ref().filter(|p| p.prefill) else {
        return Ok(None);
    };
    let share = spec.share();
    if show == Show::Terminal {
        eprintln!("muxlab: --prefill: writing this process's share of {} keys", plan.keys);
    }
    let (n, secs) = keyed::prefill(spec, plan, share.first_slot, share.connections as u64, threads)?;
    if show == Show::Terminal {
        eprintln!("muxlab: --prefill wrote {n} keys in {secs:.2} s");
    }
    Ok(Some(n))
}

/// A gated part's word to start (`--start-gate`): a line on stdin, or stdin's end (its parent
/// gone), read by a thread of its own.
fn word_to_start() -> std::sync::mpsc::Receiver<()> {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_line(&mut String::new());
        let _ = tx.send(());
    });
    rx
}

/// What the main thread saw while the engines ran: when connecting ended (`t0`, and the wall
/// clock then), and the CPU it used itself over the window (the progress line).
struct Watched {
    t0: Instant,
    wall0: u64,
    cpu: Duration,
}

/// Follows the engine threads until they end: says when the run started (JSON lines), shows
/// progress, and counts its own CPU from the warm-up's end.
fn watch<T>(
    handles: &[std::thread::ScopedJoinHandle<'_, T>],
    start: &Start,
    mut go: Option<std::sync::mpsc::Receiver<()>>,
    (progress, lines): (&[Progress], bool),
    show: Show,
    warmup: Duration,
    launched: Instant,
) -> Watched {
    let mut w = Watched {
        t0: launched,
        wall0: unix_ms(),
        cpu: Duration::ZERO,
    };
    let mut ticker = progress::Ticker::new(warmup, show, launched);
    let mut from = None;
    let mut started = false;
    let mut said_connected = false;
    let mut next_lines = Instant::now();
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(5));
        // A gated part: connected, it says so and starts when its parent says (or is gone).
        if let Some(rx) = go.as_ref().filter(|_| start.connected()) {
            if !started && start.t0().is_none() && !std::mem::replace(&mut said_connected, true) {
                Line::Connected.print();
            }
            if !matches!(rx.try_recv(), Err(std::sync::mpsc::TryRecvError::Empty)) {
                start.open(Instant::now());
                go = None;
            }
        }
        if let (false, Some(t)) = (started, start.t0()) {
            started = true;
            w.t0 = t;
            w.wall0 = unix_ms().saturating_sub(t.elapsed().as_millis() as u64);
            ticker.window_from(t);
            if show == Show::JsonLines {
                Line::Started.print();
            }
        }
        if from.is_none() && started && Instant::now() >= w.t0 + warmup {
            from = Some(sys::process::thread_cpu_time());
        }
        ticker.tick(progress);
        // A part of a split run: its live figures, for its parent's --metrics.
        if lines && Instant::now() >= next_lines {
            Line::Metrics(live::Snapshot::read(progress)).print();
            next_lines = Instant::now() + Duration::from_millis(500);
        }
    }
    w.cpu = from.map_or(Duration::ZERO, |f| sys::process::thread_cpu_time().saturating_sub(f));
    ticker.finish();
    w
}

/// What this piece's count of connections needs of the machine (a part a parent split off was
/// checked with the whole), on the machine it runs on: before anything opens.
fn preflight(spec: &Spec) -> Result<(), Error> {
    if spec.subshard().is_some() {
        return Ok(());
    }
    let share = spec.share();
    let conns = share.connections as u64;
    let senders = share.active.map_or(conns, |a| a.among(share.first_slot, conns));
    let settings = crate::sys::settings::Settings::read();
    super::preflight::check(
        spec.target().addr,
        conns,
        senders,
        spec.sources().len() as u64,
        &settings,
    )
    .map_err(|need| Error::invalid("connections", super::rule::Rule::Settings(need)))
}
