//! `--active P%`: the share of the connections that send; the rest hold (connect and stay
//! open, sending nothing), as most of a million connections to a push or chat server do. The
//! run's rate (or its closed loop) is spread over the active ones. Which slots send is a rule
//! of the slot's global number, so shards, child processes and engine threads agree without
//! talking: slot `g` sends when `⌊(g + 1)·p⌋ > ⌊g·p⌋`, which spreads the senders evenly and
//! makes `⌊c·p⌋` of `c` connections send. `p` is kept in parts per million, and the floors are
//! taken in integers (in floating point, 29% of 100 gave 28).

use std::fmt;
use std::str::FromStr;

/// The share of connections that send, in [0, 1]: `0%` holds them all (a run that measures
/// holding alone: nothing is sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Active {
    /// In parts per million (`10_000` for `1%`): percent to four decimals.
    ppm: u64,
}

/// A million: the whole, in parts per million.
const WHOLE: u64 = 1_000_000;

impl Active {
    /// `⌊g·p⌋`: the senders among slots `0 .. g`.
    fn below(&self, g: u64) -> u64 {
        (g as u128 * self.ppm as u128 / WHOLE as u128) as u64
    }

    /// Whether connection slot `g` (its number over the whole run) sends.
    pub fn sends(&self, g: u64) -> bool {
        self.below(g + 1) > self.below(g)
    }

    /// No connection sends: every one holds.
    pub fn holds_all(&self) -> bool {
        self.ppm == 0
    }

    /// How many of `connections` slots send.
    pub fn of(&self, connections: usize) -> u64 {
        self.among(0, connections as u64)
    }

    /// How many of slots `first .. first + n` send: the increments of `⌊g·p⌋` over the range,
    /// which add up to its ends' difference.
    pub fn among(&self, first: u64, n: u64) -> u64 {
        self.below(first + n) - self.below(first)
    }
}

/// An `--active` value refused: as given, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadActive {
    pub given: String,
    pub fault: ActiveFault,
}

/// Why an `--active` value is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActiveFault {
    /// Not a number followed by `%`.
    NotPercent,
    /// Not 0 %, nor above 0 % (at least 0.0001 %) and at most 100 %.
    OutOfRange,
}

impl fmt::Display for BadActive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "--active '{}' must be a share of the connections from 0.0001% to 100%, e.g. 1% or 0.5%, or 0% (every connection holds: nothing is sent)",
            self.given
        )
    }
}

impl std::error::Error for BadActive {}

impl FromStr for Active {
    type Err = BadActive;
    fn from_str(s: &str) -> Result<Active, BadActive> {
        let bad = |fault| BadActive {
            given: s.to_string(),
            fault,
        };
        let percent: f64 = s
            .trim()
            .strip_suffix('%')
            .ok_or(bad(ActiveFault::NotPercent))?
            .trim()
            .parse()
            .map_err(|_| bad(ActiveFault::NotPercent))?;
        let ppm = (percent * 10_000.0).round();
        if !(percent == 0.0 || (ppm >= 1.0 && ppm <= WHOLE as f64)) {
            return Err(bad(ActiveFault::OutOfRange));
        }
        Ok(Active { ppm: ppm as u64 })
    }
}

impl fmt::Display for Active {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.ppm as f64 / 10_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_of_the_slots_sends_spread_evenly_and_exactly() {
        let one: Active = "1%".parse().unwrap();
        assert_eq!(one.of(300_000), 3_000);
        // Every 100th slot: no run of senders, no long gap.
        let senders: Vec<u64> = (0..1000).filter(|&g| one.sends(g)).collect();
        assert_eq!(senders, (0..10).map(|k| 99 + 100 * k).collect::<Vec<_>>());
        let all: Active = "100%".parse().unwrap();
        assert!((0..1000).all(|g| all.sends(g)));
        let half: Active = "0.5%".parse().unwrap();
        assert_eq!(half.of(1000), 5);
        // Exact where floating point is not: 29% of 100 is 29, 41% of 300,000 is 123,000.
        for (share, c, n) in [
            ("29%", 100, 29),
            ("57%", 100, 57),
            ("58%", 100, 58),
            ("41%", 300_000, 123_000),
        ] {
            let a: Active = share.parse().unwrap();
            assert_eq!(a.of(c), n, "{share} of {c}");
            assert_eq!(
                (0..c as u64).filter(|&g| a.sends(g)).count() as u64,
                n,
                "{share} of {c}"
            );
        }
        // Any split into pieces finds the same senders: a rule of the slot's number.
        for &(first, n) in &[(0, 333), (333, 333), (666, 334), (12_345, 98_765)] {
            let counted = (first..first + n).filter(|&g| one.sends(g)).count() as u64;
            assert_eq!(one.among(first, n), counted, "{first}+{n}");
        }
        let pieces: u64 = [(0, 333), (333, 333), (666, 334)]
            .iter()
            .map(|&(f, n)| one.among(f, n))
            .sum();
        assert_eq!(pieces, one.of(1000));
    }

    #[test]
    fn an_active_share_outside_0_to_100_percent_is_refused() {
        for (bad, fault) in [
            ("0.00001%", ActiveFault::OutOfRange),
            ("-1%", ActiveFault::OutOfRange),
            ("101%", ActiveFault::OutOfRange),
            ("nan%", ActiveFault::OutOfRange),
            ("1", ActiveFault::NotPercent),
            ("abc%", ActiveFault::NotPercent),
            ("", ActiveFault::NotPercent),
        ] {
            let e = bad.parse::<Active>().unwrap_err();
            assert_eq!((e.given.as_str(), e.fault), (bad, fault));
            assert!(e.to_string().contains("from 0.0001% to 100%"), "{e}");
        }
        assert_eq!("2.5%".parse::<Active>().unwrap().to_string(), "2.5%");
        // 0% holds every connection: none sends.
        let none: Active = "0%".parse().unwrap();
        assert!(none.holds_all() && none.of(1_000_000) == 0 && !none.sends(0));
        assert!(!"0.0001%".parse::<Active>().unwrap().holds_all());
    }
}
