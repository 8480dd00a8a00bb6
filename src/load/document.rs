//! The result of a load run as one typed document: what `muxlab load --json` prints, what
//! `merge` adds up, what `--hosts` collects from each host and what bench keeps per cell.
//! Serde both ways, so every reader gets the writer's keys and types: the keys docs/design.md
//! promises (`requests`, `errors`, `duration_s`, `throughput_rps`, `latency_us`,
//! `client_cpu_s`), the flags and the machine, and the lossless `interchange` form (the
//! [`Outcome`] with its histograms) a merge is made from.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::bad_document::{BadDocument, DocumentFault};
use super::{Environment, Error, Outcome, Results, RunConfig, Spec};
use crate::hist::Latency;

/// What a document's `tool` says.
pub const TOOL: &str = "muxlab load";

/// The version of the `interchange` section this build reads and writes.
const INTERCHANGE: u32 = 1;

/// One `muxlab load --json` document.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    pub tool: String,
    pub version: String,
    /// The commit the binary was built from (`-dirty`: its tree had changes not committed;
    /// `unknown`: built outside a checkout); empty in documents from before builds said.
    #[serde(default)]
    pub build: String,
    pub target: String,
    pub config: RunConfig,
    pub environment: Environment,
    #[serde(flatten)]
    pub results: Results,
    pub interchange: Interchange,
    /// A merged document: one line per document it was made from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// A run from other hosts (`--hosts`): one line per host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostLine>,
    /// `--slo`: the capacity found, with every probe; the rest of the document is the last
    /// probe that held (or the last probe, where none did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<super::slo::Capacity>,
    /// `--fail-if`: each gate, the figure it found, and whether it held.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<super::gates::Judged>,
}

/// The lossless form of the run: everything a merge needs to rebuild its [`Outcome`] exactly.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Interchange {
    pub format: u32,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// One line of a merged document's `parts` (and a host's line in `hosts`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Part {
    pub host: String,
    pub requests: u64,
    pub throughput_rps: f64,
    pub latency_us: Latency,
    pub client_cpu_s: f64,
    pub client_saturated: bool,
    pub errors: BTreeMap<String, u64>,
    pub error_total: u64,
    pub window_start_ms: u64,
    pub environment: Option<Environment>,
}

/// A host's line in a `--hosts` document: what it measured, or why it has nothing.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum HostLine {
    Measured(Box<Part>),
    Failed { host: String, failed: String },
}

impl Part {
    /// A piece `name` of a merged run (a shard file, a host).
    pub fn of(name: &str, o: &Outcome, environment: Option<Environment>) -> Part {
        let secs = o.elapsed.as_secs_f64();
        Part {
            host: name.to_string(),
            requests: o.tally.requests,
            throughput_rps: if secs > 0.0 {
                o.tally.requests as f64 / secs
            } else {
                0.0
            },
            latency_us: o.tally.latency.latency(),
            client_cpu_s: o.client_cpu.as_secs_f64(),
            client_saturated: o.saturated(),
            errors: o.tally.errors_by_name(),
            error_total: o.tally.error_total(),
            window_start_ms: o.window_start_ms,
            environment,
        }
    }
}

impl Document {
    /// The document of a run of `spec` that measured `o`.
    pub fn new(spec: &Spec, o: &Outcome) -> Document {
        Document {
            tool: TOOL.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            build: crate::origin::revision(),
            target: spec.target().url.clone(),
            config: RunConfig::of(spec, o),
            environment: Environment::here(spec.target().addr),
            results: Results::of(o, &RunConfig::of(spec, o).classes),
            interchange: Interchange {
                format: INTERCHANGE,
                outcome: o.clone(),
            },
            parts: Vec::new(),
            hosts: Vec::new(),
            capacity: None,
            gates: Vec::new(),
        }
    }

    /// The run's outcome, losslessly.
    pub fn outcome(&self) -> &Outcome {
        &self.interchange.outcome
    }

    /// Replaces what was measured with `o` (a merge of pieces): the figures and the
    /// interchange, the flags and the machine kept.
    pub fn set_outcome(&mut self, o: Outcome) {
        self.results = Results::of(&o, &self.config.classes);
        self.interchange.outcome = o;
    }

    /// Reads one document (`name` says where it came from): the error says in one line why
    /// it is not a muxlab load result, or which part of it is wrong.
    pub fn read(name: &str, text: &str) -> Result<Document, Error> {
        #[derive(Deserialize)]
        struct Head {
            tool: Option<String>,
            interchange: Option<Version>,
        }
        #[derive(Deserialize)]
        struct Version {
            format: Option<u32>,
        }
        let bad = |fault| BadDocument {
            name: name.to_string(),
            fault,
        };
        let head: Head = serde_json::from_str(text.trim()).map_err(|_| bad(DocumentFault::NotJson))?;
        if head.tool.as_deref() != Some(TOOL) {
            return Err(bad(DocumentFault::NotLoadResult).into());
        }
        if head.interchange.and_then(|v| v.format) != Some(INTERCHANGE) {
            return Err(bad(DocumentFault::OtherInterchange { reads: INTERCHANGE }).into());
        }
        Ok(serde_json::from_str(text.trim()).map_err(|e| bad(DocumentFault::Unreadable(e)))?)
    }

    /// The warm-up the run had.
    pub fn warmup(&self) -> Duration {
        Duration::from_secs_f64(self.config.warmup_s.max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_that_is_no_load_result_says_why_in_one_line() {
        type Is = fn(&DocumentFault) -> bool;
        let cases: [(&str, Is, &str); 4] = [
            (
                "not json",
                |f| matches!(f, DocumentFault::NotJson),
                "x: not a muxlab load result (not a JSON document)",
            ),
            (
                r#"{"tool": "wrk"}"#,
                |f| matches!(f, DocumentFault::NotLoadResult),
                "x: not a muxlab load result (write one with muxlab load --json)",
            ),
            (
                r#"{"tool": "muxlab load", "interchange": {"format": 99}}"#,
                |f| matches!(f, DocumentFault::OtherInterchange { reads: 1 }),
                "x: no interchange section of format 1 (written by another muxlab version?)",
            ),
            (
                r#"{"tool": "muxlab load", "interchange": {"format": 1}}"#,
                |f| matches!(f, DocumentFault::Unreadable(_)),
                "x: missing field",
            ),
        ];
        for (text, fault, says) in cases {
            let e = Document::read("x", text).unwrap_err();
            let Error::Document(d) = &e else {
                panic!("{text}: {e:?}")
            };
            assert!(fault(&d.fault), "{text}: {d:?}");
            assert!(e.is_usage());
            assert!(
                e.to_string().starts_with(says) && e.to_string().lines().count() == 1,
                "{text}: {e}"
            );
        }
    }
}
