//! What a keyed run counted: GETs (hits and misses), SETs, how each value was checked, wrong
//! values and refusals; and the figures a document shows (the hit ratio).

use serde::{Deserialize, Serialize};

use super::conn::Verdict;
use super::ledger::Checked;

/// Counts of one thread (or, merged, of a run), inside the measured window.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct KeyedTally {
    /// GETs answered with a value (right or wrong), and with none.
    pub hits: u64,
    pub misses: u64,
    /// SETs stored.
    pub sets: u64,
    /// Values checked against the write they must be, and for integrity only.
    pub exact: u64,
    pub integrity: u64,
    /// GETs whose value was wrong (also counted in the errors, `wrong_value`).
    pub wrong: u64,
    /// Commands the server refused (also in the errors, `server_error`).
    pub refused: u64,
    /// The first wrong value: its key and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_wrong: Option<String>,
    /// Keys written before the window (`--prefill`).
    #[serde(default)]
    pub prefilled: u64,
    /// How values were checked: `exact`, `integrity` or `off` (the plan's).
    #[serde(default)]
    pub checks: String,
}

impl KeyedTally {
    /// Counts one verdict of a command answered inside the window.
    pub fn count(&mut self, v: Verdict) {
        match v {
            Verdict::Stored => self.sets += 1,
            Verdict::Hit(c) => {
                self.hits += 1;
                match c {
                    Some(Checked::Exact) => self.exact += 1,
                    Some(Checked::Integrity) => self.integrity += 1,
                    None => {}
                }
            }
            Verdict::Miss => self.misses += 1,
            Verdict::Wrong(key, why) => {
                self.hits += 1;
                self.wrong += 1;
                self.name_wrong(key, why, "");
            }
            Verdict::Refused(_) => self.refused += 1,
            Verdict::Unexpected => {}
        }
    }

    /// A verdict on a command answered outside the window: not counted, but the first wrong
    /// value is named all the same (with where it came).
    pub fn seen_outside(&mut self, v: Verdict) {
        if let Verdict::Wrong(key, why) = v {
            self.name_wrong(key, why, " (outside the measured window)");
        }
    }

    fn name_wrong(&mut self, key: u64, why: &str, when: &str) {
        if self.first_wrong.is_none() {
            let name = String::from_utf8_lossy(&super::keys::name(key)).into_owned();
            self.first_wrong = Some(format!("GET {name}: {why}{when}"));
        }
    }

    pub fn merge(&mut self, o: &KeyedTally) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.sets += o.sets;
        self.exact += o.exact;
        self.integrity += o.integrity;
        self.wrong += o.wrong;
        self.refused += o.refused;
        self.prefilled += o.prefilled;
        if self.first_wrong.is_none() {
            self.first_wrong.clone_from(&o.first_wrong);
        }
        if self.checks.is_empty() {
            self.checks.clone_from(&o.checks);
        }
    }
}

/// A keyed run's figures in a document.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KeyedFigures {
    pub gets: u64,
    pub hits: u64,
    pub misses: u64,
    /// hits / GETs (`null`: no GET was answered).
    pub hit_ratio: Option<f64>,
    pub sets: u64,
    /// How values were checked: `exact`, `integrity` or `off`.
    pub checks: String,
    pub checked_exact: u64,
    pub checked_integrity: u64,
    pub wrong_values: u64,
    pub refused: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_wrong: Option<String>,
    pub prefilled_keys: u64,
}

impl KeyedFigures {
    /// The figures of `t`.
    pub fn of(t: &KeyedTally) -> KeyedFigures {
        let gets = t.hits + t.misses;
        KeyedFigures {
            gets,
            hits: t.hits,
            misses: t.misses,
            hit_ratio: (gets > 0).then(|| t.hits as f64 / gets as f64),
            sets: t.sets,
            checks: t.checks.clone(),
            checked_exact: t.exact,
            checked_integrity: t.integrity,
            wrong_values: t.wrong,
            refused: t.refused,
            first_wrong: t.first_wrong.clone(),
            prefilled_keys: t.prefilled,
        }
    }
}
