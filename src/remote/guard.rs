//! `muxlab guard -- COMMAND...`: what `--hosts` and remote bench runs start on the far side of
//! ssh. It runs COMMAND in a process group of its own and stops it (SIGTERM to COMMAND, or to
//! the whole group with `--group`, as a terminal's Ctrl-C does; SIGKILL to the group after a
//! grace period) when the controlling muxlab closes the session, says `stop`, or goes silent
//! for `--silence` (it writes a newline twice a second; a lost network stops them, and sshd may
//! not notice for hours). When COMMAND has ended, whatever is left of its group is killed and
//! named on stderr (`muxlab guard: left behind ...`), `--remove` (a pushed binary's directory)
//! is removed, and the guard exits with COMMAND's status. Nothing is left on the host.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::stdin::{Heard, Listener};
use crate::sys;
use crate::units::parse_duration;

/// How long a stopped command has to finish (print its result) before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// How often the controlling side writes its heartbeat.
pub const HEARTBEAT: Duration = Duration::from_millis(500);

#[derive(clap::Args, Debug, Clone)]
pub struct GuardArgs {
    /// Stop the command when stdin has been silent this long.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub silence: Duration,
    /// Remove this directory when the command has ended.
    #[arg(long)]
    pub remove: Option<std::path::PathBuf>,
    /// Stop the command's whole process group, not only the command.
    #[arg(long)]
    pub group: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// Runs the guard; returns the exit code to leave with.
pub fn run(args: &GuardArgs) -> Result<i32, crate::load::Error> {
    let mut c = Command::new(&args.command[0]);
    c.args(&args.command[1..]).stdin(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut c, 0);
    let spawned = c.spawn();
    let code = match spawned {
        Err(e) => {
            eprintln!("muxlab guard: cannot start {}: {e}", args.command[0]);
            127
        }
        Ok(mut child) => watch(&mut child, args),
    };
    if let Some(d) = &args.remove {
        let _ = std::fs::remove_dir_all(d);
    }
    Ok(code)
}

/// Waits for `child`, stopping its group when stdin closes, says `stop` or stays silent.
fn watch(child: &mut std::process::Child, args: &GuardArgs) -> i32 {
    let group = child.id() as i32;
    let target = if args.group { -group } else { group };
    let mut listener = Listener::default();
    let mut heard = Instant::now();
    let mut stopped: Option<Instant> = None;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            // Whatever is left of the group outlived its command: name it and end it.
            if sys::process::kill(-group, 0).is_ok() {
                eprintln!(
                    "muxlab guard: left behind processes of '{}': killed",
                    args.command.join(" ")
                );
                let _ = sys::process::kill(-group, libc::SIGKILL);
            }
            return status.code().unwrap_or_else(|| {
                use std::os::unix::process::ExitStatusExt;
                128 + status.signal().unwrap_or(0)
            });
        }
        let mut why = None;
        match listener.wait(Duration::from_millis(100)) {
            Heard::Closed => why = Some("the session closed"),
            Heard::Something => {
                heard = Instant::now();
                if listener.pending.windows(4).any(|w| w == b"stop") {
                    why = Some("asked to stop");
                }
                // Keep a possible "st" of a "stop" cut in two.
                let keep = listener.pending.len().saturating_sub(3);
                listener.pending.drain(..keep);
            }
            Heard::Nothing => {}
        }
        if heard.elapsed() > args.silence {
            why = why.or(Some("the controlling muxlab went silent"));
        }
        match (why, stopped) {
            (Some(_), None) => {
                let _ = sys::process::kill(target, libc::SIGTERM);
                stopped = Some(Instant::now());
            }
            (_, Some(at)) if at.elapsed() > GRACE => {
                let _ = sys::process::kill(-group, libc::SIGKILL);
            }
            _ => {}
        }
    }
}
