//! Kernel settings a run needs, raised for it and always put back (issue 81): when the run ends
//! stopped by SIGTERM, when it is killed (the next muxlab command puts them back), and when two
//! runs overlap (the last one out does). In its own test binary: the machine-wide setting it
//! raises (`vm.max_map_count`, by 7 or 9) is one no other test reads, and the state file lives in
//! a directory of this test's (`MUXLAB_RAISED_DIR`). The namespace's own setting it asks for
//! (`net.core.somaxconn`) never shows outside the run.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// The tests here read the setting the others raise: one at a time.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn read(name: &str) -> String {
    muxlab::sys::sysctl::read(name).unwrap()
}

/// Puts the settings the test raises back if a failing test leaves them raised.
struct Restore(Vec<(&'static str, String)>);

impl Drop for Restore {
    fn drop(&mut self) {
        for (name, value) in &self.0 {
            let _ = muxlab::sys::sysctl::write(name, value);
        }
    }
}

/// A scenario of one short epoll experiment that runs for a while (long enough to be stopped
/// while its settings are raised) and declares `maps` mappings and a backlog above the host's.
fn scenario(dir: &std::path::Path, name: &str, maps: u64) -> std::path::PathBuf {
    let somaxconn: u64 = read("net.core.somaxconn").parse().unwrap();
    // A machine-wide net setting too (read and put back from the machine's namespace, not the
    // run's, where it does not exist): tcp_mem's pressure mark, one page up.
    let tcp: Vec<u64> = read("net.ipv4.tcp_mem")
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    let text = format!(
        "name = \"{name}\"\ndescription = \"settings raised for a run\"\nrepeats = 1\n\
         [settings]\n\"vm.max_map_count\" = \"{maps}\"\n\"net.core.somaxconn\" = \"{}\"\n\
         \"net.ipv4.tcp_mem\" = \"{} {} {}\"\n\
         [[experiment]]\nname = \"hold\"\nproto = \"http\"\nmodels = [\"epoll\"]\nconnections = [4]\n\
         duration = \"60s\"\nrate = 100.0\n",
        somaxconn + 1,
        tcp[0],
        tcp[1] + 1,
        tcp[2]
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn bench(file: &std::path::Path, state: &std::path::Path, out: &std::path::Path) -> Child {
    use std::os::unix::process::CommandExt;
    Command::new(BIN)
        .args(["bench", file.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env("MUXLAB_RAISED_DIR", state)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap()
}

/// Waits until `vm.max_map_count` reads `want` (20 s at most).
fn until_maps(want: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while read("vm.max_map_count") != want {
        assert!(
            Instant::now() < deadline,
            "vm.max_map_count never became {want}: {}",
            read("vm.max_map_count")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGTERM, then the run ends as an interrupted run does (exit 130), having put back what it
/// could without a word of failure.
fn stopped(child: &mut Child) {
    signal_group(child, muxlab::sys::signal::SIGTERM);
    let st = exits(child);
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(st.code(), Some(130), "{err}");
    assert!(err.contains("interrupted") && !err.contains("could not"), "{err}");
}

fn signal_group(child: &Child, sig: i32) {
    muxlab::sys::process::kill(-(child.id() as i32), sig).unwrap();
}

fn exits(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        assert!(Instant::now() < deadline, "bench did not exit within 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn raised_settings_are_put_back_after_sigterm_after_sigkill_and_after_overlapping_runs() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    if !muxlab::sys::process::is_root() {
        return skip("raising kernel settings takes root");
    }
    let tmp = std::env::temp_dir().join(format!("muxlab-settings-{}", std::process::id()));
    let state = tmp.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let original = read("vm.max_map_count");
    let somaxconn = read("net.core.somaxconn");
    let tcp_mem = read("net.ipv4.tcp_mem");
    let _restore = Restore(vec![
        ("vm.max_map_count", original.clone()),
        ("net.ipv4.tcp_mem", tcp_mem.clone()),
    ]);
    let base: u64 = original.parse().unwrap();
    let a = scenario(&tmp, "raise-a", base + 7);
    let b = scenario(&tmp, "raise-b", base + 9);

    // SIGTERM: the run stops, and puts the setting back on its way out.
    let mut run = bench(&a, &state, &tmp);
    until_maps(&(base + 7).to_string());
    assert_eq!(
        read("net.core.somaxconn"),
        somaxconn,
        "the namespace's own setting shows outside it"
    );
    assert_ne!(
        read("net.ipv4.tcp_mem"),
        tcp_mem,
        "tcp_mem raised from the machine's namespace"
    );
    stopped(&mut run);
    assert_eq!(read("vm.max_map_count"), original, "after SIGTERM");
    assert_eq!(read("net.ipv4.tcp_mem"), tcp_mem, "tcp_mem after SIGTERM");
    assert!(!state.join("raised.json").exists());

    // SIGKILL: nothing of the run can put it back; the next muxlab command does.
    let mut run = bench(&a, &state, &tmp);
    until_maps(&(base + 7).to_string());
    signal_group(&run, muxlab::sys::signal::SIGKILL);
    exits(&mut run);
    assert_eq!(
        read("vm.max_map_count"),
        (base + 7).to_string(),
        "a killed run leaves it raised"
    );
    let out = Command::new(BIN)
        .arg("models")
        .env("MUXLAB_RAISED_DIR", &state)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("put back: ") && err.contains("vm.max_map_count = "),
        "{err}"
    );
    assert_eq!(read("vm.max_map_count"), original, "after SIGKILL and `muxlab models`");
    assert_eq!(
        read("net.ipv4.tcp_mem"),
        tcp_mem,
        "tcp_mem after SIGKILL and `muxlab models`"
    );

    // Two runs overlap: the first out leaves the second's value; the last out puts it back.
    let mut first = bench(&a, &state, &tmp);
    until_maps(&(base + 7).to_string());
    let mut second = bench(&b, &state, &tmp);
    until_maps(&(base + 9).to_string());
    stopped(&mut first);
    assert_eq!(
        read("vm.max_map_count"),
        (base + 9).to_string(),
        "the second run still holds it"
    );
    stopped(&mut second);
    assert_eq!(read("vm.max_map_count"), original, "after both runs");
    // The other way round: a run that finds its value raised further by another already
    // depends on it, and holds it until it ends.
    let mut higher = bench(&b, &state, &tmp);
    until_maps(&(base + 9).to_string());
    let mut lower = bench(&a, &state, &tmp);
    let lower_pid = lower.id().to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(state.join("raised.json")).is_ok_and(|t| t.contains(&lower_pid)) {
        assert!(Instant::now() < deadline, "the second run never joined the holders");
        std::thread::sleep(Duration::from_millis(50));
    }
    stopped(&mut higher);
    let left: u64 = read("vm.max_map_count").parse().unwrap();
    assert!(left >= base + 7, "the first out put it back under the second: {left}");
    stopped(&mut lower);
    assert_eq!(
        read("vm.max_map_count"),
        original,
        "after both runs, the other way round"
    );
    assert_eq!(read("net.ipv4.tcp_mem"), tcp_mem);
    assert_eq!(read("net.core.somaxconn"), somaxconn);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Without root nothing is raised: the run is refused before it starts, naming each setting.
#[test]
fn without_root_a_run_that_needs_settings_is_refused_naming_them() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    if !have("setpriv", "util-linux") {
        return skip("setpriv (util-linux) runs bench as another user");
    }
    let tmp = std::env::temp_dir().join(format!("muxlab-noroot-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let base: u64 = read("vm.max_map_count").parse().unwrap();
    let file = scenario(&tmp, "noroot", base + 5);
    let mut perms = std::fs::metadata(&tmp).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o777);
    std::fs::set_permissions(&tmp, perms).unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN, "bench"])
        .arg(&file)
        .args(["--out", tmp.to_str().unwrap()])
        .env("MUXLAB_RAISED_DIR", tmp.join("state"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("sysctl -w vm.max_map_count='{}'", base + 5)),
        "{err}"
    );
    assert!(err.contains("sysctl -w net.core.somaxconn="), "{err}");
    assert_eq!(read("vm.max_map_count"), base.to_string());
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `muxlab limits` says what a scenario needs and runs nothing.
#[test]
fn limits_says_what_a_scenario_needs_and_runs_nothing() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = std::env::temp_dir().join(format!("muxlab-limits-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let base: u64 = read("vm.max_map_count").parse().unwrap();
    let file = scenario(&tmp, "limits", base + 3);
    let out = Command::new(BIN)
        .args(["limits", file.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("vm.max_map_count"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains(&format!("needs {}", base + 3)) && line.contains("SHORT"),
        "{line}"
    );
    assert!(text.contains("hold") && text.contains("epoll"), "{text}");
    assert_eq!(read("vm.max_map_count"), base.to_string(), "limits changed a setting");
    let out = Command::new(BIN).args(["limits", "c100k"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("procs-accept --workers 6") && text.contains("100000"),
        "{text}"
    );
    // What bench skips a cell for: thread at a million is one process's descriptors, whatever
    // the mappings (which bench could raise).
    let out = Command::new(BIN).args(["limits", "c1m"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let thread = text
        .lines()
        .find(|l| l.contains("c1m-1pct") && l.split_whitespace().nth(1) == Some("thread"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(thread.contains("< 1000000: REFUSED (descriptors"), "{thread}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// The settings bench raises inside a private network namespace are that namespace's own on
/// this kernel: written inside one, the machine's stay as they were.
#[test]
fn a_private_network_namespace_keeps_its_own_settings() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    if !muxlab::sys::process::is_root() || !have("unshare", "util-linux") {
        return skip("a network namespace takes root and util-linux's unshare");
    }
    for name in muxlab::sys::sysctl::PER_NAMESPACE {
        let before = read(name);
        let value = match *name {
            "net.ipv4.ip_local_port_range" => "20000 60000".to_string(),
            _ => (before.parse::<u64>().unwrap() + 3).to_string(),
        };
        let file = muxlab::sys::sysctl::path(name).unwrap();
        let script = format!("echo '{value}' > {0} && cat {0}", file.display());
        let out = Command::new("unshare")
            .args(["-n", "sh", "-c", &script])
            .output()
            .unwrap();
        let inside = muxlab::sys::sysctl::normal(&String::from_utf8_lossy(&out.stdout));
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(inside, value, "{name} written inside the namespace");
        assert_eq!(read(name), before, "{name} changed outside the namespace");
    }
}
