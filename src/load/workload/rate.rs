//! `--rate`: an open loop's requests per second, fixed (`5000`), a linear ramp (`100:2000/10s`:
//! from 100 to 2,000 over 10 s) or steps (`500,1000,2000/5s`: each for 5 s). A ramp starts with
//! the measured window (the warm-up runs at its first rate) and holds its last rate after it
//! ends; without `-d` the window is the ramp's length. Latency stays corrected per request, so
//! each step's is that of its own requests (`--timeseries` shows them interval by interval).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::units::{exact_duration, parse_duration, BadValue};

/// The most steps a ramp may have.
const STEPS: usize = 16;

/// An open loop's rate over time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// The rates: one (fixed), two (a linear ramp's ends) or the steps.
    values: [f64; STEPS],
    n: usize,
    /// Steps' length, or the linear ramp's; zero for a fixed rate.
    each: Duration,
    linear: bool,
}

impl Rate {
    /// A fixed rate.
    pub fn fixed(r: f64) -> Rate {
        let mut values = [0.0; STEPS];
        values[0] = r;
        Rate {
            values,
            n: 1,
            each: Duration::ZERO,
            linear: false,
        }
    }

    /// Whether it changes over time.
    pub fn is_ramp(&self) -> bool {
        self.n > 1
    }

    /// The rate `t` into the window (the first before it, the last after the ramp).
    pub fn at(&self, t: Duration) -> f64 {
        let v = &self.values[..self.n];
        if self.n == 1 || self.each.is_zero() {
            return v[0];
        }
        let x = t.as_secs_f64() / self.each.as_secs_f64();
        match self.linear {
            true => v[0] + (v[1] - v[0]) * x.min(1.0),
            false => v[(x as usize).min(self.n - 1)],
        }
    }

    /// How long the ramp lasts (zero for a fixed rate).
    pub fn length(&self) -> Duration {
        match (self.n, self.linear) {
            (1, _) => Duration::ZERO,
            (_, true) => self.each,
            (n, false) => self.each * n as u32,
        }
    }

    /// The highest rate it reaches (the rate, fixed).
    pub fn peak(&self) -> f64 {
        self.values[..self.n].iter().copied().fold(0.0, f64::max)
    }

    /// The mean rate over the ramp (the rate, fixed): what the run offers on average.
    pub fn per_s(&self) -> f64 {
        let v = &self.values[..self.n];
        match (self.n, self.linear) {
            (1, _) => v[0],
            (_, true) => (v[0] + v[1]) / 2.0,
            (n, false) => v.iter().sum::<f64>() / n as f64,
        }
    }

    /// The mean rate over the first `d` of the window (the ramp's last rate held after it).
    pub fn mean_over(&self, d: Duration) -> f64 {
        if !self.is_ramp() || d.is_zero() {
            return self.per_s();
        }
        self.requests_in(Duration::ZERO, d) / d.as_secs_f64()
    }

    /// The requests the rate calls for from `a` to `b` into the window (its integral).
    fn requests_in(&self, a: Duration, b: Duration) -> f64 {
        self.cumulative(b) - self.cumulative(a)
    }

    /// The requests called for from the window's start to `t`.
    fn cumulative(&self, t: Duration) -> f64 {
        let (t, e) = (t.as_secs_f64(), self.each.as_secs_f64());
        let v = &self.values[..self.n];
        if self.n == 1 || e == 0.0 {
            return v[0] * t;
        }
        match self.linear {
            true => {
                let x = t.min(e);
                let ramp = v[0] * x + (v[1] - v[0]) * x * x / (2.0 * e);
                ramp + v[1] * (t - x).max(0.0)
            }
            false => {
                let full = ((t / e) as usize).min(self.n - 1);
                let before: f64 = v[..full].iter().sum::<f64>() * e;
                before + v[full] * (t - full as f64 * e)
            }
        }
    }

    /// How long after `t` into the window the rate has called for `amount` more requests:
    /// the next send's gap (`amount` the batch, or an exponential draw of it), so a send is
    /// due by the rates it crosses, not by the one at the last send.
    pub fn gap_after(&self, t: Duration, amount: f64) -> Duration {
        let target = self.cumulative(t) + amount;
        // The cumulative count only grows: bisect on it.
        let (mut lo, mut hi) = (t.as_secs_f64(), t.as_secs_f64() + amount / self.at(t).max(1e-9));
        let mut tries = 0;
        while self.cumulative(Duration::from_secs_f64(hi)) < target && tries < 64 {
            hi = lo + (hi - lo) * 2.0;
            tries += 1;
        }
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            match self.cumulative(Duration::from_secs_f64(mid)) < target {
                true => lo = mid,
                false => hi = mid,
            }
        }
        Duration::from_secs_f64(hi - t.as_secs_f64())
    }

    /// This rate scaled by `k` (a thread's or a shard's share).
    pub fn scaled(&self, k: f64) -> Rate {
        let mut r = *self;
        for v in &mut r.values[..r.n] {
            *v *= k;
        }
        r
    }
}

impl From<f64> for Rate {
    fn from(r: f64) -> Rate {
        Rate::fixed(r)
    }
}

/// A `--rate` refused: the text given, the part of it at fault (empty: the whole), and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRate {
    pub given: String,
    pub part: String,
    pub why: RateFault,
}

/// Why a `--rate` is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RateFault {
    /// One rate that is not a number.
    NotANumber,
    /// A ramp's or a step's rate that is not a positive number.
    NotPositive,
    /// A ramp's time that is not a duration (why not).
    BadTime(BadValue),
    /// A ramp's time of zero.
    ZeroTime,
    /// More steps than [`STEPS`].
    TooManySteps,
    /// A ramp of one rate.
    OneRate,
}

impl fmt::Display for BadRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (s, x) = (&self.given, &self.part);
        match &self.why {
            RateFault::NotANumber => write!(f, "'{s}' is not a number of requests per second, A:B/T or A,B,C/T"),
            RateFault::NotPositive => write!(f, "'{x}' in --rate {s} is not a positive number of requests per second"),
            RateFault::BadTime(why) => write!(f, "--rate {s}: {why}"),
            RateFault::ZeroTime => write!(f, "--rate {s}: a ramp's time must be more than zero"),
            RateFault::TooManySteps => write!(f, "--rate {s}: at most {STEPS} steps"),
            RateFault::OneRate => write!(
                f,
                "--rate {s}: a ramp has two rates (A:B/T) or steps (A,B/T); one rate is --rate A"
            ),
        }
    }
}

impl std::error::Error for BadRate {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.why {
            RateFault::BadTime(e) => Some(e),
            _ => None,
        }
    }
}

impl FromStr for Rate {
    type Err = BadRate;
    fn from_str(s: &str) -> Result<Rate, BadRate> {
        parse(s)
    }
}

/// `--rate`'s text read, or why it is refused.
fn parse(s: &str) -> Result<Rate, BadRate> {
    let s = s.trim();
    let bad = |part: &str, why| BadRate {
        given: s.to_string(),
        part: part.to_string(),
        why,
    };
    let number = |x: &str| match x.trim().parse::<f64>() {
        Ok(r) if r > 0.0 && r.is_finite() => Ok(r),
        _ => Err(bad(x, RateFault::NotPositive)),
    };
    let Some((rates, over)) = s.split_once('/') else {
        // One number: whether it is positive is the run's check (`rate` named).
        return s
            .parse::<f64>()
            .map(Rate::fixed)
            .map_err(|_| bad("", RateFault::NotANumber));
    };
    let each = parse_duration(over.trim()).map_err(|e| bad(over, RateFault::BadTime(e)))?;
    if each.is_zero() {
        return Err(bad(over, RateFault::ZeroTime));
    }
    let (values, linear): (Vec<f64>, bool) = match rates.split_once(':') {
        Some((a, b)) => (vec![number(a)?, number(b)?], true),
        None => (rates.split(',').map(number).collect::<Result<_, _>>()?, false),
    };
    if values.len() > STEPS {
        return Err(bad(rates, RateFault::TooManySteps));
    }
    if values.len() < 2 {
        return Err(bad(rates, RateFault::OneRate));
    }
    let mut r = Rate {
        values: [0.0; STEPS],
        n: values.len(),
        each,
        linear,
    };
    r.values[..values.len()].copy_from_slice(&values);
    Ok(r)
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v: Vec<String> = self.values[..self.n].iter().map(|r| r.to_string()).collect();
        match (self.n, self.linear) {
            (1, _) => write!(f, "{}", v[0]),
            (_, true) => write!(f, "{}:{}/{}", v[0], v[1], exact_duration(self.each)),
            (_, false) => write!(f, "{}/{}", v.join(","), exact_duration(self.each)),
        }
    }
}

/// A scenario's `rate`: a number, or a ramp's text.
impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.is_ramp() {
            false => s.serialize_f64(self.values[0]),
            true => s.serialize_str(&self.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Rate, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Number(f64),
            Text(String),
        }
        match Either::deserialize(d)? {
            Either::Number(r) => Ok(Rate::fixed(r)),
            Either::Text(t) => t.parse::<Rate>().map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramps_and_steps_give_their_rate_at_each_instant() {
        let lin: Rate = "100:300/10s".parse().unwrap();
        assert!(lin.is_ramp() && lin.length() == Duration::from_secs(10));
        assert_eq!(lin.at(Duration::ZERO), 100.0);
        assert_eq!(lin.at(Duration::from_secs(5)), 200.0);
        assert_eq!(lin.at(Duration::from_secs(60)), 300.0, "held after the ramp");
        assert_eq!(lin.per_s(), 200.0);
        let steps: Rate = "500,1000,2000/2s".parse().unwrap();
        assert_eq!(steps.length(), Duration::from_secs(6));
        assert_eq!(
            [0, 1999, 2000, 4500, 9000].map(|ms| steps.at(Duration::from_millis(ms))),
            [500.0, 500.0, 1000.0, 2000.0, 2000.0]
        );
        assert_eq!(steps.scaled(0.5).at(Duration::from_secs(3)), 500.0);
        // Written back exactly (what shards, hosts and scenarios are given).
        for (t, back) in [
            ("100:300/10s", "100:300/10000ms"),
            ("500,1000,2000/2s", "500,1000,2000/2000ms"),
            ("1:2/1234567us", "1:2/1234567us"),
            ("5000", "5000"),
        ] {
            let r: Rate = t.parse().unwrap();
            assert_eq!(r.to_string(), back);
            assert_eq!(back.parse::<Rate>().unwrap(), r);
        }
        // The next send comes when the rates crossed have called for it: from 1 req/s the first
        // gap of a ramp to 1,000 over 10 s is not the 1 s the first rate alone would give.
        let low: Rate = "1:1000/10s".parse().unwrap();
        let gap = low.gap_after(Duration::ZERO, 1.0).as_secs_f64();
        assert!(
            gap < 0.2 && (low.cumulative(Duration::from_secs_f64(gap)) - 1.0).abs() < 1e-6,
            "{gap}"
        );
        let across = steps.gap_after(Duration::from_millis(1999), 1.0).as_secs_f64();
        assert!(
            (across - 0.0015).abs() < 1e-6,
            "the rest of a 500 step, then at 1,000: {across}"
        );
        assert!((lin.mean_over(Duration::from_secs(5)) - 150.0).abs() < 1e-9);
        assert_eq!(steps.mean_over(Duration::from_secs(2)), 500.0);
        let fixed: Rate = "2500".parse().unwrap();
        assert!(!fixed.is_ramp() && fixed.per_s() == 2500.0 && fixed.at(Duration::from_secs(9)) == 2500.0);
        for (bad, why, says) in [
            ("fast", RateFault::NotANumber, "is not a number"),
            ("500/5s", RateFault::OneRate, "a ramp has two rates"),
            ("0:5/1s", RateFault::NotPositive, "positive"),
            ("1:2/0s", RateFault::ZeroTime, "more than zero"),
            ("1,x/1s", RateFault::NotPositive, "'x'"),
            (
                "1:2/soon",
                RateFault::BadTime(parse_duration("soon").unwrap_err()),
                "--rate 1:2/soon: ",
            ),
            (
                "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17/1s",
                RateFault::TooManySteps,
                "steps",
            ),
        ] {
            let e = bad.parse::<Rate>().unwrap_err();
            assert_eq!(e.why, why, "{bad}: {e}");
            assert!(e.to_string().contains(says), "{bad}: {e}");
        }
        // A ramp's time that is not a duration says why, as the duration's own reader does.
        let why = parse_duration("soon").unwrap_err();
        assert_eq!(
            "1:2/soon".parse::<Rate>().unwrap_err().to_string(),
            format!("--rate 1:2/soon: {why}")
        );
    }
}
