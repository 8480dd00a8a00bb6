//! The commands RESP knows, as their replies differ.

/// The commands it knows, as their replies differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
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
