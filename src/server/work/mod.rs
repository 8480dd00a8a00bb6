//! `--work`: what a request costs the thread that handles it, as a service-time distribution.
//!
//! `cpu:D` spins D of the thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`: a thread preempted
//! while spinning is not credited with time another thread used); `sleep:D` blocks the thread
//! for D (a backend call); `cpu:D1+sleep:D2` computes, then blocks. D is a fixed time (`200us`),
//! `exp(MEAN)`, `lognormal(MEAN,SIGMA)`, `pareto(MEAN,ALPHA)`, a weighted `mix(99.5%:50us,0.5%:5ms)`,
//! the presets of Shenango's load generator `bimodal1(MEAN)` (90 %: 0.5 MEAN, 10 %: 5.5 MEAN) and
//! `bimodal2(MEAN)` (99.9 %: 0.5 MEAN, 0.1 %: 500.5 MEAN), or `hist:FILE`, a user's measured
//! service times as an HdrHistogram (a `.hgrm` percentile listing in milliseconds, as wrk2 and
//! `muxlab load --hgrm` write it, or a V2 histogram log in nanoseconds, as muxlab records), drawn
//! from by its quantiles. Draws come from a generator seeded by (`--seed`, the worker, the
//! process, the thread), so forked workers and threads do not repeat each other. A request's
//! draw is cut at [`CEILING`] (at `--max-work` for work a request names).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::rng::Rng;
use crate::units::BadValue;

mod parse;

pub use parse::parse_dist;
use parse::split_parts;

/// The most one request of `--work` may cost, CPU and wait together: a draw from a heavy tail
/// is cut here rather than hold a worker for minutes. (Work a request names for itself is cut
/// at `--max-work`.)
pub const CEILING: Duration = Duration::from_secs(10);

/// A service-time distribution.
#[derive(Debug, Clone, PartialEq)]
pub enum Dist {
    Fixed(Duration),
    /// Exponential, with its mean in ns.
    Exp(f64),
    /// Log-normal: the normal's mean and deviation (ns, natural logarithm).
    LogNormal {
        mu: f64,
        sigma: f64,
    },
    /// Pareto: its least value (ns) and shape.
    Pareto {
        scale: f64,
        shape: f64,
    },
    /// A weighted mix: cumulative weights (ending at 1.0) and their distributions.
    Mix(Vec<f64>, Vec<Dist>),
    /// Measured: (quantile, ns) pairs, increasing in both.
    Table(Arc<Vec<(f64, f64)>>),
}

/// What a request costs: CPU, then a blocking wait; either may be absent.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Work {
    pub cpu: Option<Dist>,
    pub sleep: Option<Dist>,
    /// The spec as written.
    text: String,
}

impl Dist {
    /// One service time.
    pub fn sample(&self, rng: &mut Rng) -> Duration {
        let ns = match self {
            Dist::Fixed(d) => return *d,
            Dist::Exp(mean) => rng.exp(*mean),
            Dist::LogNormal { mu, sigma } => (mu + sigma * rng.normal()).exp(),
            Dist::Pareto { scale, shape } => rng.pareto(*scale, *shape),
            Dist::Mix(cumulative, parts) => return parts[rng.pick(cumulative)].sample(rng),
            Dist::Table(t) => quantile(t, rng.uniform()),
        };
        Duration::from_nanos(ns.clamp(0.0, 3.6e12) as u64)
    }

    /// Its mean.
    pub fn mean(&self) -> Duration {
        let ns = match self {
            Dist::Fixed(d) => return *d,
            Dist::Exp(mean) => *mean,
            Dist::LogNormal { mu, sigma } => (mu + sigma * sigma / 2.0).exp(),
            Dist::Pareto { scale, shape } => scale * shape / (shape - 1.0),
            Dist::Mix(cumulative, parts) => {
                let mut prev = 0.0;
                let mut sum = 0.0;
                for (c, d) in cumulative.iter().zip(parts) {
                    sum += (c - prev) * d.mean().as_nanos() as f64;
                    prev = *c;
                }
                sum
            }
            Dist::Table(t) => {
                // The mean of the piecewise-linear quantile function.
                let mut prev = (0.0, t.first().map_or(0.0, |p| p.1));
                let mut sum = 0.0;
                for &(q, v) in t.iter() {
                    sum += (q - prev.0) * (v + prev.1) / 2.0;
                    prev = (q, v);
                }
                sum
            }
        };
        Duration::from_nanos(ns.max(0.0) as u64)
    }
}

impl Dist {
    /// The mean of its draws cut at `cap` (ns): E[min(X, cap)], in closed form where there is
    /// one, else by a fine sum over the quantiles (a measured table).
    pub fn mean_below(&self, cap: f64) -> f64 {
        match self {
            Dist::Fixed(d) => (d.as_nanos() as f64).min(cap),
            Dist::Exp(m) => m * (1.0 - (-cap / m).exp()),
            Dist::LogNormal { mu, sigma } => {
                let l = cap.ln();
                (mu + sigma * sigma / 2.0).exp() * phi((l - mu - sigma * sigma) / sigma)
                    + cap * (1.0 - phi((l - mu) / sigma))
            }
            Dist::Pareto { scale, shape } if cap <= *scale => cap,
            Dist::Pareto { scale, shape } => {
                scale + scale.powf(*shape) * (cap.powf(1.0 - shape) - scale.powf(1.0 - shape)) / (1.0 - shape)
            }
            Dist::Mix(cumulative, parts) => {
                let mut prev = 0.0;
                let mut sum = 0.0;
                for (c, d) in cumulative.iter().zip(parts) {
                    sum += (c - prev) * d.mean_below(cap);
                    prev = *c;
                }
                sum
            }
            Dist::Table(t) => {
                const STEPS: usize = 20_000;
                (0..STEPS)
                    .map(|i| quantile(t, (i as f64 + 0.5) / STEPS as f64).min(cap))
                    .sum::<f64>()
                    / STEPS as f64
            }
        }
    }
}

/// The standard normal's distribution function (erf by Abramowitz and Stegun 7.1.26, within
/// 1.5e-7).
fn phi(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// The value at quantile `u` of a table, interpolated linearly.
fn quantile(t: &[(f64, f64)], u: f64) -> f64 {
    let i = t.partition_point(|&(q, _)| q < u);
    match (i.checked_sub(1).map(|j| t[j]), t.get(i)) {
        (_, None) => t.last().map_or(0.0, |p| p.1),
        (None, Some(p)) => p.1,
        (Some(a), Some(b)) if b.0 > a.0 => a.1 + (b.1 - a.1) * (u - a.0) / (b.0 - a.0),
        (Some(_), Some(b)) => b.1,
    }
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

/// Does a drawn request's work on the calling thread: spins `cpu`, then sleeps `wait`; returns
/// what was drawn. (A green thread's is `green::perform`'s.)
pub(crate) fn perform(cpu: Duration, wait: Duration) -> Duration {
    spin(cpu);
    if !wait.is_zero() {
        std::thread::sleep(wait);
    }
    cpu + wait
}

/// Uses `d` of this thread's CPU time (a thread preempted meanwhile is not credited with time
/// another thread used).
pub(crate) fn spin(d: Duration) {
    if d.is_zero() {
        return;
    }
    let until = crate::sys::process::thread_cpu_time() + d;
    while crate::sys::process::thread_cpu_time() < until {
        std::hint::spin_loop();
    }
}

impl FromStr for Work {
    type Err = BadValue;
    /// `none`, or `cpu:D`, `sleep:D`, or both joined by `+`.
    fn from_str(s: &str) -> Result<Self, BadValue> {
        let bad = |why: String| BadValue(format!("--work '{s}': {why}"));
        let mut w = Work {
            text: s.to_string(),
            ..Work::default()
        };
        if s == "none" {
            return Ok(w);
        }
        for part in split_parts(s) {
            let (kind, spec) = part.split_once(':').ok_or_else(|| {
                bad(format!(
                    "'{part}' is not cpu:D or sleep:D (or none): write e.g. cpu:200us"
                ))
            })?;
            let dist = parse_dist(spec).map_err(|e| bad(e.0))?;
            let slot = match kind {
                "cpu" => &mut w.cpu,
                "sleep" => &mut w.sleep,
                _ => {
                    return Err(bad(format!(
                        "'{kind}' is not cpu or sleep: write cpu:200us, sleep:exp(1ms) or cpu:50us+sleep:1ms"
                    )))
                }
            };
            if slot.replace(dist).is_some() {
                return Err(bad(format!("{kind} is given twice")));
            }
        }
        if w.is_none() {
            return Err(bad("write cpu:200us, sleep:1ms, cpu:exp(50us)+sleep:1ms or none".into()));
        }
        Ok(w)
    }
}

impl fmt::Display for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.text.is_empty() { "none" } else { &self.text })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean_of(d: &Dist, n: usize) -> f64 {
        let mut rng = Rng::new(&[3]);
        (0..n).map(|_| d.sample(&mut rng).as_nanos() as f64).sum::<f64>() / n as f64
    }

    /// E[min(X, cap)] in closed form agrees with the mean of cut draws, for every form, with
    /// the cap inside the distribution (where it cuts) and far outside (where it does not).
    #[test]
    fn the_mean_below_a_cap_is_the_mean_of_cut_draws() {
        for spec in [
            "cpu:200us",
            "cpu:exp(1ms)",
            "cpu:lognormal(1ms,1.5)",
            "cpu:pareto(1ms,1.2)",
            "cpu:mix(99.5%:50us,0.5%:5ms)",
            "cpu:bimodal2(100us)",
        ] {
            let d = spec.parse::<Work>().unwrap().cpu.unwrap();
            for cap_ms in [0.15, 2.0, 1000.0] {
                let cap = cap_ms * 1e6;
                let mut rng = Rng::new(&[5]);
                let n = 400_000;
                let drawn = (0..n)
                    .map(|_| (d.sample(&mut rng).as_nanos() as f64).min(cap))
                    .sum::<f64>()
                    / n as f64;
                let exact = d.mean_below(cap);
                let heavy = spec.contains("pareto") || spec.contains("bimodal2");
                let tolerance = if cap_ms > 1.0 && heavy { 0.10 } else { 0.02 };
                assert!(
                    (exact / drawn - 1.0).abs() < tolerance,
                    "{spec} cut at {cap_ms} ms: {exact} against {drawn}"
                );
            }
        }
        // Both parts: the wait is cut at what the CPU part left.
        let w: Work = "cpu:exp(1ms)+sleep:exp(1ms)".parse().unwrap();
        let (total, cpu) = w.served_means(Duration::from_millis(2));
        assert!(total <= Duration::from_millis(2) && cpu < total, "{total:?} {cpu:?}");
        let uncut = w.served_means(Duration::from_secs(10)).0.as_secs_f64();
        assert!((uncut - 0.002).abs() < 0.002 * 0.01, "{uncut}");
    }

    #[test]
    fn every_form_parses_and_draws_near_its_mean() {
        for (spec, mean_us) in [
            ("cpu:200us", 200.0),
            ("sleep:exp(1ms)", 1000.0),
            ("cpu:lognormal(100us,1.0)", 100.0),
            ("cpu:pareto(100us,2.5)", 100.0),
            ("cpu:mix(99.5%:50us,0.5%:5ms)", 0.995 * 50.0 + 0.005 * 5000.0),
            ("cpu:bimodal1(100us)", 100.0),
            ("cpu:bimodal2(10us)", 10.0),
            ("cpu:mix(50%:exp(10us),50%:30us)", 20.0),
        ] {
            let w: Work = spec.parse().unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(w.to_string(), spec);
            let d = w.cpu.as_ref().or(w.sleep.as_ref()).unwrap();
            assert!(
                (d.mean().as_nanos() as f64 / 1e3 - mean_us).abs() < mean_us * 0.01,
                "{spec}: {:?}",
                d.mean()
            );
            let drawn = mean_of(d, 400_000) / 1e3;
            // Heavy tails converge slowly: pareto and bimodal2 within 10 %, the rest 3 %.
            let tolerance = if spec.contains("pareto") || spec.contains("bimodal2") {
                0.10
            } else {
                0.03
            };
            assert!(
                (drawn - mean_us).abs() < mean_us * tolerance,
                "{spec}: drew {drawn} µs on average"
            );
        }
        let both: Work = "cpu:20us+sleep:1ms".parse().unwrap();
        assert_eq!(both.mean(), Duration::from_micros(1020));
        assert_eq!(both.cpu_mean(), Duration::from_micros(20));
        assert!("none".parse::<Work>().unwrap().is_none());
    }

    #[test]
    fn cpu_work_spins_what_it_says_on_the_threads_own_clock_never_less() {
        use crate::sys::process::thread_cpu_time;
        let mut rng = Rng::new(&[1]);
        for (spec, d, n) in [
            ("cpu:100us", Duration::from_micros(100), 500u32),
            ("cpu:1ms", Duration::from_millis(1), 50),
        ] {
            let w: Work = spec.parse().unwrap();
            let t0 = thread_cpu_time();
            for _ in 0..n {
                w.run(&mut rng, Duration::from_secs(1));
            }
            let spent = (thread_cpu_time() - t0).as_secs_f64();
            let asked = (d * n).as_secs_f64();
            // Never under what was asked; over it only by a clock read's overshoot per spin
            // (a loaded machine's were seen above 2 %: the bound catches a spin that counts
            // twice or on the wrong clock, not the machine's load).
            assert!(
                spent >= asked && spent <= asked * 1.25,
                "{n} x {d:?}: {spent} s of CPU for {asked} s asked"
            );
        }
        // A draw is cut at the cap.
        let w: Work = "cpu:5ms".parse().unwrap();
        let t0 = thread_cpu_time();
        assert_eq!(w.run(&mut rng, Duration::from_micros(200)), Duration::from_micros(200));
        assert!(thread_cpu_time() - t0 < Duration::from_millis(2));
    }

    #[test]
    fn a_bad_spec_is_one_line_naming_the_part() {
        // Thirds to a hundredth of a per cent are a whole.
        assert!("cpu:mix(33.33%:1ms,33.33%:2ms,33.33%:3ms)".parse::<Work>().is_ok());
        for (spec, says) in [
            ("gpu:1s", "'gpu' is not cpu or sleep"),
            ("cpu", "is not cpu:D or sleep:D"),
            ("cpu:exp(1x)", "'1x' has an unknown unit"),
            ("cpu:pareto(1ms,1)", "alpha must be more than 1"),
            ("cpu:mix(50%:1ms,40%:2ms)", "sum to 90%"),
            ("cpu:mix(50%1ms,50%:2ms)", "is not P%:D"),
            ("cpu:lognormal(1ms)", "lognormal takes 2 arguments"),
            ("cpu:weird(1ms)", "is not a distribution"),
            ("cpu:1ms+cpu:2ms", "cpu is given twice"),
            ("cpu:hist:/no/such/file", "hist:/no/such/file"),
            ("cpu:exp(0s)", "more than zero"),
            ("cpu:mix(50%%:1ms,50%:2ms)", "a mix weight"),
            ("cpu:mix(33.3%:1ms,33.3%:2ms,33.3%:3ms)", "sum to 99.9"),
        ] {
            let e = spec.parse::<Work>().unwrap_err().0;
            assert!(
                e.contains(says) && e.starts_with(&format!("--work '{spec}'")),
                "{spec}: {e}"
            );
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }

    #[test]
    fn a_measured_histogram_is_drawn_from_by_its_quantiles() {
        let dir = std::env::temp_dir().join(format!("muxlab-hist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // A .hgrm listing (ms): half the values 1 ms, half 3 ms.
        let hgrm = dir.join("s.hgrm");
        std::fs::write(
            &hgrm,
            "       Value     Percentile TotalCount 1/(1-Percentile)\n\n\
                  1.000 0.000000000000          5           1.00\n\
                  1.000 0.500000000000          5           2.00\n\
                  3.000 0.500000000001          5           2.00\n\
                  3.000 1.000000000000         10\n",
        )
        .unwrap();
        let w: Work = format!("cpu:hist:{}", hgrm.display()).parse().unwrap();
        let d = w.cpu.unwrap();
        let m = mean_of(&d, 200_000) / 1e6;
        assert!((m - 2.0).abs() < 0.05, "{m} ms");
        // A V2 log of the same in ns, as muxlab's histograms encode.
        let mut h = crate::hist::Hist::default();
        for _ in 0..50 {
            h.record_ns(1_000_000);
            h.record_ns(3_000_000);
        }
        let log = dir.join("s.hlog");
        std::fs::write(
            &log,
            format!("#[StartTime: 0]\n0.000,1.000,3.000,{}\n", h.to_v2_base64()),
        )
        .unwrap();
        let w: Work = format!("sleep:hist:{}", log.display()).parse().unwrap();
        let m = mean_of(&w.sleep.unwrap(), 200_000) / 1e6;
        assert!((m - 2.0).abs() < 0.1, "{m} ms");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
