//! One connection slot's keyed commands: what it sends next (a SET or a GET, of which key,
//! with which value), what it expects back, in order, and the verdict on each reply.

use std::collections::VecDeque;

use super::command::{self, Verb};
use super::keys::{name, Chooser};
use super::ledger::{next_seq, Checked, Ledger};
use super::reply::{NotReplies, Replies, Reply};
use super::value::{self, Stamp, HEADER};
use super::Plan;
use crate::rng::Rng;

/// A command sent and not answered yet.
#[derive(Debug, Clone, Copy)]
struct Expect {
    verb: Verb,
    key: u64,
    /// Its place among the slot's own keys (owned keys only).
    at: Option<u32>,
    /// A SET's sequence number.
    seq: u32,
}

/// What a reply says about its command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A SET was stored.
    Stored,
    /// A GET found a value, checked so (`None`: `--no-verify`).
    Hit(Option<Checked>),
    /// A GET found nothing (never written, evicted, expired).
    Miss,
    /// A GET's value is not what it must be: its key and why.
    Wrong(u64, &'static str),
    /// The server refused the command (an error reply).
    Refused(Verb),
    /// A reply that is no answer to the command it answers (or to none).
    Unexpected,
}

/// One slot's keyed state.
#[derive(Debug)]
pub struct KeyedConn {
    plan: Plan,
    writer: u32,
    keys: Chooser,
    rng: Rng,
    /// Owned keys with checks on: what each must hold.
    ledger: Option<Ledger>,
    expect: VecDeque<Expect>,
    next_seq: u32,
    replies: Replies,
}

impl KeyedConn {
    /// Slot `slot`'s state under `plan`.
    pub fn new(plan: &Plan, slot: u64) -> KeyedConn {
        let keys = Chooser::new(plan.dist, plan.keys, slot, plan.connections);
        let ledger =
            (plan.verify && plan.dist.owned()).then(|| Ledger::new(plan.run, slot as u32, keys.owned(), plan.prefill));
        KeyedConn {
            plan: plan.clone(),
            writer: slot as u32,
            keys,
            rng: Rng::new(&[plan.seed, slot, 0x6b65_7973]),
            ledger,
            expect: VecDeque::new(),
            next_seq: 1,
            replies: Replies::default(),
        }
    }

    /// Appends the next command, a `verb`, to `out`.
    pub fn issue(&mut self, verb: Verb, out: &mut Vec<u8>) {
        let (key, at) = self.keys.next(&mut self.rng);
        let mut e = Expect {
            verb,
            key,
            at: at.map(|a| a as u32),
            seq: 0,
        };
        match verb {
            Verb::Get => command::get(self.plan.dialect, out, key),
            Verb::Set => {
                let least = if self.plan.verify { HEADER } else { 1 };
                let len = self.plan.sizes.sample(&mut self.rng, least);
                e.seq = self.next_seq;
                self.next_seq = next_seq(self.next_seq);
                let stamp = Stamp {
                    run: self.plan.run,
                    key,
                    writer: self.writer,
                    seq: e.seq,
                };
                // Stamped whenever it is long enough, checked or not: a later run reading it
                // back knows it for one of muxlab's.
                command::set(self.plan.dialect, out, key, len, |o| value::write_any(o, len, stamp));
                if let (Some(l), Some(a)) = (self.ledger.as_mut(), at) {
                    l.sent(a, e.seq);
                }
            }
        }
        self.expect.push_back(e);
    }

    /// Frames the replies in `data` and judges each against its command, in order, into
    /// `out`; stops at the first [`Verdict::Unexpected`]. `Err` when the bytes are not replies.
    pub fn read(&mut self, data: &[u8], out: &mut Vec<Verdict>) -> Result<(), NotReplies> {
        let (expect, ledger, plan) = (&mut self.expect, &mut self.ledger, &self.plan);
        self.replies.feed(plan.dialect, data, |bytes, reply| {
            let v = match expect.pop_front() {
                Some(e) => judge(plan, ledger.as_mut(), e, bytes, reply),
                None => Verdict::Unexpected,
            };
            out.push(v);
            v != Verdict::Unexpected
        })
    }

    /// Part of a reply is waiting for its rest.
    pub fn mid_reply(&self) -> bool {
        self.replies.mid_reply()
    }

    /// The socket is gone: its commands in flight will not be answered, and the SETs among
    /// them may or may not have been stored.
    pub fn socket_closed(&mut self) {
        self.expect.clear();
        self.replies.reset();
        if let Some(l) = self.ledger.as_mut() {
            l.socket_lost();
        }
    }
}

/// The verdict on `reply` (framed in `bytes`) to command `e`.
fn judge(plan: &Plan, ledger: Option<&mut Ledger>, e: Expect, bytes: &[u8], reply: Reply) -> Verdict {
    match (e.verb, reply) {
        (_, Reply::Error(_)) => {
            if let (Verb::Set, Some(l), Some(at)) = (e.verb, ledger, e.at) {
                l.answered(at as usize, e.seq, false);
            }
            Verdict::Refused(e.verb)
        }
        (Verb::Set, Reply::Stored) => {
            if let (Some(l), Some(at)) = (ledger, e.at) {
                l.answered(at as usize, e.seq, true);
            }
            Verdict::Stored
        }
        (Verb::Get, Reply::Miss) => Verdict::Miss,
        (Verb::Get, Reply::Value { .. }) if !plan.verify => Verdict::Hit(None),
        (Verb::Get, Reply::Value { data, key }) => {
            if key.is_some_and(|k| bytes[k] != name(e.key)) {
                return Verdict::Wrong(e.key, "a VALUE line naming another key");
            }
            let stamp = match value::read(&bytes[data], e.key) {
                Ok(s) => s,
                Err(b) => return Verdict::Wrong(e.key, b.describe()),
            };
            match (ledger, e.at) {
                (Some(l), Some(at)) => match l.check(at as usize, stamp) {
                    Ok(c) => Verdict::Hit(Some(c)),
                    Err(why) => Verdict::Wrong(e.key, why.describe()),
                },
                _ => Verdict::Hit(Some(Checked::Integrity)),
            }
        }
        _ => Verdict::Unexpected,
    }
}

#[cfg(test)]
mod tests {
    use super::super::command::Dialect;
    use super::super::keys::KeyDist;
    use super::*;

    fn plan(dialect: Dialect, dist: KeyDist) -> Plan {
        Plan {
            dialect,
            keys: 8,
            dist,
            sizes: "40-90".parse().unwrap(),
            verify: true,
            prefill: false,
            connections: 2,
            run: 77,
            seed: 1,
        }
    }

    /// A store that keeps what it is told (or, `lie`, answers each GET with the value of the
    /// key after it) for the commands in `wire`, in RESP: its replies.
    fn store(wire: &[u8], lie: bool) -> Vec<u8> {
        use std::collections::HashMap;
        let mut kv: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
        let mut out = Vec::new();
        let mut at = 0;
        let bulk = |at: &mut usize| {
            let nl = wire[*at..].iter().position(|&c| c == b'\n').unwrap();
            let len: usize = std::str::from_utf8(&wire[*at + 1..*at + nl - 1])
                .unwrap()
                .parse()
                .unwrap();
            let start = *at + nl + 1;
            *at = start + len + 2;
            wire[start..start + len].to_vec()
        };
        while at < wire.len() {
            let set = wire[at + 1] == b'3';
            at += 4;
            let _verb = bulk(&mut at);
            let key = bulk(&mut at);
            if set {
                let v = bulk(&mut at);
                kv.insert(key, v);
                out.extend_from_slice(b"+OK\r\n");
                continue;
            }
            // A liar answers with the value of some other key it holds.
            let k = match lie {
                true => kv.keys().filter(|k| **k != key).min().cloned().unwrap_or(key),
                false => key,
            };
            match kv.get(&k) {
                Some(v) => {
                    out.extend_from_slice(format!("${}\r\n", v.len()).as_bytes());
                    out.extend_from_slice(v);
                    out.extend_from_slice(b"\r\n");
                }
                None => out.extend_from_slice(b"$-1\r\n"),
            }
        }
        out
    }

    #[test]
    fn an_honest_store_passes_every_check_and_one_answering_another_keys_value_is_caught() {
        for dist in [KeyDist::Sequential, KeyDist::Zipf(0.99)] {
            for lie in [false, true] {
                let p = plan(Dialect::Resp, dist);
                let mut c = KeyedConn::new(&p, 1);
                let mut wire = Vec::new();
                // Every owned key written, then read back twice.
                for _ in 0..4 {
                    c.issue(Verb::Set, &mut wire);
                }
                for _ in 0..8 {
                    c.issue(Verb::Get, &mut wire);
                }
                let replies = store(&wire, lie);
                let mut verdicts = Vec::new();
                c.read(&replies, &mut verdicts).unwrap();
                assert_eq!(verdicts.len(), 12);
                let wrong = verdicts.iter().filter(|v| matches!(v, Verdict::Wrong(..))).count();
                let hits = verdicts.iter().filter(|v| matches!(v, Verdict::Hit(_))).count();
                match lie {
                    false => {
                        assert_eq!(wrong, 0, "{dist}: {verdicts:?}");
                        if dist.owned() {
                            assert_eq!(hits, 8, "every owned key was written");
                            assert!(verdicts[4..].iter().all(|v| *v == Verdict::Hit(Some(Checked::Exact))));
                        }
                    }
                    true => assert!(wrong > 0, "{dist}: a lying store passed: {verdicts:?}"),
                }
            }
        }
    }

    #[test]
    fn a_memcached_value_under_another_keys_name_or_for_another_key_is_wrong() {
        // Slot 0 of 2 owns one key of 2: every command names key 0.
        let mut p = plan(Dialect::Memcache, KeyDist::Sequential);
        p.keys = 2;
        let mut c = KeyedConn::new(&p, 0);
        let mut wire = Vec::new();
        c.issue(Verb::Set, &mut wire);
        // The SET's value, as the store would hand it back.
        let at = wire.iter().position(|&b| b == b'\n').unwrap() + 1;
        let value = wire[at..wire.len() - 2].to_vec();
        let reply = |key: &str, v: &[u8]| {
            let mut r = format!("VALUE {key} 0 {}\r\n", v.len()).into_bytes();
            r.extend_from_slice(v);
            r.extend_from_slice(b"\r\nEND\r\n");
            r
        };
        let mut v = Vec::new();
        c.read(b"STORED\r\n", &mut v).unwrap();
        c.issue(Verb::Get, &mut wire);
        c.read(&reply("mx:000000000000", &value), &mut v).unwrap();
        c.issue(Verb::Get, &mut wire);
        c.read(&reply("mx:000000000001", &value), &mut v).unwrap();
        assert_eq!(v[..2], [Verdict::Stored, Verdict::Hit(Some(Checked::Exact))]);
        assert!(
            matches!(v[2], Verdict::Wrong(0, w) if w.contains("another key")),
            "{v:?}"
        );
    }

    #[test]
    fn a_reply_of_the_wrong_kind_or_with_no_command_is_unexpected() {
        let p = plan(Dialect::Memcache, KeyDist::Uniform);
        let mut c = KeyedConn::new(&p, 0);
        let mut wire = Vec::new();
        c.issue(Verb::Get, &mut wire);
        let mut v = Vec::new();
        c.read(b"STORED\r\n", &mut v).unwrap();
        assert_eq!(v, vec![Verdict::Unexpected], "STORED answers no GET");
        let mut c = KeyedConn::new(&p, 0);
        c.issue(Verb::Set, &mut wire);
        let mut v = Vec::new();
        c.read(b"SERVER_ERROR out of memory storing object\r\nEND\r\n", &mut v)
            .unwrap();
        assert_eq!(v, vec![Verdict::Refused(Verb::Set), Verdict::Unexpected]);
    }
}
