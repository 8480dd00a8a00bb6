//! Fixes into the binary the commit it was built from and whether the tree had changes not
//! committed (`muxlab --version`, and every results document, say them wherever the binary
//! runs). It re-runs when HEAD, the ref HEAD names, the index, or any file under [`WATCHED`]
//! changes: naming only the git files would stop cargo from watching the sources, and the
//! dirty flag would go stale after an edit.

use std::path::Path;
use std::process::Command;

/// What the binary is made from: the sources, and every folder a file the binary includes
/// (`include_str!`, `include_bytes!`) lies in: the scenarios, and the Go and Node servers
/// `bench products` compiles in (`products/`). An edit under one rebuilds the binary; unless
/// build.rs re-runs too, the binary would say the commit's state, not the edit's.
/// `tests/structure` holds every include in `src/` to a root listed here.
const WATCHED: [&str; 9] = [
    "src",
    "tests",
    "benches",
    "examples",
    "scenarios",
    "products",
    "build.rs",
    "Cargo.toml",
    "Cargo.lock",
];

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    for p in WATCHED {
        if Path::new(p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    let commit = git(&["rev-parse", "HEAD"]);
    if commit.is_some() {
        // HEAD (per worktree), the ref it names, packed refs and the index: where a commit, a
        // checkout or a `git add` shows.
        let mut watched = vec!["HEAD".to_string(), "index".into(), "packed-refs".into()];
        if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watched.push(r);
        }
        for w in watched {
            if let Some(path) = git(&["rev-parse", "--git-path", &w]) {
                if Path::new(&path).exists() {
                    println!("cargo:rerun-if-changed={path}");
                }
            }
        }
    }
    // Dirty: a tracked file changed, or a file git does not ignore is not committed yet.
    let dirty = commit
        .as_ref()
        .and_then(|_| git(&["status", "--porcelain"]))
        .map(|s| !s.is_empty());
    println!("cargo:rustc-env=MUXLAB_COMMIT={}", commit.as_deref().unwrap_or(""));
    println!(
        "cargo:rustc-env=MUXLAB_DIRTY={}",
        match dirty {
            Some(true) => "1",
            Some(false) => "0",
            None => "",
        }
    );
    let described = match (&commit, dirty) {
        (Some(c), Some(true)) => format!("commit {}, dirty", &c[..c.len().min(12)]),
        (Some(c), _) => format!("commit {}", &c[..c.len().min(12)]),
        (None, _) => "built outside a git checkout".to_string(),
    };
    println!("cargo:rustc-env=MUXLAB_BUILD={described}");
}
