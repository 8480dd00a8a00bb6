//! `--shard I/N`: a run's share, and the arithmetic that splits connections and requests into
//! exact shares (over shards, child processes and engine threads alike).

/// `--shard I/N`: this process runs share `I` of `N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard(pub usize, pub usize);

impl std::str::FromStr for Shard {
    type Err = BadShard;
    fn from_str(s: &str) -> Result<Shard, BadShard> {
        let bad = |fault| BadShard {
            given: s.to_string(),
            fault,
        };
        let (i, k) = s.split_once('/').ok_or_else(|| bad(ShardFault::NotIOverN))?;
        match (i.parse(), k.parse()) {
            (Ok(i), Ok(k)) if i < k => Ok(Shard(i, k)),
            (Ok(_), Ok(_)) => Err(bad(ShardFault::NotBelow)),
            _ => Err(bad(ShardFault::NotIOverN)),
        }
    }
}

/// A `--shard` (or `--subshard`) refused: as given, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadShard {
    pub given: String,
    pub fault: ShardFault,
}

/// Why a share is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShardFault {
    /// Not two whole numbers joined by `/`.
    NotIOverN,
    /// `I` at or over `N`.
    NotBelow,
}

impl std::fmt::Display for BadShard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // One sentence for both faults: it says what a share is.
        write!(f, "--shard '{}' must be I/N with 0 <= I < N, e.g. 0/4", self.given)
    }
}

impl std::error::Error for BadShard {}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.0, self.1)
    }
}

/// Splits `total` into `parts` near-equal pieces; returns (size of piece `i`, its offset).
pub fn split(total: usize, parts: usize, i: usize) -> (usize, usize) {
    let base = total / parts;
    let extra = total % parts;
    let size = base + usize::from(i < extra);
    let offset = i * base + i.min(extra);
    (size, offset)
}

/// The share of `n` requests belonging to connection slots `first..first + count` of `conns`.
pub fn split_weighted(n: u64, conns: usize, first: usize, count: usize) -> u64 {
    let upto = |k: usize| (n as u128 * k as u128 / conns as u128) as u64;
    upto(first + count) - upto(first)
}

#[cfg(test)]
mod load {
    use crate::load::*;

    #[test]
    fn splits_cover_everything_once() {
        let parts: Vec<_> = (0..3).map(|i| split(10, 3, i)).collect();
        assert_eq!(parts, vec![(4, 0), (3, 4), (3, 7)]);
        let q: u64 = (0..3).map(|i| split_weighted(1001, 10, parts[i].1, parts[i].0)).sum();
        assert_eq!(q, 1001);
    }

    #[test]
    fn a_share_is_i_of_n_with_i_below_n() {
        assert_eq!("1/4".parse::<Shard>(), Ok(Shard(1, 4)));
        for (bad, fault) in [
            ("4/4", ShardFault::NotBelow),
            ("1", ShardFault::NotIOverN),
            ("a/4", ShardFault::NotIOverN),
        ] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert_eq!(e.fault, fault, "{bad}");
            assert_eq!(
                e.to_string(),
                format!("--shard '{bad}' must be I/N with 0 <= I < N, e.g. 0/4")
            );
        }
    }
}
