//! Latency histograms: HDR histograms in nanoseconds, merged losslessly across threads and
//! shard processes (shards send their non-empty buckets as `[value, count]` pairs).

use hdrhistogram::Histogram;
use serde_json::{json, Value};

/// A latency histogram (nanoseconds, 1 ns .. 1 hour, 3 significant digits).
#[derive(Clone, Debug)]
pub struct Hist(pub Histogram<u64>);

impl Default for Hist {
    fn default() -> Self {
        Hist(Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"))
    }
}

impl Hist {
    #[inline]
    pub fn record_ns(&mut self, ns: u64) {
        self.0.saturating_record(ns.max(1));
    }

    pub fn merge(&mut self, other: &Hist) {
        self.0.add(&other.0).expect("same bounds");
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// Percentile summary in microseconds.
    pub fn summary_us(&self) -> Value {
        if self.count() == 0 {
            return json!({"count": 0});
        }
        let q = |p: f64| self.0.value_at_quantile(p) as f64 / 1000.0;
        json!({"count": self.count(), "min": self.0.min() as f64 / 1000.0, "mean": self.0.mean() / 1000.0,
            "p50": q(0.5), "p90": q(0.9), "p99": q(0.99), "p999": q(0.999), "max": self.0.max() as f64 / 1000.0,
            "stdev": self.0.stdev() / 1000.0})
    }

    /// Non-empty buckets, for shipping between processes.
    pub fn to_pairs(&self) -> Value {
        Value::Array(
            self.0
                .iter_recorded()
                .map(|v| json!([v.value_iterated_to(), v.count_at_value()]))
                .collect(),
        )
    }

    pub fn from_pairs(v: &Value) -> Hist {
        let mut h = Hist::default();
        for p in v.as_array().into_iter().flatten() {
            if let (Some(value), Some(count)) = (p[0].as_u64(), p[1].as_u64()) {
                h.0.saturating_record_n(value, count);
            }
        }
        h
    }

    /// The HdrHistogram percentile distribution text (values in milliseconds), as wrk2 prints.
    pub fn hgrm(&self) -> String {
        let mut s = format!(
            "{:>12} {:>14} {:>10} {:>14}\n\n",
            "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
        );
        for v in self.0.iter_quantiles(5) {
            let p = v.quantile_iterated_to();
            let inv = if p < 1.0 {
                format!("{:>14.2}", 1.0 / (1.0 - p))
            } else {
                String::new()
            };
            s.push_str(&format!(
                "{:>12.3} {:>14.12} {:>10} {}\n",
                v.value_iterated_to() as f64 / 1e6,
                p,
                v.count_since_last_iteration(),
                inv
            ));
        }
        s.push_str(&format!(
            "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]\n#[Max     = {:>12.3}, Total count    = {:>12}]\n",
            self.0.mean() / 1e6,
            self.0.stdev() / 1e6,
            self.0.max() as f64 / 1e6,
            self.count()
        ));
        s
    }
}
