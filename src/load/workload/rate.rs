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

impl FromStr for Rate {
    type Err = BadValue;
    fn from_str(s: &str) -> Result<Rate, BadValue> {
        parse(s).map_err(BadValue)
    }
}

/// `--rate`'s text read, or what is wrong with it.
fn parse(s: &str) -> Result<Rate, String> {
    {
        let s = s.trim();
        let number = |x: &str| -> Result<f64, String> {
            match x.trim().parse::<f64>() {
                Ok(r) if r > 0.0 && r.is_finite() => Ok(r),
                _ => Err(format!(
                    "'{x}' in --rate {s} is not a positive number of requests per second"
                )),
            }
        };
        let Some((rates, over)) = s.split_once('/') else {
            // One number: whether it is positive is the run's check (`rate` named).
            return s
                .parse::<f64>()
                .map(Rate::fixed)
                .map_err(|_| format!("'{s}' is not a number of requests per second, A:B/T or A,B,C/T"));
        };
        let each = parse_duration(over.trim()).map_err(|e| format!("--rate {s}: {}", e.0))?;
        if each.is_zero() {
            return Err(format!("--rate {s}: a ramp's time must be more than zero"));
        }
        let (values, linear): (Vec<f64>, bool) = match rates.split_once(':') {
            Some((a, b)) => (vec![number(a)?, number(b)?], true),
            None => (rates.split(',').map(number).collect::<Result<_, _>>()?, false),
        };
        if values.len() > STEPS {
            return Err(format!("--rate {s}: at most {STEPS} steps"));
        }
        if values.len() < 2 {
            return Err(format!(
                "--rate {s}: a ramp has two rates (A:B/T) or steps (A,B/T); one rate is --rate A"
            ));
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
            Either::Text(t) => t.parse::<Rate>().map_err(|e| serde::de::Error::custom(e.0)),
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
        for (bad, says) in [
            ("fast", "is not a number"),
            ("500/5s", "a ramp has two rates"),
            ("0:5/1s", "positive"),
            ("1:2/0s", "more than zero"),
            ("1,x/1s", "'x'"),
            ("1:2/soon", "--rate 1:2/soon"),
        ] {
            let e = bad.parse::<Rate>().unwrap_err().0;
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
