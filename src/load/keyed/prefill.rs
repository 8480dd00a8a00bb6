//! `--prefill`: before the window, every key this process's connection slots own is written
//! once (the owner's stamp, sequence 0), over one blocking connection per engine thread, in
//! pipelined batches; every reply must be a stored. A keyspace the server cannot hold ends the
//! run with the server's refusal, before anything is measured.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::command;
use super::keys::owned_count;
use super::prefill_failed::PrefillFailed;
use super::reply::{Replies, Reply};
use super::value::{self, Stamp, HEADER};
use super::Plan;
use crate::load::Spec;
use crate::load::STOP;
use crate::rng::Rng;

/// SETs written before their replies are read.
const BATCH: u64 = 256;

/// How long one blocking read or write waits before the stop flag and `--timeout` are looked at.
const SLICE: Duration = Duration::from_millis(50);

/// Writes the keys of slots `first..first + slots` over `threads` connections to `spec`'s
/// target: how many keys, and how long it took.
pub fn prefill(spec: &Spec, plan: &Plan, first: u64, slots: u64, threads: usize) -> Result<(u64, f64), PrefillFailed> {
    let t0 = Instant::now();
    let threads = (threads as u64).clamp(1, slots.max(1));
    let written = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (n, off) = crate::load::split(slots as usize, threads as usize, t as usize);
                let from = first + off as u64;
                s.spawn(move || one_connection(spec, plan, from..from + n as u64))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(PrefillFailed::Panicked)))
            .sum::<Result<u64, PrefillFailed>>()
    })?;
    Ok((written, t0.elapsed().as_secs_f64()))
}

/// Writes every key the slots in `slots` own over one connection.
fn one_connection(spec: &Spec, plan: &Plan, slots: std::ops::Range<u64>) -> Result<u64, PrefillFailed> {
    let addr = spec.target().addr;
    let mut sock = connect(spec).map_err(|source| PrefillFailed::Connect { addr, source })?;
    let waited = |since: Instant, written: u64| -> Result<(), PrefillFailed> {
        if STOP.load(Ordering::Relaxed) != 0 {
            return Err(PrefillFailed::Stopped { written });
        }
        match since.elapsed() > spec.timeout() {
            true => Err(PrefillFailed::Stalled {
                addr,
                timeout: spec.timeout(),
                written,
            }),
            false => Ok(()),
        }
    };
    let keys = slots.clone().flat_map(|slot| {
        let n = owned_count(plan.keys, slot, plan.connections);
        (0..n).map(move |j| (slot, slot + j * plan.connections))
    });
    let mut out = Vec::new();
    let mut replies = Replies::default();
    let mut buf = vec![0u8; 64 * 1024];
    let mut written = 0u64;
    let mut rng: (u64, Rng) = (u64::MAX, Rng::new(&[0]));
    let mut keys = keys.peekable();
    while keys.peek().is_some() {
        out.clear();
        let mut batch = 0u64;
        for (slot, key) in keys.by_ref().take(BATCH as usize) {
            if rng.0 != slot {
                rng = (slot, Rng::new(&[plan.seed, slot, 0x7072_6566]));
            }
            let least = if plan.verify { HEADER } else { 1 };
            let len = plan.sizes.sample(&mut rng.1, least);
            let stamp = Stamp {
                run: plan.run,
                key,
                writer: slot as u32,
                seq: 0,
            };
            command::set(plan.dialect, &mut out, key, len, |o| value::write_any(o, len, stamp));
            batch += 1;
        }
        write_all(&mut sock, &out, |since| waited(since, written))
            .map_err(|e| e.unwrap_or_else(|source| PrefillFailed::Write { addr, source }))?;
        let mut stored = 0u64;
        let mut since = Instant::now();
        while stored < batch {
            let n = match sock.read(&mut buf) {
                Ok(n) => {
                    since = Instant::now();
                    n
                }
                Err(e) if is_wait(&e) => {
                    waited(since, written + stored)?;
                    continue;
                }
                Err(source) => return Err(PrefillFailed::Read { addr, source }),
            };
            if n == 0 {
                return Err(PrefillFailed::Closed { addr });
            }
            let mut refused = None;
            replies
                .feed(plan.dialect, &buf[..n], |b, r| match r {
                    Reply::Stored => {
                        stored += 1;
                        true
                    }
                    Reply::Error(l) => {
                        refused = Some(Some(String::from_utf8_lossy(&b[l]).into_owned()));
                        false
                    }
                    _ => {
                        refused = Some(None);
                        false
                    }
                })
                .map_err(|_| PrefillFailed::NotReplies {
                    addr,
                    dialect: plan.dialect,
                })?;
            if let Some(said) = refused {
                return Err(PrefillFailed::Refused {
                    written: written + stored,
                    said,
                });
            }
        }
        written += batch;
    }
    Ok(written)
}

/// A blocking connection to `spec`'s target whose calls wait a slice at a time: a signal, or
/// `--timeout` without progress, ends the prefill (a server that never reads or never
/// answers cannot hold it).
fn connect(spec: &Spec) -> std::io::Result<TcpStream> {
    let sock = TcpStream::connect_timeout(&spec.target().addr, spec.timeout())?;
    sock.set_read_timeout(Some(SLICE))?;
    sock.set_write_timeout(Some(SLICE))?;
    sock.set_nodelay(true)?;
    Ok(sock)
}

/// Writes all of `out`, a slice at a time; `wait` is asked, with when the last write took
/// something, after each that took nothing (`Err(Ok(e))`: its error ended the write;
/// `Err(Err(e))`: the socket's).
fn write_all(
    sock: &mut TcpStream,
    out: &[u8],
    mut wait: impl FnMut(Instant) -> Result<(), PrefillFailed>,
) -> Result<(), Result<PrefillFailed, std::io::Error>> {
    let (mut off, mut since) = (0, Instant::now());
    while off < out.len() {
        match sock.write(&out[off..]) {
            Ok(n) => (off, since) = (off + n, Instant::now()),
            Err(e) if is_wait(&e) => wait(since).map_err(Ok)?,
            Err(e) => return Err(Err(e)),
        }
    }
    Ok(())
}

/// A blocking call's slice ran out (or a signal came): look at the clock and the stop flag.
fn is_wait(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::{Interrupted, TimedOut, WouldBlock};
    matches!(e.kind(), WouldBlock | TimedOut | Interrupted)
}
