//! What another thread posts back for a keyed command it answered: the answer's bytes, and,
//! for a read its connection's room did not take whole, which thread holds the rest. That
//! thread keeps the rest, and every command the connection sent it after the read, until the
//! connection asks again ([`Again`]) once its client has read: so nothing the connection sent
//! later overtakes the read.

use std::sync::Arc;

use super::room::Room;

/// An answer another thread posts back.
#[derive(Debug, Default)]
pub struct Answered {
    pub bytes: Vec<u8>,
    /// The answer is not whole: this thread holds its rest.
    pub more: Option<usize>,
}

/// The rest of the answer of `ticket`, asked of thread `to`, which holds it; `room`: its
/// connection's, which names the connection there.
#[derive(Debug)]
pub struct Again {
    pub ticket: u64,
    pub to: usize,
    pub room: Arc<Room>,
}
