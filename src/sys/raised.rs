//! Machine-wide settings raised for runs, and always put back.
//!
//! A run that raises settings first writes, in a state file, the value each had before any run
//! raised it, and its own pid among the holders; then it raises them (never lowering one a
//! holder raised further). When it ends ([`Raised`]'s drop: the end, an error, SIGINT and
//! SIGTERM through the run's stop flag) it leaves the holders; the last one out puts every
//! saved value back and removes the file. A run killed outright leaves the file with a holder
//! that no longer runs: the next muxlab command of any kind ([`recover`]) finds no holder alive
//! and puts the values back. Every reading and writing of the file happens under an exclusive
//! `flock` of a lock file beside it, so overlapping runs (CI runs do overlap) see one another.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use super::sysctl;

/// Where the state lives (root's runtime directory); `MUXLAB_RAISED_DIR` moves it (tests).
fn dir() -> PathBuf {
    std::env::var_os("MUXLAB_RAISED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/run/muxlab"))
}

/// The state: each raised setting's value before any run raised it, and the runs holding them.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct State {
    pub saved: BTreeMap<String, String>,
    pub holders: Vec<Holder>,
}

/// A run holding raised settings: its pid and the start time the kernel gives that process
/// (clock ticks since boot), so that a pid the kernel has since given to another process is
/// not taken for the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Holder {
    pub pid: i32,
    pub start: Option<u64>,
}

impl Holder {
    /// This process.
    fn me() -> Holder {
        let pid = super::process::pid();
        Holder {
            pid,
            start: super::procfs::start_time(pid),
        }
    }

    /// Whether the run still runs: its pid alive and started when it did.
    fn running(&self) -> bool {
        super::procfs::is_running(self.pid) && super::procfs::start_time(self.pid) == self.start
    }
}

/// The exclusive lock over the state, held while this value lives.
struct Locked {
    _file: std::fs::File,
    path: PathBuf,
}

impl Locked {
    fn take() -> io::Result<Locked> {
        let d = dir();
        std::fs::create_dir_all(&d)?;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(d.join("raised.lock"))?;
        super::fd::lock_exclusive(&file)?;
        Ok(Locked {
            _file: file,
            path: d.join("raised.json"),
        })
    }

    fn read(&self) -> io::Result<Option<State>> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("{}: {e}", self.path.display()))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn write(&self, s: &State) -> io::Result<()> {
        let tmp = self.path.with_extension("json.new");
        std::fs::write(&tmp, serde_json::to_vec_pretty(s).expect("a state serialises"))?;
        std::fs::rename(tmp, &self.path)
    }

    fn remove(&self) -> io::Result<()> {
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// Puts every saved value back; the first failure is returned after trying them all.
fn put_back(saved: &BTreeMap<String, String>) -> io::Result<()> {
    let mut first = Ok(());
    for (name, value) in saved {
        if let Err(e) = sysctl::write(name, value) {
            if first.is_ok() {
                first = Err(io::Error::new(e.kind(), format!("putting {name} back to {value}: {e}")));
            }
        }
    }
    first
}

/// What a run raised; dropping it leaves the holders (the last one out puts the values back).
#[derive(Debug)]
pub struct Raised {
    /// Each setting raised by this run: its name, the value before, the value set.
    pub changed: Vec<(String, String, String)>,
    /// Among the holders: it needs a value above what the machine had before any run raised
    /// it (raised by this run or by another still running).
    joined: bool,
    pid: i32,
}

/// Raises each `(name, wanted)` that is below it (see [`sysctl::raised`]), saving first the
/// value before any run raised it. The run joins the holders when any want is above that
/// original value, whoever raised it: a run that finds a value already raised by another still
/// depends on it, and the other's end must not put it back under it. Root only. A failure
/// half-way leaves the holders at once (what it raised goes back if no one else holds).
pub fn raise(wants: &[(String, String)]) -> io::Result<Raised> {
    let lock = Locked::take()?;
    let mut state = lock.read()?.unwrap_or_default();
    state.holders.retain(Holder::running);
    if state.holders.is_empty() && !state.saved.is_empty() {
        // Left by runs that were killed: theirs go back first.
        put_back(&state.saved)?;
        state.saved.clear();
        lock.remove()?;
    }
    let pid = super::process::pid();
    let mut raised = Raised {
        changed: Vec::new(),
        joined: false,
        pid,
    };
    let mut depends = Vec::new();
    for (name, want) in wants {
        let now = sysctl::read(name)?;
        let original = state.saved.get(name).cloned().unwrap_or_else(|| now.clone());
        if sysctl::raised(name, &original, want).is_some() {
            depends.push((name, want, now));
        }
    }
    if depends.is_empty() {
        return Ok(raised);
    }
    state.holders.push(Holder::me());
    lock.write(&state)?;
    // From here an error drops `raised`, which leaves the holders (once this lock is let go).
    raised.joined = true;
    let mut apply = || -> io::Result<()> {
        for (name, want, now) in &depends {
            let Some(new) = sysctl::raised(name, now, want) else {
                continue;
            };
            state.saved.entry(name.to_string()).or_insert_with(|| now.clone());
            // Saved before the write: a run killed between the two leaves a file that restores.
            lock.write(&state)?;
            sysctl::write(name, &new)?;
            raised.changed.push((name.to_string(), now.clone(), new));
        }
        Ok(())
    };
    let applied = apply();
    drop(lock);
    applied.map(|()| raised)
}

impl Raised {
    /// Leaves the holders now; the last one out puts every saved value back.
    pub fn release(&self) -> io::Result<()> {
        if !self.joined {
            return Ok(());
        }
        let lock = Locked::take()?;
        let Some(mut state) = lock.read()? else { return Ok(()) };
        let me = self.pid;
        state.holders.retain(|h| h.pid != me && h.running());
        if state.holders.is_empty() {
            put_back(&state.saved)?;
            lock.remove()
        } else {
            lock.write(&state)
        }
    }
}

impl Drop for Raised {
    fn drop(&mut self) {
        if let Err(e) = self.release() {
            eprintln!(
                "muxlab: could not put the raised settings back: {e} (see {})",
                dir().join("raised.json").display()
            );
        }
    }
}

/// Puts back what runs that no longer run raised (they were killed); returns the settings put
/// back. Nothing to do (no state, a holder alive, no file) is `Ok` and empty.
pub fn recover() -> io::Result<Vec<(String, String)>> {
    if !Path::new(&dir()).join("raised.json").exists() {
        return Ok(Vec::new());
    }
    let lock = Locked::take()?;
    let Some(state) = lock.read()? else {
        return Ok(Vec::new());
    };
    if state.holders.iter().any(Holder::running) {
        return Ok(Vec::new());
    }
    put_back(&state.saved)?;
    lock.remove()?;
    Ok(state.saved.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A holder is the process that joined, not whichever process has its pid now.
    #[test]
    fn a_holder_whose_pid_was_given_to_another_process_is_gone() {
        let me = Holder::me();
        assert!(me.start.is_some() && me.running());
        let reused = Holder {
            start: me.start.map(|s| s + 1),
            ..me
        };
        assert!(!reused.running(), "the same pid, started at another time");
        let state = State {
            saved: BTreeMap::new(),
            holders: vec![me],
        };
        let text = serde_json::to_string(&state).unwrap();
        assert_eq!(serde_json::from_str::<State>(&text).unwrap(), state);
    }
}
