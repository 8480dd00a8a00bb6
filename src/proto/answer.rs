//! Answering a command on another thread, in its session's protocol: the encoder a [`Form`]
//! names, writing into that thread's buffer, each value drawn from the connection's room.

use std::sync::Arc;

use super::keyed::{Draw, Form, Op, Outcome, OwnedOp, Replies, Room};
use super::keyed_session::Sink;
use super::{memcache, resp};

/// Runs `run` with `form`'s encoder over `out` (on the thread that runs a command for a
/// session elsewhere), each value drawn from the connection's room through `draw` (none: no
/// bound): what it found.
pub fn encode(
    form: Form,
    out: &mut Vec<u8>,
    draw: Option<&mut Draw>,
    run: impl FnOnce(&mut dyn Replies) -> Outcome,
) -> Outcome {
    let sink = Sink::drawing(out, draw);
    match form {
        Form::Resp(verb) => resp::encode(verb, sink, run),
        Form::Memcache(verb, noreply) => memcache::encode(verb, noreply, sink, run),
    }
}

/// Answers `op` for a connection whose output has `room` (`front`: the answer is the next its
/// client reads) through `run`: as many of a read's values as the room takes. The bytes, the
/// rest of the read (its keys not answered), and what it found.
pub fn build(
    op: &OwnedOp,
    form: Form,
    room: Arc<Room>,
    front: bool,
    run: impl FnOnce(Op<'_>, &mut dyn Replies) -> Outcome,
) -> (Vec<u8>, Option<OwnedOp>, Outcome) {
    let mut bytes = Vec::new();
    let mut draw = Draw::new(room, front);
    let o = encode(form, &mut bytes, Some(&mut draw), |r| run(op.op(), r));
    draw.settle(bytes.len());
    let rest = match op.op() {
        Op::Get { keys, .. } if (o.answered as usize) < keys.len() => Some(OwnedOp::new(&Op::Get {
            keys: keys.from(o.answered as usize),
            first: false,
        })),
        _ => None,
    };
    (bytes, rest, o)
}
