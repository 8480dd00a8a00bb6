//! How a session encodes a command's replies ([`Form`]): what another thread that runs the
//! command needs to know to answer in the session's protocol.

use crate::proto::{memcache, resp};

/// How a session encodes a command's replies: what another thread that runs the command
/// needs to answer in the session's protocol.
#[derive(Debug, Clone, Copy)]
pub enum Form {
    Resp(resp::Verb),
    /// memcache's command, and whether it said `noreply`.
    Memcache(memcache::Verb, bool),
}
