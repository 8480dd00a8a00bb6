//! Starting a product on a free port: its binary found where Debian installs it, started
//! pinned to the target's CPUs with the arguments it takes for a port and a directory of its
//! own. It is up once it accepts a connection and is still running after it; one that exits
//! first (its port taken since it was found free, or a refusal: what it said on stderr is kept
//! for the error) is started again on another port (5 tries). Each starts with a timer slack of
//! 1 ns, as the models' workers sleep. The keyed stores (`stores`) and the runtimes' servers
//! (`runtimes`) start this way.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::nginx::free_port;
use crate::bench::process::Server;
use crate::bench::record::{Error, PeerError};
use crate::bench::setup::Placement;

/// Where Debian installs them, after the directories of `PATH`.
const DIRS: &[&str] = &["/usr/bin", "/usr/sbin", "/usr/local/bin"];

/// The binary `name` on `PATH` or in Debian's places, if installed.
pub(super) fn binary(name: &str) -> Option<String> {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .filter(|d| !d.is_empty())
        .chain(DIRS.iter().copied())
        .map(|d| format!("{d}/{name}"))
        .find(|p| Path::new(p).is_file())
}

/// Starts `bin` (pinned to the placement's server CPUs) with the arguments `args` gives for a
/// port and its own directory, until it listens.
pub(super) fn launch(
    name: &'static str,
    bin: &str,
    place: &Placement,
    args: &dyn Fn(u16, &Path) -> Vec<String>,
) -> Result<Server, Error> {
    let ip: std::net::IpAddr = place.server_addr.parse().map_err(|source| PeerError::NotAnAddress {
        given: place.server_addr.clone(),
        source,
    })?;
    let dir = std::env::temp_dir().join(format!("muxlab-{name}-{}-{}", std::process::id(), free_port()?));
    if let Err(source) = std::fs::create_dir_all(&dir) {
        return Err(PeerError::File { path: dir, source }.into());
    }
    let tried = try_ports(name, bin, place, args, ip, &dir);
    if tried.is_err() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    tried
}

/// [`launch`]'s tries, in `dir` (removed by the caller on an error).
fn try_ports(
    name: &'static str,
    bin: &str,
    place: &Placement,
    args: &dyn Fn(u16, &Path) -> Vec<String>,
    ip: std::net::IpAddr,
    dir: &Path,
) -> Result<Server, Error> {
    let said = dir.join("stderr.txt");
    let tries = 5;
    for _ in 0..tries {
        let port = free_port()?;
        let stderr = std::fs::File::create(&said).map_err(|source| PeerError::File {
            path: said.clone(),
            source,
        })?;
        let mut cmd = Command::new("taskset");
        // Sleeps as exact as the models' (a timer slack of 1 ns, not the kernel's 50 µs).
        let mut child = crate::sys::process::with_exact_sleeps(&mut cmd)
            .args(["-c", &place.server_cpus, bin])
            .args(args(port, dir))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(|source| PeerError::Spawn { product: name, source })?;
        let addr = SocketAddr::new(ip, port);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if child.try_wait().ok().flatten().is_some() {
                break; // Could not bind, or refused to start: another port.
            }
            let answered = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok();
            // Still ours after the connection: not another process on the port.
            if answered && child.try_wait().ok().flatten().is_none() {
                return Ok(Server {
                    pid: child.id() as i32,
                    child: Some(child),
                    addr,
                    lines: None,
                    dir: Some(dir.to_path_buf()),
                    session: None,
                    stop_with: crate::sys::signal::SIGTERM,
                });
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(PeerError::NoListen { product: name, addr }.into());
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }
    let last = std::fs::read_to_string(&said).unwrap_or_default();
    Err(PeerError::ExitedAtStart {
        product: name,
        tries,
        said: last.trim().to_string(),
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place() -> Placement {
        Placement {
            server_cpus: "0".into(),
            threaded_cpus: None,
            client_cpus: "0".into(),
            client_threads: 1,
            server_addr: "127.0.0.1".into(),
            hosts: None,
            round_trip: None,
            metrics: None,
        }
    }

    /// A store that refuses to start is tried on 5 ports, and the error quotes what it said;
    /// its directory is removed.
    #[test]
    fn a_product_that_will_not_start_is_named_with_what_it_said() {
        let err = launch("refuser", "/bin/sh", &place(), &|_, _| {
            vec!["-c".into(), "echo 'bad config line 3' >&2; exit 1".into()]
        })
        .err()
        .expect("it never listens");
        assert!(
            matches!(&err, Error::Peer(PeerError::ExitedAtStart { product: "refuser", tries: 5, said }) if said == "bad config line 3"),
            "{err:?}"
        );
        let said = err.to_string();
        assert!(
            said.contains("refuser exited at start 5 times") && said.contains("it said: bad config line 3"),
            "{said}"
        );
        let left: Vec<_> = std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("muxlab-refuser-{}-", std::process::id()))
            })
            .collect();
        assert!(left.is_empty(), "its directory is removed: {left:?}");
    }
}
