//! What crosses threads: keyed commands sent to the thread that owns their key or to one
//! executor (`hops`), and work done elsewhere posted back to a connection's loop
//! (`completions`). The drivers use these; they use no driver.

pub(crate) mod completions;
pub(crate) mod hops;
pub(crate) mod parked;
