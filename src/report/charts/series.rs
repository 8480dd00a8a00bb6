//! What a chart shows: its [`Series`] (a name and a value per x position, hollow points,
//! references dashed) and the [`Unit`] its values read in, short for an axis ([`label`]).

/// One line of a chart: a name and a value per x position (None: no data there).
pub struct Series {
    pub name: String,
    pub values: Vec<Option<f64>>,
    /// Points that may not be ranked (the client was the limit, or the metric's rule leaves the
    /// cell out: a starved latency), drawn hollow; may be empty.
    pub hollow: Vec<bool>,
    /// A reference (a seed's published numbers, a prediction), drawn dashed.
    pub reference: bool,
    /// A reference drawn in the colour of the measured series at this index (a target's
    /// prediction beside its measurement); grey where `None`.
    pub like: Option<usize>,
}

impl Series {
    /// A measured series with no hollow point.
    #[cfg(test)]
    pub fn new(name: impl Into<String>, values: Vec<Option<f64>>) -> Series {
        Series {
            name: name.into(),
            values,
            hollow: Vec::new(),
            reference: false,
            like: None,
        }
    }
}

/// How the y values read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Counts: 12k, 1.5M.
    Count,
    /// Microseconds: 850 µs, 1.2 ms, 2.5 s.
    Micros,
    /// A plain number (an index, a ratio).
    Plain,
}

/// `v` in `unit`, short, for an axis label.
pub fn label(v: f64, unit: Unit) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    match unit {
        Unit::Count => crate::units::si(v),
        Unit::Micros if v.abs() >= 1e6 => format!("{} s", trim(format!("{:.2}", v / 1e6))),
        Unit::Micros if v.abs() >= 1e3 => format!("{} ms", trim(format!("{:.2}", v / 1e3))),
        Unit::Micros => format!("{} µs", trim(format!("{v:.1}"))),
        Unit::Plain => trim(format!("{v:.3}")),
    }
}
