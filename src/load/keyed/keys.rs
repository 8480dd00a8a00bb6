//! Which key a command names: `--keys N` keys named `mx:` and twelve digits, drawn `uniform`,
//! `zipf:S` or `sequential`.
//!
//! Uniform and sequential keys are *owned*: key K belongs to the connection slot K mod C (C the
//! run's connections, over every shard and host), and a slot draws only its own, so it is their
//! only writer and knows what each must hold. Zipf keys are shared: every slot draws from the
//! whole keyspace, rank 0 the hottest (key 0), so the hot keys are the same for all (what a
//! store's locks and shards meet); their values can be checked for integrity only.

use std::fmt;
use std::str::FromStr;

use crate::rng::Rng;

/// How keys are drawn (`--key-dist`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum KeyDist {
    /// Each of the slot's own keys equally often.
    #[default]
    Uniform,
    /// Zipf with this exponent over the whole keyspace (shared by every slot).
    Zipf(f64),
    /// The slot's own keys in order, round and round.
    Sequential,
}

impl KeyDist {
    /// Whether each slot draws only keys it owns (and so checks their values exactly).
    pub fn owned(&self) -> bool {
        !matches!(self, KeyDist::Zipf(_))
    }
}

impl FromStr for KeyDist {
    type Err = BadKeyDist;
    fn from_str(s: &str) -> Result<KeyDist, BadKeyDist> {
        let bad = |fault| BadKeyDist {
            given: s.to_string(),
            fault,
        };
        match s {
            "uniform" => Ok(KeyDist::Uniform),
            "sequential" => Ok(KeyDist::Sequential),
            _ => {
                let exp: f64 = s
                    .strip_prefix("zipf:")
                    .and_then(|e| e.parse().ok())
                    .ok_or_else(|| bad(KeyDistFault::Unknown))?;
                if !(exp > 0.0 && exp <= 10.0) {
                    return Err(bad(KeyDistFault::ZipfExponent));
                }
                Ok(KeyDist::Zipf(exp))
            }
        }
    }
}

/// A `--key-dist` refused: as given, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadKeyDist {
    pub given: String,
    pub fault: KeyDistFault,
}

/// Why a `--key-dist` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyDistFault {
    /// Not uniform, sequential or zipf:S.
    Unknown,
    /// A zipf exponent not above 0 and at most 10.
    ZipfExponent,
}

impl fmt::Display for BadKeyDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.given;
        match self.fault {
            KeyDistFault::Unknown => write!(
                f,
                "--key-dist '{s}': write uniform, sequential or zipf:S (e.g. zipf:0.99)"
            ),
            KeyDistFault::ZipfExponent => write!(
                f,
                "--key-dist '{s}': the zipf exponent must be above 0 and at most 10 (0.99 is the YCSB default)"
            ),
        }
    }
}

impl std::error::Error for BadKeyDist {}

impl fmt::Display for KeyDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyDist::Uniform => f.write_str("uniform"),
            KeyDist::Sequential => f.write_str("sequential"),
            KeyDist::Zipf(s) => write!(f, "zipf:{s}"),
        }
    }
}

/// The longest key number `--keys` may reach (twelve digits).
pub const MAX_KEYS: u64 = 1_000_000_000_000;

/// A key's bytes: `mx:` and its number in twelve digits.
pub const KEY_LEN: usize = 15;

/// Key `k`'s name.
pub fn name(k: u64) -> [u8; KEY_LEN] {
    let mut b = *b"mx:000000000000";
    let mut n = k;
    for i in (3..KEY_LEN).rev() {
        b[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    b
}

/// The keys slot `slot` of `total` owns among `keys`: slot, slot + total, ... (how many).
pub fn owned_count(keys: u64, slot: u64, total: u64) -> u64 {
    if slot >= keys {
        0
    } else {
        (keys - 1 - slot) / total + 1
    }
}

/// One slot's key chooser.
#[derive(Debug, Clone)]
pub struct Chooser {
    dist: KeyDist,
    slot: u64,
    total: u64,
    /// Keys it draws from: its own (owned) or the whole keyspace (zipf).
    n: u64,
    zipf: Option<Zipf>,
    cursor: u64,
}

impl Chooser {
    /// Slot `slot` of `total` over `keys` keys.
    pub fn new(dist: KeyDist, keys: u64, slot: u64, total: u64) -> Chooser {
        let n = match dist.owned() {
            true => owned_count(keys, slot, total),
            false => keys,
        };
        Chooser {
            dist,
            slot,
            total,
            n,
            zipf: match dist {
                KeyDist::Zipf(s) => Some(Zipf::new(keys, s)),
                _ => None,
            },
            cursor: 0,
        }
    }

    /// The next key, and its place among the slot's own keys when it owns it.
    pub fn next(&mut self, rng: &mut Rng) -> (u64, Option<usize>) {
        let j = match self.dist {
            KeyDist::Uniform => rng.next_u64() % self.n.max(1),
            KeyDist::Sequential => {
                let j = self.cursor;
                self.cursor = (self.cursor + 1) % self.n.max(1);
                j
            }
            KeyDist::Zipf(_) => {
                let k = self.zipf.as_ref().map_or(0, |z| z.sample(rng));
                return (k, None);
            }
        };
        (self.slot + j * self.total, Some(j as usize))
    }

    /// How many keys it owns (0 with shared keys).
    pub fn owned(&self) -> usize {
        match self.dist.owned() {
            true => self.n as usize,
            false => 0,
        }
    }
}

/// Zipf over ranks 0..n with exponent `s` (P(k) ∝ 1/(k+1)^s), drawn in constant time by
/// rejection-inversion (Hörmann and Derflinger, 1996): a draw inverts the integral of the
/// continuous hat x^-s and is accepted when it falls under the bar of its integer.
#[derive(Debug, Clone)]
pub struct Zipf {
    n: u64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

impl Zipf {
    pub fn new(n: u64, s: f64) -> Zipf {
        let n = n.max(1);
        let mut z = Zipf {
            n,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            cut: 0.0,
        };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(n as f64 + 0.5);
        z.cut = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    /// The hat: x^-s.
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// Its integral, (x^(1-s) - 1) / (1-s) (ln x at s = 1), written to stay exact near s = 1.
    fn big_h(&self, x: f64) -> f64 {
        let l = x.ln();
        expm1_over((1.0 - self.s) * l) * l
    }

    fn big_h_inv(&self, y: f64) -> f64 {
        let t = (y * (1.0 - self.s)).max(-1.0);
        (log1p_over(t) * y).exp()
    }

    /// A rank in 0..n.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.uniform() * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n as f64);
            if k - x <= self.cut || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }
}

/// (e^x - 1) / x, 1 at 0.
fn expm1_over(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x / 2.0 * (1.0 + x / 3.0 * (1.0 + x / 4.0))
    }
}

/// ln(1 + x) / x, 1 at 0.
fn log1p_over(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - x / 4.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_draws_follow_the_exact_probabilities_of_their_ranks() {
        for (n, s) in [(50u64, 0.99), (1000, 1.0), (20, 2.0), (5, 0.5)] {
            let z = Zipf::new(n, s);
            let norm: f64 = (1..=n).map(|k| (k as f64).powf(-s)).sum();
            let mut rng = Rng::new(&[7, n]);
            let draws = 400_000;
            let mut count = vec![0u64; n as usize];
            for _ in 0..draws {
                count[z.sample(&mut rng) as usize] += 1;
            }
            for k in [0usize, 1, 2, (n / 2) as usize, n as usize - 1] {
                let p = ((k + 1) as f64).powf(-s) / norm;
                let expect = p * draws as f64;
                // Five standard deviations of a binomial count.
                let sd = (draws as f64 * p * (1.0 - p)).sqrt();
                assert!(
                    (count[k] as f64 - expect).abs() < 5.0 * sd + 2.0,
                    "n {n} s {s} rank {k}: {} drawn, {expect:.0} expected",
                    count[k]
                );
            }
        }
    }

    #[test]
    fn owned_keys_partition_the_keyspace_among_the_slots() {
        let (keys, total) = (103u64, 10u64);
        let mut seen = vec![0u32; keys as usize];
        for slot in 0..total {
            let mut c = Chooser::new(KeyDist::Sequential, keys, slot, total);
            assert_eq!(c.owned() as u64, owned_count(keys, slot, total));
            let mut rng = Rng::new(&[1]);
            for j in 0..c.owned() {
                let (k, at) = c.next(&mut rng);
                assert_eq!(
                    (k % total, at),
                    (slot, Some(j)),
                    "slot {slot} draws only its own, in order"
                );
                seen[k as usize] += 1;
            }
        }
        assert!(seen.iter().all(|&s| s == 1), "every key has exactly one owner");
        let mut u = Chooser::new(KeyDist::Uniform, keys, 3, total);
        let mut rng = Rng::new(&[2]);
        assert!((0..1000).all(|_| u.next(&mut rng).0 % total == 3));
        let mut z = Chooser::new(KeyDist::Zipf(0.99), keys, 3, total);
        let (k, at) = z.next(&mut rng);
        assert!(k < keys && at.is_none(), "zipf keys are shared: no slot owns them");
    }

    #[test]
    fn key_names_are_fixed_width_and_read_back() {
        assert_eq!(&name(42), b"mx:000000000042");
        assert_eq!(&name(999_999_999_999), b"mx:999999999999");
        for (bad, fault) in [
            ("zipf", KeyDistFault::Unknown),
            ("zipf:0", KeyDistFault::ZipfExponent),
            ("zipf:x", KeyDistFault::Unknown),
            ("normal", KeyDistFault::Unknown),
            ("zipf:-1", KeyDistFault::ZipfExponent),
        ] {
            let e = bad.parse::<KeyDist>().unwrap_err();
            assert_eq!(e.fault, fault, "{bad}");
            assert!(e.to_string().starts_with(&format!("--key-dist '{bad}': ")), "{e}");
        }
        assert_eq!("zipf:0.99".parse::<KeyDist>().unwrap().to_string(), "zipf:0.99");
    }
}
