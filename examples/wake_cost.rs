//! What waking a thread on another CPU costs the waker, in its own CPU time: a writer on CPU 0
//! writes one byte at a time to a reader blocked on CPU 1, with a pause between writes (so the
//! reader's CPU goes idle) or none (so the reader is busy), and with idle CPUs left to halt or
//! made to poll (`muxlab::sys::cpuidle`, what `muxlab bench` holds by default). On loopback
//! every response a server writes wakes its client this way, and the waker pays.
//!
//! `cargo run --release --example wake_cost` (root, 2+ CPUs).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use muxlab::sys;

/// The writer's CPU time per write, in µs, less the pause it spins between writes.
fn per_write(gap: Duration, writes: u32) -> f64 {
    let (mut w, mut r) = UnixStream::pair().expect("a socket pair");
    let reader = std::thread::spawn(move || {
        let _ = sys::affinity::set(&[1]);
        let mut b = [0u8; 64];
        while matches!(r.read(&mut b), Ok(n) if n > 0) {}
    });
    let _ = sys::affinity::set(&[0]);
    std::thread::sleep(Duration::from_millis(100));
    let t0 = sys::process::thread_cpu_time();
    for _ in 0..writes {
        let until = Instant::now() + gap;
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        w.write_all(b"x").expect("write");
    }
    let spent = sys::process::thread_cpu_time() - t0;
    drop(w);
    reader.join().expect("reader");
    spent.as_secs_f64() * 1e6 / f64::from(writes) - gap.as_secs_f64() * 1e6
}

fn main() {
    let n = 20_000;
    let gap = Duration::from_micros(100);
    println!("writer CPU per write, beyond its pause:");
    println!(
        "  reader busy (no pause)               {:6.2} us",
        per_write(Duration::ZERO, n)
    );
    println!("  reader idle, idle CPUs halt          {:6.2} us", per_write(gap, n));
    match sys::cpuidle::PollingIdle::hold() {
        Ok(held) => {
            println!("  reader idle, idle CPUs poll          {:6.2} us", per_write(gap, n));
            drop(held);
        }
        Err(e) => println!("  reader idle, idle CPUs poll          not measured: {e}"),
    }
}
