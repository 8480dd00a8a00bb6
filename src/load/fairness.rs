//! Jain's fairness index: how evenly a run served its connections (or an HTTP/2 run its
//! stream lanes).

/// Jain's index of `xs`: (sum x)^2 / (n * sum x^2); `None` for an empty or all-zero list
/// (nothing was served: there is no fairness to measure, and 1.0 would read as perfect).
pub fn jain(xs: &[u64]) -> Option<f64> {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().map(|&x| x as f64).sum();
    let sq: f64 = xs.iter().map(|&x| (x as f64) * (x as f64)).sum();
    (n > 0.0 && sq > 0.0).then(|| sum * sum / (n * sq))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index() {
        assert!((jain(&[5, 5, 5, 5]).unwrap() - 1.0).abs() < 1e-12);
        assert!((jain(&[10, 0, 0, 0]).unwrap() - 0.25).abs() < 1e-12);
        // Nothing served: not measured, never "perfectly fair".
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0, 0, 0]), None);
    }
}
