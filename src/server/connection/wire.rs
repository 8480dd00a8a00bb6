//! What every wiring does for its [`Connection`] beside its own reads, writes and waiting,
//! written once: the early send the per-request hook gives the replies so far, the events a
//! connection returns ([`perform`]) and its end ([`end`]). The event loops, queue-pool, the
//! blocking models, green, uring and tokio each call these pieces; none repeats them.

use std::os::fd::AsFd;

use super::{Connection, Event};
use crate::server::Counter;
use crate::server::Worker;
use crate::sys;

/// The early send: before a request's work, the replies so far go as far as the socket takes
/// them now (never waiting: what it does not take stays for the connection's own send, whose
/// deadline covers a client that takes nothing), counted, and leave `out`.
pub fn early<'a>(w: Worker<'a>, fd: impl AsFd + 'a) -> impl FnMut(&mut Vec<u8>) + 'a {
    move |out| {
        let mut sent = 0;
        w.count(Counter::BytesOut, sys::fd::send_now(fd.as_fd(), out, &mut sent) as u64);
        out.drain(..sent);
    }
}

/// Does what `conn` asks beside its I/O: the server's pool drops the work of the tickets it
/// cancels, and pages an idle connection gave back return to the kernel. `true` when it gave
/// back its buffers: a wiring that keeps a read buffer of the connection's own gives that
/// back too.
#[inline]
pub fn perform(w: Worker<'_>, conn: &mut Connection) -> bool {
    conn.has_events() && perform_events(w, conn)
}

fn perform_events(w: Worker<'_>, conn: &mut Connection) -> bool {
    let mut shed = false;
    while let Some(event) = conn.poll_event() {
        match event {
            Event::Cancel(tickets) => {
                if let Some(pool) = w.ctx.offload.get() {
                    pool.cancel(w, &tickets);
                }
            }
            Event::Shed => {
                shed = true;
                sys::mem::give_back();
            }
        }
    }
    shed
}

/// A connection's end, whatever closes it: a stopping server's farewell, or the cut, after
/// whatever output it still holds (its last word among it), written best effort to `fd`; the
/// work its responses waited for dropped. The wiring then closes `fd` and releases its slot.
pub fn end(w: Worker<'_>, conn: &mut Connection, fd: impl AsFd) {
    if w.stopping() {
        conn.server_stopping();
    }
    conn.close(|b| {
        let _ = sys::fd::try_write(fd.as_fd(), b);
    });
    perform(w, conn);
}
