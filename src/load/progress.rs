//! Progress while a run goes: waiting for `--start-at`, and a line each second (rewritten on a
//! terminal's stderr, or a JSON line on stdout for `--hosts` and bench).

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::engine::Progress;
use super::{summary, unix_ms, LoadConfig, Show, STOP};

/// Sleeps until the wall clock reads `at` (ms since the epoch), saying so each second on the
/// JSON progress stream; Ctrl-C ends the wait.
pub(super) fn wait_until(at: u64, show: Show) {
    loop {
        let now = unix_ms();
        if now >= at || STOP.load(Ordering::Relaxed) != 0 {
            return;
        }
        if show == Show::JsonLines {
            println!(
                "{{\"event\":\"progress\",\"phase\":\"waiting\",\"starts_in_ms\":{}}}",
                at - now
            );
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
}

impl Ticker {
    pub(super) fn new(cfg: &LoadConfig, show: Show, t0: Instant) -> Ticker {
        let show = match show {
            Show::Terminal if !std::io::stderr().is_terminal() => Show::Nothing,
            s => s,
        };
        Ticker {
            show,
            t0,
            warm_end: t0 + cfg.warmup,
            last: (t0, 0),
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
        let warm = now < self.warm_end;
        let secs = now.duration_since(self.t0).as_secs_f64();
        if self.show == Show::JsonLines {
            println!(
                "{}",
                serde_json::json!({"event": "progress", "phase": if warm { "warm-up" } else { "running" },
                    "t": secs, "requests": done, "errors": errors, "rps": rps})
            );
        } else {
            let phase = if warm { " (warm-up)" } else { "" };
            let mut err = std::io::stderr();
            let _ = write!(
                err,
                "\r\x1b[2K[{secs:>4.0}s] {:>12} req/s  total {:>12}  errors {errors}{phase}",
                summary::thousands(rps as u64),
                summary::thousands(done),
            );
            let _ = err.flush();
        }
        self.last = (now, done);
    }

    pub(super) fn finish(&self) {
        if self.show == Show::Terminal {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}
