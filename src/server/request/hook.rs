//! The per-request hook every model gives its sessions — each request's `--work` right before
//! its response (or handed to the design's pool), the room `--max-output` leaves, what requests
//! waited before their work — and the two verbs that feed a session through it: input
//! ([`on_input`]) and a later response's pieces falling due or a pool's completion
//! ([`on_later`]). [`crate::server::connection::Connection`] is their one caller: every model handles
//! input alike.

use crate::proto::Protocol;
use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::proto::keyed::{Op, OpKind, Outcome, Replies};
use crate::proto::{Answer, Each, Fed, Request, Session};
use crate::server::{Counter, Stats};
use crate::server::{Offloader, Worker};

/// What every model does with bytes that arrived: count them, feed them to the connection's
/// protocol session (replies are appended to `out`), do each request's `--work` right before
/// its response, and count the requests. One function, so every model handles input alike.
///
/// `out` holds only unsent output, and `bound` is how much of it the model lets pile up:
/// `--max-output` ([`Worker::max_output`]), less what it has handed on and not yet seen go
/// (a ring's send), or less for a blocking model, which writes it all before it goes on
/// anyway. At the bound the session stops consuming input, mid-buffer if need be, and
/// holds the rest ([`Session::holding`], counted as `output_paused`); the model feeds it
/// again, with no new bytes, once the output has drained, before it reads more. With work, `send` is given the output so far before each request's
/// work: the model sends what the socket takes now and takes it out of `out`, so a
/// response never waits for the work of the requests after it.
#[inline]
pub fn on_input(
    w: Worker<'_>,
    session: &mut Session,
    data: &[u8],
    out: &mut Vec<u8>,
    bound: usize,
    from: Origin,
    send: &mut impl FnMut(&mut Vec<u8>),
) -> Fed {
    let Origin { conn, learned } = from;
    w.counters.add(Counter::BytesIn, data.len() as u64);
    let cfg = &w.ctx.cfg;
    let was_holding = session.holding();
    // One feed in TIMED is timed (two clock reads, and one per request with work): the
    // sums over the timed feeds' requests give the means, at an eighth of the cost.
    let timed = next_is_timed();
    let entered = timed.then(Instant::now);
    let mut hook = Hook {
        w,
        conn,
        send,
        work: !cfg.work.is_none() || cfg.work_from_request,
        bound,
        entered,
        waited: Duration::ZERO,
        answer: None,
    };
    let fed = session.feed_each(data, out, &mut hook);
    w.counters.add(Counter::Requests, fed.requests);
    if let (Some(entered), true) = (entered, fed.requests > 0) {
        time_feed(w, fed.requests, learned, entered, hook.waited);
    }
    if session.holding() && !was_holding {
        w.counters.add(Counter::OutputPaused, 1);
    }
    if fed.errors > 0 {
        w.counters.add(Counter::KeyedErrors, u64::from(fed.errors));
    }
    if fed.streams != Default::default() {
        count_streams(w, fed.streams);
    }
    if let Some(cause) = fed.calm {
        count_calm(w, cause);
    }
    if let Some(n) = w.ctx.cfg.crash_after_requests {
        crash_if_reached(&w.ctx.stats, n);
    }
    fed
}

/// The `n` requests a timed feed answered (it began at `entered`): their residence, and with
/// `--metrics` each one's into the duration histogram. Each request of this feed resided from
/// when its input was known (`learned`: the wait's return in an event loop, else the read's)
/// to the feed's end at most, and waited from then to the feed's start (behind the wake-up's
/// earlier connections) and before its own work (behind this read's earlier requests' work).
/// The histogram is fed from the clock reads residence takes anyway: timing every read cost
/// 11 % more instructions per keep-alive request on epoll (a clock read more per read, under
/// callgrind); sampled, it costs a bucket's increment per timed read.
fn time_feed(w: Worker<'_>, n: u64, learned: Option<Instant>, entered: Instant, waited: Duration) {
    let learned = learned.filter(|l| *l <= entered).unwrap_or(entered);
    let resided = entered.elapsed() + (entered - learned);
    let before = entered - learned;
    let ns = resided.as_nanos() as u64;
    w.counters.add(Counter::TimedRequests, n);
    w.counters.add(Counter::ResidenceNs, ns * n);
    w.counters.add(
        Counter::WaitInsideNs,
        before.as_nanos() as u64 * n + waited.as_nanos() as u64,
    );
    if w.ctx.cfg.metrics.is_some() {
        w.counters.observe(ns, n);
    }
}

/// The per-request hook of a call that is not a read's feed (no time is taken).
fn hook<'s, 'a, S: FnMut(&mut Vec<u8>)>(w: Worker<'a>, send: &'s mut S, bound: usize, conn: u64) -> Hook<'s, 'a, S> {
    let cfg = &w.ctx.cfg;
    Hook {
        w,
        conn,
        send,
        work: !cfg.work.is_none() || cfg.work_from_request,
        bound,
        entered: None,
        waited: Duration::ZERO,
        answer: None,
    }
}

/// What wakes a connection for a later response.
#[derive(Debug)]
pub enum Later {
    /// Its pieces fall due ([`Session::due`]): the session writes what is due at this time
    /// (its events).
    Due(Instant),
    /// The work of this ticket is done (a design with a pool): the session writes its
    /// response; a keyed command's comes with it, encoded by the thread that ran it.
    Done(u64, Option<crate::proto::keyed::Answered>),
}

/// What every model does when a connection's later response moves (`what`): the session
/// writes it and, a response having ended, goes on with the input held behind it, through the
/// same hook as [`on_input`]; its requests and streams are counted.
pub fn on_later(
    w: Worker<'_>,
    session: &mut Session,
    what: Later,
    out: &mut Vec<u8>,
    bound: usize,
    conn: u64,
    send: &mut impl FnMut(&mut Vec<u8>),
) -> Fed {
    let mut hook = hook(w, send, bound, conn);
    let fed = match what {
        Later::Due(now) => session.advance_each(now, out, &mut hook),
        Later::Done(ticket, answer) => {
            hook.answer = answer.map(|a| (ticket, a));
            session.complete_each(ticket, out, &mut hook)
        }
    };
    w.counters.add(Counter::Requests, fed.requests);
    if fed.errors > 0 {
        w.counters.add(Counter::KeyedErrors, u64::from(fed.errors));
    }
    if fed.streams != Default::default() {
        count_streams(w, fed.streams);
    }
    fed
}

fn count_streams(w: Worker<'_>, s: crate::proto::StreamCounts) {
    w.counters.add(Counter::StreamsOpened, u64::from(s.opened));
    w.counters.add(Counter::StreamsRefused, u64::from(s.refused));
    w.counters.add(Counter::StreamsReset, u64::from(s.reset));
}

/// A connection went past one of HTTP/2's budgets (it ends with ENHANCE_YOUR_CALM).
fn count_calm(w: Worker<'_>, cause: crate::proto::Cause) {
    use crate::proto::Cause;
    w.counters.add(
        match cause {
            Cause::ClientResets => Counter::CalmClientResets,
            Cause::ServerResets => Counter::CalmServerResets,
            Cause::QuietFrames => Counter::CalmQuietFrames,
        },
        1,
    );
}

/// Where input came from: the connection's token in its wiring (what a pooled job's
/// completion names), and when its wiring learned of it (its wait's return; `None`: the
/// read's own return is that moment) — what the requests' time in the server counts from.
#[derive(Debug, Clone, Copy)]
pub struct Origin {
    pub conn: u64,
    pub learned: Option<Instant>,
}

/// One feed in this many is timed.
const TIMED: u32 = 8;

thread_local! {
    /// The draw of the feeds this thread has begun (xorshift; 0 before its first), for
    /// [`TIMED`].
    static FEEDS: Cell<u64> = const { Cell::new(0) };
}

/// Whether the feed beginning now is one of those timed: a thread's first (a connection's
/// thread or process that serves one request is timed), then one in [`TIMED`] drawn at
/// random. Every eighth by count would be the same place of every wake-up that finds eight
/// (or 16, 32) connections ready in a steady order: the first after the wait, say, which has
/// waited least, and the residence and duration histogram would read low.
#[inline(never)]
fn next_is_timed() -> bool {
    FEEDS.with(|f| {
        let mut x = f.get();
        let first = x == 0;
        if first {
            x = 0x9E37_79B9_7F4A_7C15;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        f.set(x);
        first || x % u64::from(TIMED) == 0
    })
}

/// The hook every model gives its sessions ([`Worker::on_input`]): each request's work, and
/// the room `--max-output` leaves; it keeps how long requests waited before their work.
struct Hook<'a, 'w, S: FnMut(&mut Vec<u8>)> {
    w: Worker<'w>,
    /// The connection's token in its wiring: what a pooled job's completion names.
    conn: u64,
    send: &'a mut S,
    work: bool,
    bound: usize,
    /// When the feed began (a timed one), and what its requests waited for their work since
    /// then, summed.
    entered: Option<Instant>,
    waited: Duration,
    /// The answer another thread posted for a keyed command's ticket, until the session
    /// takes it.
    answer: Option<(u64, crate::proto::keyed::Answered)>,
}

impl<S: FnMut(&mut Vec<u8>)> Each for Hook<'_, '_, S> {
    #[inline]
    fn request(&mut self, req: Request<'_>, out: &mut Vec<u8>) -> Answer {
        let answer = match (self.work, self.w.ctx.offload.get()) {
            // A design with a pool: the work goes there and the response waits for it.
            // (A stream's events are the loop's: its work, if any, is done here.)
            (true, Some(pool)) if req.deferrable && !crate::server::request::events::is_stream(self.w, req.target) => {
                self.offload(*pool, req)
            }
            (true, pool) => {
                // Each request's work runs right before its own response is written. A design
                // with a pool does here what the session cannot answer later (a body, echo,
                // packet) or an event stream's: counted as done on the loop.
                if pool.is_some() {
                    self.w.count(Counter::OffloadInline, 1);
                }
                (self.send)(out);
                if let Some(e) = self.entered {
                    self.waited += e.elapsed();
                }
                crate::server::request::per_request::each(self.w, req)
            }
            (false, _) => Answer::Serve,
        };
        match answer {
            // A stream request's response is an event stream (or a 400 over the bounds).
            Answer::Serve => crate::server::request::events::answer(self.w, req.target).unwrap_or(Answer::Serve),
            refused => refused,
        }
    }

    #[inline]
    fn room(&self, pending: usize) -> usize {
        self.bound.saturating_sub(pending)
    }

    /// A keyed command runs against the design's store (its work): on this thread, or on
    /// the one its design sends it to ([`crate::server::crossing::hops`]), answered later.
    fn command(&mut self, op: Op<'_>, replies: &mut dyn Replies) -> Outcome {
        let Some(store) = self.w.ctx.store.as_ref() else {
            replies.error(crate::proto::keyed::KeyedError::NoStore);
            return Outcome {
                error: true,
                ..Default::default()
            };
        };
        let w = self.w;
        let here = crate::server::crossing::hops::Here {
            index: w.index,
            counters: w.counters,
        };
        let o = match w.ctx.hops.get() {
            Some(hops) => hops.command(here, self.conn, store, op, replies),
            None => crate::server::crossing::hops::run(here, store, op, replies),
        };
        if o.wait {
            // Not run: counted when it runs.
            return o;
        }
        // A command is counted once, at its start.
        let resumed = matches!(op, Op::Get { first: false, .. });
        w.count(
            match op.kind() {
                OpKind::Get => Counter::KeyedGets,
                OpKind::Set => Counter::KeyedSets,
                OpKind::Del => Counter::KeyedDels,
                OpKind::Incr => Counter::KeyedIncrs,
                OpKind::Other => Counter::KeyedOther,
            },
            u64::from(!resumed),
        );
        o
    }

    fn answer(&mut self, ticket: u64) -> Option<crate::proto::keyed::Answered> {
        match self.answer.take() {
            Some((t, a)) if t == ticket => Some(a),
            other => {
                self.answer = other;
                None
            }
        }
    }

    /// The thread holding the rest of an answer it built in part is asked for more.
    fn again(&mut self, again: crate::proto::keyed::Again) {
        let hops = self.w.ctx.hops.get().expect("an answer in part comes only from hops");
        let here = crate::server::crossing::hops::Here {
            index: self.w.index,
            counters: self.w.counters,
        };
        hops.again(here, again);
    }
}

impl<S: FnMut(&mut Vec<u8>)> Hook<'_, '_, S> {
    /// Draws the request's work and hands it to `pool` (its response waits for the ticket),
    /// or does it here when the pool does not take work that short (`--offload-over`).
    fn offload(&mut self, pool: &dyn Offloader, req: Request<'_>) -> Answer {
        let w = self.w;
        let Some(d) = crate::server::request::per_request::draw(w, req) else {
            return Answer::Refuse;
        };
        if !pool.takes(d.cpu + d.wait) {
            w.count(Counter::OffloadInline, 1);
            crate::server::request::per_request::perform(w, &d);
            return Answer::Serve;
        }
        let ticket = crate::server::request::offload::ticket();
        let job = crate::server::Job {
            conn: self.conn,
            ticket,
            cpu: d.cpu,
            wait: d.wait,
            mean: d.mean,
            row: d.row,
            queued: Instant::now(),
        };
        pool.submit(w, job);
        Answer::Later(crate::proto::later::Later::Pending(ticket))
    }
}

/// Fault injection (`--crash-after-requests`, for tests of the bench harness): aborts the
/// process once the server has answered `n` requests.
#[cold]
fn crash_if_reached(stats: &Stats, n: u64) {
    if stats.total(Counter::Requests) >= n {
        eprintln!("muxlab: --crash-after-requests {n} reached: aborting");
        std::process::abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_feed_in_eight_is_timed_and_every_place_of_a_steady_wake_up_gets_its_share() {
        // A thread of its own: its first feed is timed, then the draw.
        std::thread::spawn(|| {
            assert!(next_is_timed(), "a thread's first feed");
            // 8 connections ready every wake-up, in the same order, 10,000 wake-ups.
            let mut by_place = [0u32; 8];
            for _ in 0..10_000 {
                for p in &mut by_place {
                    *p += u32::from(next_is_timed());
                }
            }
            let all: u32 = by_place.iter().sum();
            assert!((9_000..11_000).contains(&all), "one in eight of 80,000: {all}");
            for (place, n) in by_place.iter().enumerate() {
                assert!(
                    (1_000..1_500).contains(n),
                    "place {place} timed {n} times of 10,000: {by_place:?}"
                );
            }
        })
        .join()
        .unwrap();
    }
}
