//! The keyed stores as peers: Debian's redis-server and memcached, started by bench on a free
//! port, pinned to the target's CPUs, with nothing on disk (no snapshots, no append-only file)
//! and room for every connection and key a scenario asks for. Each is up once it accepts a
//! connection while still running; one that exits first (its port taken since it was found
//! free) is started again on another port (5 tries).

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::error::Error;
use super::nginx::free_port;
use super::process::{Placement, Server};

/// Where Debian installs them.
const DIRS: &[&str] = &["/usr/bin", "/usr/sbin", "/usr/local/bin"];

/// The binary `name` in Debian's places, if installed.
fn binary(name: &str) -> Option<String> {
    DIRS.iter()
        .map(|d| format!("{d}/{name}"))
        .find(|p| Path::new(p).exists())
}

/// redis-server with `io_threads` (`--io-threads`; past 1, its threads read as well as write).
pub(super) fn start_redis(io_threads: usize, place: &Placement) -> Result<Server, Error> {
    let Some(bin) = binary("redis-server") else {
        return Err(Error::Skipped(
            "redis-server is not installed (apt-get install redis-server)".into(),
        ));
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
            "--logfile",
            &dir.join("redis.log").display().to_string(),
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
        return Err(Error::Skipped(
            "memcached is not installed (apt-get install memcached)".into(),
        ));
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

/// Starts `bin` (pinned to the placement's server CPUs) with the arguments `args` gives for a
/// port and its own directory, until it listens.
fn launch(name: &str, bin: &str, place: &Placement, args: &dyn Fn(u16, &Path) -> Vec<String>) -> Result<Server, Error> {
    let ip: std::net::IpAddr = place
        .server_addr
        .parse()
        .map_err(|_| format!("server_addr '{}' is not an address", place.server_addr))?;
    let dir = std::env::temp_dir().join(format!("muxlab-{name}-{}-{}", std::process::id(), free_port()?));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for _ in 0..5 {
        let port = free_port()?;
        let mut child = Command::new("taskset")
            .args(["-c", &place.server_cpus, bin])
            .args(args(port, &dir))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting {name}: {e}"))?;
        let addr = SocketAddr::new(ip, port);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if child.try_wait().ok().flatten().is_some() {
                break; // Could not bind: another port.
            }
            if std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(Server {
                    pid: child.id() as i32,
                    child: Some(child),
                    addr,
                    lines: None,
                    dir: Some(dir),
                    session: None,
                    stop_with: crate::sys::signal::SIGTERM,
                });
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_dir_all(&dir);
                return Err(Error::Cell(format!("{name} did not listen on {addr} within 10 s")));
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Err(Error::Cell(format!("{name} could not bind a free port in 5 tries")))
}
