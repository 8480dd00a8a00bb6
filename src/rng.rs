//! A small, fast, seeded random number generator (SplitMix64 to seed, xoshiro256** to draw),
//! and the draws the service times and arrivals need. Not for anything secret: for workloads
//! that differ between workers and repeat between runs.

/// A generator.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

/// SplitMix64: spreads a seed's bits (what xoshiro's authors advise for seeding).
fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator for the stream named by `parts` (a seed, a worker, a process, ...): different
    /// parts give independent streams, the same parts the same stream.
    pub fn new(parts: &[u64]) -> Rng {
        // Each part is folded into the hash of those before it (not merely added: parts that
        // differ in the same bits would cancel out, worker 0 of thread 1 drawing what worker 1
        // of thread 0 draws).
        let mut x = parts
            .iter()
            .fold(0x6A09_E667_F3BC_C908u64, |h, &p| splitmix(&mut (h ^ p)));
        let s = [splitmix(&mut x), splitmix(&mut x), splitmix(&mut x), splitmix(&mut x)];
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1]: safe under a logarithm.
    fn open(&mut self) -> f64 {
        1.0 - self.uniform()
    }

    /// Exponential with this mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * self.open().ln()
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.open(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Pareto with this scale (the least value) and shape.
    pub fn pareto(&mut self, scale: f64, shape: f64) -> f64 {
        scale / self.open().powf(1.0 / shape)
    }

    /// An index of `cumulative` (increasing, ending at 1.0) drawn by its weights.
    pub fn pick(&mut self, cumulative: &[f64]) -> usize {
        let u = self.uniform();
        cumulative
            .iter()
            .position(|&c| u < c)
            .unwrap_or(cumulative.len().saturating_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean(n: usize, mut f: impl FnMut() -> f64) -> f64 {
        (0..n).map(|_| f()).sum::<f64>() / n as f64
    }

    /// Every (seed, worker, process, thread) a server may give names its own stream: no two
    /// of these 2 seeds × 8 workers × 4 processes × 8 threads start alike.
    #[test]
    fn neighbouring_parts_do_not_share_a_stream() {
        let mut firsts = Vec::new();
        for seed in [1u64, 0] {
            for w in 0..8u64 {
                for p in 0..4u64 {
                    for t in 0..8u64 {
                        let mut r = Rng::new(&[seed, w, p, t]);
                        firsts.push((r.next_u64(), r.next_u64()));
                    }
                }
            }
        }
        let n = firsts.len();
        firsts.sort_unstable();
        firsts.dedup();
        assert_eq!(firsts.len(), n);
    }

    #[test]
    fn streams_repeat_and_differ_and_draws_have_their_means() {
        let (mut a, mut b, mut c) = (Rng::new(&[1, 2]), Rng::new(&[1, 2]), Rng::new(&[1, 3]));
        let xs: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        assert_eq!(xs, (0..4).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(xs, (0..4).map(|_| c.next_u64()).collect::<Vec<_>>());
        let mut r = Rng::new(&[7]);
        let m = mean(200_000, || r.uniform());
        assert!((m - 0.5).abs() < 0.01, "{m}");
        let m = mean(200_000, || r.exp(3.0));
        assert!((m - 3.0).abs() < 0.05, "{m}");
        let m = mean(200_000, || r.normal());
        assert!(m.abs() < 0.01, "{m}");
        // Pareto(scale 1, shape 3) has mean 3/2.
        let m = mean(400_000, || r.pareto(1.0, 3.0));
        assert!((m - 1.5).abs() < 0.03, "{m}");
        let picks: Vec<usize> = (0..100_000).map(|_| r.pick(&[0.25, 1.0])).collect();
        let first = picks.iter().filter(|&&i| i == 0).count() as f64 / 100_000.0;
        assert!((first - 0.25).abs() < 0.01, "{first}");
    }
}
