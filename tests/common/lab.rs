//! Real hosts for the multi-host tests: network namespaces on a bridge, each running Debian's
//! OpenSSH server with keys made for this run, reached with an ssh config written for it.
//! Needs root, `ip` (iproute2), `sshd` (openssh-server) and `ssh`; without them
//! [`Lab::new`] skips the test ([`super::skip`]: a failure under `MUXLAB_REQUIRE_ALL`). Once
//! those are there, a set-up that fails fails the test.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One lab at a time: namespaces and bridges are machine-wide.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A set of namespace hosts `h1`, `h2`, ... on a bridge; the test process is on the bridge too.
pub struct Lab {
    pub dir: PathBuf,
    pub ssh_config: PathBuf,
    tag: String,
    /// Third octet of 10.231.X.0/24.
    net: u8,
    hosts: usize,
    sshds: Vec<Child>,
    _guard: std::sync::MutexGuard<'static, ()>,
}

fn run(cmd: &str, args: &[&str]) -> Result<(), String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Lab {
    /// Builds `n` hosts; `None` when this machine cannot (the test was skipped: the caller
    /// returns). A set-up that fails once the prerequisites are there panics.
    pub fn new(n: usize) -> Option<Lab> {
        let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(why) = Lab::prerequisites() {
            super::skip(&why);
            return None;
        }
        match Lab::build_hosts(n, guard) {
            Ok(lab) => Some(lab),
            Err(e) => panic!("the lab of {n} namespace hosts could not be set up: {e}"),
        }
    }

    /// Root, `ip`, `sshd` and `ssh`, or what is missing.
    fn prerequisites() -> Result<(), String> {
        if effective_uid() != 0 {
            return Err("not root: network namespaces need root".into());
        }
        for (tool, pkg) in [("/usr/sbin/sshd", "openssh-server"), ("/usr/bin/ssh", "openssh-client")] {
            if !std::path::Path::new(tool).exists() {
                return Err(format!("{tool} is missing (apt-get install {pkg})"));
            }
        }
        if Command::new("ip").arg("-V").output().is_err() {
            return Err("ip is missing (apt-get install iproute2)".into());
        }
        Ok(())
    }

    fn build_hosts(n: usize, guard: std::sync::MutexGuard<'static, ()>) -> Result<Lab, String> {
        let pid = std::process::id();
        let net = (pid % 200) as u8 + 20;
        let tag = format!("mx{}", pid % 100_000);
        let dir = std::env::temp_dir().join(format!("muxlab-lab-{pid}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let mut lab = Lab {
            ssh_config: dir.join("ssh_config"),
            dir,
            tag,
            net,
            hosts: 0,
            sshds: Vec::new(),
            _guard: guard,
        };
        lab.build(n)?;
        Ok(lab)
    }

    fn bridge(&self) -> String {
        format!("{}br", self.tag)
    }

    /// The namespace of host `i` (1-based).
    pub fn ns(&self, i: usize) -> String {
        format!("{}h{i}", self.tag)
    }

    /// The address of host `i`; the test process is `.1`.
    pub fn addr(&self, i: usize) -> String {
        format!("10.231.{}.{}", self.net, i + 1)
    }

    /// The host's name in the ssh config.
    pub fn host(&self, i: usize) -> String {
        format!("h{i}")
    }

    /// The veth end on the bridge side of host `i` (set it down to cut the host off).
    pub fn link(&self, i: usize) -> String {
        format!("{}v{i}", self.tag)
    }

    fn build(&mut self, n: usize) -> Result<(), String> {
        let d = self.dir.display().to_string();
        for key in ["client_key", "host_key"] {
            run(
                "ssh-keygen",
                &["-q", "-t", "ed25519", "-N", "", "-f", &format!("{d}/{key}")],
            )?;
        }
        std::fs::copy(self.dir.join("client_key.pub"), self.dir.join("authorized_keys")).map_err(|e| e.to_string())?;
        std::fs::create_dir_all("/run/sshd").map_err(|e| e.to_string())?;
        let sshd_config = format!(
            "HostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nPermitRootLogin prohibit-password\n\
             PidFile none\nLogLevel ERROR\n"
        );
        std::fs::write(self.dir.join("sshd_config"), sshd_config).map_err(|e| e.to_string())?;
        let mut ssh_config = format!(
            "Host *\n  IdentityFile {d}/client_key\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n  \
             UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  User root\n"
        );
        let br = self.bridge();
        run("ip", &["link", "add", &br, "type", "bridge"])?;
        self.hosts = n; // from here on, Drop cleans up
        run("ip", &["addr", "add", &format!("10.231.{}.1/24", self.net), "dev", &br])?;
        run("ip", &["link", "set", &br, "up"])?;
        for i in 1..=n {
            let (ns, link, addr) = (self.ns(i), self.link(i), self.addr(i));
            run("ip", &["netns", "add", &ns])?;
            run(
                "ip",
                &[
                    "link", "add", &link, "type", "veth", "peer", "name", "eth0", "netns", &ns,
                ],
            )?;
            run("ip", &["link", "set", &link, "master", &br, "up"])?;
            let inside = |args: &[&str]| {
                let mut a = vec!["netns", "exec", &ns, "ip"];
                a.extend_from_slice(args);
                run("ip", &a)
            };
            inside(&["addr", "add", &format!("{addr}/24"), "dev", "eth0"])?;
            inside(&["link", "set", "eth0", "up"])?;
            inside(&["link", "set", "lo", "up"])?;
            let sshd = Command::new("ip")
                .args(["netns", "exec", &ns, "/usr/sbin/sshd", "-D", "-e", "-f"])
                .arg(self.dir.join("sshd_config"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("sshd: {e}"))?;
            self.sshds.push(sshd);
            ssh_config.push_str(&format!("Host {}\n  HostName {addr}\n", self.host(i)));
        }
        std::fs::write(&self.ssh_config, ssh_config).map_err(|e| e.to_string())?;
        // Wait until every sshd answers.
        for i in 1..=n {
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let ok = Command::new("ssh")
                    .arg("-F")
                    .arg(&self.ssh_config)
                    .args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=2", &self.host(i), "true"])
                    .output()
                    .is_ok_and(|o| o.status.success());
                if ok {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(format!("sshd in {} does not answer", self.ns(i)));
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        Ok(())
    }

    /// Every process in host `i`'s namespace.
    fn pids(&self, i: usize) -> Vec<i32> {
        let out = Command::new("ip").args(["netns", "pids", &self.ns(i)]).output();
        let text = out
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        text.split_whitespace().filter_map(|p| p.parse().ok()).collect()
    }

    /// The muxlab processes in host `i`'s namespace (sshd's are not counted).
    pub fn muxlab_pids(&self, i: usize) -> Vec<i32> {
        self.pids(i)
            .into_iter()
            .filter(|p| {
                std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "muxlab")
                    && super::alive(*p)
            })
            .collect()
    }

    /// Waits up to `limit` for host `i` to hold no muxlab process; returns those left.
    pub fn muxlab_left(&self, i: usize, limit: Duration) -> Vec<i32> {
        let deadline = Instant::now() + limit;
        loop {
            let left = self.muxlab_pids(i);
            if left.is_empty() || Instant::now() > deadline {
                return left;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Cuts host `i` off the bridge (its link goes down), or puts it back.
    pub fn set_link(&self, i: usize, up: bool) {
        run("ip", &["link", "set", &self.link(i), if up { "up" } else { "down" }]).expect("ip link set");
    }
}

/// The effective uid, read from /proc (the tests use no unsafe).
pub fn effective_uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).and_then(|u| u.parse().ok()))
        })
        .unwrap_or(u32::MAX)
}

impl Drop for Lab {
    fn drop(&mut self) {
        for s in &mut self.sshds {
            let _ = s.kill();
            let _ = s.wait();
        }
        for i in 1..=self.hosts {
            // Whatever a test left in a namespace (sessions of sshd included) goes with it.
            for p in self.pids(i) {
                let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
            }
            let _ = run("ip", &["link", "del", &self.link(i)]);
            let _ = run("ip", &["netns", "del", &self.ns(i)]);
        }
        if self.hosts > 0 {
            let _ = run("ip", &["link", "del", &self.bridge()]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
