//! What each key a connection slot owns must hold: the slot is the only writer of its keys, so
//! a value of one of them must be the slot's last acknowledged SET, or one still in flight, or
//! one whose fate its socket took with it (sent, then the connection failed); a prefilled key
//! not written since holds the prefill's value (sequence 0). A miss is a miss whatever the
//! ledger says: the store may have evicted or expired the key.

use super::value::Stamp;

/// Nothing is known of the key in this run (not prefilled, no SET acknowledged).
const NONE: u32 = u32::MAX;

/// The most writes whose fate is unknown a ledger remembers (each failed socket adds its SETs
/// in flight); past it the oldest are forgotten, and a value only they could explain is wrong.
const MAX_UNCERTAIN: usize = 4096;

/// How a value was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checked {
    /// Against the write it must be.
    Exact,
    /// For its key, length and checksum only (a shared key, or one not written in this run).
    Integrity,
}

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
        if stored {
            self.acked[at] = seq;
            // An older write whose fate was unknown can no longer be what the key holds.
            self.uncertain.retain(|&(k, _)| k != at as u32);
        }
    }

    /// The socket failed: the SETs in flight may or may not have been stored.
    pub fn socket_lost(&mut self) {
        self.uncertain.append(&mut self.flying);
        if self.uncertain.len() > MAX_UNCERTAIN {
            let over = self.uncertain.len() - MAX_UNCERTAIN;
            self.uncertain.drain(..over);
        }
    }

    /// Checks an intact value `s` of the key at `at`: how, or why it is wrong.
    pub fn check(&self, at: usize, s: Stamp) -> Result<Checked, &'static str> {
        let known = self.acked[at];
        if s.run != self.run {
            return match known == NONE && !self.wrote(at) {
                true => Ok(Checked::Integrity),
                false => Err("a value from before this run of a key written in it"),
            };
        }
        if s.writer != self.writer {
            return Err("a value another connection wrote to a key this one owns");
        }
        let fits =
            s.seq == known || self.flying.contains(&(at as u32, s.seq)) || self.uncertain.contains(&(at as u32, s.seq));
        match fits {
            true => Ok(Checked::Exact),
            false => Err("a value other than the key's last write (stale, or lost)"),
        }
    }

    /// Whether a SET of the key at `at` is in flight or of unknown fate.
    fn wrote(&self, at: usize) -> bool {
        self.flying.iter().chain(&self.uncertain).any(|&(k, _)| k == at as u32)
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
        assert!(l.check(0, stamp(5, 1, 3)).is_err(), "a write never made");
        l.sent(0, 3);
        assert_eq!(l.check(0, stamp(5, 1, 3)), Ok(Checked::Exact), "in flight");
        assert_eq!(l.check(0, stamp(5, 1, 0)), Ok(Checked::Exact), "the last acknowledged");
        l.answered(0, 3, true);
        assert!(l.check(0, stamp(5, 1, 0)).is_err(), "stale: the store lost a write");
        assert!(l.check(0, stamp(5, 2, 3)).is_err(), "another writer");
        assert!(
            l.check(0, stamp(4, 1, 3)).is_err(),
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
        assert!(
            l.check(0, stamp(5, 1, 4)).is_err(),
            "a later write acknowledged settles it"
        );
        l.sent(1, 6);
        l.answered(1, 6, false);
        assert!(l.check(1, stamp(5, 1, 6)).is_err(), "a refused write is not stored");
        let fresh = Ledger::new(5, 1, 1, false);
        assert_eq!(
            fresh.check(0, stamp(2, 9, 9)),
            Ok(Checked::Integrity),
            "a key not written in this run"
        );
    }
}
