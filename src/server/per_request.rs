//! Each request's work, on the thread that handles it, right before its response: `--work`,
//! or with `--work-from-request` the work the request's query names (`/?cpu=2ms&sleep=1ms`),
//! refused over `--max-work` and counted per class. Every model runs it through
//! [`Worker::on_input`](super::Worker::on_input).

use std::cell::RefCell;
use std::time::Duration;

use super::classes::ROWS;
use super::ctx::Worker;
use super::work::Work;
use crate::proto::{Answer, Request};
use crate::rng::Rng;
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

/// Does request `req`'s work for worker `w`; refuses a request whose work is malformed or over
/// `--max-work`.
pub(super) fn each(w: Worker<'_>, req: Request<'_>) -> Answer {
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
            *l = Some(Local {
                pid,
                rng: Rng::new(&[w.ctx.cfg.seed, w.index as u64, ordinal]),
                parsed: Vec::new(),
            });
        }
        let l = l.as_mut().expect("set above");
        let cfg = &w.ctx.cfg;
        if !cfg.work_from_request {
            cfg.work.run(&mut l.rng, cfg.max_work);
            return Answer::Serve;
        }
        let (name, spec) = named_work(req.target);
        let class = match l.parsed.iter().position(|p| p.0 == name) {
            Some(i) => i,
            None => {
                let work = parse(&spec, &cfg.work, cfg.max_work);
                let row = w.ctx.classes.row_of(&name);
                if l.parsed.len() == CACHE {
                    l.parsed.pop();
                }
                l.parsed.push((name, work, row));
                l.parsed.len() - 1
            }
        };
        let (_, work, row) = &l.parsed[class];
        let Some(work) = work else {
            return Answer::Refuse;
        };
        let busy = work.run(&mut l.rng, cfg.max_work);
        w.ctx.classes.count((*row).min(ROWS), busy.as_nanos() as u64);
        Answer::Serve
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

/// `%XX` decoded (a query may encode the parentheses of `exp(1ms)`).
fn percent_decoded(v: &[u8]) -> String {
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
            (b, ..) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The work of a query's spec (`--work` when it names none); `None` when it does not parse or
/// asks for more than `max` on average.
fn parse(spec: &str, default: &Work, max: Duration) -> Option<Work> {
    if spec.is_empty() {
        return Some(default.clone());
    }
    let w: Work = spec.parse().ok()?;
    (w.mean() <= max).then_some(w)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(
            parse("cpu:exp(11ms)", &Work::default(), max).is_none(),
            "its mean over --max-work"
        );
        assert!(parse("cpu:lots", &Work::default(), max).is_none());
    }
}
