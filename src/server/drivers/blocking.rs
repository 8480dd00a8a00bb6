//! Blocking accept and blocking connection service, shared by the blocking models
//! (iterative, fork, thread, prefork, prethread).
//!
//! Blocking calls carry SO_RCVTIMEO / SO_SNDTIMEO: a blocked accept returns every tick (100 ms),
//! a blocked read or write on a connection every [`conn_tick`] (1 s by default), so a worker notices
//! shutdown and its deadlines without signals reaching the right thread. A connection's tick is
//! longer because there may be 15,000 of them (seed 001): ten wake-ups a second each would cost
//! more than serving them. Each return counts as a loop iteration; one that brought bytes or a
//! connection counts as a useful event.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::time::Instant;

use crate::server::connection::{wire, Connection, Next};
use crate::server::drivers::accept::{Accepted, Acceptor};
use crate::server::Counter;
use crate::server::Error;
use crate::server::Worker;
pub use crate::server::{Kernel, Waits};
use crate::server::{READ_BUF, TICK};
use crate::sys;

/// How often a connection blocked in read or write wakes to check the stop flag and deadlines:
/// once a second, or often enough to see a short `--idle-timeout` / `--header-timeout` pass
/// (a quarter of it).
pub fn conn_tick(cfg: &crate::server::Config) -> std::time::Duration {
    [cfg.idle(), cfg.header_deadline()]
        .into_iter()
        .flatten()
        .map(|t| t / 4)
        .fold(std::time::Duration::from_secs(1), std::cmp::min)
        .max(TICK / 10)
}

/// Makes blocking calls on `listener` return every tick.
pub fn prepare_listener(listener: &impl AsFd) -> io::Result<()> {
    sys::socket::set_timeouts(listener, TICK)
}

/// Blocks until a connection is admitted; `None` once the server is stopping.
pub fn accept(w: Worker<'_>, acceptor: &mut Acceptor, listener: &impl AsFd) -> Option<OwnedFd> {
    while !w.stopping() {
        let got = acceptor.accept_one(w, listener);
        w.count(Counter::Loops, 1);
        w.count(Counter::Events, 1);
        w.flush_syscalls();
        match got {
            Accepted::Conn(fd) => {
                w.count(Counter::Useful, 1);
                return Some(fd);
            }
            Accepted::Refused => w.count(Counter::Useful, 1),
            // A tick in silence: expired keys go (a worker blocked in accept keeps none).
            Accepted::Empty => w.sweep_store(),
            Accepted::OutOfFds => {}
        }
    }
    None
}

/// The one thread that accepts, for the designs that hand each connection to a process or a
/// thread of its own (fork, thread): the listener made to return every tick, and its acceptor.
pub struct Accepting {
    w: Worker<'static>,
    acceptor: Acceptor,
}

impl Accepting {
    /// Readies `ctx`'s listener; the accepting thread is worker 0 (returned beside it: its
    /// counters are the ones the connections it hands on are counted in).
    pub fn start(ctx: &'static crate::server::Ctx) -> Result<(Worker<'static>, Accepting), Error> {
        prepare_listener(&ctx.listener).map_err(crate::server::io_err("setting the accept timeout"))?;
        let w = ctx.worker(0);
        Ok((
            w,
            Accepting {
                w,
                acceptor: Acceptor::new(false),
            },
        ))
    }

    /// Blocks until a connection is admitted; `None` once the server is stopping.
    pub fn next(&mut self) -> Option<OwnedFd> {
        accept(self.w, &mut self.acceptor, &self.w.ctx.listener)
    }
}

/// The whole life of a blocking worker: accept a connection, serve it to its end, repeat,
/// until the server stops.
pub fn accept_and_serve(w: Worker<'_>) -> Result<(), Error> {
    let mut acceptor = Acceptor::new(false);
    w.ready();
    while let Some(fd) = accept(w, &mut acceptor, &w.ctx.listener) {
        serve(w, fd);
    }
    Ok(())
}

/// Serves one connection to its end with blocking reads and writes, then closes it and
/// counts the close. Returns early (closing) when the server stops or a deadline passes: silence
/// or a stalled write for `--idle-timeout`, a request head longer than `--header-timeout` (408).
pub fn serve(w: Worker<'_>, fd: OwnedFd) {
    serve_waiting(w, fd, &Kernel)
}

/// [`serve`], waiting as `waits` does.
pub fn serve_waiting(w: Worker<'_>, fd: OwnedFd, waits: &impl Waits) {
    let spare = SPARE_READ.lock().ok().and_then(|mut v| v.pop());
    match spare.map_or_else(|| sys::mem::Pages::new(READ_BUF), Ok) {
        Ok(mut pages) => {
            serve_with(w, fd, &mut pages, waits);
            if let Ok(mut v) = SPARE_READ.lock() {
                if v.len() < SPARE_KEEP {
                    v.push(pages);
                }
            }
        }
        // No mapping to be had: a buffer from the heap, for this connection.
        Err(_) => serve_with(w, fd, &mut vec![0u8; READ_BUF], waits),
    }
}

/// Read buffers of blocking connections, each in pages of its own: a connection takes one for
/// its life (its pages given back to the kernel while it is idle) and puts it back for the
/// next; a few are kept, so a thread or a connection of its own costs no mapping.
static SPARE_READ: std::sync::Mutex<Vec<sys::mem::Pages>> = std::sync::Mutex::new(Vec::new());
const SPARE_KEEP: usize = 16;

/// A read buffer whose memory an idle connection can give back.
trait ReadBuf: std::ops::DerefMut<Target = [u8]> {
    fn release(&mut self) {}
}

impl ReadBuf for sys::mem::Pages {
    fn release(&mut self) {
        sys::mem::Pages::release(self)
    }
}

impl ReadBuf for Vec<u8> {}

fn serve_with(w: Worker<'_>, fd: OwnedFd, buf: &mut impl ReadBuf, waits: &impl Waits) {
    let token = std::os::fd::AsRawFd::as_raw_fd(&fd) as u64;
    let mut conn = Connection::new(w, token, Instant::now()).in_chunks(WRITE_CHUNK);
    // The first wait after activity is short, so a connection that went quiet gives back its
    // buffers soon; once it has, it waits the connection tick (two setsockopts per spell of
    // silence, none while requests keep coming or for a connection that never idles).
    let (tick, first) = (conn_tick(&w.ctx.cfg), conn_tick(&w.ctx.cfg).min(2 * TICK));
    let mut wait = first;
    // Its one timer: the time it asked for, looked at each time this thread wakes (its waits
    // return at least every connection tick, and a head dribbled byte by byte never lets a
    // read time out); a deadline that has passed closes it at this step.
    let mut timer = None;
    if waits.set_timeouts(&fd, first).is_ok() {
        while !w.stopping() {
            let now = Instant::now();
            if timer.is_some_and(|at| at <= now) {
                conn.handle_timeout(w, timer.take(), now);
            }
            if wire::perform(w, &mut conn) {
                buf.release();
                waits.shed();
            }
            let next = conn.next(w, now, &mut wire::early(w, &fd));
            match next {
                Next::Send => {
                    timer = conn.timer(w, now).or(timer);
                    if !write_some(w, &fd, &mut conn, waits) {
                        break;
                    }
                    continue;
                }
                Next::Close | Next::Sending => break,
                Next::Read | Next::Pending => conn.settle(w, now),
            }
            timer = conn.timer(w, now).or(timer);
            // A later response owed (an event stream): wait for input or its next piece, to
            // the nanosecond. Input behind it waits in TCP: while the session is paused the
            // socket is not read ([`Next::Pending`]).
            match conn
                .due()
                .map(|due| owed(w, &fd, due, tick, next == Next::Pending, waits))
            {
                Some(Owed::Gone) => break,
                Some(Owed::Due) => continue,
                Some(Owed::Waiting) => {
                    w.flush_syscalls();
                    continue;
                }
                Some(Owed::Input) | None => {}
            }
            let r = waits.read(&fd, buf);
            w.count(Counter::Loops, 1);
            w.count(Counter::Events, 1);
            match r {
                Ok(0) => break,
                Ok(n) => {
                    if wait != first && waits.set_read_timeout(&fd, first).is_ok() {
                        wait = first;
                    }
                    conn.input(w, &buf[..n], Instant::now(), None, &mut wire::early(w, &fd));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {
                    // A tick in silence: expired keys go (the connection hears of the time at
                    // the next step: it gives back what it is not using then).
                    w.sweep_store();
                    if wait != tick && waits.set_read_timeout(&fd, tick).is_ok() {
                        wait = tick;
                    }
                    sys::mem::give_back();
                }
                Err(_) => break,
            }
            w.flush_syscalls();
        }
    }
    wire::end(w, &mut conn, &fd);
    drop(fd);
    w.flush_syscalls();
    w.release();
}

/// The most replies a blocking connection gathers before it writes them: a blocking write
/// waits for the client either way, and a connection's own process (fork) holds less.
const WRITE_CHUNK: usize = 64 * 1024;

/// One blocking write of the connection's output; `false` when the connection is done: the
/// write failed or the server is stopping. A write that returns on the send timeout's tick is
/// retried by the caller, whose next step hands the connection the time: a client that has
/// taken nothing for `--idle-timeout` is closed then (its send deadline, counted as
/// `closed_send_timeout`: a client that never reads must not hold a blocking worker for ever).
fn write_some(w: Worker<'_>, fd: &OwnedFd, conn: &mut Connection, waits: &impl Waits) -> bool {
    match waits.write(fd, conn.output()) {
        Ok(n) => {
            conn.wrote(w, n, Instant::now());
            true
        }
        Err(e) if e.kind() == io::ErrorKind::WouldBlock || e.kind() == io::ErrorKind::Interrupted => {
            conn.blocked();
            !w.stopping()
        }
        Err(_) => false,
    }
}

/// What a connection that owes a later response found when it waited.
enum Owed {
    /// Input came (or the connection ended): read it.
    Input,
    /// The next piece is due.
    Due,
    /// A tick passed: look at the stop flag, and wait again.
    Waiting,
    /// Not reading (paused), the wait heard of an error or a hang-up: the peer is gone.
    Gone,
}

/// Blocks until input arrives on `fd` (unless `paused`: then only an error or a hang-up
/// wakes it), `due` comes, or a tick passes (ppoll, to the nanosecond).
fn owed(
    w: Worker<'_>,
    fd: &OwnedFd,
    due: Instant,
    tick: std::time::Duration,
    paused: bool,
    waits: &impl Waits,
) -> Owed {
    let wait = crate::timer::wait(Some(due), Instant::now(), tick);
    if wait.is_zero() {
        return Owed::Due;
    }
    let r = waits.poll(fd, paused, wait);
    w.count(Counter::Loops, 1);
    w.count(Counter::Events, 1);
    match r {
        Ok(true) if paused => Owed::Gone,
        Ok(true) => Owed::Input,
        Err(_) => Owed::Input,
        _ if Instant::now() >= due => Owed::Due,
        _ => Owed::Waiting,
    }
}
