//! The connection's rules of output, input and closing, stepped by hand with scripted
//! events: no socket, no wiring. Its time channel's are in `time_tests.rs`.

use std::sync::Mutex;
use std::time::Duration;

use super::*;
use crate::server::{Ctx, Job, Offloader};

pub(super) const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: t\r\n\r\n";
const STREAM: &[u8] = b"GET /stream?events=2&every=10ms HTTP/1.1\r\nHost: t\r\n\r\n";

pub(super) fn responses(b: &[u8]) -> usize {
    b.windows(9).filter(|x| x == b"HTTP/1.1 ").count()
}

/// No early send (the tests read the output whole).
pub(super) fn keep() -> impl FnMut(&mut Vec<u8>) {
    |_| {}
}

/// Takes all the output the connection has now.
pub(super) fn take_all(w: Worker<'_>, c: &mut Connection, now: Instant) -> Vec<u8> {
    let out = c.output().to_vec();
    c.wrote(w, out.len(), now);
    out
}

#[test]
fn output_goes_before_any_read_and_reading_resumes_once_the_wire_took_it_all() {
    let w = Ctx::for_tests(&[]).worker(0);
    let t0 = Instant::now();
    let mut c = Connection::new(w, 7, t0);
    assert_eq!(c.next(w, t0, &mut keep()), Next::Read);
    c.input(w, &[GET, GET].concat(), t0, None, &mut keep());
    assert_eq!(c.next(w, t0, &mut keep()), Next::Send);
    let all = c.output().to_vec();
    assert_eq!(responses(&all), 2);
    c.wrote(w, 10, t0);
    assert_eq!(c.next(w, t0, &mut keep()), Next::Send, "the rest is still the wire's");
    assert_eq!(c.output(), &all[10..]);
    c.wrote(w, all.len() - 10, t0);
    assert_eq!(c.next(w, t0, &mut keep()), Next::Read);
    assert!(c.output().is_empty());
    assert_eq!(w.counters.get(Counter::BytesOut), all.len() as u64);
}

#[test]
fn input_held_at_the_output_bound_is_answered_once_the_output_drains() {
    let w = Ctx::for_tests(&["--max-output", "100"]).worker(0);
    let t0 = Instant::now();
    let mut c = Connection::new(w, 7, t0);
    c.input(w, &GET.repeat(10), t0, None, &mut keep());
    let (mut answered, mut sends) = (0, 0);
    loop {
        match c.next(w, t0, &mut keep()) {
            Next::Send => {
                assert!(c.output().len() < 100 + 200, "one response over the bound at most");
                answered += responses(&take_all(w, &mut c, t0));
                sends += 1;
            }
            Next::Read => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(answered, 10);
    assert!(sends > 1, "the bound held the input back: {sends} send(s)");
}

#[test]
fn a_send_in_flight_lets_input_in_and_its_rest_goes_first() {
    let w = Ctx::for_tests(&["--work", "cpu:1us"]).worker(0);
    let t0 = Instant::now();
    let mut c = Connection::new(w, 7, t0);
    let mut early_sends = 0;
    c.input(w, &[GET, GET].concat(), t0, None, &mut |_: &mut Vec<u8>| {
        early_sends += 1
    });
    assert_eq!(early_sends, 2, "before each request's work, the replies so far may go");
    assert_eq!(c.next(w, t0, &mut keep()), Next::Send);
    let first = c.take_output();
    assert!(c.sending() && c.in_flight() && c.output().is_empty());
    assert_eq!(c.next(w, t0, &mut keep()), Next::Read, "a ring reads while it sends");
    c.input(w, GET, t0, None, &mut |_: &mut Vec<u8>| early_sends += 1);
    assert_eq!(early_sends, 2, "no early send may overtake the send in flight");
    let second = c.output().len();
    assert!(second > 0);
    assert_eq!(
        c.next(w, t0, &mut keep()),
        Next::Read,
        "no second send while one is in flight"
    );
    let mut said = Vec::new();
    c.close(|b| said.extend_from_slice(b));
    assert!(said.is_empty(), "parting words never overtake a send in flight");
    c.send_done(w, first.clone(), 5, t0);
    assert_eq!(c.next(w, t0, &mut keep()), Next::Send);
    assert!(c.output().starts_with(&first[5..]), "the short send's rest goes first");
    assert_eq!(c.output().len(), first.len() - 5 + second);
}

#[test]
fn a_send_in_flight_counts_against_the_output_bound() {
    let w = Ctx::for_tests(&["--max-output", "200"]).worker(0);
    let t0 = Instant::now();
    let mut c = Connection::new(w, 7, t0);
    c.input(w, GET, t0, None, &mut keep());
    assert_eq!(c.next(w, t0, &mut keep()), Next::Send);
    let first = c.take_output();
    // Input while the first reply is in flight: it and the new replies stay within the
    // bound, one reply over it at most.
    c.input(w, &GET.repeat(20), t0, None, &mut keep());
    let held = first.len() + c.output().len();
    assert!(
        held <= 200 + first.len(),
        "{held} bytes held with a {}-byte reply in flight",
        first.len()
    );
    assert_eq!(c.next(w, t0, &mut keep()), Next::Sending, "the rest waits for the send");
    let mut answered = 1;
    let n = first.len();
    c.send_done(w, first, n, t0);
    loop {
        match c.next(w, t0, &mut keep()) {
            Next::Send => {
                let out = c.take_output();
                answered += responses(&out);
                let n = out.len();
                c.send_done(w, out, n, t0);
            }
            Next::Read => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(answered, 21);
}

#[test]
fn a_close_the_session_asked_for_comes_after_the_response() {
    let w = Ctx::for_tests(&[]).worker(0);
    let t0 = Instant::now();
    let mut c = Connection::new(w, 7, t0);
    c.input(
        w,
        b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n",
        t0,
        None,
        &mut keep(),
    );
    assert_eq!(c.next(w, t0, &mut keep()), Next::Send);
    assert_eq!(responses(&take_all(w, &mut c, t0)), 1);
    assert_eq!(c.next(w, t0, &mut keep()), Next::Close);
}

#[test]
fn a_stream_writes_its_events_when_due_and_the_input_behind_it_waits_for_its_end() {
    let w = Ctx::for_tests(&[]).worker(0);
    let t0 = Instant::now();
    let mut c = Connection::new(w, 7, t0);
    c.input(w, &[STREAM, GET].concat(), t0, None, &mut keep());
    let (mut now, mut said, mut waits) = (t0, Vec::new(), 0);
    loop {
        match c.next(w, now, &mut keep()) {
            Next::Send => said.extend(take_all(w, &mut c, now)),
            Next::Pending => {
                // Paused behind the stream: nothing is read; the wake-up is its own.
                let at = c.timer(w, now).expect("a stream between events wakes for its next");
                assert!(at > now);
                assert_eq!(c.timer(w, now), None, "armed once for that time");
                assert!(
                    c.handle_timeout(w, Some(at), at) && !c.handle_timeout(w, Some(at), at),
                    "its timer fires once"
                );
                now = at;
                waits += 1;
            }
            Next::Read => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(waits, 2, "one wake-up per event");
    assert_eq!(responses(&said), 2, "the stream, then the request behind it");
    let end = said
        .windows(5)
        .position(|x| x == b"0\r\n\r\n")
        .expect("the stream's last chunk");
    let behind = said.windows(9).rposition(|x| x == b"HTTP/1.1 ").unwrap();
    assert!(end < behind, "the request behind the stream is answered after it");
    assert!(now >= t0 + Duration::from_millis(20));
}

#[test]
fn a_peer_that_finished_sending_is_closed_after_what_the_session_held_is_answered() {
    let w = Ctx::for_tests(&["--max-output", "100"]).worker(0);
    let t0 = Instant::now();
    let mut c = Connection::new(w, 7, t0);
    c.input(w, &GET.repeat(10), t0, None, &mut keep());
    c.peer_finished();
    let mut answered = 0;
    loop {
        match c.next(w, t0, &mut keep()) {
            Next::Send => answered += responses(&take_all(w, &mut c, t0)),
            Next::Close => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(answered, 10);
}

#[test]
fn a_stopping_servers_close_is_a_farewell_and_any_other_a_cut() {
    let w = Ctx::for_tests(&[]).worker(0);
    let t0 = Instant::now();
    for stopping in [false, true] {
        let mut c = Connection::new(w, 7, t0);
        c.input(w, STREAM, t0, None, &mut keep());
        assert_eq!(c.next(w, t0, &mut keep()), Next::Send);
        take_all(w, &mut c, t0);
        if stopping {
            c.server_stopping();
        }
        let mut said = Vec::new();
        c.close(|b| said.extend_from_slice(b));
        assert_eq!(said.ends_with(b"0\r\n\r\n"), stopping, "stopping {stopping}: {said:?}");
    }
}

/// A pool that keeps what it is given.
#[derive(Default)]
struct Kept {
    jobs: Mutex<Vec<Job>>,
    cancelled: Mutex<Vec<u64>>,
}

impl Offloader for Kept {
    fn takes(&self, _: Duration) -> bool {
        true
    }
    fn submit(&self, _: Worker<'_>, job: Job) {
        self.jobs.lock().unwrap().push(job);
    }
    fn cancel(&self, _: Worker<'_>, tickets: &[u64]) {
        self.cancelled.lock().unwrap().extend_from_slice(tickets);
    }
}

#[test]
fn pooled_work_names_its_connection_and_its_completion_writes_the_response() {
    let ctx = Ctx::for_tests(&["--work", "sleep:1ms"]);
    let pool: &'static Kept = Box::leak(Box::default());
    assert!(ctx.offload.set(pool).is_ok());
    let w = ctx.worker(0);
    let t0 = Instant::now();
    let mut c = Connection::new(w, 42, t0);
    c.input(w, &[GET, GET].concat(), t0, None, &mut keep());
    assert_eq!(
        c.next(w, t0, &mut keep()),
        Next::Pending,
        "the response waits for its work"
    );
    let job = pool.jobs.lock().unwrap()[0];
    assert_eq!(job.conn, 42, "the job names its connection by its token");
    assert_eq!(
        c.poll_timeout(w),
        Some(t0 + Duration::from_millis(100)),
        "a completion, not a timer, wakes it (the timer is its shedding's)"
    );
    c.complete(w, job.ticket, None, &mut keep());
    assert_eq!(c.next(w, t0, &mut keep()), Next::Send);
    assert_eq!(responses(&take_all(w, &mut c, t0)), 1);
    // The second request, held behind the first, went to the pool in turn.
    assert_eq!(c.next(w, t0, &mut keep()), Next::Pending);
    let second = pool.jobs.lock().unwrap()[1];
    assert_eq!(second.conn, 42);
    assert_eq!(c.poll_event(), None);
    c.close(|_| {});
    assert!(
        pool.cancelled.lock().unwrap().is_empty(),
        "the connection never calls the pool"
    );
    wire::perform(w, &mut c);
    assert_eq!(
        *pool.cancelled.lock().unwrap(),
        vec![second.ticket],
        "closing drops its work: an event its wiring performs"
    );
    assert_eq!(c.poll_event(), None, "performed once");
}

#[test]
fn with_metrics_the_requests_of_the_timed_reads_fill_the_histogram_from_when_their_input_was_learned() {
    for metrics in [true, false] {
        let flags: &[&str] = if metrics { &["--metrics", "127.0.0.1:0"] } else { &[] };
        // A thread of its own: its first read is a timed one.
        std::thread::scope(|s| {
            s.spawn(|| {
                let w = Ctx::for_tests(flags).worker(0);
                let t0 = Instant::now();
                let mut c = Connection::new(w, 7, t0);
                // Learned of 2 ms before the read: each request's time counts from then.
                let learned = t0 - Duration::from_millis(2);
                c.input(w, &GET.repeat(3), t0, Some(learned), &mut keep());
                for _ in 0..40 {
                    take_all(w, &mut c, t0);
                    c.input(w, GET, t0, None, &mut keep());
                }
                let (counts, sum_ns) = w.counters.durations();
                let timed = w.counters.get(Counter::TimedRequests);
                assert!(timed >= 3, "the first read's three at least: {timed}");
                assert_eq!(counts.iter().sum::<u64>(), if metrics { timed } else { 0 }, "{flags:?}");
                if metrics {
                    assert!(
                        sum_ns >= 3 * 2_000_000,
                        "the three learned early count from then: {sum_ns} ns"
                    );
                }
            });
        });
    }
}
