//! Progress while a run goes: waiting for `--start-at`, and a line each second (rewritten on a
//! terminal's stderr, or a JSON line on stdout for `--hosts` and bench).

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::engine::Progress;
use super::stop::STOP;
use super::{unix_ms, Document};
use crate::units::thousands;

/// How a run shows its progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Show {
    Nothing,
    /// A line rewritten each second on stderr, when it is a terminal.
    Terminal,
    /// A JSON line each second on stdout (`{"event":"progress",...}`), also while waiting for
    /// `--start-at`, and `{"event":"started"}` when the run starts: what `--hosts` reads from
    /// each host (and how it knows the host is alive), and what bench reads to place its window.
    JsonLines,
}

/// A line a run prints on stdout for a program that follows it (`--hosts` on each host,
/// bench): progress each second, the start of the window, then the [`Document`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Line {
    /// Each second: waiting for `--start-at` (`starts_in_ms`), or running.
    Progress(Tick),
    /// Connecting is over: the warm-up and the window run from now.
    Started,
    /// A gated part (`--start-gate`) has connected, and waits for its parent's word to start.
    Connected,
    /// A part's live figures (`--metrics-lines`), for its parent's `--metrics`.
    Metrics(super::live::Snapshot),
}

/// One progress line's figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tick {
    /// `waiting`, `warm-up` or `running`.
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starts_in_ms: Option<u64>,
    /// Seconds since connecting ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<f64>,
    #[serde(default)]
    pub requests: u64,
    #[serde(default)]
    pub errors: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rps: Option<f64>,
    /// Event streams open now, and events per second (runs that receive event streams).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events_per_s: Option<f64>,
}

/// What a followed run said in one line of its stdout.
#[derive(Debug, Clone)]
pub enum Said {
    Event(Line),
    Document(Box<Document>),
    /// Anything else (a message, a line of another version): kept as it is.
    Other(String),
}

impl Line {
    /// Prints the line on stdout.
    pub fn print(&self) {
        println!("{}", serde_json::to_string(self).expect("a progress line serialises"));
    }

    /// Reads one line of a followed run's stdout.
    pub fn read(text: &str) -> Said {
        let t = text.trim();
        if let Ok(e) = serde_json::from_str::<Line>(t) {
            return Said::Event(e);
        }
        match Document::read("a result line", t) {
            Ok(d) => Said::Document(Box::new(d)),
            Err(_) => Said::Other(text.to_string()),
        }
    }
}

/// Sleeps until the wall clock reads `at` (ms since the epoch), saying so each second on the
/// JSON progress stream; Ctrl-C ends the wait.
pub(super) fn wait_until(at: u64, show: Show) {
    loop {
        let now = unix_ms();
        if now >= at || STOP.load(Ordering::Relaxed) != 0 {
            return;
        }
        if show == Show::JsonLines {
            Line::Progress(Tick {
                phase: "waiting".into(),
                starts_in_ms: Some(at - now),
                ..Tick::default()
            })
            .print();
        }
        std::thread::sleep(Duration::from_millis((at - now).min(1000)));
    }
}

/// Progress each second: `[ 3s] 12,345 req/s  total 37,000  errors 0` rewritten on a
/// terminal's stderr, or a JSON line on stdout.
pub(super) struct Ticker {
    show: Show,
    t0: Instant,
    warm_end: Instant,
    last: (Instant, u64),
    last_events: u64,
}

impl Ticker {
    pub(super) fn new(warmup: Duration, show: Show, t0: Instant) -> Ticker {
        let show = match show {
            Show::Terminal if !std::io::stderr().is_terminal() => Show::Nothing,
            s => s,
        };
        Ticker {
            show,
            t0,
            warm_end: t0 + warmup,
            last: (t0, 0),
            last_events: 0,
        }
    }

    /// Connecting has ended at `t0`: the warm-up runs from there.
    pub(super) fn window_from(&mut self, t0: Instant) {
        let warmup = self.warm_end.saturating_duration_since(self.t0);
        self.t0 = t0;
        self.warm_end = t0 + warmup;
    }

    pub(super) fn tick(&mut self, progress: &[Progress]) {
        let now = Instant::now();
        if self.show == Show::Nothing || now.duration_since(self.last.0) < Duration::from_secs(1) {
            return;
        }
        let done: u64 = progress.iter().map(|p| p.requests.load(Ordering::Relaxed)).sum();
        let errors: u64 = progress.iter().map(|p| p.errors.load(Ordering::Relaxed)).sum();
        let rps = done.saturating_sub(self.last.1) as f64 / now.duration_since(self.last.0).as_secs_f64();
        let streams: u64 = progress.iter().map(|p| p.streams.load(Ordering::Relaxed)).sum();
        let events: u64 = progress.iter().map(|p| p.events.load(Ordering::Relaxed)).sum();
        let eps = events.saturating_sub(self.last_events) as f64 / now.duration_since(self.last.0).as_secs_f64();
        let sse = events > 0 || streams > 0;
        let warm = now < self.warm_end;
        let secs = now.duration_since(self.t0).as_secs_f64();
        if self.show == Show::JsonLines {
            Line::Progress(Tick {
                phase: if warm { "warm-up" } else { "running" }.into(),
                starts_in_ms: None,
                t: Some(secs),
                requests: done,
                errors,
                rps: Some(rps),
                streams: sse.then_some(streams),
                events_per_s: sse.then_some(eps),
            })
            .print();
        } else {
            let phase = if warm { " (warm-up)" } else { "" };
            let mut err = std::io::stderr();
            let streaming = match sse {
                true => format!(
                    "  streams open {}  {} events/s",
                    thousands(streams),
                    thousands(eps as u64)
                ),
                false => String::new(),
            };
            let _ = write!(
                err,
                "\r\x1b[2K[{secs:>4.0}s] {:>12} req/s  total {:>12}  errors {errors}{streaming}{phase}",
                thousands(rps as u64),
                thousands(done),
            );
            let _ = err.flush();
        }
        self.last = (now, done);
        self.last_events = events;
    }

    pub(super) fn finish(&self) {
        if self.show == Show::Terminal {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}
