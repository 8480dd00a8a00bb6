//! Figures as a person reads them: durations, spans, counts, microseconds, "–" for what
//! was not measured.

use std::time::Duration;

/// Formats a duration the way [`parse_duration`] reads it, compactly.
pub fn format_duration(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    let trim = |v: f64| {
        format!("{v:.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    };
    if us < 1000.0 {
        format!("{}us", trim(us))
    } else if us < 1e6 {
        format!("{}ms", trim(us / 1e3))
    } else {
        format!("{}s", trim(us / 1e6))
    }
}

/// A duration the way [`parse_duration`] reads it back exactly (whole milliseconds, else
/// microseconds, else nanoseconds): what argv built from typed values carries.
pub fn exact_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// `m:ss`, as a progress line shows elapsed and remaining time.
pub fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}", s / 60, s % 60)
}

/// A span a person reads at a glance: `4:05` under an hour, `3.2 h` under two days, else
/// `11.6 days`.
pub fn span(d: Duration) -> String {
    let s = d.as_secs_f64();
    match s {
        s if s < 3600.0 => clock(d),
        s if s < 48.0 * 3600.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86_400.0),
    }
}

/// `1234567` -> `1,234,567`.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Microseconds, shown in the most readable unit.
pub fn fmt_us(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0}us")
    } else if us < 1e6 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// `v` with `places` decimals, or "–" where it was not measured.
pub fn or_dash(v: Option<f64>, places: usize) -> String {
    v.map(|x| format!("{x:.places$}")).unwrap_or_else(|| "–".into())
}

/// A count, short: `950`, `94.2k`, `1.5M` (trailing zeros dropped).
pub fn si(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if v.abs() >= 1e6 {
        format!("{}M", trim(format!("{:.2}", v / 1e6)))
    } else if v.abs() >= 1e3 {
        format!("{}k", trim(format!("{:.1}", v / 1e3)))
    } else {
        trim(format!("{v:.1}"))
    }
}
