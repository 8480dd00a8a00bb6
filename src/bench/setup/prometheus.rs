//! A run's Prometheus (`prometheus = true`): Debian's binary, started with a configuration of
//! the run's own in its directory (`prometheus/`), scraping each second every model's
//! `serve --metrics` (a port per experiment and target, the A/A twin a target of its own, so a
//! paired group's servers, up at once, are told apart; a `--baseline` binary's are not scraped:
//! it may predate the flag) and the load's `load --metrics` (one port: loads run one at a
//! time), its data kept there. Stopped (SIGTERM) when the run ends. The ports are picked below
//! the ephemeral range (where the loads' own connections take theirs) when it leaves room.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::bench::record::{Error, PeerError};
use crate::sys;

/// How often it scrapes.
pub const SCRAPE: Duration = Duration::from_secs(1);

/// The run's Prometheus and the addresses it scrapes.
pub struct Watch {
    child: Child,
    /// Its directory in the run's: `prometheus.yml`, `data/`, `log`.
    pub dir: PathBuf,
    /// Where its web interface and API answer while the run goes.
    pub addr: SocketAddr,
    servers: BTreeMap<(String, String), SocketAddr>,
    load: SocketAddr,
}

impl Watch {
    /// Starts it in `run_dir/prometheus` for `targets` (experiment and target names: the
    /// models muxlab runs), once it is ready.
    pub fn start(run_dir: &Path, targets: &[(String, String)]) -> Result<Watch, Error> {
        let dir = run_dir.join("prometheus");
        let file = |path: &Path| {
            let path = path.to_path_buf();
            move |source| PeerError::File { path, source }
        };
        std::fs::create_dir_all(&dir).map_err(file(&dir))?;
        let ports = ports(targets.len() + 2).map_err(|source| PeerError::FreePort { source })?;
        let at = |p: u16| SocketAddr::from(([127, 0, 0, 1], p));
        let servers: BTreeMap<_, _> = targets.iter().cloned().zip(ports.iter().map(|&p| at(p))).collect();
        let load = at(ports[targets.len()]);
        let addr = at(ports[targets.len() + 1]);
        let config = dir.join("prometheus.yml");
        std::fs::write(&config, yaml(&servers, load)).map_err(file(&config))?;
        let log = dir.join("log");
        let stderr = std::fs::File::create(&log).map_err(file(&log))?;
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
            .arg(format!("--web.listen-address={addr}"))
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(|source| PeerError::Spawn {
                product: "prometheus (apt-get install prometheus)",
                source,
            })?;
        let w = Watch {
            child,
            dir,
            addr,
            servers,
            load,
        };
        w.ready()?;
        Ok(w)
    }

    /// Waits until it scrapes every target (its discovery hands them over up to 5 s after it
    /// starts: a run's first cells would go unseen).
    fn ready(&self) -> Result<(), Error> {
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            if self.active_targets().is_some_and(|n| n > self.servers.len()) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(PeerError::NoListen {
            product: "prometheus",
            addr: self.addr,
        }
        .into())
    }

    /// The targets it scrapes now, as its API says (`None`: it does not answer yet).
    fn active_targets(&self) -> Option<usize> {
        use std::io::{Read, Write};
        let mut c = std::net::TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).ok()?;
        c.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
        c.write_all(b"GET /api/v1/targets?state=active HTTP/1.0\r\n\r\n").ok()?;
        let mut s = String::new();
        c.read_to_string(&mut s).ok()?;
        let body: serde_json::Value = serde_json::from_str(s.split_once("\r\n\r\n")?.1).ok()?;
        Some(body["data"]["activeTargets"].as_array()?.len())
    }

    /// The address experiment `x`'s target `target` serves its metrics on.
    pub fn server(&self, x: &str, target: &str) -> Option<SocketAddr> {
        self.servers.get(&(x.to_string(), target.to_string())).copied()
    }

    /// The address every load serves its metrics on.
    pub fn load(&self) -> SocketAddr {
        self.load
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = sys::process::kill(self.child.id() as i32, sys::signal::SIGTERM);
        let until = Instant::now() + Duration::from_secs(20);
        while !matches!(self.child.try_wait(), Ok(Some(_))) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `n` ports free now, below the ephemeral range where it leaves room (a load's connections
/// take theirs from it and could hold a port a server is started on later), else any.
fn ports(n: usize) -> std::io::Result<Vec<u16>> {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let mut held = Vec::new();
    for port in (low.saturating_sub(8192).max(1024)..low).rev() {
        if held.len() == n {
            break;
        }
        if let Ok(l) = std::net::TcpListener::bind(("127.0.0.1", port)) {
            held.push(l);
        }
    }
    if held.len() < n {
        return sys::socket::free_ports(n);
    }
    held.iter().map(|l| l.local_addr().map(|a| a.port())).collect()
}

/// The configuration: a job for the servers, each target labelled with its experiment and
/// name, and one for the loads.
fn yaml(servers: &BTreeMap<(String, String), SocketAddr>, load: SocketAddr) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let mut y = format!(
        "global:\n  scrape_interval: {s}s\n  scrape_timeout: {s}s\nscrape_configs:\n  - job_name: muxlab-serve\n    static_configs:\n",
        s = SCRAPE.as_secs()
    );
    for ((x, target), addr) in servers {
        y.push_str(&format!(
            "      - targets: ['{addr}']\n        labels: {{experiment: {}, target: {}}}\n",
            quote(x),
            quote(target)
        ));
    }
    y.push_str(&format!(
        "  - job_name: muxlab-load\n    static_configs:\n      - targets: ['{load}']\n"
    ));
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_server_is_a_target_labelled_by_experiment_and_name_and_quotes_are_doubled() {
        let mut s = BTreeMap::new();
        s.insert(
            ("x'1".to_string(), "epoll".to_string()),
            "127.0.0.1:9001".parse().unwrap(),
        );
        let y = yaml(&s, "127.0.0.1:9002".parse().unwrap());
        assert!(
            y.contains("      - targets: ['127.0.0.1:9001']\n        labels: {experiment: 'x''1', target: 'epoll'}\n"),
            "{y}"
        );
        assert!(
            y.contains("job_name: muxlab-load\n    static_configs:\n      - targets: ['127.0.0.1:9002']\n"),
            "{y}"
        );
    }
}
