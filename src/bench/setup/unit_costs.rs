//! Measuring what one unit of a counter costs the server in CPU, once per bench run on the
//! server's CPU (recorded as [`UnitCosts`]):
//!
//! - A system call: a non-blocking `read` of an empty socket (EAGAIN), the kind of call an event
//!   loop makes beyond the reads and writes that move bytes. A floor: the calls that move bytes
//!   cost more.
//! - A context switch: half a round trip between two threads on one CPU, each blocking in a
//!   `read` of a socket the other `write`s to: the switch with the call that causes it.
//!
//! And, measured where the run's server and client sit and as idle as the run keeps their
//! CPUs, a loopback round trip ([`round_trip`]): a byte written over TCP by a thread on the
//! client's CPU and echoed by one on the server's, blocking in `read` both: what the path
//! outside the server costs a request at the least (both kernels' TCP, the wake-ups), and the
//! client thread's own CPU per round trip (what of the client's CPU per request is in it).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use crate::bench::record::costs::{RoundTrip, UnitCosts};
use crate::sys;

/// Measures both costs on `cpu` (about 50 ms); `None` where the threads cannot be pinned
/// there or the sockets fail.
pub fn measure(cpu: usize) -> Option<UnitCosts> {
    std::thread::spawn(move || {
        sys::affinity::set(&[cpu]).ok()?;
        let syscall = empty_read_cost().ok()?;
        let switch = switch_cost(cpu).ok()?;
        Some(UnitCosts {
            syscall_us: syscall.as_secs_f64() * 1e6,
            context_switch_us: switch.as_secs_f64() * 1e6,
            measured: true,
        })
    })
    .join()
    .ok()
    .flatten()
}

/// The best of five batches: the cost without the machine's interruptions.
fn best_of(mut batch: impl FnMut() -> std::io::Result<Duration>) -> std::io::Result<Duration> {
    let mut best = Duration::MAX;
    for _ in 0..5 {
        best = best.min(batch()?);
    }
    Ok(best)
}

fn empty_read_cost() -> std::io::Result<Duration> {
    const N: u32 = 20_000;
    let (mut a, _b) = UnixStream::pair()?;
    a.set_nonblocking(true)?;
    let mut buf = [0u8; 16];
    best_of(|| {
        let t0 = sys::process::thread_cpu_time();
        for _ in 0..N {
            match a.read(&mut buf) {
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                other => return Err(std::io::Error::other(format!("an empty socket read {other:?}"))),
            }
        }
        Ok((sys::process::thread_cpu_time() - t0) / N)
    })
}

fn switch_cost(cpu: usize) -> std::io::Result<Duration> {
    const N: u32 = 2_000;
    let (mut a, mut b) = UnixStream::pair()?;
    let echo = std::thread::spawn(move || -> std::io::Result<()> {
        sys::affinity::set(&[cpu])?;
        let mut byte = [0u8; 1];
        while b.read(&mut byte)? == 1 {
            b.write_all(&byte)?;
        }
        Ok(())
    });
    let mut byte = [0u8; 1];
    let cost = best_of(|| {
        let t0 = Instant::now();
        for _ in 0..N {
            a.write_all(&byte)?;
            a.read_exact(&mut byte)?;
        }
        // Two switches per round trip; both threads share the one CPU, so wall time is CPU time.
        Ok(t0.elapsed() / (2 * N))
    });
    drop(a);
    let _ = echo.join();
    cost
}

/// Measures a TCP loopback round trip between `client` and `server` CPUs (about 100 ms):
/// the best of five batches' mean, and the client thread's CPU per round trip. `None` where
/// the threads cannot be pinned or the sockets fail.
pub fn round_trip(server: usize, client: usize) -> Option<RoundTrip> {
    std::thread::spawn(move || -> std::io::Result<RoundTrip> {
        const N: u32 = 2_000;
        let l = std::net::TcpListener::bind("127.0.0.1:0")?;
        let addr = l.local_addr()?;
        let echo = std::thread::spawn(move || -> std::io::Result<()> {
            sys::affinity::set(&[server])?;
            let (mut s, _) = l.accept()?;
            s.set_nodelay(true)?;
            let mut byte = [0u8; 1];
            while s.read(&mut byte)? == 1 {
                s.write_all(&byte)?;
            }
            Ok(())
        });
        sys::affinity::set(&[client])?;
        let mut c = std::net::TcpStream::connect(addr)?;
        c.set_nodelay(true)?;
        let mut byte = [0u8; 1];
        let (mut best, mut cpu) = (Duration::MAX, Duration::MAX);
        for _ in 0..5 {
            let (t0, c0) = (Instant::now(), sys::process::thread_cpu_time());
            for _ in 0..N {
                c.write_all(&byte)?;
                c.read_exact(&mut byte)?;
            }
            best = best.min(t0.elapsed() / N);
            cpu = cpu.min((sys::process::thread_cpu_time() - c0) / N);
        }
        drop(c);
        let _ = echo.join();
        Ok(RoundTrip {
            us: best.as_secs_f64() * 1e6,
            client_cpu_us: cpu.as_secs_f64() * 1e6,
        })
    })
    .join()
    .ok()?
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_costs_are_measured_and_a_switch_costs_more_than_an_empty_read() {
        let cpu = sys::affinity::get().unwrap()[0];
        let c = measure(cpu).unwrap();
        assert!(c.measured);
        assert!(c.syscall_us > 0.0 && c.syscall_us < 100.0, "{c:?}");
        assert!(c.context_switch_us > c.syscall_us, "{c:?}");
    }

    #[test]
    fn a_round_trip_takes_longer_than_its_client_threads_cpu() {
        let cpus = sys::affinity::get().unwrap();
        let r = round_trip(cpus[0], *cpus.last().unwrap()).unwrap();
        assert!(r.us > 0.0 && r.client_cpu_us > 0.0 && r.client_cpu_us <= r.us, "{r:?}");
    }
}
