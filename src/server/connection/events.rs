//! What a connection asks of its wiring beside its I/O, kept until the wiring takes it
//! (`Connection::poll_event` makes them events): the tickets whose pooled work is dead, and that it
//! gave back its buffers. A server with no pool gathers no tickets.

/// The asks waiting for a connection's wiring.
#[derive(Debug, Default)]
pub struct Asks {
    /// Its server hands work to a pool: what it cancels is worth telling.
    pooled: bool,
    /// Boxed: 8 bytes in every connection where a `Vec` took 24, for what a pooled server's
    /// cancelled work alone gathers (the extra allocation is made only then).
    #[allow(clippy::box_collection)]
    cancelled: Option<Box<Vec<u64>>>,
    shed: bool,
}

impl Asks {
    pub fn new(pooled: bool) -> Asks {
        Asks {
            pooled,
            ..Asks::default()
        }
    }

    /// The work of `tickets()` will never be written (asked only where a pool exists).
    #[inline]
    pub fn cancel(&mut self, tickets: impl FnOnce() -> Vec<u64>) {
        if self.pooled {
            let gone = tickets();
            if !gone.is_empty() {
                self.cancelled.get_or_insert_default().extend(gone);
            }
        }
    }

    /// It gave back its buffers.
    pub fn shed(&mut self) {
        self.shed = true;
    }

    /// Something waits.
    #[inline]
    pub fn any(&self) -> bool {
        self.shed || self.cancelled.is_some()
    }

    /// The tickets to cancel, if any (taken).
    pub fn cancelled(&mut self) -> Option<Vec<u64>> {
        self.cancelled.take().map(|b| *b)
    }

    /// Whether it gave back its buffers (taken).
    pub fn shed_taken(&mut self) -> bool {
        std::mem::take(&mut self.shed)
    }
}
