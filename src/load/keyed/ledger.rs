//! What each key a connection slot owns must hold: the slot is the only writer of its keys, so
//! a value of one of them must be the slot's last acknowledged SET, or one still in flight, or
//! one whose fate its socket took with it (sent, then the connection failed: the store may
//! still apply it after a later write on a new socket, so it stays possible); a prefilled key
//! not written since holds the prefill's value (sequence 0); a key with no acknowledged write in
//! this run may hold an earlier run's value. A miss is a miss whatever the ledger says: the
//! store may have evicted or expired the key.

use super::value::Stamp;

/// The most owned keys whose last writes a run keeps (4 bytes each, over its processes).
pub const MAX_LEDGER_KEYS: u64 = 100_000_000;

/// Nothing is known of the key in this run (not prefilled, no SET acknowledged).
const NONE: u32 = u32::MAX;

/// Writes of the key whose fate is unknown were forgotten (past [`MAX_UNCERTAIN`]): any value
/// of this run's is possible, and its values are checked for integrity only.
const LOST: u32 = u32::MAX - 1;

/// The sequence number after `seq`: 1 up to below [`LOST`] (0 is the prefill's).
pub fn next_seq(seq: u32) -> u32 {
    match seq.wrapping_add(1) {
        s if s == 0 || s >= LOST => 1,
        s => s,
    }
}

/// The most writes whose fate is unknown a ledger remembers (each failed socket adds its SETs
/// in flight); past it the oldest are forgotten and their keys checked for integrity only.
const MAX_UNCERTAIN: usize = 4096;

/// How a value was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// Against the write it must be.
    Exact,
    /// For its key, length and checksum only (a shared key, or one not written in this run).
    Integrity,
}

/// Why an intact value is not one the key can hold: it is no write the ledger knows of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unwritten {
    /// A stamp of an earlier run on a key written in this one.
    EarlierRun,
    /// Another connection's stamp on a key this one owns.
    OtherWriter,
    /// This connection's, but not the key's last write (nor one whose fate is unknown).
    NotLastWrite,
}

impl Unwritten {
    /// Its words, for a [`Verdict`](super::Verdict) (which keeps the first wrong value's).
    pub fn describe(&self) -> &'static str {
        match self {
            Unwritten::EarlierRun => "a value from before this run of a key written in it",
            Unwritten::OtherWriter => "a value another connection wrote to a key this one owns",
            Unwritten::NotLastWrite => "a value other than the key's last write (stale, or lost)",
        }
    }
}

impl std::fmt::Display for Unwritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.describe())
    }
}

impl std::error::Error for Unwritten {}

/// One slot's owned keys, by their place among its keys.
#[derive(Debug, Clone)]
pub struct Ledger {
    /// This run and slot: the stamp of its own writes.
    run: u32,
    writer: u32,
    /// Each key's last acknowledged write (`NONE`: none known).
    acked: Vec<u32>,
    /// SETs sent and not answered: (key's place, sequence).
    flying: Vec<(u32, u32)>,
    /// SETs whose socket failed before their answer.
    uncertain: Vec<(u32, u32)>,
}

impl Ledger {
    /// `owned` keys of slot `writer` in run `run`, holding the prefill's values if `prefilled`.
    pub fn new(run: u32, writer: u32, owned: usize, prefilled: bool) -> Ledger {
        Ledger {
            run,
            writer,
            acked: vec![if prefilled { 0 } else { NONE }; owned],
            flying: Vec::new(),
            uncertain: Vec::new(),
        }
    }

    /// A SET of key `at` with sequence `seq` went out.
    pub fn sent(&mut self, at: usize, seq: u32) {
        self.flying.push((at as u32, seq));
    }

    /// The SET was stored (`true`) or refused.
    pub fn answered(&mut self, at: usize, seq: u32, stored: bool) {
        if let Some(p) = self.flying.iter().position(|&f| f == (at as u32, seq)) {
            self.flying.swap_remove(p);
        }
        if stored && self.acked[at] != LOST {
            self.acked[at] = seq;
        }
    }

    /// The socket failed: the SETs in flight may or may not have been stored.
    pub fn socket_lost(&mut self) {
        self.uncertain.append(&mut self.flying);
        if self.uncertain.len() > MAX_UNCERTAIN {
            let over = self.uncertain.len() - MAX_UNCERTAIN;
            for (k, _) in self.uncertain.drain(..over) {
                self.acked[k as usize] = LOST;
            }
        }
    }

    /// Checks an intact value `s` of the key at `at`: how, or why it is wrong.
    pub fn check(&self, at: usize, s: Stamp) -> Result<Checked, Unwritten> {
        let known = self.acked[at];
        if s.run != self.run {
            // No write of this run acknowledged: one in flight may not have been applied yet.
            return match known == NONE {
                true => Ok(Checked::Integrity),
                false => Err(Unwritten::EarlierRun),
            };
        }
        if s.writer != self.writer {
            return Err(Unwritten::OtherWriter);
        }
        if known == LOST {
            return Ok(Checked::Integrity);
        }
        let fits =
            s.seq == known || self.flying.contains(&(at as u32, s.seq)) || self.uncertain.contains(&(at as u32, s.seq));
        match fits {
            true => Ok(Checked::Exact),
            false => Err(Unwritten::NotLastWrite),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(run: u32, writer: u32, seq: u32) -> Stamp {
        Stamp {
            run,
            key: 0,
            writer,
            seq,
        }
    }

    #[test]
    fn an_owned_key_must_hold_its_last_write_one_in_flight_or_one_whose_fate_is_unknown() {
        let mut l = Ledger::new(5, 1, 2, true);
        assert_eq!(l.check(0, stamp(5, 1, 0)), Ok(Checked::Exact), "the prefill's value");
        assert_eq!(
            l.check(0, stamp(5, 1, 3)),
            Err(Unwritten::NotLastWrite),
            "a write never made"
        );
        l.sent(0, 3);
        assert_eq!(l.check(0, stamp(5, 1, 3)), Ok(Checked::Exact), "in flight");
        assert_eq!(l.check(0, stamp(5, 1, 0)), Ok(Checked::Exact), "the last acknowledged");
        l.answered(0, 3, true);
        assert_eq!(
            l.check(0, stamp(5, 1, 0)),
            Err(Unwritten::NotLastWrite),
            "stale: the store lost a write"
        );
        assert_eq!(
            l.check(0, stamp(5, 2, 3)),
            Err(Unwritten::OtherWriter),
            "another writer"
        );
        assert_eq!(
            l.check(0, stamp(4, 1, 3)),
            Err(Unwritten::EarlierRun),
            "another run's value of a key written in this one"
        );
        l.sent(0, 4);
        l.socket_lost();
        assert_eq!(
            l.check(0, stamp(5, 1, 4)),
            Ok(Checked::Exact),
            "its fate went with the socket"
        );
        assert_eq!(l.check(0, stamp(5, 1, 3)), Ok(Checked::Exact));
        l.sent(0, 5);
        l.answered(0, 5, true);
        assert_eq!(
            l.check(0, stamp(5, 1, 4)),
            Ok(Checked::Exact),
            "a lost socket's write may land after a later one"
        );
        assert!(
            l.check(0, stamp(5, 1, 3)).is_err(),
            "but one acknowledged before it may not"
        );
        l.sent(1, 6);
        l.answered(1, 6, false);
        assert!(l.check(1, stamp(5, 1, 6)).is_err(), "a refused write is not stored");
        let mut fresh = Ledger::new(5, 1, 1, false);
        assert_eq!(
            fresh.check(0, stamp(2, 9, 9)),
            Ok(Checked::Integrity),
            "a key not written in this run"
        );
        fresh.sent(0, 1);
        assert_eq!(
            fresh.check(0, stamp(2, 9, 9)),
            Ok(Checked::Integrity),
            "a write in flight may not have been applied yet"
        );
        fresh.socket_lost();
        assert_eq!(
            fresh.check(0, stamp(2, 9, 9)),
            Ok(Checked::Integrity),
            "nor one whose socket failed"
        );
        // Past the writes of unknown fate it remembers, their keys are checked for integrity.
        let mut many = Ledger::new(5, 1, 2, true);
        for seq in 1..=MAX_UNCERTAIN as u32 + 1 {
            many.sent(1, seq);
            many.socket_lost();
        }
        assert_eq!(many.check(1, stamp(5, 1, 777_777)), Ok(Checked::Integrity));
        assert!(many.check(1, stamp(5, 2, 1)).is_err(), "another writer is still wrong");
        assert!(
            many.check(0, stamp(5, 1, 9)).is_err(),
            "the other keys are still checked exactly"
        );
        assert_eq!((next_seq(0), next_seq(LOST - 1), next_seq(u32::MAX)), (1, 1, 1));
    }
}
