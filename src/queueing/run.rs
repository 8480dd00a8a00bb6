//! A finished simulation's record: the latencies it recorded (every request's and each
//! class's, sorted), their quantiles and mean, and the throughput over them.

/// A finished simulation: the recorded latencies (seconds, sorted), each class's, and the
/// throughput over them.
pub struct Run {
    latencies: Vec<f64>,
    classes: Vec<Vec<f64>>,
    pub throughput: f64,
}

/// The `q` quantile of sorted `latencies` (`None`: none).
fn quantile(latencies: &[f64], q: f64) -> Option<f64> {
    let n = latencies.len();
    (n > 0).then(|| latencies[((n as f64 * q).ceil() as usize).clamp(1, n) - 1])
}

impl Run {
    /// The run that recorded `latencies` (and each class's) over `span` seconds; `None` where
    /// it recorded none.
    pub(super) fn of(mut latencies: Vec<f64>, mut classes: Vec<Vec<f64>>, span: f64) -> Option<Run> {
        if latencies.is_empty() {
            return None;
        }
        latencies.sort_by(|a, b| a.total_cmp(b));
        for c in &mut classes {
            c.sort_by(|a, b| a.total_cmp(b));
        }
        let throughput = if span > 0.0 { latencies.len() as f64 / span } else { 0.0 };
        Some(Run {
            latencies,
            classes,
            throughput,
        })
    }

    /// The `q` quantile of the latencies, in seconds.
    pub fn percentile(&self, q: f64) -> f64 {
        quantile(&self.latencies, q).unwrap_or(0.0)
    }

    /// The `q` quantile of class `k`'s latencies, in seconds (`None`: none of its requests
    /// was recorded).
    pub fn class_percentile(&self, k: usize, q: f64) -> Option<f64> {
        quantile(self.classes.get(k)?, q)
    }

    /// The mean latency, in seconds.
    pub fn mean(&self) -> f64 {
        self.latencies.iter().sum::<f64>() / self.latencies.len() as f64
    }
}
