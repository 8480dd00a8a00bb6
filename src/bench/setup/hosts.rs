//! Cells across hosts. With `server_host`, the server is started there over ssh under the
//! guard (which stops it, and anything it leaves, when the session ends), pinned there, and
//! its process tree is sampled there by `muxlab sample`. With `client_hosts`, the load runs
//! from those hosts (`muxlab load --hosts`). Locally, the same questions go to /proc directly.

use std::path::PathBuf;
use std::time::Duration;

use crate::bench::record::scenario::Scenario;
use crate::bench::record::CpuSource;
use crate::bench::record::{Error, HostError, SampleError};
use crate::remote::sample::SampleLine;
use crate::remote::ssh::{self, Machine, Prepared, Session, Ssh};
use crate::sys::{self, cgroup::CpuGroup, procfs::ProcSample};

/// The hosts of a run, ready to use.
pub struct Hosts {
    pub ssh: Ssh,
    pub ssh_config: Option<PathBuf>,
    pub push: bool,
    /// The muxlab binary on the hosts (without `push`).
    pub remote_bin: String,
    /// The server's host, its muxlab checked (or pushed) once for the whole run.
    pub server: Option<Prepared>,
    pub clients: Vec<String>,
    /// What each host is (kernel, CPU model, cores), for the environment.
    pub machines: Vec<Machine>,
    /// The server's address as ssh reached it.
    pub server_addr: Option<String>,
}

impl Hosts {
    /// Checks the scenario's hosts (reachable, the same muxlab) and describes them. None when
    /// the scenario names no host.
    pub fn prepare(
        sc: &Scenario,
        ssh_config: Option<PathBuf>,
        push: bool,
        remote_bin: &str,
    ) -> Result<Option<Hosts>, Error> {
        if sc.server_host.is_none() && sc.client_hosts.is_empty() {
            return Ok(None);
        }
        if let Some(f) = &ssh_config {
            if !f.is_file() {
                return Err(HostError::NoSshConfig { path: f.clone() }.into());
            }
        }
        let ssh = Ssh {
            config: ssh_config.clone(),
            connect_timeout: Duration::from_secs(5),
        };
        let mut machines = Vec::new();
        let mut server_addr = None;
        for h in sc.server_host.iter().chain(&sc.client_hosts) {
            let m = ssh::machine(&ssh, h).map_err(|source| HostError::Unreachable {
                host: h.clone(),
                source,
            })?;
            if Some(h) == sc.server_host.as_ref() {
                server_addr = m.address.clone();
            }
            machines.push(m);
        }
        let server = match &sc.server_host {
            Some(h) => Some(
                ssh::prepare(&ssh, h, remote_bin, push).map_err(|prep| HostError::Prepare { host: h.clone(), prep })?,
            ),
            None => None,
        };
        Ok(Some(Hosts {
            ssh,
            ssh_config,
            push,
            remote_bin: remote_bin.to_string(),
            server,
            clients: sc.client_hosts.clone(),
            machines,
            server_addr,
        }))
    }

    /// The flags that send a cell's load to the client hosts.
    pub fn load_flags(&self) -> Vec<String> {
        if self.clients.is_empty() {
            return Vec::new();
        }
        let mut a = vec!["--hosts".to_string(), self.clients.join(",")];
        if let Some(f) = &self.ssh_config {
            a.extend(["--ssh-config".into(), f.display().to_string()]);
        }
        if self.push {
            a.push("--push".into());
        } else {
            a.extend(["--remote-bin".into(), self.remote_bin.clone()]);
        }
        a
    }

    /// Starts `serve_args` (muxlab's arguments) on the server host under the guard.
    pub fn start_server(&self, serve_args: &[String]) -> Result<Session, Error> {
        let p = self.server.as_ref().expect("a server host");
        let mut words = vec![
            p.bin.clone(),
            "guard".into(),
            "--silence".into(),
            "10s".into(),
            "--".into(),
        ];
        words.push(p.bin.clone());
        words.extend(serve_args.iter().cloned());
        Session::start(&self.ssh, &p.host, &words, true).map_err(|source| {
            HostError::Session {
                host: p.host.clone(),
                source,
            }
            .into()
        })
    }

    /// A sampler on the server host.
    fn sampler(&self, pid: i32) -> Result<Sampler, Error> {
        let p = self.server.as_ref().expect("a server host");
        let words = vec![p.bin.clone(), "sample".into()];
        let s = Session::start(&self.ssh, &p.host, &words, false).map_err(HostError::Sampler)?;
        Ok(Sampler::Remote {
            session: s,
            pid,
            kernel: sys::machine::KernelMem::default(),
        })
    }

    /// Removes what `--push` put on the server host.
    pub fn finish(&self) {
        if let Some(p) = &self.server {
            if let Some(d) = &p.pushed_dir {
                ssh::remove(&self.ssh, &p.host, d);
            }
        }
    }
}

/// Samples a server's process tree where it runs.
pub enum Sampler {
    /// Nothing to sample (a server somebody else runs).
    Nothing,
    /// A server on this machine; its CPU time from the group it was moved into where the
    /// machine allows one (forked children that exited included, in ns), else from the CPU
    /// clocks of its processes and the reaped children's ticks.
    Local { pid: i32, group: Option<CpuGroup> },
    Remote {
        session: Session,
        pid: i32,
        /// The host's kernel TCP memory in the last answer.
        kernel: sys::machine::KernelMem,
    },
}

impl Sampler {
    /// The sampler for a server with `pid` (0: none), on `hosts`' server host if there is one.
    pub fn new(pid: i32, hosts: Option<&Hosts>) -> Result<Sampler, Error> {
        match hosts {
            _ if pid <= 0 => Ok(Sampler::Nothing),
            Some(h) if h.server.is_some() => h.sampler(pid),
            _ => {
                let group = CpuGroup::create().ok().filter(|g| g.add(pid).is_ok());
                Ok(Sampler::Local { pid, group })
            }
        }
    }

    pub fn watched(&self) -> bool {
        !matches!(self, Sampler::Nothing)
    }

    /// Where the server's CPU time comes from.
    pub fn cpu_source(&self) -> Option<CpuSource> {
        match self {
            Sampler::Nothing => None,
            Sampler::Local { group: Some(_), .. } => Some(CpuSource::Cgroup),
            _ => Some(CpuSource::ProcessClocks),
        }
    }

    fn ask(&mut self, question: &str) -> Result<ProcSample, SampleError> {
        match self {
            Sampler::Nothing => Ok(ProcSample::default()),
            Sampler::Local { pid, group } => {
                let all = question == "all";
                if let (Some(g), true) = (group.as_ref(), all) {
                    // Children forked before the server joined the group join it now; those
                    // forked later started in it.
                    for p in sys::procfs::tree(*pid) {
                        match g.add(p) {
                            // Gone since the tree was read: nothing to move.
                            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
                            Err(source) => {
                                return Err(SampleError::Move {
                                    pid: p,
                                    group: g.path().to_path_buf(),
                                    source,
                                })
                            }
                            Ok(()) => {}
                        }
                    }
                }
                // The CPU time first: the caller stamps the sample with the time it asked, and
                // a scan of every thread can take a while.
                let usage = group
                    .as_ref()
                    .map(|g| g.usage().map_err(|source| SampleError::Group { source }))
                    .transpose()?;
                let mut s = if all {
                    sys::procfs::sample_tree_all_threads(*pid)
                } else {
                    sys::procfs::sample_tree(*pid)
                }
                .map_err(|source| SampleError::Read { source })?;
                if let Some(u) = usage {
                    s.cpu = u;
                    s.reaped_children = Duration::ZERO;
                }
                Ok(s)
            }
            Sampler::Remote { session, pid, kernel } => {
                session
                    .send(&format!("{question} {pid}\n"))
                    .map_err(|source| SampleError::Send { source })?;
                let within = Duration::from_secs(10);
                let answer = session
                    .lines
                    .recv_timeout(within)
                    .map_err(|_| SampleError::NoAnswer { within })?;
                let line: SampleLine = match serde_json::from_str(&answer) {
                    Ok(l) => l,
                    Err(source) => return Err(SampleError::Answer { answer, source }),
                };
                *kernel = sys::machine::KernelMem {
                    tcp_pages: line.tcp_pages,
                    slab_kib: line.slab_kib,
                };
                Ok(line.sample())
            }
        }
    }

    /// The tree's CPU time, memory and threads.
    pub fn tree(&mut self) -> Result<ProcSample, Error> {
        Ok(self.ask("tree")?)
    }

    /// The same with every thread's context switches and ids, and the tree's PSS (slower: for
    /// the window's ends).
    pub fn all(&mut self) -> Result<ProcSample, Error> {
        Ok(self.ask("all")?)
    }

    /// The kernel's TCP memory and slab on the server's host (a remote host's as of its last
    /// sample).
    pub fn kernel_mem(&mut self) -> sys::machine::KernelMem {
        match self {
            Sampler::Remote { kernel, .. } => *kernel,
            _ => sys::machine::KernelMem::now(),
        }
    }
}

#[cfg(test)]
mod sampling {
    use crate::bench::record::{Error, SampleError};
    use crate::bench::setup::Sampler;

    /// A sample that cannot be taken is an error naming what failed (the runner records it as
    /// the cell's status), never a zero.
    #[test]
    fn a_server_whose_processes_cannot_be_read_fails_the_sample_with_its_reason() {
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let pid = gone.id() as i32;
        gone.wait().unwrap();
        let mut s = Sampler::new(pid, None).unwrap();
        for e in [s.tree().unwrap_err(), s.all().unwrap_err()] {
            assert!(matches!(e, Error::Sample(SampleError::Read { .. })), "{e:?}");
            let e = e.to_string();
            assert!(e.contains("sampling the server's processes failed"), "{e}");
        }
    }
}
