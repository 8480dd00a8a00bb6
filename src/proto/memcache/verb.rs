//! The commands memcache knows, as their replies differ.

/// The commands it knows, as their replies differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    Gets,
    Store,
    Delete,
    Incr,
    Touch,
    Flush,
}
