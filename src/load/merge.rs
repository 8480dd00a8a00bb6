//! Lossless merging: the pieces of one run (shard processes, hosts, `--shard I/N` runs started
//! by any scheduler) add up to the run's result. Counts add, histograms add (HdrHistogram V2
//! travels between them), per-second series align by wall-clock second. Percentiles are never
//! averaged: they are read from the merged histogram.

use std::time::Duration;

use serde_json::{json, Value};

use super::error::Error;
use super::summary::{results_into, saturated, TOOL};
use super::tally::Tally;
use super::Outcome;

/// The `interchange` key of a load document: everything [`from_value`] needs to rebuild the
/// outcome exactly.
pub fn to_value(o: &Outcome) -> Value {
    json!({"format": 1, "connections": o.connections, "offered_rps": o.offered_rps,
        "window_start_ms": o.window_start_ms, "elapsed_s": o.elapsed.as_secs_f64(),
        "client_cpu_s": o.client_cpu.as_secs_f64(), "connecting_s": o.connecting.as_secs_f64(), "cpu_slots": o.cpu_slots, "threads": o.threads,
        "shards": o.shards, "interrupted": o.interrupted, "tally": o.tally.to_wire()})
}

/// Reads [`to_value`]'s form; the error names what is missing.
pub fn from_value(v: &Value) -> Result<Outcome, String> {
    if v["format"] != 1 {
        return Err("no interchange section of format 1 (written by another muxlab version?)".into());
    }
    let u = |k: &str| v[k].as_u64().ok_or_else(|| format!("interchange '{k}' is missing"));
    let secs = |k: &str| {
        v[k].as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| format!("interchange '{k}' is missing"))
    };
    Ok(Outcome {
        tally: Tally::from_wire(&v["tally"])?,
        connections: u("connections")? as usize,
        offered_rps: v["offered_rps"].as_f64(),
        window_start_ms: u("window_start_ms")?,
        elapsed: secs("elapsed_s")?,
        connecting: v["connecting_s"]
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map_or(Duration::ZERO, Duration::from_secs_f64),
        client_cpu: secs("client_cpu_s")?,
        cpu_slots: u("cpu_slots")? as usize,
        threads: u("threads")? as usize,
        shards: u("shards")? as usize,
        interrupted: v["interrupted"].as_bool().unwrap_or(false),
    })
}

/// Where the pieces ran: on one machine their CPUs are shared, on separate hosts they add.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Machines {
    Same,
    Separate,
}

/// Adds the pieces up. The merged window runs from the earliest start to the latest end;
/// each piece's per-second series is shifted by its start's whole seconds after the earliest.
pub fn outcomes(parts: &[Outcome], machines: Machines) -> Option<Outcome> {
    let start = parts.iter().map(|o| o.window_start_ms).min()?;
    let end_ms = |o: &Outcome| o.window_start_ms as f64 + o.elapsed.as_secs_f64() * 1e3;
    let end = parts.iter().map(end_ms).fold(start as f64, f64::max);
    let mut tally = Tally::default();
    for o in parts {
        let shift = ((o.window_start_ms - start) as f64 / 1e3).round() as usize;
        let mut t = o.tally.clone();
        t.per_second.splice(0..0, std::iter::repeat_n(0, shift));
        tally.merge(&t);
    }
    // On one machine the parts share the CPUs this process may run on (its affinity, which
    // they inherit), not every CPU of the machine.
    let cores = crate::sys::affinity::get().map(|c| c.len()).unwrap_or(1).max(1);
    let slots: usize = parts.iter().map(|o| o.cpu_slots).sum();
    let offered: Vec<f64> = parts.iter().filter_map(|o| o.offered_rps).collect();
    Some(Outcome {
        tally,
        connections: parts.iter().map(|o| o.connections).sum(),
        offered_rps: (!offered.is_empty()).then(|| offered.iter().sum()),
        window_start_ms: start,
        elapsed: Duration::from_secs_f64((end - start as f64).max(0.0) / 1e3),
        connecting: parts.iter().map(|o| o.connecting).max().unwrap_or_default(),
        client_cpu: parts.iter().map(|o| o.client_cpu).sum(),
        cpu_slots: match machines {
            Machines::Same => slots.min(cores),
            Machines::Separate => slots,
        },
        threads: parts.iter().map(|o| o.threads).max().unwrap_or(1),
        shards: parts.iter().map(|o| o.shards).sum(),
        interrupted: parts.iter().any(|o| o.interrupted),
    })
}

/// One line of a merged document's `hosts` (or `parts`) list.
pub fn part_summary(name: &str, o: &Outcome, environment: &Value) -> Value {
    let secs = o.elapsed.as_secs_f64();
    json!({"host": name, "requests": o.tally.requests,
        "throughput_rps": if secs > 0.0 { o.tally.requests as f64 / secs } else { 0.0 },
        "latency_us": o.tally.latency.summary_us(), "client_cpu_s": o.client_cpu.as_secs_f64(),
        "client_saturated": saturated(o), "errors": o.tally.errors_json(),
        "error_total": o.tally.error_total(), "window_start_ms": o.window_start_ms, "environment": environment})
}

/// Reads one `load --json` document: its outcome, or one line saying why it is not one.
pub fn read_document(name: &str, doc: &Value) -> Result<Outcome, Error> {
    if doc["tool"] != TOOL {
        return Err(Error::Usage(format!(
            "{name}: not a muxlab load result (write one with muxlab load --json)"
        )));
    }
    from_value(&doc["interchange"]).map_err(|e| Error::Usage(format!("{name}: {e}")))
}

/// `muxlab merge`: adds documents up into one of the same form (itself mergeable). The flags
/// are the first document's; when the documents are the shares `--shard 0/N` .. `N-1/N` of one
/// run they describe that run, otherwise the totals (connections, requests, rate) are summed.
pub fn documents(docs: &[(String, Value)]) -> Result<Value, Error> {
    let (first_name, first) = docs.first().ok_or("merge needs at least one file")?;
    let mut parts = Vec::new();
    for (name, doc) in docs {
        let o = read_document(name, doc)?;
        if doc["config"]["kind"] != first["config"]["kind"] {
            return Err(Error::Usage(format!(
                "{name} is a {} load and {first_name} a {} load: they do not add up",
                doc["config"]["kind"], first["config"]["kind"]
            )));
        }
        parts.push(o);
    }
    let merged = outcomes(&parts, Machines::Separate).expect("at least one part");
    let mut out = first.clone();
    let mut shares: Vec<Option<&str>> = docs.iter().map(|(_, d)| d["config"]["shard"].as_str()).collect();
    shares.sort();
    shares.dedup();
    let n = docs.len();
    let whole_run = shares.len() == n
        && (0..n).all(|i| shares.contains(&Some(format!("{i}/{n}").as_str())))
        && docs
            .iter()
            .all(|(_, d)| d["config"]["connections"] == first["config"]["connections"]);
    let config = &mut out["config"];
    if !whole_run {
        let sum = |k: &str| -> Value {
            let xs: Vec<f64> = docs.iter().filter_map(|(_, d)| d["config"][k].as_f64()).collect();
            if xs.len() < n {
                Value::Null
            } else if xs.iter().all(|x| x.fract() == 0.0) {
                json!(xs.iter().sum::<f64>() as u64)
            } else {
                json!(xs.iter().sum::<f64>())
            }
        };
        config["connections"] = json!(merged.connections);
        config["requests"] = sum("requests");
        config["rate"] = sum("rate");
    }
    config["shard"] = Value::Null;
    config["shards"] = json!(merged.shards);
    results_into(&mut out, &merged);
    out["parts"] = Value::Array(
        docs.iter()
            .zip(&parts)
            .map(|((name, d), o)| part_summary(name, o, &d["environment"]))
            .collect(),
    );
    if parts.iter().any(saturated) {
        out["client_saturated"] = json!(true);
    }
    Ok(out)
}
