//! nginx as a peer: Debian's binary started with a generated configuration (one worker,
//! pinned like the models, answering the same body) on ports it is known to have bound.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::bench::process::Server;
use crate::bench::record::scenario::{Experiment, Protocol};
use crate::bench::record::{Error, PeerError, SkipReason};
use crate::bench::setup::Placement;

pub fn free_port() -> Result<u16, Error> {
    let free = |source| PeerError::FreePort { source };
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(free)?;
    Ok(l.local_addr().map_err(free)?.port())
}

/// `n` ports free now and distinct from each other (two `listen` lines on one port are one
/// listener to nginx, with the options of both: TLS without `http2` would then pick h2).
fn distinct_free_ports(n: usize) -> Result<Vec<u16>, Error> {
    Ok(crate::sys::socket::free_ports(n).map_err(|source| PeerError::FreePort { source })?)
}

/// Debian's nginx binary, if installed.
pub fn nginx_binary() -> Option<&'static str> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
}

/// Starts nginx (`bin`, pinned to `cpus` when given) in `dir` with the configuration `conf`
/// writes for `n` free ports on `host` (it must put the pid file and error log in `dir`).
/// A free port is free only until someone takes it, and a connection to it may reach that
/// someone: nginx is up once its pid file exists, which it writes after binding every listener,
/// and each port answers. nginx that cannot bind exits, and is started again on new ports (5
/// tries). Returns it and its ports.
pub fn launch_nginx(
    bin: &str,
    cpus: Option<&str>,
    dir: &std::path::Path,
    host: &str,
    n: usize,
    conf: &dyn Fn(&[u16]) -> String,
) -> Result<(Child, Vec<u16>), Error> {
    let tries = 5;
    for _ in 0..tries {
        let ports = distinct_free_ports(n)?;
        let path = dir.join("nginx.conf");
        if let Err(source) = std::fs::write(&path, conf(&ports)) {
            return Err(PeerError::NginxConf { path, source }.into());
        }
        let _ = std::fs::remove_file(dir.join("nginx.pid"));
        let mut cmd = match cpus {
            Some(c) => {
                let mut t = Command::new("taskset");
                t.args(["-c", c, bin]);
                t
            }
            None => Command::new(bin),
        };
        let mut child = cmd
            .arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-p")
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| PeerError::Spawn {
                product: "nginx",
                source,
            })?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if child.try_wait().ok().flatten().is_some() {
                break; // Could not bind (or failed otherwise: error.log says): new ports.
            }
            let up = dir.join("nginx.pid").exists()
                && ports.iter().all(|p| std::net::TcpStream::connect((host, *p)).is_ok());
            if up {
                return Ok((child, ports));
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(PeerError::NginxNotUp { dir: dir.to_path_buf() }.into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    Err(PeerError::NginxNoPorts {
        dir: dir.to_path_buf(),
        tries,
    }
    .into())
}

/// nginx with one worker, pinned like the models, answering the same body; `deferred` adds
/// `deferred` to its listen directive (TCP_DEFER_ACCEPT, as `serve --defer-accept`).
pub(super) fn start_nginx(deferred: bool, x: &Experiment, place: &Placement) -> Result<Server, Error> {
    let deferred = if deferred { " deferred" } else { "" };
    if place.remote_server() {
        return Err(Error::Skipped(SkipReason::RemoteServer { product: "nginx" }));
    }
    let http2 = match x.proto {
        Protocol::Http => "",
        // Debian's nginx has the http2 module: cleartext HTTP/2 (prior knowledge) on the listener.
        Protocol::H2 => " http2",
        proto => return Err(Error::Skipped(SkipReason::NginxProto { proto })),
    };
    let Some(nginx) = nginx_binary() else {
        return Err(Error::Skipped(SkipReason::NotInstalled {
            binary: "nginx",
            package: "nginx-light",
        }));
    };
    let dir = std::env::temp_dir().join(format!("muxlab-nginx-{}-{}", std::process::id(), free_port()?));
    if let Err(source) = std::fs::create_dir_all(&dir) {
        return Err(PeerError::NginxDir { dir, source }.into());
    }
    let a = &place.server_addr;
    let ip: std::net::IpAddr = a.parse().map_err(|source| PeerError::NotAnAddress {
        given: a.clone(),
        source,
    })?;
    let (child, ports) = launch_nginx(nginx, Some(&place.server_cpus), &dir, a, 1, &|ports| {
        format!(
            "worker_processes 1; daemon off; master_process on; pid {d}/nginx.pid; error_log {d}/error.log;\n\
             worker_rlimit_nofile 20000;\n\
             events {{ worker_connections 19000; }}\n\
             http {{ access_log off; keepalive_requests 100000000; keepalive_timeout 60s; http2_max_requests 100000000;\n\
               server {{ listen {a}:{port} backlog=1024 reuseport{deferred}{http2}; location / {{ default_type text/html; return 200 \"<html>hello</html>\"; }} }} }}\n",
            d = dir.display(),
            port = ports[0]
        )
    })?;
    let addr = SocketAddr::new(ip, ports[0]);
    Ok(Server {
        pid: child.id() as i32,
        child: Some(child),
        addr,
        lines: None,
        dir: Some(dir),
        session: None,
        stop_with: crate::sys::signal::SIGQUIT,
    })
}

#[cfg(test)]
mod tests {
    /// The ports of one nginx are distinct: two `listen` lines on one port would be one
    /// listener with both lines' options (found as a TLS port without `http2` that picked h2
    /// in CI). Few at once: a port held here is taken from every other test of this binary (a
    /// product `launch` starts looks up once its port answers: 500 held at once made
    /// `a_product_that_will_not_start_is_named…` see its port answered).
    #[test]
    fn the_ports_picked_for_one_nginx_are_distinct() {
        for _ in 0..20 {
            let mut ports = super::distinct_free_ports(8).unwrap();
            ports.sort_unstable();
            ports.dedup();
            assert_eq!(ports.len(), 8);
        }
    }
}
