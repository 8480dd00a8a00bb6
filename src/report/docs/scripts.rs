//! Blocks rendered from what the scripts beside bench write (`docs/results/NAME.json`):
//! `peers` (scripts/peer_matrix.py: ab and wrk against the models and nginx), `advise`
//! (`muxlab advise --json`), `h2cost` (scripts/h2_cost.py) and `h2client`
//! (scripts/h2_client_vs_h2load.py).

use serde::Deserialize;
use serde_json::Value;

use super::ctx::Ctx;
use super::error::DocsError;
use super::made::Made;
use super::markdown::{table_head, table_row};
use crate::units::thousands;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    result: String,
}

/// A script's kept file, and the sentence naming it (its command, the binary that ran it, or
/// the commit written beside it where it names none, the file).
fn read(ctx: &Ctx, spec: &str) -> Result<(String, Value, String), DocsError> {
    let s: Spec = toml::from_str(spec)?;
    let path = ctx.result(&s.result, "json");
    let bytes = std::fs::read(&path).map_err(|error| DocsError::Read {
        path: path.clone(),
        error,
    })?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|error| DocsError::Json { path, error })?;
    let made = Made::of(&v).words();
    let said = match v["command"].as_str() {
        Some(c) => format!("`{c}`, {made}"),
        // The sentence begins with the words.
        None => made[..1].to_uppercase() + &made[1..],
    };
    let source = format!(
        "{said}. Figures: [{}]({}).",
        ctx.result_link(&s.result, "json"),
        ctx.result_link(&s.result, "json")
    );
    Ok((s.result, v, source))
}

fn num(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn missing(name: &str, field: &'static str) -> DocsError {
    DocsError::NoField {
        result: name.to_string(),
        field,
    }
}

/// `peers`: req/s and the server's CPU per request under ab (one request per connection) and
/// wrk (keep-alive), a row per server.
pub fn peers(ctx: &Ctx, spec: &str) -> Result<String, DocsError> {
    let (name, v, source) = read(ctx, spec)?;
    let servers = v.as_object().ok_or_else(|| missing(&name, "servers"))?;
    let mut cols: Vec<String> = Vec::new();
    for row in servers.values().filter_map(Value::as_object) {
        for k in row.keys() {
            if !cols.contains(k) {
                cols.push(k.clone());
            }
        }
    }
    // ab's concurrencies in order, then wrk.
    cols.sort_by_key(|k| {
        (
            k.starts_with("wrk"),
            k.trim_start_matches(|c: char| !c.is_ascii_digit())
                .parse::<u64>()
                .unwrap_or(0),
        )
    });
    let mut head = vec!["server".to_string()];
    for k in &cols {
        let (tool, c) = k.split_once("_c").unwrap_or((k, "?"));
        head.push(format!("{tool} -c{c} req/s"));
        head.push("µs/req".into());
    }
    let mut out = format!("{source}\n\n{}", table_head(&head));
    for (server, row) in servers.iter().filter(|(_, r)| r.is_object()) {
        let mut r = vec![server.clone()];
        for k in &cols {
            let cell = &row[k];
            let failed = cell["failed"].as_u64().unwrap_or(0);
            r.push(match num(&cell["rps"]) {
                Some(x) if failed == 0 => thousands(x.round() as u64),
                Some(x) => format!("{} ({} failed)", thousands(x.round() as u64), thousands(failed)),
                None => "–".into(),
            });
            r.push(num(&cell["cpu_us"]).map_or("–".into(), |x| format!("{x:.1}")));
        }
        out.push_str(&table_row(&r));
    }
    Ok(out)
}

/// `advise`: the question, then a row per design: its capacity at the target (or what its
/// search reached), what its queueing predicts, its CPU per request, its runs.
pub fn advise(ctx: &Ctx, spec: &str) -> Result<String, DocsError> {
    let (name, v, source) = read(ctx, spec)?;
    let ranking = v["ranking"].as_array().ok_or_else(|| missing(&name, "ranking"))?;
    let rate = |x: Option<f64>| x.map_or("–".to_string(), |x| format!("{} req/s", thousands(x.round() as u64)));
    let mut out = format!(
        "{source} The target: `{}` with `{}` over {} connections; the best: {}; meeting the target at {}: {}. Time spent: {:.0} of {:.0} s planned.\n\n",
        v["slo"].as_str().unwrap_or("?"),
        v["work"].as_str().unwrap_or("?"),
        v["connections"],
        join(&v["tied"]),
        rate(num(&v["rate"])),
        join(&v["meeting"]),
        num(&v["time_spent_s"]).unwrap_or(f64::NAN),
        num(&v["time_planned_s"]).unwrap_or(f64::NAN),
    );
    out.push_str(&table_head(
        &[
            "design",
            "capacity",
            "predicted",
            "server CPU/request",
            "searches",
            "note",
        ]
        .map(String::from),
    ));
    for d in ranking {
        let capacity = match num(&d["capacity"]) {
            Some(c) => rate(Some(c)),
            None => format!("≥ {}", rate(num(&d["at_least"]))),
        };
        out.push_str(&table_row(&[
            d["design"].as_str().unwrap_or("?").to_string(),
            capacity,
            rate(num(&d["predicted"])),
            num(&d["cpu_us"]).map_or("–".into(), |x| format!("{x:.1} µs")),
            d["runs"].to_string(),
            d["note"].as_str().unwrap_or("").to_string(),
        ]));
    }
    Ok(out)
}

fn join(v: &Value) -> String {
    match v.as_array() {
        Some(a) if !a.is_empty() => a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "),
        _ => "none".into(),
    }
}

/// The lowest and highest of `xs`, as "a–b" (one value alone where they are equal).
fn range(xs: &[f64], show: impl Fn(f64) -> String) -> String {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match xs.is_empty() {
        true => "–".into(),
        false if show(lo) == show(hi) => show(lo),
        false => format!("{}–{}", show(lo), show(hi)),
    }
}

/// `h2cost`: the server's CPU per request in each case, over the rounds, and against HTTP/1.1
/// keep-alive (the ratio of their means).
pub fn h2cost(ctx: &Ctx, spec: &str) -> Result<String, DocsError> {
    let (name, v, source) = read(ctx, spec)?;
    let rows = v["rows"].as_array().ok_or_else(|| missing(&name, "rows"))?;
    let mut cases: Vec<&str> = Vec::new();
    for r in rows {
        let c = r["case"].as_str().ok_or_else(|| missing(&name, "case"))?;
        if !cases.contains(&c) {
            cases.push(c);
        }
    }
    let of = |case: &str| -> Vec<f64> {
        rows.iter()
            .filter(|r| r["case"] == case)
            .filter_map(|r| num(&r["server_ns_per_request"]))
            .map(|ns| ns / 1000.0)
            .collect()
    };
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len() as f64;
    let base = cases.iter().find(|c| c.contains("keep-alive")).map(|c| mean(&of(c)));
    let mut out = format!(
        "{source} Server `{}`; {} requests per case and round.\n\n",
        v["model"].as_str().unwrap_or("?"),
        thousands(v["requests"].as_u64().unwrap_or(0))
    );
    out.push_str(&table_head(
        &[
            "client (h2load)",
            "server CPU per request",
            "against HTTP/1.1 keep-alive",
            "req/s",
        ]
        .map(String::from),
    ));
    for c in cases {
        let xs = of(c);
        let rps: Vec<f64> = rows
            .iter()
            .filter(|r| r["case"] == c)
            .filter_map(|r| num(&r["rps"]))
            .collect();
        out.push_str(&table_row(&[
            c.to_string(),
            range(&xs, |x| format!("{x:.2} µs")),
            base.map_or("–".into(), |b| format!("{:.2}×", mean(&xs) / b)),
            range(&rps, |x| thousands(x.round() as u64)),
        ]));
    }
    Ok(out)
}

/// `h2client`: client CPU per request, muxlab against h2load, round by round; then latency at
/// fixed rates, muxlab's percentiles beside h2load's mean.
pub fn h2client(ctx: &Ctx, spec: &str) -> Result<String, DocsError> {
    let (name, v, source) = read(ctx, spec)?;
    let cpu = v["cpu"].as_array().ok_or_else(|| missing(&name, "cpu"))?;
    let latency = v["latency"].as_array().ok_or_else(|| missing(&name, "latency"))?;
    let us = |x: &Value| num(x).map_or("–".to_string(), |x| format!("{x:.2} µs"));
    let whole = |x: &Value| num(x).map_or("–".to_string(), |x| format!("{x:.0} µs"));
    let rate = |x: &Value| num(x).map_or("–".to_string(), |x| thousands(x.round() as u64));
    let mut out = format!(
        "{source} {} connections × {} streams; {} requests a round.\n\n",
        v["conns"],
        v["streams"],
        thousands(v["requests"].as_u64().unwrap_or(0))
    );
    out.push_str(&table_head(
        &[
            "round",
            "h2load CPU/request",
            "muxlab CPU/request",
            "muxlab / h2load",
            "h2load req/s",
            "muxlab req/s",
            "muxlab errors",
        ]
        .map(String::from),
    ));
    for r in cpu {
        let ratio = match (num(&r["muxlab_us_per_request"]), num(&r["h2load_us_per_request"])) {
            (Some(m), Some(h)) => format!("{:.2}×", m / h),
            _ => "–".into(),
        };
        out.push_str(&table_row(&[
            r["round"].to_string(),
            us(&r["h2load_us_per_request"]),
            us(&r["muxlab_us_per_request"]),
            ratio,
            rate(&r["h2load_rps"]),
            rate(&r["muxlab_rps"]),
            r["muxlab_errors"].to_string(),
        ]));
    }
    out.push('\n');
    out.push_str(&table_head(
        &[
            "rate (req/s)",
            "round",
            "h2load mean",
            "h2load sd",
            "muxlab p50",
            "muxlab p99",
            "muxlab mean",
        ]
        .map(String::from),
    ));
    for r in latency {
        out.push_str(&table_row(&[
            rate(&r["rate"]),
            r["round"].to_string(),
            whole(&r["h2load_mean_us"]),
            whole(&r["h2load_sd_us"]),
            whole(&r["muxlab_p50_us"]),
            whole(&r["muxlab_p99_us"]),
            whole(&r["muxlab_mean_us"]),
        ]));
    }
    Ok(out)
}
