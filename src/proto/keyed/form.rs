//! How a session encodes a command's replies ([`Form`]): what another thread that runs the
//! command needs to know to answer in the session's protocol, and each protocol's commands as
//! their replies differ ([`RespVerb`], [`McVerb`]).

/// How a session encodes a command's replies: what another thread that runs the command
/// needs to answer in the session's protocol.
#[derive(Debug, Clone, Copy)]
pub enum Form {
    Resp(RespVerb),
    /// memcache's command, and whether it said `noreply`.
    Memcache(McVerb, bool),
}

/// The commands RESP knows, as their replies differ (`resp::Verb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RespVerb {
    Ping,
    Get,
    MGet,
    Set,
    MSet,
    Del,
    Exists,
    Incr,
    Expire,
    Ttl,
    DbSize,
    FlushAll,
    Info,
}

/// The commands memcache knows, as their replies differ (`memcache::Verb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McVerb {
    Get,
    Gets,
    Store,
    Delete,
    Incr,
    Touch,
    Flush,
}
