//! The duration histogram's buckets: fixed bounds from 1 µs to 10 s, at most 1.5× apart
//! (1, 1.5, 2, 3, 4, 6 and 8 of each decade), so a quantile read from them is off by less
//! than half of its value. OpenTelemetry's default bounds start at 5 ms, where every request of
//! a loopback run would land in the first bucket.

/// The upper bounds, in nanoseconds; a last bucket holds what is over 10 s.
pub const BOUNDS_NS: [u64; 50] = {
    const STEPS: [u64; 7] = [10, 15, 20, 30, 40, 60, 80];
    let mut b = [0u64; 50];
    let (mut decade, mut i) = (100u64, 0);
    while i < 49 {
        b[i] = STEPS[i % 7] * decade;
        i += 1;
        if i % 7 == 0 {
            decade *= 10;
        }
    }
    b[49] = 10_000_000_000;
    b
};

/// Buckets, the unbounded last one included.
pub const SLOTS: usize = BOUNDS_NS.len() + 1;

/// The bucket of a duration: the first whose bound it does not exceed (Prometheus's `le`).
#[inline]
pub fn slot(ns: u64) -> usize {
    BOUNDS_NS.partition_point(|&b| b < ns)
}

/// A bound as Prometheus's `le` label writes it (seconds; `+Inf` for the last bucket).
pub fn le(slot: usize) -> String {
    match BOUNDS_NS.get(slot) {
        Some(&ns) => seconds(ns),
        None => "+Inf".into(),
    }
}

/// Nanoseconds as seconds, in the shortest decimal form that reads back exactly.
fn seconds(ns: u64) -> String {
    let s = format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The value under which a share `q` of the counts lies, read as Prometheus's
/// `histogram_quantile` reads it: linearly inside the bucket it falls in (from 0 in the
/// first). `None` with nothing counted, or when it falls in the unbounded bucket (past what
/// the bounds tell: Prometheus answers the last bound there).
pub fn quantile_ns(counts: &[u64; SLOTS], q: f64) -> Option<f64> {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return None;
    }
    let rank = q.clamp(0.0, 1.0) * total as f64;
    let mut below = 0u64;
    for (i, &c) in counts.iter().enumerate() {
        if c > 0 && (below + c) as f64 >= rank {
            let hi = *BOUNDS_NS.get(i)?;
            let lo = if i == 0 { 0 } else { BOUNDS_NS[i - 1] };
            let into = (rank - below as f64) / c as f64;
            return Some(lo as f64 + (hi - lo) as f64 * into);
        }
        below += c;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_rise_from_a_microsecond_to_ten_seconds_at_most_one_and_a_half_apart() {
        assert_eq!(BOUNDS_NS[0], 1_000);
        assert_eq!(*BOUNDS_NS.last().unwrap(), 10_000_000_000);
        for w in BOUNDS_NS.windows(2) {
            assert!(w[1] > w[0], "{w:?}");
            assert!(w[1] as f64 <= w[0] as f64 * 1.5, "{w:?} more than 1.5x apart");
        }
    }

    #[test]
    fn a_duration_goes_to_the_first_bucket_whose_bound_it_does_not_exceed() {
        assert_eq!(slot(0), 0);
        assert_eq!(slot(1_000), 0);
        assert_eq!(slot(1_001), 1);
        assert_eq!(slot(1_500), 1);
        assert_eq!(slot(10_000_000_000), 49);
        assert_eq!(slot(10_000_000_001), 50);
        assert_eq!(slot(u64::MAX), SLOTS - 1);
    }

    #[test]
    fn le_labels_are_seconds_that_read_back_exactly() {
        assert_eq!(le(0), "0.000001");
        assert_eq!(le(1), "0.0000015");
        assert_eq!(le(49), "10");
        assert_eq!(le(50), "+Inf");
        for (i, &ns) in BOUNDS_NS.iter().enumerate() {
            let back: f64 = le(i).parse().unwrap();
            assert_eq!((back * 1e9).round() as u64, ns);
        }
    }

    #[test]
    fn a_quantile_interpolates_inside_its_bucket_as_prometheus_does() {
        let mut c = [0u64; SLOTS];
        c[slot(50_000)] = 100; // (40, 60] µs
        let p50 = quantile_ns(&c, 0.5).unwrap();
        assert!((p50 - 50_000.0).abs() < 1.0, "{p50}");
        assert_eq!(quantile_ns(&[0; SLOTS], 0.99), None);
        let mut over = [0u64; SLOTS];
        over[SLOTS - 1] = 1;
        assert_eq!(quantile_ns(&over, 0.5), None);
    }
}
