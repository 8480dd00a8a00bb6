//! The keyed stores as peers: Debian's redis-server and memcached, started by bench on a free
//! port (`launch`), pinned to the target's CPUs, with nothing on disk (no snapshots, no
//! append-only file) and room for every connection and key a scenario asks for.

use super::launch::{binary, launch};
use crate::bench::process::Server;
use crate::bench::record::{Error, SkipReason};
use crate::bench::setup::Placement;

/// redis-server with `io_threads` (`--io-threads`; past 1, its threads read as well as write).
pub(super) fn start_redis(io_threads: usize, place: &Placement) -> Result<Server, Error> {
    let Some(bin) = binary("redis-server") else {
        return Err(Error::Skipped(SkipReason::NotInstalled {
            binary: "redis-server",
            package: "redis-server",
        }));
    };
    launch("redis-server", &bin, place, &|port, dir| {
        let mut a: Vec<String> = [
            "--port",
            &port.to_string(),
            "--bind",
            &place.server_addr,
            "--save",
            "",
            "--appendonly",
            "no",
            "--protected-mode",
            "no",
            "--daemonize",
            "no",
            "--maxclients",
            "10000",
            "--io-threads",
            &io_threads.to_string(),
            "--dir",
            &dir.display().to_string(),
            // Its warnings where bench reads what a server that would not start said.
            "--logfile",
            &dir.join("stderr.txt").display().to_string(),
            "--loglevel",
            "warning",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if io_threads > 1 {
            a.extend(["--io-threads-do-reads".into(), "yes".into()]);
        }
        a
    })
}

/// memcached with `threads` worker threads (`-t`), 1 GiB for items.
pub(super) fn start_memcached(threads: usize, place: &Placement) -> Result<Server, Error> {
    let Some(bin) = binary("memcached") else {
        return Err(Error::Skipped(SkipReason::NotInstalled {
            binary: "memcached",
            package: "memcached",
        }));
    };
    launch("memcached", &bin, place, &|port, _| {
        let mut a: Vec<String> = [
            "-p",
            &port.to_string(),
            "-U",
            "0",
            "-l",
            &place.server_addr,
            "-t",
            &threads.to_string(),
            "-c",
            "10000",
            "-m",
            "1024",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // memcached refuses to run as root without a user to run as.
        if crate::sys::process::is_root() {
            a.extend(["-u".into(), "root".into()]);
        }
        a
    })
}
