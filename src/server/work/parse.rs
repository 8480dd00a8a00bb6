//! `--work`'s text: its parts (`cpu:`, `sleep:`, joined by `+`) and each part's distribution,
//! a fixed time, a named distribution, a weighted mix, or a user's histogram file.

use std::sync::Arc;
use std::time::Duration;

use super::bad::{BadDist, DistFault};
use super::dist::Dist;
use crate::units::{parse_duration, split_top};

/// `cpu:...+sleep:...` split at the `+` that starts a part (a file name may hold a `+`).
pub(super) fn split_parts(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, _) in s.match_indices('+') {
        let rest = &s[i + 1..];
        if rest.starts_with("cpu:") || rest.starts_with("sleep:") {
            parts.push(&s[start..i]);
            start = i + 1;
        }
    }
    parts.push(&s[start..]);
    parts
}

/// The arguments of `name(...)` in `s`, if `s` is that call.
pub(super) fn call<'a>(s: &'a str, name: &str) -> Option<Vec<&'a str>> {
    let inner = s.strip_prefix(name)?.strip_prefix('(')?.strip_suffix(')')?;
    Some(split_top(inner).into_iter().map(str::trim).collect())
}

/// A number the user typed for `what`.
pub(super) fn number(s: &str, what: &'static str) -> Result<f64, BadDist> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| part(s, DistFault::NotANumber { what }))
}

/// `given` (D, or one of its arguments) refused for `fault`.
fn part(given: &str, fault: DistFault) -> BadDist {
    BadDist::Part {
        given: given.to_string(),
        fault,
    }
}

/// A mean given as a duration, in ns, more than zero.
pub(super) fn mean_ns(s: &str) -> Result<f64, BadDist> {
    let d = parse_duration(s)?;
    if d.is_zero() {
        return Err(part(s, DistFault::ZeroMean));
    }
    Ok(d.as_nanos() as f64)
}

/// Parses one distribution D.
pub fn parse_dist(s: &str) -> Result<Dist, BadDist> {
    let s = s.trim();
    let args = |name: &'static str, n: usize| -> Result<Option<Vec<&str>>, BadDist> {
        match call(s, name) {
            Some(a) if a.len() == n => Ok(Some(a)),
            Some(_) => Err(part(s, DistFault::Arguments { name, takes: n })),
            None => Ok(None),
        }
    };
    if let Some(a) = args("exp", 1)? {
        return Ok(Dist::Exp(mean_ns(a[0])?));
    }
    if let Some(a) = args("lognormal", 2)? {
        let (mean, sigma) = (mean_ns(a[0])?, number(a[1], "lognormal's sigma")?);
        if !(0.0..=10.0).contains(&sigma) {
            return Err(part(s, DistFault::Sigma { sigma }));
        }
        return Ok(Dist::LogNormal {
            mu: mean.ln() - sigma * sigma / 2.0,
            sigma,
        });
    }
    if let Some(a) = args("pareto", 2)? {
        let (mean, shape) = (mean_ns(a[0])?, number(a[1], "pareto's alpha")?);
        if shape <= 1.0 {
            return Err(part(s, DistFault::Alpha));
        }
        return Ok(Dist::Pareto {
            scale: mean * (shape - 1.0) / shape,
            shape,
        });
    }
    if let Some(a) = args("bimodal1", 1)? {
        let m = mean_ns(a[0])?;
        return Ok(mix_of(&[(0.9, 0.5 * m), (0.1, 5.5 * m)]));
    }
    if let Some(a) = args("bimodal2", 1)? {
        let m = mean_ns(a[0])?;
        return Ok(mix_of(&[(0.999, 0.5 * m), (0.001, 500.5 * m)]));
    }
    if let Some(parts) = call(s, "mix") {
        return parse_mix(s, &parts);
    }
    if let Some(path) = s.strip_prefix("hist:") {
        return read_hist(path);
    }
    if s.contains('(') {
        return Err(part(s, DistFault::Unknown));
    }
    Ok(Dist::Fixed(parse_duration(s)?))
}

/// A mix of fixed times, by weight.
pub(super) fn mix_of(parts: &[(f64, f64)]) -> Dist {
    let mut c = 0.0;
    let cumulative = parts
        .iter()
        .map(|(w, _)| {
            c += w;
            c
        })
        .collect();
    Dist::Mix(
        cumulative,
        parts
            .iter()
            .map(|(_, ns)| Dist::Fixed(Duration::from_nanos(*ns as u64)))
            .collect(),
    )
}

/// `mix(P%:D,...)`: the weights must sum to 100 %.
pub(super) fn parse_mix(s: &str, parts: &[&str]) -> Result<Dist, BadDist> {
    let mut cumulative = Vec::new();
    let mut dists = Vec::new();
    let mut total = 0.0;
    for p in parts {
        let (w, d) = p
            .split_once(':')
            .ok_or_else(|| part(s, DistFault::MixPart { part: p.to_string() }))?;
        let w = number(
            w.trim().strip_suffix('%').unwrap_or(w.trim()),
            "a mix weight in per cent",
        )?;
        if w <= 0.0 {
            return Err(part(s, DistFault::MixWeight { weight: w }));
        }
        total += w;
        cumulative.push(total / 100.0);
        dists.push(parse_dist(d)?);
    }
    // Within a hundredth of a per cent: thirds may be written 33.33%.
    if (total - 100.0).abs() > 0.01 + 1e-9 {
        let total = (total * 1000.0).round() / 1000.0;
        return Err(part(s, DistFault::MixSum { total }));
    }
    if let Some(last) = cumulative.last_mut() {
        *last = 1.0;
    }
    Ok(Dist::Mix(cumulative, dists))
}

/// `hist:FILE`: a `.hgrm` percentile listing (values in ms) or an HdrHistogram V2 log (values
/// in ns), as (quantile, ns) pairs.
pub(super) fn read_hist(path: &str) -> Result<Dist, BadDist> {
    let text = std::fs::read_to_string(path).map_err(|source| BadDist::HistRead {
        path: path.into(),
        source,
    })?;
    let mut table: Vec<(f64, f64)> = Vec::new();
    // A percentile listing: "Value Percentile TotalCount 1/(1-Percentile)" rows.
    for line in text.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() >= 3 && !line.trim_start().starts_with('#') {
            if let (Ok(v), Ok(q)) = (cols[0].parse::<f64>(), cols[1].parse::<f64>()) {
                if (0.0..=1.0).contains(&q) && v >= 0.0 {
                    table.push((q, v * 1e6));
                }
            }
        }
    }
    if table.is_empty() {
        // A V2 log: each interval's histogram in base64, the last field of its line.
        let mut sum = crate::hist::Hist::default();
        let mut any = false;
        for line in text.lines().filter(|l| !l.starts_with('#') && !l.starts_with('"')) {
            let field = line.rsplit(',').next().unwrap_or("").trim();
            if let Ok(h) = crate::hist::Hist::from_v2_base64(field) {
                sum.merge(&h);
                any = true;
            }
        }
        if !any || sum.count() == 0 {
            return Err(BadDist::HistEmpty { path: path.into() });
        }
        table = sum
            .0
            .iter_quantiles(20)
            .map(|v| (v.quantile_iterated_to(), v.value_iterated_to() as f64))
            .collect();
    }
    table.sort_by(|a, b| a.0.total_cmp(&b.0));
    table.dedup_by(|a, b| a.0 == b.0);
    Ok(Dist::Table(Arc::new(table)))
}
