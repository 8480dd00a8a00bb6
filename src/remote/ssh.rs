//! One ssh invocation: `ssh -o BatchMode=yes [-F FILE] HOST -- COMMAND`, with the command
//! quoted for the remote shell; preparing a host (`--push`, the version check).

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::reason::reason;
use super::Error;
// Why a host could not be prepared: the layer's error file holds them (beside `Error`, which
// they carry); named here too, where `prepare` is.
pub use super::{PrepError, PrepFault, Theirs};

/// How to reach the hosts.
#[derive(Debug, Clone)]
pub struct Ssh {
    /// `-F FILE`.
    pub config: Option<PathBuf>,
    /// Give up on connecting after this long (ssh's ConnectTimeout).
    pub connect_timeout: Duration,
}

/// What `muxlab --version` prints.
pub fn local_version() -> String {
    // The build's origin too: the same version built from another commit is another binary.
    format!("muxlab {}", crate::origin::VERSION)
}

/// `word` quoted for a POSIX shell.
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,@+%".contains(&b))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

impl Ssh {
    /// The ssh command that runs `words` (quoted) on `host`. Its own process group, so that a
    /// Ctrl-C at the terminal reaches muxlab alone, which then stops the hosts in order.
    pub fn command(&self, host: &str, words: &[String]) -> Command {
        let mut c = Command::new("ssh");
        c.args(["-o", "BatchMode=yes", "-o"])
            .arg(format!("ConnectTimeout={}", self.connect_timeout.as_secs().max(1)))
            .args(["-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=3", "-T"]);
        if let Some(f) = &self.config {
            c.arg("-F").arg(f);
        }
        let line: Vec<String> = words.iter().map(|w| quote(w)).collect();
        // `--`: a host is never read as an option (`-oProxyCommand=...`); callers refuse such
        // names too, with a clearer word.
        c.arg("--").arg(host).arg(line.join(" "));
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
        c
    }

    /// Starts `words` on `host` with every stdio piped.
    pub fn spawn(&self, host: &str, words: &[String]) -> Result<std::process::Child, Error> {
        self.command(host, words)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(Error::NoSsh)
    }

    /// Runs `words` on `host` to completion, feeding it `input`; its stdout, or why it failed
    /// (ssh's or the command's last words).
    pub fn output(&self, host: &str, words: &[String], input: &[u8]) -> Result<String, Error> {
        let mut child = self.spawn(host, words)?;
        let mut stdin = child.stdin.take().expect("piped");
        let input = input.to_vec();
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let mut err = String::new();
        let mut out = String::new();
        let mut stderr = child.stderr.take().expect("piped");
        let reader = std::thread::spawn(move || {
            let _ = stderr.read_to_string(&mut err);
            err
        });
        let _ = child.stdout.take().expect("piped").read_to_string(&mut out);
        let status = child.wait().map_err(|source| Error::Wait {
            host: host.to_string(),
            source,
        })?;
        let _ = feeder.join();
        let err = reader.join().unwrap_or_default();
        if status.success() {
            Ok(out)
        } else {
            Err(Error::Exited {
                host: host.to_string(),
                code: status.code(),
                stderr: err,
            })
        }
    }
}

/// A host made ready: the muxlab to run there and, with `--push`, the directory to remove.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub host: String,
    pub bin: String,
    pub pushed_dir: Option<String>,
}

/// Pushes this binary (with `push`) and checks the version on `host`.
pub fn prepare(ssh: &Ssh, host: &str, remote_bin: &str, push: bool) -> Result<Prepared, PrepError> {
    let bad = |fault| PrepError {
        host: host.to_string(),
        fault,
    };
    let (words, input) = if push {
        let me = std::env::current_exe().map_err(|e| bad(PrepFault::NoProgram(e)))?;
        let bytes = std::fs::read(&me).map_err(|source| {
            bad(PrepFault::Unreadable {
                path: me.clone(),
                source,
            })
        })?;
        // A directory of the host's own making (mktemp -d): hosts that share /tmp (namespaces,
        // pods with a shared volume) each get theirs. Its name comes back first, then the
        // version of what was pushed.
        let script = "umask 077 && d=$(mktemp -d \"${TMPDIR:-/tmp}/muxlab-push-XXXXXXXX\") && echo \"$d\" \
                      && cat > \"$d/muxlab\" && chmod 700 \"$d/muxlab\" && \"$d/muxlab\" --version";
        (vec!["sh".into(), "-c".into(), script.into()], bytes)
    } else {
        (vec![remote_bin.to_string(), "--version".into()], Vec::new())
    };
    let out = ssh
        .output(host, &words, &input)
        .map_err(|e| bad(failed(remote_bin, push, e)))?;
    let mut lines = out.lines();
    let dir = match push {
        true => match lines.next().map(str::trim) {
            Some(d) if d.starts_with('/') && d.contains("/muxlab-push-") => Some(d.to_string()),
            _ => return Err(bad(PrepFault::NoPushDir { said: out })),
        },
        false => None,
    };
    let bin = dir.as_ref().map_or(remote_bin.to_string(), |d| format!("{d}/muxlab"));
    let theirs = lines.next().unwrap_or("").trim();
    if theirs != local_version() {
        if let Some(d) = &dir {
            remove(ssh, host, d);
        }
        let theirs = match theirs.starts_with("muxlab ") {
            true => Theirs::Muxlab(theirs.to_string()),
            false => Theirs::NotMuxlab(theirs.to_string()),
        };
        return Err(bad(PrepFault::OtherVersion {
            bin,
            theirs,
            ours: local_version(),
        }));
    }
    Ok(Prepared {
        host: host.to_string(),
        bin,
        pushed_dir: dir,
    })
}

/// Why running `bin` on a host failed: no muxlab there when the host's shell said it found
/// no such command (never when pushing: then the script's own commands ran), else the
/// session's own failure.
fn failed(bin: &str, push: bool, e: Error) -> PrepFault {
    match !push && not_found_there(&e) {
        true => PrepFault::NotThere {
            bin: bin.to_string(),
            source: e,
        },
        false => PrepFault::Ssh(e),
    }
}

/// The command ran on the host and its shell found no such program: the shell's exit 127
/// ("command not found"), whose last words say `not found` or `No such file`. ssh that cannot
/// start here (its OS error also reads "No such file or directory"), one that cannot reach the
/// host (255), or a command that ran and failed (1, 126, a signal) is not.
fn not_found_there(e: &Error) -> bool {
    match e {
        Error::Exited { stderr, code, .. } if *code == Some(127) => {
            let said = reason(stderr, *code);
            said.contains("not found") || said.contains("No such file")
        }
        _ => false,
    }
}

/// Removes a pushed directory (best effort: an unreachable host keeps it until its /tmp is
/// cleaned; the guard normally removes it itself).
pub fn remove(ssh: &Ssh, host: &str, dir: &str) {
    let _ = ssh.output(host, &["rm".into(), "-rf".into(), dir.to_string()], &[]);
}

/// A long-lived command on a host: its stdout and stderr as lines, and its stdin kept alive
/// with a heartbeat (a newline every [`HEARTBEAT`](super::guard::HEARTBEAT)) for a guard on the
/// far side; [`Session::send`] adds words of its own (`stop`, a question).
pub struct Session {
    pub host: String,
    pub child: std::process::Child,
    stdin: std::sync::Arc<std::sync::Mutex<Option<std::process::ChildStdin>>>,
    pub lines: std::sync::mpsc::Receiver<String>,
    pub errors: std::sync::mpsc::Receiver<String>,
}

impl Session {
    /// Starts `words` on `host`; with `heartbeat`, a thread writes the guard's heartbeat.
    pub fn start(ssh: &Ssh, host: &str, words: &[String], heartbeat: bool) -> Result<Session, Error> {
        let mut child = ssh.spawn(host, words)?;
        let stdin = std::sync::Arc::new(std::sync::Mutex::new(child.stdin.take()));
        if heartbeat {
            let beat = stdin.clone();
            std::thread::spawn(move || loop {
                std::thread::sleep(super::guard::HEARTBEAT);
                let mut s = crate::sync::lock(&beat);
                let alive = s
                    .as_mut()
                    .is_some_and(|w| w.write_all(b"\n").and_then(|_| w.flush()).is_ok());
                if !alive {
                    return;
                }
            });
        }
        Ok(Session {
            host: host.to_string(),
            lines: lines_of(child.stdout.take().expect("piped")),
            errors: lines_of(child.stderr.take().expect("piped")),
            child,
            stdin,
        })
    }

    /// Writes `text` to the command's stdin.
    pub fn send(&self, text: &str) -> std::io::Result<()> {
        let mut s = crate::sync::lock(&self.stdin);
        match s.as_mut() {
            Some(w) => w.write_all(text.as_bytes()).and_then(|_| w.flush()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    /// Closes the command's stdin (a guard stops its command; a sampler ends).
    pub fn close(&self) {
        *crate::sync::lock(&self.stdin) = None;
    }

    /// Waits up to `limit` for the session to end; kills ssh after that. Returns whether it
    /// ended by itself.
    pub fn wait(&mut self, limit: Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.close();
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Reads `out` line by line on a thread.
pub fn lines_of(out: impl Read + Send + 'static) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// A host as bench's environment records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub host: String,
    pub kernel: String,
    pub cores: Option<u64>,
    pub cpu_model: String,
    /// The host's address as ssh reached it.
    pub address: Option<String>,
}

/// What `host` is: kernel, CPU model, cores (read with the shell: no muxlab needed there).
pub fn machine(ssh: &Ssh, host: &str) -> Result<Machine, Error> {
    let script = "uname -r; nproc; grep -m1 'model name' /proc/cpuinfo | cut -d: -f2; echo \"$SSH_CONNECTION\"";
    let out = ssh.output(host, &["sh".into(), "-c".into(), script.into()], &[])?;
    let l: Vec<&str> = out.lines().map(str::trim).collect();
    let at = |i: usize| l.get(i).copied().unwrap_or("");
    Ok(Machine {
        host: host.to_string(),
        kernel: at(0).into(),
        cores: at(1).parse().ok(),
        cpu_model: at(2).into(),
        address: at(3).split_whitespace().nth(2).map(String::from),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: Option<i32>, stderr: &str) -> Error {
        Error::Exited {
            host: "h".into(),
            code,
            stderr: stderr.into(),
        }
    }

    #[test]
    fn only_the_hosts_shell_not_finding_muxlab_is_no_muxlab_there() {
        let prep = |e: Error| PrepError {
            host: "h".into(),
            fault: failed("muxlab", false, e),
        };
        // The host's shell did not find it: the user can fix it (exit 2).
        for said in [
            "sh: 1: muxlab: not found",
            "bash: line 1: /opt/muxlab: No such file or directory",
        ] {
            let p = prep(exited(Some(127), said));
            assert!(
                matches!(p.fault, PrepFault::NotThere { .. }) && p.is_usage(),
                "{said}: {p}"
            );
            assert!(
                p.to_string()
                    .starts_with(&format!("cannot run 'muxlab' there ({said})")),
                "{p}"
            );
        }
        // No ssh on this machine: its OS error says "No such file or directory", yet it is ssh
        // that is missing, not muxlab there (exit 1).
        let no_ssh = Error::NoSsh(std::io::Error::from_raw_os_error(2));
        assert!(no_ssh.to_string().contains("No such file"), "{no_ssh}");
        let p = prep(no_ssh);
        assert!(
            matches!(p.fault, PrepFault::Ssh(Error::NoSsh(_))) && !p.is_usage(),
            "{p}"
        );
        assert!(p.to_string().starts_with("cannot run ssh: "), "{p}");
        // ssh's own failure (255) that names a missing file, and a command that failed otherwise.
        for e in [
            exited(Some(255), "Can't open user config file /x: No such file or directory"),
            exited(Some(1), "muxlab: something else went wrong"),
            exited(Some(1), "sh: 1: muxlab: not found"),
            exited(Some(126), "sh: 1: /opt/muxlab: Permission denied"),
            exited(None, ""),
        ] {
            let p = prep(e);
            assert!(
                matches!(p.fault, PrepFault::Ssh(Error::Exited { .. })) && !p.is_usage(),
                "{p}"
            );
        }
        // With --push the script's own commands ran (mktemp, cat): a file or program they did
        // not find is not "no muxlab there" (whose advice is --push).
        let pushing = failed("muxlab", true, exited(Some(127), "sh: 1: mktemp: not found"));
        assert!(matches!(pushing, PrepFault::Ssh(_)), "{pushing:?}");
    }
}
