//! `--value-size`: how long each SET's value is, as a distribution of sizes: `64` (fixed),
//! `32-1024` (uniform between the two), `exp(512)` (exponential with that mean) or
//! `mix(90%:64,10%:4KiB)` (weighted); sizes take the units of `--body-size` (KiB, MiB).

use std::fmt;
use std::str::FromStr;

use crate::rng::Rng;
use crate::units::{parse_size, split_top, BadValue};

/// The largest value `--value-size` may ask for (memcached's default item limit is 1 MiB,
/// redis's 512 MiB).
pub const MAX_VALUE: usize = 64 << 20;

/// A distribution of value sizes.
#[derive(Debug, Clone, PartialEq)]
pub enum Sizes {
    Fixed(usize),
    Uniform(usize, usize),
    Exp(f64),
    /// Cumulative weights (ending at 1.0) and their parts.
    Mix(Vec<f64>, Vec<Sizes>),
}

impl Default for Sizes {
    fn default() -> Sizes {
        Sizes::Fixed(64)
    }
}

impl Sizes {
    /// One size, at least `least` and at most [`MAX_VALUE`].
    pub fn sample(&self, rng: &mut Rng, least: usize) -> usize {
        let n = match self {
            Sizes::Fixed(n) => *n,
            Sizes::Uniform(a, b) => a + (rng.next_u64() % (b - a + 1) as u64) as usize,
            Sizes::Exp(mean) => rng.exp(*mean).round().min(MAX_VALUE as f64) as usize,
            Sizes::Mix(cumulative, parts) => return parts[rng.pick(cumulative)].sample(rng, least),
        };
        n.clamp(least, MAX_VALUE)
    }

    /// Whether it names a size under `n` (an exponential names none: its draws are raised to
    /// the least a value may be).
    pub fn below(&self, n: usize) -> bool {
        match self {
            Sizes::Fixed(a) | Sizes::Uniform(a, _) => *a < n,
            Sizes::Exp(_) => false,
            Sizes::Mix(_, parts) => parts.iter().any(|p| p.below(n)),
        }
    }

    /// The least size it can draw (an exponential's is 0).
    pub fn least(&self) -> usize {
        match self {
            Sizes::Fixed(n) | Sizes::Uniform(n, _) => *n,
            Sizes::Exp(_) => 0,
            Sizes::Mix(_, parts) => parts.iter().map(Sizes::least).min().unwrap_or(0),
        }
    }

    /// The largest size it can draw.
    pub fn most(&self) -> usize {
        match self {
            Sizes::Fixed(n) | Sizes::Uniform(_, n) => *n,
            Sizes::Exp(_) => MAX_VALUE,
            Sizes::Mix(_, parts) => parts.iter().map(Sizes::most).max().unwrap_or(0),
        }
    }
}

impl FromStr for Sizes {
    type Err = BadSizes;
    fn from_str(s: &str) -> Result<Sizes, BadSizes> {
        let bad = |fault| BadSizes {
            given: s.to_string(),
            fault,
        };
        let size = |t: &str| parse_size(t).map_err(|e| bad(SizesFault::Size(e)));
        let t = s.trim();
        let d = if let Some(inner) = t.strip_prefix("exp(").and_then(|r| r.strip_suffix(')')) {
            Sizes::Exp(size(inner)? as f64)
        } else if let Some(inner) = t.strip_prefix("mix(").and_then(|r| r.strip_suffix(')')) {
            let mut weights = Vec::new();
            let mut parts = Vec::new();
            for part in split_top(inner) {
                let (w, d) = part.split_once(':').ok_or_else(|| bad(SizesFault::Form))?;
                let w: f64 = w
                    .trim()
                    .trim_end_matches('%')
                    .parse()
                    .map_err(|_| bad(SizesFault::Form))?;
                if !(w > 0.0 && w.is_finite()) {
                    return Err(bad(SizesFault::WeightNotPositive));
                }
                weights.push(w);
                parts.push(d.parse::<Sizes>()?);
            }
            if parts.is_empty() {
                return Err(bad(SizesFault::Form));
            }
            let total: f64 = weights.iter().sum();
            let mut sum = 0.0;
            let mut cumulative: Vec<f64> = weights
                .iter()
                .map(|w| {
                    sum += w;
                    sum / total
                })
                .collect();
            *cumulative.last_mut().unwrap() = 1.0;
            Sizes::Mix(cumulative, parts)
        } else if let Some((a, b)) = t.split_once('-') {
            let (a, b) = (size(a)?, size(b)?);
            if a > b {
                return Err(bad(SizesFault::Reversed));
            }
            Sizes::Uniform(a, b)
        } else {
            Sizes::Fixed(size(t).map_err(|_| bad(SizesFault::Form))?)
        };
        if d.most() > MAX_VALUE && !matches!(d, Sizes::Exp(_)) {
            return Err(bad(SizesFault::OverMax));
        }
        if matches!(d, Sizes::Exp(m) if m <= 0.0) {
            return Err(bad(SizesFault::MeanNotPositive));
        }
        Ok(d)
    }
}

/// A `--value-size` refused: as given (a part of a mix: the part), and why.
#[derive(Debug)]
pub struct BadSizes {
    pub given: String,
    pub fault: SizesFault,
}

/// Why a `--value-size` is refused.
#[derive(Debug)]
pub enum SizesFault {
    /// A size that does not parse.
    Size(BadValue),
    /// Not one of the forms.
    Form,
    /// A mix's weight not above 0.
    WeightNotPositive,
    /// A range whose first size is the larger.
    Reversed,
    /// A size over [`MAX_VALUE`].
    OverMax,
    /// An exponential's mean of 0.
    MeanNotPositive,
}

impl fmt::Display for BadSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--value-size '{}': ", self.given)?;
        match &self.fault {
            SizesFault::Size(e) => write!(f, "{e}"),
            SizesFault::Form => f.write_str("write 64, 32-1024, exp(512) or mix(90%:64,10%:4KiB)"),
            SizesFault::WeightNotPositive => f.write_str("each weight must be above 0"),
            SizesFault::Reversed => f.write_str("the range's first size is larger than its second"),
            SizesFault::OverMax => write!(f, "a value is at most {} MiB", MAX_VALUE >> 20),
            SizesFault::MeanNotPositive => f.write_str("an exponential's mean must be above 0"),
        }
    }
}

impl std::error::Error for BadSizes {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.fault {
            SizesFault::Size(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for Sizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sizes::Fixed(n) => write!(f, "{n}"),
            Sizes::Uniform(a, b) => write!(f, "{a}-{b}"),
            Sizes::Exp(m) => write!(f, "exp({})", *m as usize),
            Sizes::Mix(cumulative, parts) => {
                f.write_str("mix(")?;
                let mut prev = 0.0;
                for (i, (c, p)) in cumulative.iter().zip(parts).enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{}%:{p}", ((c - prev) * 1e6).round() / 1e4)?;
                    prev = *c;
                }
                f.write_str(")")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_sizes_parse_draw_within_their_bounds_and_print_back() {
        let mut rng = Rng::new(&[3]);
        for (text, lo, hi) in [
            ("64", 64, 64),
            ("32-1024", 32, 1024),
            ("2KiB", 2048, 2048),
            ("mix(90%:64,10%:4KiB)", 64, 4096),
            ("mix(1:40-50,1:exp(100))", 32, MAX_VALUE),
        ] {
            let d: Sizes = text.parse().unwrap_or_else(|e: BadSizes| panic!("{text}: {e}"));
            for _ in 0..2000 {
                let n = d.sample(&mut rng, 32);
                assert!((lo..=hi).contains(&n), "{text}: drew {n}");
            }
            let back: Sizes = d.to_string().parse().unwrap();
            assert_eq!(back, d, "{text} prints as {d}");
        }
        let e: Sizes = "exp(512)".parse().unwrap();
        let mean = (0..50_000).map(|_| e.sample(&mut rng, 0) as f64).sum::<f64>() / 50_000.0;
        assert!((mean - 512.0).abs() < 15.0, "exp(512) draws a mean of {mean}");
        type Is = fn(&SizesFault) -> bool;
        let form: Is = |f| matches!(f, SizesFault::Form);
        let cases: [(&str, Is); 8] = [
            ("", form),
            ("abc", form),
            ("10-5", |f| matches!(f, SizesFault::Reversed)),
            ("exp(0)", |f| matches!(f, SizesFault::MeanNotPositive)),
            ("mix()", form),
            ("mix(0%:64)", |f| matches!(f, SizesFault::WeightNotPositive)),
            ("100MiB", |f| matches!(f, SizesFault::OverMax)),
            ("exp(x)", |f| matches!(f, SizesFault::Size(_))),
        ];
        for (bad, fault) in cases {
            let e = bad.parse::<Sizes>().expect_err(bad);
            assert!(fault(&e.fault), "'{bad}': {e:?}");
            assert!(e.to_string().starts_with(&format!("--value-size '{bad}': ")), "{e}");
        }
    }
}
