//! Keyed commands that cross threads. Two designs send a command away from the thread that
//! read it: `--store sharded`, where each worker's loop owns a shard and a command for a key
//! of another's goes to its owner, and io-threads, where one executor runs every command.
//! The command goes as a copy ([`OwnedOp`]) with how its connection's protocol encodes the
//! answer ([`Form`]) and a ticket; the session leaves a slot in its output for it, and the
//! replies behind it wait ([`crate::proto::keyed`]). The thread that runs it encodes the
//! answer, as far as the connection's room on output takes its values, and posts it back to
//! the inbox of the connection's loop, which hands it to the connection
//! ([`crate::server::connection::Connection::complete`]): replies go in order. A read
//! answered in part is held there with what its connection sent after it
//! ([`super::parked`]) until the connection asks again ([`Post::Again`]).
//!
//! Each thread has an inbox: a locked list of posts and an eventfd, written only when the
//! list was empty (one wake-up until the owner takes them, as netty's task queue does). A
//! thread answers (or holds) all the hops of one take, then posts each origin its answers at
//! once.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::parked::Parked;
use crate::proto::keyed::{Again, Answered, Form, Op, Outcome, OwnedOp, Replies, Room};
use crate::server::{Counter, Counters};
use crate::store::Store;
use crate::sync::lock;
use crate::sys;
use crate::sys::eventfd::EventFd;

/// What one thread posts another.
pub enum Post {
    /// Run this command against the store here and answer its origin.
    Run(Hop),
    /// The answer to connection `conn`'s command of `ticket`, encoded (or as much of it as
    /// the connection's room took).
    Answer { conn: u64, ticket: u64, answered: Answered },
    /// The connection of `room` asks for more of the answer of `ticket`, held here.
    Again { room: Arc<Room>, ticket: u64 },
}

/// A command sent to another thread.
pub struct Hop {
    op: OwnedOp,
    form: Form,
    conn: u64,
    ticket: u64,
    /// The worker whose loop owns the connection.
    from: usize,
    /// The connection's room on output, which the answer draws from.
    room: Arc<Room>,
    /// The answer is the next the connection's client reads: its first value goes anyway.
    front: bool,
}

/// The most keys of a read one hop carries: what one answer holds is bounded by this many
/// values.
const RUN: usize = 16;

/// Tickets of the commands sent, one process's: an answer names the slot it fills (a
/// connection that closed, or a descriptor reused since, has no slot of that ticket).
static TICKETS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// One thread's inbox.
pub struct Inbox {
    posts: Mutex<Vec<Post>>,
    wake: EventFd,
}

impl Inbox {
    fn new() -> std::io::Result<Inbox> {
        Ok(Inbox {
            posts: Mutex::new(Vec::new()),
            wake: EventFd::new()?,
        })
    }

    /// The descriptor its thread waits on.
    pub fn wake_fd(&self) -> &EventFd {
        &self.wake
    }

    /// Posts `post`, waking the thread if its list was empty.
    fn post_one(&self, post: Post) {
        let was_empty = {
            let mut q = lock(&self.posts);
            let empty = q.is_empty();
            q.push(post);
            empty
        };
        if was_empty {
            let _ = self.wake.notify();
        }
    }

    /// Posts `posts` (emptied), waking the thread if its list was empty.
    fn post(&self, posts: &mut Vec<Post>) {
        let was_empty = {
            let mut q = lock(&self.posts);
            let empty = q.is_empty();
            q.append(posts);
            empty
        };
        if was_empty {
            let _ = self.wake.notify();
        }
    }

    /// What was posted, into `into` (emptied first), the wake-up drained first (a post after
    /// the take finds the list empty and wakes again).
    fn take(&self, into: &mut Vec<Post>) {
        let _ = self.wake.drain();
        into.clear();
        std::mem::swap(into, &mut *lock(&self.posts));
    }

    /// Waits up to `timeout` for a post (a thread with no event loop: the executor).
    pub fn wait(&self, timeout: Duration) {
        let mut fds = [sys::poll::entry(
            std::os::fd::AsRawFd::as_raw_fd(&self.wake),
            sys::poll::IN,
        )];
        let _ = sys::poll::poll(&mut fds, timeout.as_millis().min(i32::MAX as u128) as i32);
    }
}

/// The thread that runs a step: its worker index and its counters.
#[derive(Clone, Copy)]
pub struct Here {
    pub index: usize,
    pub counters: Counters,
}

impl Here {
    fn count(&self, c: Counter, n: u64) {
        self.counters.add(c, n);
    }

    /// Counts keys the store dropped: past their time, and evicted.
    pub fn dropped(&self, expired: u32, evicted: u32) {
        if expired > 0 {
            self.count(Counter::KeyedExpired, u64::from(expired));
        }
        if evicted > 0 {
            self.count(Counter::KeyedEvicted, u64::from(evicted));
        }
    }

    /// The tick of a thread that keeps keyed state: what has expired in the tables it may
    /// sweep is dropped, and counted.
    pub fn sweep(&self, store: &Store) {
        let (expired, evicted) = store.sweep(self.index, std::time::Instant::now());
        self.dropped(expired, evicted);
    }
}

/// Where commands go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// To the owner of the key's shard (`--store sharded`).
    Owner,
    /// Every command to the executor, whose inbox is this one (io-threads).
    Executor(usize),
}

/// The inboxes of a server whose keyed commands cross threads, and where they go.
pub struct Hops {
    inboxes: Box<[Inbox]>,
    rule: Rule,
}

impl Hops {
    /// A shard per worker, `workers` of them: a command goes to its key's owner.
    pub fn sharded(workers: usize) -> std::io::Result<Hops> {
        Hops::with(workers, Rule::Owner)
    }

    /// `io` I/O threads and one executor, whose inbox is the last: every command goes there.
    pub fn executor(io: usize) -> std::io::Result<Hops> {
        Hops::with(io + 1, Rule::Executor(io))
    }

    fn with(n: usize, rule: Rule) -> std::io::Result<Hops> {
        Ok(Hops {
            inboxes: (0..n).map(|_| Inbox::new()).collect::<Result<_, _>>()?,
            rule,
        })
    }

    /// Worker `i`'s inbox.
    pub fn inbox(&self, i: usize) -> &Inbox {
        &self.inboxes[i]
    }

    /// Runs `op` for connection `conn` of worker `w`: here, against `store`, or on the thread
    /// its rule sends it to, answered later through `r`.
    pub fn command(&self, w: Here, conn: u64, store: &Store, op: Op<'_>, r: &mut dyn Replies) -> Outcome {
        let to = match self.rule {
            Rule::Executor(e) => e,
            Rule::Owner => match op {
                Op::Set { key, .. } | Op::Incr { key, .. } | Op::Expire { key, .. } | Op::Ttl { key } => {
                    store.owner(key)
                }
                Op::Del { keys } | Op::Exists { keys } if keys.len() == 1 => store.owner(keys.get(0)),
                Op::Get { keys, first } => return self.read(w, conn, store, keys, first, r),
                Op::Ping { .. } => w.index,
                // Writes and counts of many keys, and the commands of the whole keyspace:
                // the store takes the shards they touch, in order, here, once the
                // connection's commands sent to owners have been answered (it must not
                // overtake them: `SET k v` sent to k's owner, then `MSET k w` here).
                _ if !r.settled() => {
                    return Outcome {
                        wait: true,
                        ..Outcome::default()
                    }
                }
                _ => w.index,
            },
        };
        if to == w.index {
            return run(w, store, op, r);
        }
        self.send(w, conn, to, &op, r);
        Outcome {
            answered: match op {
                Op::Get { keys, .. } => keys.len() as u32,
                _ => 0,
            },
            ..Outcome::default()
        }
    }

    /// A read of many keys, split into runs of keys with one owner (at most [`RUN`] keys a
    /// run): each run here or at its owner, in order; it stops, as a read here does, where
    /// the output is full or the connection owes as many answers as it may
    /// ([`crate::proto::keyed::Replies::full`]), after one run at least.
    fn read(
        &self,
        w: Here,
        conn: u64,
        store: &Store,
        keys: crate::proto::keyed::Args<'_>,
        first: bool,
        r: &mut dyn Replies,
    ) -> Outcome {
        let mut o = Outcome::default();
        let mut i = 0;
        while i < keys.len() {
            if o.answered > 0 && r.full() {
                break;
            }
            let owner = store.owner(keys.get(i));
            let mut j = i + 1;
            while j < keys.len() && j - i < RUN && store.owner(keys.get(j)) == owner {
                j += 1;
            }
            let part = Op::Get {
                keys: keys.from(i).take(j - i),
                first: first && i == 0,
            };
            if owner == w.index {
                let got = run(w, store, part, r);
                (o.hits, o.misses, o.answered) = (o.hits + got.hits, o.misses + got.misses, o.answered + got.answered);
                if got.answered < (j - i) as u32 {
                    break;
                }
            } else {
                self.send(w, conn, owner, &part, r);
                o.answered += (j - i) as u32;
            }
            i = j;
        }
        o
    }

    /// Sends `op` to thread `to`, its answer to come under a new ticket.
    fn send(&self, w: Here, conn: u64, to: usize, op: &Op<'_>, r: &mut dyn Replies) {
        let Some(form) = r.form() else {
            // Nothing to answer it with elsewhere: it cannot happen for a session's command.
            unreachable!("a keyed command without its protocol's form");
        };
        let ticket = TICKETS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let front = r.settled();
        let op = OwnedOp::new(op);
        let room = r.later(ticket, op.size()).expect("a session's replies have a room");
        let hop = Hop {
            op,
            form,
            conn,
            ticket,
            from: w.index,
            room,
            front,
        };
        self.inboxes[to].post_one(Post::Run(hop));
        w.count(Counter::KeyedHops, 1);
    }

    /// Asks thread `again.to` for more of an answer it holds the rest of, under its ticket.
    pub fn again(&self, w: Here, again: Again) {
        let Again { ticket, to, room } = again;
        self.inboxes[to].post_one(Post::Again { room, ticket });
        w.count(Counter::KeyedHops, 1);
    }

    /// What was posted to worker `w`'s inbox: hops run against `store` and answered (each
    /// origin's answers posted at once), or held in `parked` behind a read of their
    /// connection's answered in part; answers handed to `answered(conn, ticket, answer)`.
    pub fn take(
        &self,
        w: Here,
        store: &Store,
        posts: &mut Vec<Post>,
        parked: &mut Parked<Hop>,
        mut answered: impl FnMut(u64, u64, Answered),
    ) {
        self.inboxes[w.index].take(posts);
        let mut back: Vec<Vec<Post>> = Vec::new();
        for post in posts.drain(..) {
            match post {
                Post::Answer {
                    conn,
                    ticket,
                    answered: a,
                } => answered(conn, ticket, a),
                Post::Run(hop) => {
                    let room = hop.room.clone();
                    if let Some(hop) = parked.admit(&room, hop) {
                        run_from(w, store, hop, VecDeque::new(), parked, &mut back);
                    }
                }
                Post::Again { room, ticket } => {
                    // (None held: its connection closed, and what was held went.)
                    if let Some((mut rest, behind)) = parked.take(&room, ticket) {
                        rest.front = true;
                        run_from(w, store, rest, behind, parked, &mut back);
                    }
                }
            }
        }
        parked.forget_gone();
        for (origin, mut answers) in back.into_iter().enumerate() {
            if !answers.is_empty() {
                self.inboxes[origin].post(&mut answers);
            }
        }
    }
}

/// Runs `hop`, then what waited `behind` it, in order, each answered into `back` (by
/// origin), until one is answered in part: its rest, and what is left behind it, are held in
/// `parked` until its connection asks again.
fn run_from(
    w: Here,
    store: &Store,
    hop: Hop,
    mut behind: VecDeque<Hop>,
    parked: &mut Parked<Hop>,
    back: &mut Vec<Vec<Post>>,
) {
    let mut next = Some(hop);
    while let Some(hop) = next {
        let (bytes, rest, o) = crate::proto::answer::build(&hop.op, hop.form, hop.room.clone(), hop.front, |op, r| {
            run(w, store, op, r)
        });
        if o.error {
            w.count(Counter::KeyedErrors, 1);
        }
        if back.len() <= hop.from {
            back.resize_with(hop.from + 1, Vec::new);
        }
        back[hop.from].push(Post::Answer {
            conn: hop.conn,
            ticket: hop.ticket,
            answered: Answered {
                bytes,
                more: rest.as_ref().map(|_| w.index),
            },
        });
        if let Some(op) = rest {
            let (room, ticket) = (hop.room.clone(), hop.ticket);
            parked.park(room, ticket, Hop { op, ..hop }, behind);
            return;
        }
        next = behind.pop_front();
    }
}

/// Runs `op` against `store` on this thread, counted here: executed, keys found and not,
/// errors.
pub fn run(w: Here, store: &Store, op: Op<'_>, r: &mut dyn Replies) -> Outcome {
    let o = store.run(op, r);
    w.count(Counter::KeyedExecuted, 1);
    let locks = crate::store::taken::drain();
    if locks.taken > 0 {
        w.count(Counter::KeyedLocks, locks.taken);
        w.count(Counter::KeyedLockContended, locks.contended);
        if locks.timed > 0 {
            w.count(Counter::KeyedLockTimed, locks.timed);
            w.count(Counter::KeyedLockWaitedNs, locks.waited_ns);
            w.count(Counter::KeyedLockHeldNs, locks.held_ns);
        }
    }
    w.dropped(o.expired, o.evicted);
    if o.hits > 0 {
        w.count(Counter::KeyedHits, u64::from(o.hits));
    }
    if o.misses > 0 {
        w.count(Counter::KeyedMisses, u64::from(o.misses));
    }
    o
}

/// The reads one thread answered in part, and what their connections sent it after them.
pub type Held = Parked<Hop>;

/// The hops of a server whose keyed commands cross threads, once it has any.
pub type Slot = OnceLock<&'static Hops>;
