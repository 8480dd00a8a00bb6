//! Each request's work, on the thread that handles it, right before its response: `--work`,
//! or with `--work-from-request` the work the request's query names (`/?cpu=2ms&sleep=1ms`),
//! refused over `--max-work` and counted per class. Every model runs it through
//! [`Worker::on_input`](crate::server::Worker::on_input).

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::proto::{Answer, Request};
use crate::rng::Rng;
use crate::server::work::{Work, CEILING};
use crate::server::Worker;
use crate::server::ROWS;
use crate::sys;

/// Parsed query classes a thread keeps (past it, a query is parsed each time).
const CACHE: usize = 32;

/// What a thread keeps between requests: its draws' generator (seeded for its process: a
/// forked worker does not repeat its parent) and the classes it has parsed.
struct Local {
    pid: i32,
    rng: Rng,
    /// A query's class: its work (`None`: refused) and its row in the class table.
    parsed: Vec<(Vec<u8>, Option<Work>, usize)>,
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

/// Threads of this process that have drawn work so far (a forked process counts on from its
/// parent's count, and differs from it by its ordinal).
static THREADS: AtomicU64 = AtomicU64::new(0);

/// A generator for the calling thread: seeded by `--seed`, the worker, the process's ordinal
/// and the thread's own number, so threads of one worker (a thread per connection) do not
/// all draw the same sequence.
fn thread_rng(seed: u64, worker: usize, ordinal: u64) -> Rng {
    let thread = THREADS.fetch_add(1, Ordering::Relaxed);
    Rng::new(&[seed, worker as u64, ordinal, thread])
}

/// A request's work, drawn: done on the thread that parsed it ([`each`]) or by a pool.
#[derive(Debug, Clone, Copy)]
pub(super) struct Drawn {
    pub(super) cpu: Duration,
    pub(super) wait: Duration,
    /// The mean of the work it was drawn from.
    pub(super) mean: Duration,
    /// Its class's row (`--work-from-request`), where it is counted.
    pub(super) row: Option<usize>,
}

/// Does request `req`'s work for worker `w`; refuses a request whose work is malformed or over
/// `--max-work`.
pub(super) fn each(w: Worker<'_>, req: Request<'_>) -> Answer {
    match draw(w, req) {
        Some(d) => {
            perform(w, &d);
            Answer::Serve
        }
        None => Answer::Refuse,
    }
}

/// Does drawn work on the calling thread and counts it in its class.
pub(super) fn perform(w: Worker<'_>, d: &Drawn) {
    let busy = crate::server::green::perform(d.cpu, d.wait);
    if let Some(row) = d.row {
        w.ctx.classes.count(row.min(ROWS), busy.as_nanos() as u64);
    }
}

/// Draws request `req`'s work (`--work`, or what its query names); `None` when it is refused
/// (malformed, or over `--max-work`).
#[inline(never)]
pub(super) fn draw(w: Worker<'_>, req: Request<'_>) -> Option<Drawn> {
    LOCAL.with(|l| {
        let mut l = l.borrow_mut();
        let pid = sys::process::pid();
        if l.as_ref().is_none_or(|l| l.pid != pid) {
            // The main process is ordinal 0; a forked one takes the next ordinal.
            let ordinal = if pid == w.ctx.main_pid {
                0
            } else {
                w.ctx.stats.next_ordinal()
            };
            sys::process::exact_sleeps();
            *l = Some(Local {
                pid,
                rng: thread_rng(w.ctx.cfg.seed, w.index, ordinal),
                parsed: Vec::new(),
            });
        }
        let l = l.as_mut().expect("set above");
        let cfg = &w.ctx.cfg;
        if !cfg.work_from_request {
            let (cpu, wait) = cfg.work.draw(&mut l.rng, CEILING);
            let mean = cfg.work.mean();
            return Some(Drawn {
                cpu,
                wait,
                mean,
                row: None,
            });
        }
        let (name, spec) = named_work(req.target);
        let class = match l.parsed.iter().position(|p| p.0 == name) {
            Some(i) => i,
            None => {
                let work = parse(&spec, &cfg.work, cfg.max_work);
                // A refused query takes no row: junk cannot crowd real classes into "other".
                let row = match work {
                    Some(_) => w.ctx.classes.row_of(&name),
                    None => ROWS,
                };
                if l.parsed.len() == CACHE {
                    l.parsed.remove(0);
                }
                l.parsed.push((name, work, row));
                l.parsed.len() - 1
            }
        };
        let (name, work, row) = &l.parsed[class];
        let work = work.as_ref()?;
        // The class `none` runs --work, whose draws are cut at its own ceiling.
        let cap = if name == b"none" { CEILING } else { cfg.max_work };
        let (cpu, wait) = work.draw(&mut l.rng, cap);
        Some(Drawn {
            cpu,
            wait,
            mean: work.mean(),
            row: Some(*row),
        })
    })
}

/// The work a request's query names: the class name (`cpu=2ms&sleep=1ms`, `none` without
/// either) and the `--work` spec it stands for (empty without either).
fn named_work(target: &[u8]) -> (Vec<u8>, String) {
    let query = target
        .iter()
        .position(|&b| b == b'?')
        .map_or(&b""[..], |i| &target[i + 1..]);
    let mut name = Vec::new();
    let mut spec = String::new();
    for key in ["cpu", "sleep"] {
        let value = query
            .split(|&b| b == b'&')
            .find_map(|p| p.strip_prefix(key.as_bytes())?.strip_prefix(b"="));
        if let Some(v) = value {
            if !name.is_empty() {
                name.push(b'&');
                spec.push('+');
            }
            name.extend_from_slice(key.as_bytes());
            name.push(b'=');
            name.extend_from_slice(v);
            spec.push_str(key);
            spec.push(':');
            spec.push_str(&percent_decoded(v));
        }
    }
    if name.is_empty() {
        name.extend_from_slice(b"none");
    }
    (name, spec)
}

/// The work a request target's query names (`/?cpu=20us&sleep=exp(1ms)`), as `serve
/// --work-from-request` with `--max-work max` reads it: `Ok(None)` where it names none, an
/// error saying why the server would refuse it (400).
pub fn query_work(target: &str, max: Duration) -> Result<Option<Work>, RefusedWork> {
    let (_, spec) = named_work(target.as_bytes());
    if spec.is_empty() {
        return Ok(None);
    }
    match parse(&spec, &Work::default(), max) {
        Some(w) => Ok(Some(w)),
        None => Err(RefusedWork {
            target: target.to_string(),
            work: spec,
            max,
        }),
    }
}

/// Work a request target's query names that `serve --work-from-request` refuses (400): the
/// target, the work spec its query makes, and the `--max-work` it was held to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{target}' names work '{work}' the server refuses (malformed, hist:, over 128 bytes or two levels of \
     parentheses, or a mean over --max-work {})",
    crate::units::format_duration(*max)
)]
pub struct RefusedWork {
    pub target: String,
    pub work: String,
    pub max: Duration,
}

/// A query value decoded as HTML forms encode one, as Go's `url.Values` and the WHATWG
/// `URLSearchParams` of Node read it: `%XX` is the byte (a query may encode the parentheses of
/// `exp(1ms)`), and `+` is a space (so `cpu=20us+sleep:1ms` names no work a server can read,
/// the products' answer too; `%2B` is the plus sign).
pub(super) fn percent_decoded(v: &[u8]) -> String {
    let mut out = Vec::with_capacity(v.len());
    let mut i = 0;
    while i < v.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            v[i],
            v.get(i + 1).copied().and_then(hex),
            v.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b'+', ..) => {
                out.push(b' ');
                i += 1;
            }
            (b, ..) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The longest work spec a query may carry (decoded).
const QUERY_SPEC_MAX: usize = 128;

/// The work of a query's spec (`--work` when it names none); `None` when it does not parse,
/// asks for more than `max` on average, or is not of the forms a client may name: no
/// `hist:FILE` (a client names no file on the server), at most 128 bytes and two levels of
/// parentheses (`mix(99%:exp(1ms),1%:5ms)`), so parsing one costs little.
fn parse(spec: &str, default: &Work, max: Duration) -> Option<Work> {
    if spec.is_empty() {
        return Some(default.clone());
    }
    if !a_client_may_name(spec) {
        return None;
    }
    let w: Work = spec.parse().ok()?;
    (w.mean() <= max).then_some(w)
}

/// A spec a client may put in a query: no `hist:FILE` (a client names no file on the server:
/// `/dev/zero` would grow it without end, a FIFO block it), at most 128 bytes and two levels of
/// parentheses, so parsing one costs little.
fn a_client_may_name(spec: &str) -> bool {
    unnamable(spec).is_none()
}

/// Why a client may not put a spec in a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unnamable {
    /// Over [`QUERY_SPEC_MAX`] bytes.
    Long { bytes: usize },
    /// `hist:FILE`: a file of the server's.
    File,
    /// More than two levels of parentheses.
    Deep { depth: usize },
}

impl std::fmt::Display for Unnamable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unnamable::Long { bytes } => {
                write!(
                    f,
                    "a query may not name a spec of {bytes} bytes (at most {QUERY_SPEC_MAX})"
                )
            }
            Unnamable::File => f.write_str("a query may not name hist: (a file of the server's)"),
            Unnamable::Deep { depth } => {
                write!(f, "a query may not nest {depth} levels of parentheses (at most two)")
            }
        }
    }
}

/// Why a client may not put `spec` in a query, if it may not.
pub(super) fn unnamable(spec: &str) -> Option<Unnamable> {
    if spec.len() > QUERY_SPEC_MAX {
        return Some(Unnamable::Long { bytes: spec.len() });
    }
    if spec.contains("hist:") {
        return Some(Unnamable::File);
    }
    let depth = depth(spec);
    (depth > 2).then_some(Unnamable::Deep { depth })
}

/// The deepest nesting of parentheses in `s`.
fn depth(s: &str) -> usize {
    s.chars()
        .scan(0i64, |d, c| {
            *d += match c {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            Some(*d)
        })
        .max()
        .unwrap_or(0)
        .max(0) as usize
}

#[cfg(test)]
mod tests {
    use crate::server::request::per_request::*;

    /// A thread per connection: every thread is worker 0 of process 0, yet each draws its own
    /// sequence (drawing the same few values in every thread leaves a distribution of a handful
    /// of points).
    #[test]
    fn threads_of_one_worker_draw_different_sequences() {
        let firsts: Vec<u64> = (0..8)
            .map(|_| std::thread::spawn(|| thread_rng(1, 0, 0).next_u64()).join().unwrap())
            .collect();
        let mut distinct = firsts.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), firsts.len(), "{firsts:?}");
    }

    #[test]
    fn a_query_names_its_class_and_its_work() {
        let (name, spec) = named_work(b"/?sleep=1ms&x=2&cpu=exp%2820us%29");
        assert_eq!(
            (String::from_utf8(name).unwrap(), spec.as_str()),
            ("cpu=exp%2820us%29&sleep=1ms".into(), "cpu:exp(20us)+sleep:1ms")
        );
        assert_eq!(named_work(b"/index.html"), (b"none".to_vec(), String::new()));
        let max = Duration::from_millis(10);
        assert!(parse("cpu:2ms", &Work::default(), max).is_some());
        assert!(parse("cpu:20ms", &Work::default(), max).is_none(), "over --max-work");
        let q = query_work("/?cpu=20us&sleep=exp%281ms%29", max)
            .unwrap()
            .expect("names work");
        assert_eq!(q.mean(), Duration::from_micros(1020));
        assert_eq!(query_work("/?x=1", max), Ok(None));
        assert!(query_work("/?cpu=fast", max).is_err());
        // A form's `+` is a space, as Go and Node read it: not the spec's `+`, which is `%2B`.
        assert!(
            query_work("/?cpu=20us+sleep:1ms", max).is_err(),
            "a plus in a query is a space"
        );
        let plus = query_work("/?cpu=20us%2Bsleep:1ms", max).unwrap().expect("names work");
        assert_eq!(plus.mean(), Duration::from_micros(1020));
        let e = query_work("/?cpu=20ms", max).unwrap_err();
        assert_eq!(
            e,
            RefusedWork {
                target: "/?cpu=20ms".into(),
                work: "cpu:20ms".into(),
                max
            }
        );
        assert_eq!(
            e.to_string(),
            "'/?cpu=20ms' names work 'cpu:20ms' the server refuses (malformed, hist:, over 128 bytes or two \
             levels of parentheses, or a mean over --max-work 10ms)"
        );
        // What a client may not name: a file, deep nesting, a long spec.
        for (bad, why) in [
            ("cpu:hist:/dev/zero".to_string(), Unnamable::File),
            (
                "cpu:mix(100%:mix(100%:mix(100%:1ms)))".into(),
                Unnamable::Deep { depth: 3 },
            ),
            (
                format!("cpu:mix({}50%:1ms,50%:2ms)", "0".repeat(130)),
                Unnamable::Long { bytes: 154 },
            ),
        ] {
            assert!(parse(&bad, &Work::default(), max).is_none(), "{bad}");
            assert_eq!(unnamable(&bad), Some(why), "{bad}");
        }
        // The same forms, shallower or shorter, are read.
        for good in [
            "cpu:mix(100%:mix(100%:1ms))".to_string(),
            format!("cpu:mix({}50%:1ms,50%:2ms)", "0".repeat(90)),
            "cpu:mix(99%:exp(1ms),1%:5ms)+sleep:exp(1ms)".into(),
        ] {
            assert!(parse(&good, &Work::default(), max).is_some(), "{good}");
        }
        assert!(
            parse("cpu:exp(11ms)", &Work::default(), max).is_none(),
            "its mean over --max-work"
        );
        assert!(parse("cpu:lots", &Work::default(), max).is_none());
    }
}
