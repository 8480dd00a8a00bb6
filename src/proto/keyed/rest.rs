//! What another thread posts back for a keyed command it answered: the answer's bytes, and
//! what is left of a read its connection's room did not take ([`Rest`]), which the
//! connection asks again ([`Again`]) once the client has read.

use std::sync::Arc;

use super::room::Room;
use super::{Form, OwnedOp};

/// What is left of a command another thread answered in part (its room ran out): the keys
/// not answered, to ask the same thread again.
#[derive(Debug)]
pub struct Rest {
    pub op: OwnedOp,
    pub form: Form,
    /// The thread that answers it.
    pub to: usize,
}

/// An answer another thread posts back: its bytes, and what it left for later.
#[derive(Debug, Default)]
pub struct Answered {
    pub bytes: Vec<u8>,
    pub rest: Option<Rest>,
}

/// The rest of a command asked again, for its slot's `ticket`, drawing from `room`; `front`:
/// its answer is the next the client reads.
#[derive(Debug)]
pub struct Again {
    pub ticket: u64,
    pub rest: Rest,
    pub room: Arc<Room>,
    pub front: bool,
}
