//! A command copied out of the session's input, to run on another thread (a shard's owner,
//! an executor): the same [`Op`], its bytes its own.

use std::time::Duration;

use super::{Args, Counting, Op, When};

/// An [`Op`] that owns its bytes: [`OwnedOp::op`] gives it back.
#[derive(Debug, Clone)]
pub struct OwnedOp {
    shape: Shape,
    /// Its keys and values, one after another, at `spans`.
    bytes: Vec<u8>,
    spans: Vec<(u32, u32)>,
}

/// An op's fields that are not bytes.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Ping {
        echo: bool,
    },
    Get {
        first: bool,
    },
    Set {
        flags: u32,
        ttl: Option<Duration>,
        when: When,
    },
    MSet,
    Del,
    Exists,
    Incr {
        by: i64,
        counting: Counting,
    },
    Expire {
        ttl: Option<Duration>,
    },
    Ttl,
    DbSize,
    FlushAll,
    Info,
}

impl OwnedOp {
    /// A copy of `op`.
    pub fn new(op: &Op<'_>) -> OwnedOp {
        let mut o = OwnedOp {
            shape: Shape::DbSize,
            bytes: Vec::new(),
            spans: Vec::new(),
        };
        o.shape = match *op {
            Op::Ping { echo } => {
                o.take(echo);
                Shape::Ping { echo: echo.is_some() }
            }
            Op::Get { keys, first } => {
                o.all(keys);
                Shape::Get { first }
            }
            Op::Set {
                key,
                value,
                flags,
                ttl,
                when,
            } => {
                o.push(key);
                o.push(value);
                Shape::Set { flags, ttl, when }
            }
            Op::MSet { pairs } => {
                o.all(pairs);
                Shape::MSet
            }
            Op::Del { keys } => {
                o.all(keys);
                Shape::Del
            }
            Op::Exists { keys } => {
                o.all(keys);
                Shape::Exists
            }
            Op::Incr { key, by, counting } => {
                o.push(key);
                Shape::Incr { by, counting }
            }
            Op::Expire { key, ttl } => {
                o.push(key);
                Shape::Expire { ttl }
            }
            Op::Ttl { key } => {
                o.push(key);
                Shape::Ttl
            }
            Op::DbSize => Shape::DbSize,
            Op::FlushAll => Shape::FlushAll,
            Op::Info => Shape::Info,
        };
        o
    }

    /// Bytes it holds.
    pub fn size(&self) -> usize {
        std::mem::size_of::<OwnedOp>() + self.bytes.len() + 8 * self.spans.len()
    }

    fn push(&mut self, b: &[u8]) {
        let at = self.bytes.len() as u32;
        self.bytes.extend_from_slice(b);
        self.spans.push((at, at + b.len() as u32));
    }

    fn take(&mut self, b: Option<&[u8]>) {
        if let Some(b) = b {
            self.push(b);
        }
    }

    fn all(&mut self, args: Args<'_>) {
        for a in args.iter() {
            self.push(a);
        }
    }

    fn args(&self) -> Args<'_> {
        Args::new(&self.bytes, &self.spans)
    }

    /// The op.
    pub fn op(&self) -> Op<'_> {
        let a = self.args();
        match self.shape {
            Shape::Ping { echo } => Op::Ping {
                echo: echo.then(|| a.get(0)),
            },
            Shape::Get { first } => Op::Get { keys: a, first },
            Shape::Set { flags, ttl, when } => Op::Set {
                key: a.get(0),
                value: a.get(1),
                flags,
                ttl,
                when,
            },
            Shape::MSet => Op::MSet { pairs: a },
            Shape::Del => Op::Del { keys: a },
            Shape::Exists => Op::Exists { keys: a },
            Shape::Incr { by, counting } => Op::Incr {
                key: a.get(0),
                by,
                counting,
            },
            Shape::Expire { ttl } => Op::Expire { key: a.get(0), ttl },
            Shape::Ttl => Op::Ttl { key: a.get(0) },
            Shape::DbSize => Op::DbSize,
            Shape::FlushAll => Op::FlushAll,
            Shape::Info => Op::Info,
        }
    }
}
