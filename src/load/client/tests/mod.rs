//! A client connection stepped with scripted events, no socket: per protocol, what a server
//! may do to it — cut a response, stall it, flood it with interim responses, answer with a
//! wrong value or to nothing — and what the connection makes of it (the error class it fails
//! with, what it settles, what it keeps).

use std::time::Instant;

use super::*;
use crate::load::{resolve, ErrorClass, LoadArgs, Tally, Target, Workload};
use crate::proto::h2::frame::{self, Code};

mod echo_keyed;
mod h2;
mod http1;
mod life;

/// Books kept by the test: every answer and abandoned request, in order; the window is always
/// open.
#[derive(Default)]
struct Kept {
    tally: Tally,
    answered: Vec<(u8, Option<u16>)>,
    abandoned: Vec<(u8, ErrorClass)>,
    open_streams: i64,
}

impl Books for Kept {
    fn answered(&mut self, _: usize, r: &Sent, status: Option<u16>, _: Instant) -> bool {
        self.answered.push((r.class, status));
        true
    }
    fn abandoned(&mut self, r: Sent, class: ErrorClass, _: Instant) {
        self.abandoned.push((r.class, class));
    }
    fn answer_failed(&mut self, class: ErrorClass, _: u8) {
        self.tally.error(class);
    }
    fn inside(&self, _: Instant) -> bool {
        true
    }
    fn tally(&mut self) -> &mut Tally {
        &mut self.tally
    }
    fn events(&mut self, _: Instant) -> &mut Tally {
        &mut self.tally
    }
    fn stream_open(&mut self, open: bool) {
        self.open_streams += if open { 1 } else { -1 };
    }
    fn events_of(&mut self, _: usize, _: u64) {}
}

/// A connection to `url` under the workload `toml`, up at `t0`, with its books.
/// The run `url` under the workload `toml` would make.
fn spec(url: &str, toml: &str) -> crate::load::Spec {
    let w: Workload = toml::from_str(toml).unwrap();
    resolve(LoadArgs::new(Target::parse(url).unwrap(), 1, w)).unwrap()
}

fn up(url: &str, toml: &str, t0: Instant) -> (Connection, Kept) {
    let spec = spec(url, toml);
    let setup = Setup::of(&spec);
    let mut c = setup.connection(0, 0, t0, Reuse::default());
    c.connecting(t0);
    c.connected(t0);
    c.up(Link::Plain).unwrap();
    let books = Kept {
        tally: setup.tally(1),
        ..Kept::default()
    };
    (c, books)
}

/// Takes what the connection has to write.
fn sent(c: &mut Connection) -> Vec<u8> {
    let out = c.unsent().to_vec();
    c.wrote(out.len());
    out
}

/// A connection to `url` under `toml` whose sockets are used as `reuse` says, up at `t0`.
fn up_reusing(url: &str, toml: &str, reuse: Reuse, t0: Instant) -> Connection {
    let spec = spec(url, toml);
    let mut c = Setup::of(&spec).connection(0, 0, t0, reuse);
    c.connecting(t0);
    c.connected(t0);
    c.up(Link::Plain).unwrap();
    c
}
