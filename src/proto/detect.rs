//! A cleartext `--proto h2` connection before its protocol is chosen ([`Detect`]): the
//! HTTP/2 preface makes it HTTP/2, an HTTP/1.x request line HTTP/1.1, anything else HTTP/2
//! with a bad preface. Behind TLS, ALPN may choose first. Once it has chosen it steps aside:
//! the session holding it is replaced by the protocol chosen, which is fed what it held.

use std::time::Instant;

use super::{h2, http};
use super::{Each, Fed, Limits, Protocol};

/// A connection whose protocol its first bytes (or TLS's ALPN) decide.
#[derive(Debug)]
pub struct Detect {
    /// Bytes of the preface seen so far (all of them matched).
    seen: usize,
    /// Once they did not match: the first line so far, to tell HTTP/1.1 from a bad preface.
    line: Vec<u8>,
    /// What it chose, once it has, with the bytes the protocol chosen is to be fed.
    chosen: Option<Choice>,
    limits: Limits,
}

/// The protocol a [`Detect`] chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Http1,
    /// HTTP/2; `preface`: the session still expects the client's preface (all of it).
    H2 {
        preface: bool,
    },
}

impl Detect {
    pub fn new(limits: Limits) -> Detect {
        Detect {
            seen: 0,
            line: Vec::new(),
            chosen: None,
            limits,
        }
    }

    /// The limits the protocol chosen is built under.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// What TLS's ALPN chose (`h2`, anything else HTTP/1.1); `None` without a choice (the
    /// first bytes decide).
    pub fn for_alpn(&self, alpn: Option<&[u8]>) -> Option<Choice> {
        match alpn? {
            b"h2" => Some(Choice::H2 { preface: true }),
            _ => Some(Choice::Http1),
        }
    }

    /// What it chose in its last feed, and the bytes the protocol chosen is to be fed (what
    /// it held): the session holding it steps it aside then.
    pub fn chosen(&mut self) -> Option<(Choice, Vec<u8>)> {
        let choice = self.chosen.take()?;
        Some((choice, std::mem::take(&mut self.line)))
    }

    /// Reads `input` against the preface: a full match chooses HTTP/2 (past the preface);
    /// a mismatch keeps the first line and decides once it is whole (or too long).
    fn decide(&mut self, input: &[u8]) -> Option<Choice> {
        let preface = h2::frame::PREFACE;
        if self.line.is_empty() {
            let n = (preface.len() - self.seen).min(input.len());
            if input[..n] == preface[self.seen..self.seen + n] {
                self.seen += n;
                if self.seen < preface.len() {
                    return None;
                }
                self.line = input[n..].to_vec();
                return Some(Choice::H2 { preface: false });
            }
            self.line.extend_from_slice(&preface[..self.seen]);
        }
        // Not the preface: HTTP/1.1 if its first line is an HTTP/1.x request line, else
        // HTTP/2 with a bad preface (its connection error: GOAWAY and close).
        self.line.extend_from_slice(input);
        let end = self.line.iter().position(|&c| c == b'\n');
        if end.is_none() && self.line.len() < http::MAX_HEAD {
            return None;
        }
        let http1 = end.is_none_or(|e| {
            let l = self.line[..e].strip_suffix(b"\r").unwrap_or(&self.line[..e]);
            l.ends_with(b" HTTP/1.1") || l.ends_with(b" HTTP/1.0")
        });
        Some(if http1 {
            Choice::Http1
        } else {
            Choice::H2 { preface: true }
        })
    }
}

/// What a connection still choosing answers: nothing is served, owed or held for output
/// until a protocol is chosen.
impl Protocol for Detect {
    /// Reads toward a choice; the session holding it feeds the protocol chosen
    /// ([`Detect::chosen`]) in the same call. Input that comes once it has chosen is kept
    /// for the protocol chosen too: nothing fed is lost.
    fn feed_each<F: Each + ?Sized>(&mut self, input: &[u8], _: &mut Vec<u8>, _: &mut F) -> Fed {
        if self.chosen.is_some() {
            self.line.extend_from_slice(input);
        } else {
            self.chosen = self.decide(input);
        }
        Fed::default()
    }

    fn advance_each<F: Each + ?Sized>(&mut self, _: Instant, _: &mut Vec<u8>, _: &mut F) -> Fed {
        Fed::default()
    }

    fn complete_each<F: Each + ?Sized>(&mut self, _: u64, _: &mut Vec<u8>, _: &mut F) -> Fed {
        Fed::default()
    }

    /// Part of a preface or a first line has come (what `--header-timeout` limits).
    fn head_pending(&self) -> bool {
        self.seen > 0 || !self.line.is_empty()
    }

    fn holding(&self) -> bool {
        false
    }

    fn trim(&mut self) -> usize {
        0
    }

    fn due(&self) -> Option<Instant> {
        None
    }

    fn owes(&self) -> bool {
        false
    }

    fn answers_owed(&self) -> bool {
        false
    }

    fn output_gone(&mut self, _: usize) {}

    fn paused(&self) -> bool {
        false
    }

    fn window_held(&self) -> bool {
        false
    }

    /// The first line held is bounded by HTTP/1.1's largest head.
    fn behind(&self) -> usize {
        0
    }

    fn tickets(&self) -> Vec<u64> {
        Vec::new()
    }

    fn cancelled(&mut self) -> Vec<u64> {
        Vec::new()
    }

    fn cut(&mut self, _: &mut Vec<u8>) {}

    fn farewell(&mut self, _: &mut Vec<u8>) {}

    fn timeout_response(&self) -> &'static [u8] {
        b""
    }
}
