//! The runtimes' servers as peers: Go's net/http and Node's http, from the sources in
//! `products/` (compiled into muxlab, so `bench` runs them from anywhere). Go's is built with
//! Debian's golang-go (`go build`, standard library only) once per source and toolchain, into
//! muxlab's cache directory; Node's runs under Debian's nodejs as written. A toolchain that is
//! missing skips the cells (with what to install); a build that fails is an error naming what
//! the compiler said. Each serves the experiment's work (`work`, or `work_from_request`) the way
//! its runtime would: see each source's header.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::launch::{binary, launch};
use crate::bench::process::Server;
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{Error, PeerError, SkipReason};
use crate::bench::setup::Placement;

/// Go's server (`products/go/server.go`).
pub const GO_SOURCE: &str = include_str!("../../../products/go/server.go");
/// Node's server (`products/node/server.js`).
pub const NODE_SOURCE: &str = include_str!("../../../products/node/server.js");

/// The seed of the products' draws (muxlab's models draw from their own `--seed`).
const SEED: u64 = 1;

/// Where built products are kept: `$XDG_CACHE_HOME/muxlab/products`, `~/.cache/...`, else a
/// directory of this user's own under the temporary one (`muxlab-UID`: bench runs what is
/// there, so it must be a directory, not a link, owned by this user and private to it).
fn cache_dir() -> Result<PathBuf, Error> {
    let home = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        });
    if let Some(base) = home {
        return Ok(base.join("muxlab").join("products"));
    }
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let uid = crate::sys::process::uid();
    let mine = std::env::temp_dir().join(format!("muxlab-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&mine);
    let meta = std::fs::symlink_metadata(&mine).map_err(file(&mine))?;
    if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(PeerError::NotPrivate { dir: mine }.into());
    }
    Ok(mine.join("products"))
}

/// A file or directory of the products' at `path` that could not be made, written or moved.
fn file(path: &Path) -> impl FnOnce(std::io::Error) -> PeerError + '_ {
    move |source| PeerError::File {
        path: path.to_path_buf(),
        source,
    }
}

/// A name for a file being written under `path`'s, this process's and call's own (two runs,
/// or two threads of one, never write the same one).
fn scratch(path: &Path) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}-{n}", std::process::id()));
    path.with_file_name(name)
}

/// `go` with the environment of its build: module-less, no user's GOFLAGS, its own toolchain
/// (never one a `go.mod` or GOTOOLCHAIN would switch to), a cache it can write without a HOME.
fn go_command(go: &str, dir: &Path) -> Command {
    let mut c = Command::new(go);
    c.current_dir(dir)
        .env("GO111MODULE", "off")
        .env("GOFLAGS", "")
        .env("GOTOOLCHAIN", "local")
        .env("GOCACHE", dir.join("go-build"))
        .env("GOPATH", dir.join("gopath"));
    c
}

/// FNV-1a of `parts`: what names a build of one source by one toolchain.
fn fingerprint(parts: &[&[u8]]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.iter().chain(b"\0") {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// Writes `text` to `path` unless it is there already (through a file of its own, renamed:
/// two runs writing at once never leave half a file).
fn write_once(path: &Path, text: &[u8]) -> Result<(), Error> {
    if std::fs::read(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    let tmp = scratch(path);
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| file(path)(e).into())
}

/// Go's server built by `go` (cached by the source and `go version`).
pub fn go_server(go: &str) -> Result<PathBuf, Error> {
    build_go(go, &cache_dir()?)
}

/// [`go_server`], kept in `dir`.
fn build_go(go: &str, dir: &Path) -> Result<PathBuf, Error> {
    let dir = dir.to_path_buf();
    std::fs::create_dir_all(&dir).map_err(file(&dir))?;
    let toolchain = |step| {
        move |source| PeerError::Toolchain {
            program: PathBuf::from(go),
            step,
            source,
        }
    };
    let version = go_command(go, &dir)
        .arg("version")
        .output()
        .map_err(toolchain("version"))?;
    let id = fingerprint(&[GO_SOURCE.as_bytes(), &version.stdout]);
    let built = dir.join(format!("go-http-{id}"));
    if built.is_file() {
        return Ok(built);
    }
    let src = dir.join(format!("go-http-{id}.go"));
    write_once(&src, GO_SOURCE.as_bytes())?;
    eprintln!("bench: building Go's server (products/go/server.go) with {go}, once");
    let tmp = scratch(&built);
    let out = go_command(go, &dir)
        .arg("build")
        .arg("-o")
        .arg(&tmp)
        .arg(&src)
        .output()
        .map_err(toolchain("build"))?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp);
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(PeerError::GoBuild {
            status: out.status,
            said: said.trim().to_string(),
        }
        .into());
    }
    std::fs::rename(&tmp, &built).map_err(file(&built))?;
    Ok(built)
}

/// Node's server, written where node can run it (cached by its source).
pub fn node_server() -> Result<PathBuf, Error> {
    let dir = cache_dir()?;
    std::fs::create_dir_all(&dir).map_err(file(&dir))?;
    // CommonJS whatever a package.json above it says (`.cjs`).
    let path = dir.join(format!("node-http-{}.cjs", fingerprint(&[NODE_SOURCE.as_bytes()])));
    write_once(&path, NODE_SOURCE.as_bytes())?;
    Ok(path)
}

/// The experiment's work as the products' `--work`, `--from-request` and `--max-work` (the
/// models', `Experiment::max_work`) say it.
fn work_args(x: &Experiment, dash: &str) -> Vec<String> {
    let mut a = vec![
        format!("{dash}work"),
        x.work.clone().unwrap_or_else(|| "none".into()),
        format!("{dash}seed"),
        SEED.to_string(),
        format!("{dash}max-work"),
        crate::units::exact_duration(x.max_work()),
    ];
    if x.work_from_request {
        a.push(format!("{dash}from-request"));
    }
    a
}

/// Go's net/http with GOMAXPROCS `procs` (else the experiment's `workers`, else Go's own);
/// `time_sleep`: a blocking call as `time.Sleep`.
pub(super) fn start_go(
    procs: Option<usize>,
    time_sleep: bool,
    x: &Experiment,
    place: &Placement,
) -> Result<Server, Error> {
    let Some(go) = binary("go") else {
        return Err(Error::Skipped(SkipReason::NotInstalled {
            binary: "go",
            package: "golang-go",
        }));
    };
    let server = go_server(&go)?.display().to_string();
    let procs = procs.or(x.workers);
    launch("go", "/usr/bin/env", place, &|port, _| {
        let mut a: Vec<String> = procs.map(|n| format!("GOMAXPROCS={n}")).into_iter().collect();
        a.extend([
            server.clone(),
            "-addr".into(),
            format!("{}:{port}", place.server_addr),
            "-sleep".into(),
            if time_sleep { "time" } else { "nanosleep" }.into(),
        ]);
        a.extend(work_args(x, "-"));
        a
    })
}

/// Node's http, the work on its loop (`worker_threads` 0) or on a pool of that many.
pub(super) fn start_node(worker_threads: usize, x: &Experiment, place: &Placement) -> Result<Server, Error> {
    let Some(node) = binary("node").or_else(|| binary("nodejs")) else {
        return Err(Error::Skipped(SkipReason::NotInstalled {
            binary: "node",
            package: "nodejs",
        }));
    };
    let script = node_server()?.display().to_string();
    launch("node", &node, place, &|port, _| {
        let mut a = vec![
            script.clone(),
            "--addr".into(),
            format!("{}:{port}", place.server_addr),
            "--worker-threads".into(),
            worker_threads.to_string(),
        ];
        a.extend(work_args(x, "--"));
        a
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_is_named_by_its_source_and_toolchain() {
        let a = fingerprint(&[b"src", b"go1.19"]);
        assert_eq!(a, fingerprint(&[b"src", b"go1.19"]));
        assert_ne!(a, fingerprint(&[b"src", b"go1.20"]));
        assert_ne!(a, fingerprint(&[b"src2", b"go1.19"]));
        // The parts are kept apart: moving a byte from one to the next is another build.
        assert_ne!(fingerprint(&[b"ab", b"c"]), fingerprint(&[b"a", b"bc"]));
    }

    /// A build that fails is an error naming what the compiler said (never a skip), and
    /// leaves no binary to be taken for a build next time.
    #[test]
    fn a_failed_build_is_an_error_quoting_the_compiler() {
        let dir = std::env::temp_dir().join(format!("muxlab-gobuild-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let go = dir.join("go");
        std::fs::write(
            &go,
            "#!/bin/sh\n[ \"$1\" = version ] && { echo go version go0.0 test; exit 0; }\n\
             echo './server.go:7:2: undefined: nothing' >&2; exit 1\n",
        )
        .unwrap();
        std::process::Command::new("chmod").arg("+x").arg(&go).status().unwrap();
        // Another test's fork may hold the script open for writing a moment (ETXTBSY): again.
        let err = (0..20)
            .map(|_| build_go(go.to_str().unwrap(), &dir.join("cache")).unwrap_err())
            .find(|e| {
                !e.to_string().contains("Text file busy") || {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    false
                }
            })
            .expect("the script ran once in 20 tries");
        assert!(matches!(err, Error::Peer(PeerError::GoBuild { .. })), "{err:?}");
        assert!(
            err.to_string().contains("building Go's server failed") && err.to_string().contains("undefined: nothing"),
            "{err}"
        );
        let built: Vec<_> = std::fs::read_dir(dir.join("cache"))
            .unwrap()
            .flatten()
            .filter(|e| !e.file_name().to_string_lossy().ends_with(".go"))
            .collect();
        assert!(built.is_empty(), "{built:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
