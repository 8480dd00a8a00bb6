//! Reads a thread answered in part (their connection's room ran out), each holding back the
//! commands its connection sent this thread after it: they run, in order, once the rest of
//! the read has gone, so a write sent after a read never changes what the read answers (each
//! run of keys on one thread stays atomic, as when it is answered whole).

use std::collections::VecDeque;
use std::sync::Arc;

use crate::proto::keyed::Room;

/// The reads held on one thread, by connection (its room names it: one per connection, kept
/// alive while anything of its is held here).
pub struct Parked<T> {
    held: Vec<Held<T>>,
}

struct Held<T> {
    room: Arc<Room>,
    /// The ticket of the read answered in part, and its rest.
    ticket: u64,
    rest: T,
    /// What the connection sent after it, in order.
    behind: VecDeque<T>,
}

impl<T> Default for Parked<T> {
    fn default() -> Parked<T> {
        Parked { held: Vec::new() }
    }
}

impl<T> Parked<T> {
    /// `item`, sent by the connection of `room`, back to run now, unless a read of that
    /// connection is held here: then it waits behind it.
    pub fn admit(&mut self, room: &Arc<Room>, item: T) -> Option<T> {
        match self.held.iter_mut().find(|h| Arc::ptr_eq(&h.room, room)) {
            Some(h) => {
                h.behind.push_back(item);
                None
            }
            None => Some(item),
        }
    }

    /// The read of `ticket` was answered in part: its `rest` is held, and what was `behind` it.
    pub fn park(&mut self, room: Arc<Room>, ticket: u64, rest: T, behind: VecDeque<T>) {
        self.held.push(Held {
            room,
            ticket,
            rest,
            behind,
        });
    }

    /// The connection of `room` asks for the rest of `ticket`: it, and what waited behind it
    /// (the connection is no longer held here).
    pub fn take(&mut self, room: &Arc<Room>, ticket: u64) -> Option<(T, VecDeque<T>)> {
        let i = self
            .held
            .iter()
            .position(|h| Arc::ptr_eq(&h.room, room) && h.ticket == ticket)?;
        let h = self.held.swap_remove(i);
        Some((h.rest, h.behind))
    }

    /// Drops what is held for connections that are gone.
    pub fn forget_gone(&mut self) {
        if !self.held.is_empty() {
            self.held.retain(|h| !h.room.closed());
        }
    }

    /// Reads held.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_connection_sends_after_a_read_held_here_waits_behind_it_in_order() {
        let (a, b) = (Arc::new(Room::default()), Arc::new(Room::default()));
        let mut p = Parked::default();
        assert_eq!(p.admit(&a, 1), Some(1), "nothing held: it runs");
        p.park(a.clone(), 7, 70, VecDeque::new());
        assert_eq!(p.admit(&a, 2), None, "behind a's read");
        assert_eq!(p.admit(&a, 3), None);
        assert_eq!(p.admit(&b, 4), Some(4), "another connection is not held");
        assert!(p.take(&a, 8).is_none(), "another ticket");
        let (rest, behind) = p.take(&a, 7).expect("held");
        assert_eq!((rest, Vec::from(behind)), (70, vec![2, 3]));
        assert!(p.is_empty());
        p.park(b.clone(), 9, 90, VecDeque::new());
        b.close();
        p.forget_gone();
        assert_eq!(p.len(), 0, "a connection gone leaves nothing held");
    }
}
