//! Answering a command on another thread, in its session's protocol: the encoder a [`Form`]
//! names, writing into that thread's buffer.

use super::form::Form;
use super::later::Sink;
use super::reply::{Outcome, Replies};
use crate::proto::{memcache, resp};

/// Runs `run` with `form`'s encoder over `out` (on the thread that runs a command for a
/// session elsewhere): what it found.
pub fn encode(form: Form, out: &mut Vec<u8>, run: impl FnOnce(&mut dyn Replies) -> Outcome) -> Outcome {
    match form {
        Form::Resp(verb) => resp::encode(verb, Sink::plain(out), run),
        Form::Memcache(verb, noreply) => memcache::encode(verb, noreply, Sink::plain(out), run),
    }
}
