//! Latency histograms: HDR histograms in nanoseconds, merged losslessly across threads, shard
//! processes and hosts (which ship them as HdrHistogram V2, compressed, base64). Below
//! `server` and `load`, which both read them (the load generator's latencies, a server's
//! `--work` drawn from a measured histogram).

use hdrhistogram::Histogram;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A histogram's text that does not read: what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum BadHistogram {
    /// The text is not base64.
    #[error("a histogram: not base64: {source}")]
    NotBase64 { source: base64::DecodeError },
    /// The bytes are not an HdrHistogram V2 encoding.
    #[error("a histogram: not an HdrHistogram V2 encoding: {source:?}")]
    NotV2 {
        source: hdrhistogram::serialization::DeserializeError,
    },
    /// Its values are outside 1 ns .. 1 hour.
    #[error("a histogram: out of range: {source:?}")]
    OutOfRange {
        source: hdrhistogram::errors::AdditionError,
    },
}

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

    /// `n` latencies of `ns` each.
    #[inline]
    pub fn record_n_ns(&mut self, ns: u64, n: u64) {
        self.0.saturating_record_n(ns.max(1), n);
    }

    pub fn merge(&mut self, other: &Hist) {
        self.0.add(&other.0).expect("same bounds");
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// [`Hist::latency`] as JSON, as a document carries it.
    pub fn summary_us(&self) -> serde_json::Value {
        serde_json::to_value(self.latency()).expect("a summary serialises")
    }

    /// Percentile summary in microseconds.
    pub fn latency(&self) -> Latency {
        if self.count() == 0 {
            return Latency::default();
        }
        let q = |p: f64| Some(self.0.value_at_quantile(p) as f64 / 1000.0);
        Latency {
            count: self.count(),
            min: Some(self.0.min() as f64 / 1000.0),
            mean: Some(self.0.mean() / 1000.0),
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p999: q(0.999),
            max: Some(self.0.max() as f64 / 1000.0),
            stdev: Some(self.0.stdev() / 1000.0),
        }
    }

    /// The lossless interchange form: HdrHistogram's V2 encoding, deflate-compressed, in
    /// base64 (what `HistogramLogWriter` and the other HdrHistogram libraries read).
    pub fn to_v2_base64(&self) -> String {
        use base64::Engine;
        use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.0, &mut bytes)
            .expect("serialising into memory cannot fail");
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// Reads [`Hist::to_v2_base64`]'s form (compressed or not); the error says what is wrong.
    pub fn from_v2_base64(text: &str) -> Result<Hist, BadHistogram> {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|source| BadHistogram::NotBase64 { source })?;
        let h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|source| BadHistogram::NotV2 { source })?;
        let mut out = Hist::default();
        out.0.add(&h).map_err(|source| BadHistogram::OutOfRange { source })?;
        Ok(out)
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

/// A histogram travels as its V2 encoding, in base64.
impl Serialize for Hist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_v2_base64())
    }
}

impl<'de> Deserialize<'de> for Hist {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Hist, D::Error> {
        let text = String::deserialize(d)?;
        Hist::from_v2_base64(&text).map_err(serde::de::Error::custom)
    }
}

/// A latency distribution's summary in microseconds, as a document shows it: only `count`
/// (0) when nothing was recorded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    pub count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p999: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdev: Option<f64>,
}

#[cfg(test)]
mod tests {
    use crate::hist::*;

    #[test]
    fn a_histogram_that_does_not_read_says_which_layer_is_wrong() {
        let e = Hist::from_v2_base64("not base64!").unwrap_err();
        assert!(matches!(e, BadHistogram::NotBase64 { .. }));
        assert!(e.to_string().starts_with("a histogram: not base64: "), "{e}");
        let e = Hist::from_v2_base64("aGVsbG8=").unwrap_err();
        assert!(matches!(e, BadHistogram::NotV2 { .. }));
        assert!(
            e.to_string()
                .starts_with("a histogram: not an HdrHistogram V2 encoding: "),
            "{e}"
        );
        let mut h = Hist::default();
        h.record_ns(1000);
        assert_eq!(Hist::from_v2_base64(&h.to_v2_base64()).unwrap().count(), 1);
    }
}
