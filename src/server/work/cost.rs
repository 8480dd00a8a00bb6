//! What a request costs ([`Work`]): its CPU part and its blocking wait, as written by `--work`
//! or a request's query, drawn per request and cut at a cap.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use super::bad::{BadWork, WorkFault};
use super::dist::Dist;
use super::parse::{parse_dist, split_parts};
use super::perform::perform;
use crate::rng::Rng;

/// The most one request of `--work` may cost, CPU and wait together: a draw from a heavy tail
/// is cut here rather than hold a worker for minutes. (Work a request names for itself is cut
/// at `--max-work`.)
pub const CEILING: Duration = Duration::from_secs(10);

/// What a request costs: CPU, then a blocking wait; either may be absent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Work {
    pub cpu: Option<Dist>,
    pub sleep: Option<Dist>,
    /// The spec as written.
    text: String,
}

impl Work {
    pub fn is_none(&self) -> bool {
        self.cpu.is_none() && self.sleep.is_none()
    }

    /// The mean cost of a request, CPU and wait together.
    pub fn mean(&self) -> Duration {
        self.cpu.as_ref().map_or(Duration::ZERO, Dist::mean) + self.sleep.as_ref().map_or(Duration::ZERO, Dist::mean)
    }

    /// The mean CPU part.
    pub fn cpu_mean(&self) -> Duration {
        self.cpu.as_ref().map_or(Duration::ZERO, Dist::mean)
    }

    /// One request's draw, its CPU part and its wait, cut so that together they are at most
    /// `cap` (the CPU part first).
    pub(crate) fn draw(&self, rng: &mut Rng, cap: Duration) -> (Duration, Duration) {
        let cpu = self.cpu.as_ref().map_or(Duration::ZERO, |d| d.sample(rng).min(cap));
        let wait = self
            .sleep
            .as_ref()
            .map_or(Duration::ZERO, |d| d.sample(rng).min(cap - cpu));
        (cpu, wait)
    }

    /// Does one request's work: draws its CPU time and its wait (together at most `cap`),
    /// spins the one and sleeps the other. Returns what was drawn, which a class's busy time
    /// counts (a sleep may overrun it by the kernel's wake-up latency).
    pub fn run(&self, rng: &mut Rng, cap: Duration) -> Duration {
        let (cpu, wait) = self.draw(rng, cap);
        perform(cpu, wait)
    }

    /// The mean and the 99th percentile of what a request of it costs as served, its draws cut
    /// at `cap` (a heavy tail cut there has a smaller mean than the distribution's): the mean as
    /// [`served_means`](Self::served_means) gives it, the p99 from 20,000 draws of a fixed stream.
    pub fn as_served(&self, cap: Duration) -> (Duration, Duration) {
        const DRAWS: usize = 20_000;
        let mut xs = self.served_draws(cap, DRAWS);
        xs.sort_unstable();
        // The nearest-rank 99th percentile.
        (self.served_means(cap).0, xs[DRAWS * 99 / 100 - 1])
    }

    /// `n` draws of a fixed stream, each cut at `cap` (CPU and wait together).
    fn served_draws(&self, cap: Duration, n: usize) -> Vec<Duration> {
        let mut rng = Rng::new(&[0x5E41CE]);
        (0..n)
            .map(|_| {
                let (c, w) = self.draw(&mut rng, cap);
                c + w
            })
            .collect()
    }

    /// The mean of its draws cut at `cap` (CPU and wait together), and of their CPU part: in
    /// closed form for one part, by 200,000 draws of a fixed stream for both (the wait is cut at
    /// what the CPU part left).
    pub fn served_means(&self, cap: Duration) -> (Duration, Duration) {
        let c = cap.as_nanos() as f64;
        let ns = |v: f64| Duration::from_nanos(v.max(0.0) as u64);
        let cpu = self.cpu.as_ref().map_or(0.0, |d| d.mean_below(c));
        let total = match (&self.cpu, &self.sleep) {
            (_, None) => ns(cpu),
            (None, Some(w)) => ns(w.mean_below(c)),
            (Some(_), Some(_)) => {
                const DRAWS: usize = 200_000;
                self.served_draws(cap, DRAWS).iter().sum::<Duration>() / DRAWS as u32
            }
        };
        (total, ns(cpu))
    }
}

impl FromStr for Work {
    type Err = BadWork;
    /// `none`, or `cpu:D`, `sleep:D`, or both joined by `+`.
    fn from_str(s: &str) -> Result<Self, BadWork> {
        let bad = |fault| BadWork {
            given: s.to_string(),
            fault,
        };
        let mut w = Work {
            text: s.to_string(),
            ..Work::default()
        };
        if s == "none" {
            return Ok(w);
        }
        for part in split_parts(s) {
            let (kind, spec) = part
                .split_once(':')
                .ok_or_else(|| bad(WorkFault::NoKind { part: part.to_string() }))?;
            let dist = parse_dist(spec).map_err(|e| bad(WorkFault::Dist(e)))?;
            let (kind, slot) = match kind {
                "cpu" => ("cpu", &mut w.cpu),
                "sleep" => ("sleep", &mut w.sleep),
                _ => return Err(bad(WorkFault::UnknownKind { kind: kind.to_string() })),
            };
            if slot.replace(dist).is_some() {
                return Err(bad(WorkFault::Twice { kind }));
            }
        }
        if w.is_none() {
            return Err(bad(WorkFault::Nothing));
        }
        Ok(w)
    }
}

impl fmt::Display for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.text.is_empty() { "none" } else { &self.text })
    }
}
