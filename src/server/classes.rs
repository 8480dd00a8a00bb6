//! The request classes a server saw (`--work-from-request`): requests and busy time per class,
//! in a bounded table in shared memory (threads and forked workers count into the same one).
//! A class is the work a request's query named (`cpu=2ms&sleep=1ms`); the first 16 distinct
//! ones get a row each, the rest are counted under `other`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

/// Rows the table holds; requests of further classes are counted under [`OTHER`].
pub const ROWS: usize = 16;
/// The name of the row that counts the classes past [`ROWS`].
pub const OTHER: &str = "other";
/// The longest class name kept (a longer one counts as `other`).
const NAME: usize = 40;
/// Words per row: state and length, requests, busy ns, then the name.
const WORDS: usize = 3 + NAME / 8;

/// A row's state (word 0, low byte; the name's length is in the next byte).
const FREE: u64 = 0;
const CLAIMING: u64 = 1;
const READY: u64 = 2;

/// The table: [`ROWS`] rows and the `other` row.
#[derive(Clone, Copy)]
pub struct Classes {
    words: &'static [AtomicU64],
}

/// One class's counts, as the stats line carries them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClassCount {
    pub requests: u64,
    /// Time the class's requests spent in their work (CPU and wait), in µs.
    pub busy_us: f64,
}

impl Classes {
    /// A table in a new shared mapping (made before any fork).
    pub fn new() -> std::io::Result<Classes> {
        Ok(Classes {
            words: crate::sys::shm::shared_words((ROWS + 1) * WORDS)?,
        })
    }

    fn row(&self, i: usize) -> &'static [AtomicU64] {
        &self.words[i * WORDS..(i + 1) * WORDS]
    }

    /// The row of class `name`: found, claimed, or the `other` row when the table is full or
    /// the name too long.
    pub fn row_of(&self, name: &[u8]) -> usize {
        if name.len() > NAME {
            return ROWS;
        }
        let mut packed = [0u64; NAME / 8];
        for (i, b) in name.iter().enumerate() {
            packed[i / 8] |= u64::from(*b) << (8 * (i % 8));
        }
        let head = READY | ((name.len() as u64) << 8);
        for i in 0..ROWS {
            let row = self.row(i);
            // A row left half-claimed (its claimer died in the few instructions between) is
            // not waited on for ever: past this many looks the request counts as "other".
            let mut looks = 0u32;
            loop {
                looks += 1;
                if looks > 1 << 20 {
                    return ROWS;
                }
                let state = row[0].load(Ordering::Acquire);
                if state == head && (0..NAME / 8).all(|k| row[3 + k].load(Ordering::Relaxed) == packed[k]) {
                    return i;
                }
                if state & 0xff == READY {
                    break;
                }
                if state == FREE
                    && row[0]
                        .compare_exchange(FREE, CLAIMING, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                {
                    for (k, w) in packed.iter().enumerate() {
                        row[3 + k].store(*w, Ordering::Relaxed);
                    }
                    row[0].store(head, Ordering::Release);
                    return i;
                }
                // Another thread is claiming it: look again once it has named it.
                std::hint::spin_loop();
            }
        }
        ROWS
    }

    /// Counts one request of row `i` that was busy `busy_ns`.
    pub fn count(&self, i: usize, busy_ns: u64) {
        let row = self.row(i);
        row[1].fetch_add(1, Ordering::Relaxed);
        row[2].fetch_add(busy_ns, Ordering::Relaxed);
    }

    /// Every class with requests, by name.
    pub fn counts(&self) -> BTreeMap<String, ClassCount> {
        let mut out = BTreeMap::new();
        for i in 0..=ROWS {
            let row = self.row(i);
            let requests = row[1].load(Ordering::Relaxed);
            if requests == 0 {
                continue;
            }
            let name = if i == ROWS {
                OTHER.to_string()
            } else {
                let len = ((row[0].load(Ordering::Acquire) >> 8) & 0xff) as usize;
                let bytes: Vec<u8> = (0..len)
                    .map(|k| (row[3 + k / 8].load(Ordering::Relaxed) >> (8 * (k % 8))) as u8)
                    .collect();
                String::from_utf8_lossy(&bytes).into_owned()
            };
            out.insert(
                name,
                ClassCount {
                    requests,
                    busy_us: row[2].load(Ordering::Relaxed) as f64 / 1e3,
                },
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_get_a_row_each_until_the_table_is_full_and_the_rest_are_other() {
        let t = Classes::new().unwrap();
        let a = t.row_of(b"cpu=20us");
        assert_eq!(t.row_of(b"cpu=20us"), a, "the same name, the same row");
        t.count(a, 20_000);
        t.count(a, 20_000);
        for k in 0..20 {
            let r = t.row_of(format!("cpu={k}ms").as_bytes());
            t.count(r, 1_000);
        }
        t.count(t.row_of(&[b'x'; 41]), 5);
        let c = t.counts();
        assert_eq!(
            c["cpu=20us"],
            ClassCount {
                requests: 2,
                busy_us: 40.0
            }
        );
        assert_eq!(c.len(), ROWS + 1, "{c:?}");
        // 20 more classes, 15 rows left: 5 of them and the long name are other.
        assert_eq!(c[OTHER].requests, 6);
    }
}
