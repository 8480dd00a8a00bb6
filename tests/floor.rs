//! The floor server (`scripts/floor/floor.c`, issue 84's baseline): built by its script, it
//! answers `muxlab load` with muxlab's own response, every one checked, and its own count of
//! requests is the load's; what it says of its system calls and wake-ups is there to read.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn the_floor_server_answers_every_request_the_load_sends_and_counts_them() {
    if !common::have("cc", "gcc") {
        return;
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let built = Command::new(format!("{root}/scripts/floor/build.sh")).output().unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    let mut floor = Command::new(format!("{root}/target/floor"))
        .arg("0")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(floor.stdout.take().unwrap()).lines();
    let listening: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    let url = format!("http://{}/", listening["addr"].as_str().unwrap());
    let (code, doc, stderr) = common::load(&[&url, "-c", "4", "-n", "2000", "--pipeline", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(doc["requests"], 2000);
    assert_eq!(doc["error_total"], 0, "{}", doc["errors"]);
    muxlab::sys::process::kill(floor.id() as i32, muxlab::sys::signal::SIGTERM).unwrap();
    let stats: serde_json::Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert!(floor.wait().unwrap().success());
    assert_eq!(stats["event"], "stats");
    // Every request sent was answered (-n 2000 sends no more than it needs).
    assert_eq!(stats["requests"], doc["sent"], "{stats}");
    assert!(
        stats["syscalls"].as_u64().unwrap() > 0 && stats["wakeups"].as_u64().unwrap() > 0,
        "{stats}"
    );
}
