//! Green threads' stacks: a new one mapped when none is kept, and those of finished threads
//! kept (their pages given back) for the next, up to [`KEPT`].

use std::sync::Mutex;

use crate::sync::lock;
use crate::sys;
use crate::sys::green::DefaultStack;

/// Usable bytes of a green thread's stack: the deepest path measured, with room to spare. That
/// path is HTTP/2 over TLS with `cpu:` work through the per-request hook (`green_stack_peak` in
/// the stats line reports a run's mark; `tests/green.rs` holds it to a third of this).
pub const STACK: usize = if cfg!(debug_assertions) { 256 * 1024 } else { 128 * 1024 };

/// Stacks kept for the next threads.
const KEPT: usize = 256;

#[derive(Default)]
pub(super) struct Stacks {
    kept: Mutex<Vec<DefaultStack>>,
}

impl Stacks {
    /// A stack for a new thread: a kept one, else a new mapping.
    pub(super) fn take(&self) -> std::io::Result<DefaultStack> {
        let kept = lock(&self.kept).pop();
        match kept {
            Some(s) => Ok(s),
            None => sys::stack::stack(STACK),
        }
    }

    /// A finished thread's stack: its pages go back, and it is kept if there is room.
    pub(super) fn put(&self, stack: DefaultStack) {
        sys::stack::release(&stack);
        let mut kept = lock(&self.kept);
        if kept.len() < KEPT {
            kept.push(stack);
        }
    }
}
