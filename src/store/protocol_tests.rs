//! RESP and memcache sessions (`proto`) over a table of their own: replies in order, the
//! protocols' errors at their bounds, and the output bound for a client that never reads.

use super::{Striped, Table};
use crate::proto::keyed::{Op, Outcome, Replies};
use crate::proto::keyed_session::Framing;
use crate::proto::Protocol;
use crate::proto::{Answer, Each, Limits, Proto, Request, Session, Speaks};

/// Runs commands against a table of its own (a server's `owned` store), the output bounded
/// at `bound` bytes.
pub(super) struct Keyed {
    table: Table,
    /// Striped instead, where set.
    striped: Option<Striped>,
    bound: usize,
}

impl Keyed {
    /// Over a striped keyspace of `n` stripes instead of one table.
    pub(super) fn striped(n: usize) -> Keyed {
        Keyed {
            striped: Some(Striped::new(n, Default::default())),
            ..Keyed::new()
        }
    }

    pub(super) fn new() -> Keyed {
        Keyed {
            table: Table::new(),
            striped: None,
            bound: usize::MAX,
        }
    }
}

impl Each for Keyed {
    fn request(&mut self, _: Request<'_>, _: &mut Vec<u8>) -> Answer {
        Answer::Serve
    }

    fn room(&self, pending: usize) -> usize {
        self.bound.saturating_sub(pending)
    }

    fn command(&mut self, op: Op<'_>, replies: &mut dyn Replies) -> Outcome {
        let now = std::time::Instant::now();
        match &self.striped {
            Some(s) => s.run(op, now, replies),
            None => self.table.run(op, now, replies),
        }
    }
}

pub(super) fn limits() -> Limits {
    Limits {
        max_value: 64,
        ..Limits::default()
    }
}

/// Feeds `input` in `pieces` to a fresh session: the replies, commands answered, errors, and
/// whether it closed.
fn talk(proto: Proto, pieces: &[&[u8]]) -> (String, u64, u32, bool) {
    talk_to(Keyed::new(), proto, pieces)
}

pub(super) fn talk_to(mut each: Keyed, proto: Proto, pieces: &[&[u8]]) -> (String, u64, u32, bool) {
    let mut s = Session::with_limits(proto, limits());
    let (mut out, mut n, mut errors, mut close) = (Vec::new(), 0, 0, false);
    for p in pieces {
        let fed = s.feed_each(p, &mut out, &mut each);
        (n, errors, close) = (n + fed.requests, errors + fed.errors, close | fed.close);
    }
    (String::from_utf8_lossy(&out).into_owned(), n, errors, close)
}

pub(super) fn whole(proto: Proto, input: &[u8]) -> (String, u64, u32, bool) {
    talk(proto, &[input])
}

/// Every split of `input` in two gives what it gives whole.
fn same_at_every_split(proto: Proto, input: &[u8]) {
    let all = whole(proto, input);
    for cut in 0..=input.len() {
        assert_eq!(talk(proto, &[&input[..cut], &input[cut..]]), all, "cut at {cut}");
    }
}

pub(super) const RESP_SESSION: &[u8] =
    b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nv1\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\nPING\r\nPING hi\r\n\
INCR n\r\nINCRBY n 10\r\nDECRBY n 3\r\nGET n\r\nMSET a 1 b 2\r\nMGET a b c\r\nDEL a b c\r\nEXISTS a b k\r\n\
SET k x NX\r\nSET k y XX\r\nGET k\r\nSET q 1 EX 100\r\nTTL q\r\nTTL k\r\nTTL nope\r\nEXPIRE k 100\r\nDBSIZE\r\n\
CONFIG GET save\r\nFOO bar\r\nGET\r\nSET k v BOGUS\r\nSET s abc\r\nINCR s\r\nFLUSHALL\r\nDBSIZE\r\n";

#[test]
fn resp_commands_are_answered_in_order_as_redis_answers_them() {
    let (out, n, errors, close) = whole(Proto::Resp, RESP_SESSION);
    let want = "+OK\r\n$2\r\nv1\r\n+PONG\r\n$2\r\nhi\r\n:1\r\n:11\r\n:8\r\n$1\r\n8\r\n+OK\r\n\
*3\r\n$1\r\n1\r\n$1\r\n2\r\n$-1\r\n:2\r\n:1\r\n$-1\r\n+OK\r\n$1\r\ny\r\n+OK\r\n:100\r\n:-1\r\n:-2\r\n:1\r\n:3\r\n\
*0\r\n-ERR unknown command 'FOO', with args beginning with: 'bar' \r\n-ERR wrong number of arguments for 'get' command\r\n\
-ERR syntax error\r\n+OK\r\n-ERR value is not an integer or out of range\r\n+OK\r\n:0\r\n";
    assert_eq!(out, want);
    assert_eq!((n, errors, close), (29, 4, false));
}

#[test]
fn resp_replies_do_not_depend_on_how_the_commands_were_split() {
    same_at_every_split(Proto::Resp, RESP_SESSION);
}

/// A bulk over `--max-value` is a bad length, as redis calls one over its `proto-max-bulk-len`:
/// the error, and the connection closes (it went on, skipping the value, which redis does not).
#[test]
fn a_resp_value_past_max_value_is_an_invalid_bulk_length_and_closes_as_redis_does() {
    let big = format!("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$100\r\n{}\r\nPING\r\n", "x".repeat(100));
    let (out, n, errors, close) = whole(Proto::Resp, big.as_bytes());
    assert_eq!(out, "-ERR Protocol error: invalid bulk length\r\n");
    assert_eq!((n, errors, close), (1, 1, true));
    // Arriving a byte at a time, the value is never held.
    let mut s = Session::with_limits(Proto::Resp, limits());
    let mut each = Keyed::new();
    let mut out = Vec::new();
    for b in big.as_bytes().chunks(1) {
        s.feed_each(b, &mut out, &mut each);
        assert!(s.behind() < 40, "{} bytes held", s.behind());
    }
    same_at_every_split(Proto::Resp, big.as_bytes());
}

/// Feeds `input` under an output bound of `bound` bytes, the wire taking all the output after
/// each feed (and the session fed again while it holds any): all the output, and the most one
/// feed wrote.
fn bounded(proto: Proto, input: &[u8], bound: usize) -> (String, usize) {
    let mut s = Session::with_limits(proto, limits());
    let mut each = Keyed { bound, ..Keyed::new() };
    let (mut all, mut out, mut most) = (Vec::new(), Vec::new(), 0);
    s.feed_each(input, &mut out, &mut each);
    loop {
        most = most.max(out.len());
        all.append(&mut out);
        if !s.holding() {
            break;
        }
        s.feed_each(&[], &mut out, &mut each);
    }
    (String::from_utf8_lossy(&all).into_owned(), most)
}

#[test]
fn a_read_of_many_keys_is_held_to_the_output_bound_and_answered_whole_in_order() {
    let value = "v".repeat(60);
    let keys = " k".repeat(1000);
    let input = format!("SET k {value}\r\nMGET{keys} nope\r\nPING\r\n");
    let (out, most) = bounded(Proto::Resp, input.as_bytes(), 4096);
    assert!(most <= 4096 + 80, "{most} bytes in one feed");
    let want = format!(
        "+OK\r\n*1001\r\n{}$-1\r\n+PONG\r\n",
        format!("$60\r\n{value}\r\n").repeat(1000)
    );
    assert!(out == want, "{} bytes, not the {} expected", out.len(), want.len());
    let input = format!("set k 0 0 60\r\n{value}\r\nget{keys} nope\r\nversion\r\n");
    let (out, most) = bounded(Proto::Memcache, input.as_bytes(), 4096);
    assert!(most <= 4096 + 80, "{most} bytes in one feed");
    let want = format!(
        "STORED\r\n{}END\r\nVERSION ",
        format!("VALUE k 0 60\r\n{value}\r\n").repeat(1000)
    );
    assert!(out.starts_with(&want), "{} bytes", out.len());
}

#[test]
fn expiry_times_too_far_for_the_clock_are_refused_or_held_far_never_a_panic() {
    let (out, _, _, close) = whole(
        Proto::Resp,
        b"SET k v EX 9223372036854775807\r\nSET k v EX 9223372036854775\r\nSET k v EX 100\r\nEXPIRE k 9223372036854775\r\nTTL nope\r\nEXPIRE k -1\r\nDBSIZE\r\n",
    );
    // Seconds whose time from now passes 64 bits of milliseconds are refused, as redis 7
    // refuses them; a time already past deletes the key.
    assert_eq!(
        out,
        "-ERR invalid expire time in 'set' command\r\n-ERR invalid expire time in 'set' command\r\n+OK\r\n\
         -ERR invalid expire time in 'expire' command\r\n:-2\r\n:1\r\n:0\r\n",
        "a time already past deletes the key"
    );
    assert!(!close);
    let (out, _, _, _) = whole(
        Proto::Memcache,
        b"set k 0 9223372036854775807 1\r\nx\r\ntouch k 9223372036854775807\r\nset j 0 -1 1\r\ny\r\nget k j\r\n",
    );
    assert_eq!(out, "STORED\r\nTOUCHED\r\nSTORED\r\nVALUE k 0 1\r\nx\r\nEND\r\n");
}

#[test]
fn a_resp_command_of_many_small_arguments_is_bounded_as_a_whole_and_closes() {
    // 30,000 empty arguments: no value past --max-value (64 bytes here), but the command would
    // be held whole past it and 64 KiB.
    let mut cmd = b"*30001\r\n$3\r\nDEL\r\n".to_vec();
    cmd.extend(b"$0\r\n\r\n".repeat(30_000));
    cmd.extend(b"PING\r\n");
    let (out, n, errors, close) = whole(Proto::Resp, &cmd);
    assert!(
        out.starts_with("-ERR Protocol error: a command of 30001 arguments past --max-value"),
        "{out}"
    );
    assert!(!out.contains("PONG") && close && (n, errors) == (1, 1), "{out}");
}

#[test]
fn a_resp_stream_that_cannot_be_resynchronised_gets_a_protocol_error_and_closes() {
    for bad in [
        &b"*2\r\n$3\r\nGET\r\n$-5\r\n"[..],
        b"*99999999999\r\n",
        b"*1\r\n+PING\r\n",
        b"*1\r\n$4\r\nPINGxx",
        b"*1\r\n$123456789012345678901234567890123\r\n",
    ] {
        let (out, _, errors, close) = whole(Proto::Resp, bad);
        assert!(out.starts_with("-ERR Protocol error: "), "{out}");
        assert!(close && errors == 1, "{}", String::from_utf8_lossy(bad));
    }
    let line = vec![b'a'; 70 * 1024];
    let (out, _, _, close) = whole(Proto::Resp, &line);
    assert!(close && out.contains("too big inline request"), "{out}");
}

#[test]
fn a_resp_client_that_pipelines_a_million_commands_and_never_reads_holds_the_session_to_its_bound() {
    let bound = 64 * 1024;
    let mut s = Session::with_limits(Proto::Resp, limits());
    let mut each = Keyed { bound, ..Keyed::new() };
    let one = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
    let input = one.repeat(1_000_000);
    let mut out = Vec::new();
    let (mut pos, mut answered, mut most) = (0, 0u64, 0);
    // The wiring reads 64 KiB at a time, and only while the session is not holding; the
    // client never reads, so the output is only taken once the input is all in.
    while pos < input.len() && answered < 1_000_000 {
        if s.holding() {
            break;
        }
        let n = (64 * 1024).min(input.len() - pos);
        answered += s.feed_each(&input[pos..pos + n], &mut out, &mut each).requests;
        pos += n;
        most = most.max(out.len());
        assert!(s.behind() <= 64 * 1024 + one.len(), "{} bytes held", s.behind());
    }
    assert!(s.holding(), "it stopped at the bound");
    assert!(most <= bound + 16, "{most} bytes of output held");
    // Then the client reads: every command is answered, once.
    while pos < input.len() || s.holding() {
        out.clear();
        let n = if s.holding() {
            0
        } else {
            (64 * 1024).min(input.len() - pos)
        };
        answered += s.feed_each(&input[pos..pos + n], &mut out, &mut each).requests;
        pos += n;
    }
    assert_eq!(answered, 1_000_000);
}

const MC_SESSION: &[u8] = b"set k 5 0 2\r\nhi\r\nget k nope\r\ngets k\r\nadd k 0 0 1\r\nx\r\nadd j 0 0 1\r\nx\r\n\
replace q 0 0 1\r\ny\r\ndelete j\r\ndelete j\r\ndelete k noreply\r\nset n 0 0 2\r\n10\r\nincr n 5\r\ndecr n 100\r\n\
incr nope 1\r\nset s 0 0 1 noreply\r\na\r\nincr s 1\r\ntouch n 0\r\ntouch nope 10\r\nflush_all\r\nget n\r\nbogus\r\n\
incr n x\r\nget\r\n";

#[test]
fn memcache_commands_are_answered_in_order_as_memcached_answers_them() {
    let (out, n, errors, close) = whole(Proto::Memcache, MC_SESSION);
    let want = "STORED\r\nVALUE k 5 2\r\nhi\r\nEND\r\nVALUE k 5 2 1\r\nhi\r\nEND\r\nNOT_STORED\r\nSTORED\r\n\
NOT_STORED\r\nDELETED\r\nNOT_FOUND\r\nSTORED\r\n15\r\n0\r\nNOT_FOUND\r\n\
CLIENT_ERROR cannot increment or decrement non-numeric value\r\nTOUCHED\r\nNOT_FOUND\r\nOK\r\nEND\r\nERROR\r\n\
CLIENT_ERROR invalid numeric delta argument\r\nERROR\r\n";
    assert_eq!(out, want);
    assert_eq!((n, errors, close), (22, 4, false));
    same_at_every_split(Proto::Memcache, MC_SESSION);
}

#[test]
fn memcache_data_past_max_value_is_dropped_and_a_bad_chunk_closes() {
    let big = format!("set big 0 0 100\r\n{}\r\nget big\r\nversion\r\n", "x".repeat(100));
    let (out, _, errors, close) = whole(Proto::Memcache, big.as_bytes());
    assert!(
        out.starts_with("SERVER_ERROR object too large for cache\r\nEND\r\nVERSION "),
        "{out}"
    );
    assert!(!close && errors == 1);
    same_at_every_split(Proto::Memcache, big.as_bytes());
    // A failed overwrite by `set` unlinks the old value (no stale value is read after it), as
    // memcached does; a failed `add` or `replace` leaves it.
    let x = "x".repeat(100);
    for (verb, after) in [("set", "END\r\n"), ("replace", "VALUE k 0 2\r\nhi\r\nEND\r\n")] {
        let over = format!("set k 0 0 2\r\nhi\r\n{verb} k 0 0 100\r\n{x}\r\nget k\r\n");
        let (out, ..) = whole(Proto::Memcache, over.as_bytes());
        assert_eq!(
            out,
            format!("STORED\r\nSERVER_ERROR object too large for cache\r\n{after}"),
            "{verb}"
        );
        same_at_every_split(Proto::Memcache, over.as_bytes());
    }
    let long = format!("get {}\r\nversion\r\n", "k".repeat(251));
    let (out, _, errors, close) = whole(Proto::Memcache, long.as_bytes());
    assert!(
        out.starts_with("CLIENT_ERROR bad command line format\r\nVERSION ") && errors == 1 && !close,
        "{out}"
    );
    let (out, _, _, close) = whole(Proto::Memcache, b"set k 0 0 2\r\nabcd\r\nget k\r\n");
    assert_eq!((out.as_str(), close), ("CLIENT_ERROR bad data chunk\r\n", true));
    let (out, _, _, close) = whole(Proto::Memcache, format!("get {}\r\n", "k".repeat(70_000)).as_bytes());
    assert!(close && out == "CLIENT_ERROR line too long\r\n", "{out}");
}

#[test]
fn without_a_store_every_command_is_answered_with_an_error() {
    let mut s = Session::new(Proto::Resp);
    let mut out = Vec::new();
    let fed = s.feed(b"GET k\r\nPING\r\n", &mut out);
    assert_eq!(
        String::from_utf8_lossy(&out),
        "-ERR this server keeps no keyed state\r\n-ERR this server keeps no keyed state\r\n"
    );
    assert_eq!((fed.requests, fed.errors), (2, 2));
}

/// Feeds `input` a byte at a time to a fresh session: the replies and the parse's work.
fn trickled(proto: Proto, input: &[u8]) -> (String, usize) {
    let mut s = Session::with_limits(
        proto,
        Limits {
            max_value: 1 << 20,
            ..Limits::default()
        },
    );
    let mut each = Keyed::new();
    let mut out = Vec::new();
    for b in input {
        s.feed_each(std::slice::from_ref(b), &mut out, &mut each);
    }
    let looked = match s.plain() {
        Some(Speaks::Resp(r)) => r.core().input.looked,
        Some(Speaks::Memcache(m)) => m.core().input.looked,
        _ => unreachable!(),
    };
    (String::from_utf8_lossy(&out).into_owned(), looked)
}

#[test]
fn a_command_trickled_a_byte_at_a_time_is_parsed_in_time_linear_in_its_length() {
    // RESP: an MSET of 4,000 arguments, then a SET of a 100 KB value; each read of one byte
    // went back over the whole command before.
    let mut cmd = b"*4001\r\n$4\r\nMSET\r\n".to_vec();
    for i in 0..2000 {
        let k = format!("k{i}");
        cmd.extend_from_slice(format!("${}\r\n{k}\r\n$1\r\nv\r\n", k.len()).as_bytes());
    }
    let big = vec![b'x'; 100_000];
    cmd.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$100000\r\n");
    cmd.extend_from_slice(&big);
    cmd.extend_from_slice(b"\r\nGET k1999\r\n");
    let (out, looked) = trickled(Proto::Resp, &cmd);
    assert_eq!(out, "+OK\r\n+OK\r\n$1\r\nv\r\n");
    assert!(looked < 4 * cmd.len(), "{looked} steps for {} bytes", cmd.len());
    // memcache: a get of 6,000 keys on one line (under 64 KiB), and a 100 KB value.
    let mut line = b"set a 0 0 100000\r\n".to_vec();
    line.extend_from_slice(&big);
    line.extend_from_slice(b"\r\nget");
    for i in 0..6000 {
        line.extend_from_slice(format!(" key{i}").as_bytes());
    }
    line.extend_from_slice(b" a\r\n");
    let (out, looked) = trickled(Proto::Memcache, &line);
    assert!(out.starts_with("STORED\r\nVALUE a 0 100000\r\nxxx"), "{}", &out[..40]);
    assert!(out.ends_with("\r\nEND\r\n"));
    assert!(looked < 4 * line.len(), "{looked} steps for {} bytes", line.len());
}

#[test]
fn a_command_parsed_in_part_keeps_its_arguments_when_the_input_is_compacted() {
    // 100 KB of commands run, then an MSET cut after its first pair: the input's front is
    // dropped under the parsed pair, whose spans must move with it.
    let mut first = Vec::new();
    for _ in 0..8000 {
        first.extend_from_slice(b"SET pad 0123\r\n");
    }
    first.extend_from_slice(b"*5\r\n$4\r\nMSET\r\n$2\r\nka\r\n$2\r\nva\r\n$2\r\nk");
    let rest: &[u8] = b"b\r\n$2\r\nvb\r\n*3\r\n$4\r\nMGET\r\n$2\r\nka\r\n$2\r\nkb\r\n";
    let (out, n, errors, close) = talk(Proto::Resp, &[&first, rest]);
    assert_eq!((n, errors, close), (8002, 0, false));
    assert!(
        out.ends_with("+OK\r\n+OK\r\n*2\r\n$2\r\nva\r\n$2\r\nvb\r\n"),
        "{}",
        &out[out.len() - 60..]
    );
}

#[test]
fn the_protocols_edge_cases_are_answered_as_redis_and_memcached_answer_them() {
    // RESP: an empty keyspace has no db0 line; a negative count is written with its sign.
    let (out, ..) = whole(Proto::Resp, b"INFO keyspace\r\nDECRBY n 12\r\nGET n\r\nINFO\r\n");
    let info = "# Keyspace\r\ndb0:keys=1,expires=0,avg_ttl=0\r\n";
    assert_eq!(
        out,
        format!(
            "$12\r\n# Keyspace\r\n\r\n:-12\r\n$3\r\n-12\r\n${}\r\n{info}\r\n",
            info.len()
        )
    );
    // A length with a plus sign or a leading zero is no length to redis.
    for bad in [
        &b"*+1\r\n$4\r\nPING\r\n"[..],
        b"*01\r\n$4\r\nPING\r\n",
        b"*1\r\n$04\r\nPING\r\n",
    ] {
        let (out, _, errors, close) = whole(Proto::Resp, bad);
        assert!(out.starts_with("-ERR Protocol error: invalid"), "{out}");
        assert_eq!((errors, close), (1, true));
    }
    // memcache: noreply silences the too-large error too; `delete k 0` is a delete; a
    // delta of 2^63 and more is unsigned, as memcached's.
    let mut big = b"set k 0 0 100 noreply\r\n".to_vec();
    big.extend_from_slice(&[b'x'; 100]);
    big.extend_from_slice(
        b"\r\nset k 0 0 1\r\na\r\ndelete k 0\r\nget k\r\nset n 0 0 1\r\n1\r\n\
incr n 9223372036854775808\r\nincr n 18446744073709551615\r\ndecr n 9223372036854775809\r\n",
    );
    let (out, n, errors, close) = whole(Proto::Memcache, &big);
    assert_eq!(
        out,
        "STORED\r\nDELETED\r\nEND\r\nSTORED\r\n9223372036854775809\r\n9223372036854775808\r\n0\r\n"
    );
    assert_eq!((n, errors, close), (8, 1, false));
}
