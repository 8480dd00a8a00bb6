//! Process groups (`serve --procs N`): a design run as N processes, each with its own
//! descriptor table, holds more connections than one process may open; the parent counts what
//! the group holds; designs that do not form groups refuse the flag and say why.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::Value;

/// A server started here with its stdout read line by line on a thread: `held` lines arrive
/// while it runs.
struct Group {
    child: std::process::Child,
    lines: mpsc::Receiver<Value>,
    listening: Value,
}

impl Group {
    fn start(model: &str, args: &[&str]) -> Group {
        let mut child = Command::new(BIN)
            .args(["serve", "--model", model, "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                if let Ok(v) = serde_json::from_str::<Value>(&l) {
                    let _ = tx.send(v);
                }
            }
        });
        let listening = lines.recv_timeout(IO_TIMEOUT).expect("a listening line");
        assert_eq!(listening["event"], "listening", "{listening}");
        Group {
            child,
            lines,
            listening,
        }
    }

    fn addr(&self) -> std::net::SocketAddr {
        self.listening["addr"].as_str().unwrap().parse().unwrap()
    }

    /// The next line of `event` for which `want` holds, within 20 s.
    fn line(&self, event: &str, want: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + IO_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) if v["event"] == event && want(&v) => return v,
                Ok(_) => {}
                Err(e) => panic!("no {event} line as wanted within 20 s: {e}"),
            }
        }
    }

    /// SIGTERM, then its stats line and exit status.
    fn stop(mut self) -> (Value, std::process::ExitStatus, String) {
        let tree = muxlab::sys::procfs::tree(self.child.id() as i32);
        muxlab::sys::process::kill(self.child.id() as i32, muxlab::sys::signal::SIGTERM).unwrap();
        let stats = self.line("stats", |_| true);
        let status = self.child.wait().unwrap();
        let mut err = String::new();
        self.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        for pid in tree.iter().skip(1) {
            assert!(!alive(*pid), "member {pid} outlived the group");
        }
        (stats, status, err)
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `n` with a comma every three digits, as muxlab writes counts.
fn thousands(n: u64) -> String {
    let d = n.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One HTTP request on `s`, answered.
fn answered(s: &mut TcpStream) -> bool {
    let mut pending = Vec::new();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").is_ok()
        && matches!(read_response(s, &mut pending), Ok(Some(r)) if r.status == 200)
}

/// `--nofile 300` lets one process hold under 300 connections; four of them hold 600, each
/// in its own descriptor table, and the parent's `held` lines and stats line count them all.
#[test]
fn a_group_holds_more_connections_than_one_process_may_open() {
    for (model, args) in [
        ("epoll", vec![]),
        ("uring", vec!["--workers", "2"]),
        ("tokio", vec!["--workers", "2"]),
        ("multi-reactor", vec!["--workers", "2"]),
    ] {
        let srv = Group::start(model, &[&args[..], &["--procs", "4", "--nofile", "300"]].concat());
        assert_eq!(srv.listening["procs"], 4, "{model}");
        let mut conns: Vec<TcpStream> = (0..600)
            .map(|_| {
                let s = TcpStream::connect(srv.addr()).unwrap();
                s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
                s
            })
            .collect();
        let served = conns.iter_mut().map(answered).filter(|&ok| ok).count();
        assert_eq!(served, 600, "{model}: every connection answered");
        let held = srv.line("held", |v| v["held"] == 600);
        assert_eq!(held["procs"], 4, "{model}: {held}");
        assert!(
            held["rss_bytes"].as_u64().unwrap() > 0,
            "{model}: the group's memory: {held}"
        );
        let (stats, status, err) = srv.stop();
        assert!(status.success(), "{model}: {status} {err}");
        assert_eq!(stats["ok"], true, "{model}: {stats}");
        assert_eq!(stats["held_peak"], 600, "{model}: {stats}");
        assert_eq!(stats["totals"]["rejected_emfile"], 0, "{model}: {stats}");
        assert_eq!(stats["totals"]["accepted"], 600, "{model}: {stats}");
        // Each process counted in its own blocks, and each accepted some (the port's hash
        // spreads 600 connections over four listeners).
        let blocks = stats["per_worker"].as_array().unwrap();
        let workers = stats["workers"].as_u64().unwrap() as usize;
        assert_eq!(blocks.len(), 4 * workers, "{model}: {stats}");
        for p in 0..4 {
            let got: u64 = blocks[p * workers..(p + 1) * workers]
                .iter()
                .map(|b| b["accepted"].as_u64().unwrap())
                .sum();
            assert!(got > 0 && got < 300, "{model}: process {p} accepted {got}");
        }
        drop(conns);
    }
}

/// `muxlab serve ARGS` exits 2 with every one of `says` in its words.
fn serve_refused(args: &[&str], says: &[String]) {
    let out = Command::new(BIN)
        .arg("serve")
        .args(args)
        .args(["--port", "0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    for s in says {
        assert!(err.contains(s.as_str()), "{args:?}: {err}");
    }
}

#[test]
fn designs_that_do_not_form_groups_refuse_procs_and_say_why() {
    let refused = |args: &[&str], says: &str| serve_refused(args, &[says.to_string()]);
    for model in ["iterative", "thread", "fork", "prefork", "prethread"] {
        refused(
            &["--model", model, "--procs", "2"],
            "threads, memory or its workers bound it",
        );
    }
    refused(
        &["--model", "procs-accept", "--procs", "2"],
        "its workers are processes already",
    );
    refused(&["--model", "green", "--procs", "2"], "vm.max_map_count");
    refused(
        &["--model", "epoll", "--procs", "2", "--proto", "resp"],
        "unrelated ones",
    );
    refused(&["--model", "epoll", "--procs", "0"], "--procs 0 is not from 1 to 256");
}

/// A member that ends while the group runs stops the group: the stats line says which, and
/// the server exits with an error, leaving no member behind.
#[test]
fn a_member_that_dies_stops_the_group_and_the_stats_line_says_so() {
    let srv = Group::start("epoll", &["--procs", "3", "--crash-after-requests", "1"]);
    let mut s = TcpStream::connect(srv.addr()).unwrap();
    s.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let _ = answered(&mut s);
    let stats = srv.line("stats", |_| true);
    assert_eq!(stats["ok"], false, "{stats}");
    let error = stats["error"].as_str().unwrap();
    assert!(
        error.contains("of the group") && error.contains("killed by signal 6"),
        "{error}"
    );
    let (_, status, _) = srv.stop_after_exit();
    assert!(!status.success());
}

impl Group {
    /// Its exit status, once it exits on its own (within 20 s).
    fn stop_after_exit(mut self) -> (Value, std::process::ExitStatus, String) {
        let deadline = Instant::now() + IO_TIMEOUT;
        let status = loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                break st;
            }
            assert!(Instant::now() < deadline, "the group did not stop");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        self.child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        (Value::Null, status, err)
    }
}

/// `--active 5%`: 20 of 400 connections send, the rest hold; the document counts them apart
/// and judges fairness over the senders only; the server held all 400.
#[test]
fn a_share_of_the_connections_sends_and_the_rest_hold_counted_apart() {
    let srv = Group::start("epoll", &["--procs", "2"]);
    let url = format!("http://{}/", srv.addr());
    let (code, doc, err) = load(&[&url, "-c", "400", "--active", "5%", "--rate", "400", "--duration", "2s"]);
    assert_eq!(code, 0, "{err}");
    let c = &doc["connections"];
    assert_eq!(
        (c["established"].as_u64(), c["active"].as_u64(), c["held"].as_u64()),
        (Some(400), Some(20), Some(380)),
        "{c}"
    );
    assert_eq!(c["held_closed_by_server"], 0, "{c}");
    assert_eq!(doc["fairness"]["connections"], 20, "{}", doc["fairness"]);
    assert_eq!(doc["fairness"]["starved"], 0, "{}", doc["fairness"]);
    assert_eq!(doc["error_total"], 0, "{doc}");
    let requests = doc["requests"].as_u64().unwrap();
    assert!(requests > 0, "the senders sent: {doc}");
    let (stats, status, _) = srv.stop();
    assert!(status.success());
    assert!(stats["held_peak"].as_u64().unwrap() >= 400, "{}", stats["held_peak"]);
    // Only the senders' requests reached the server (the warm-up sends none by default): no
    // fewer than the load counted answered, no more than it sent.
    let served = stats["totals"]["requests"].as_u64().unwrap();
    let sent = doc["sent"].as_u64().unwrap();
    assert!(
        (requests..=sent).contains(&served),
        "served {served}, answered {requests}, sent {sent}"
    );
}

/// A server whose idle timeout is shorter than the hold closes held connections: the load
/// opens them again, counts it apart from errors, and says why.
#[test]
fn held_connections_closed_by_an_idle_timeout_are_counted_and_said() {
    let srv = Group::start("epoll", &["--idle-timeout", "500ms"]);
    let url = format!("http://{}/", srv.addr());
    let run = [
        url.as_str(),
        "-c",
        "100",
        "--active",
        "10%",
        "--rate",
        "100",
        "--duration",
        "2s",
    ];
    let out = Command::new(BIN).arg("load").args(run).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("(10 sending, 90 holding)"), "{text}");
    assert!(
        text.contains("the server closed held connections") && text.contains("--idle-timeout"),
        "{text}"
    );
    let (code, doc, err) = load(&run);
    assert_eq!(code, 0, "{err}");
    assert!(
        doc["connections"]["held_closed_by_server"].as_u64().unwrap() >= 90,
        "{}",
        doc["connections"]
    );
    assert_eq!(doc["error_total"], 0, "{doc}");
    let _ = srv.stop();
}

#[test]
fn an_active_share_that_ends_connections_or_leaves_none_sending_is_refused() {
    for (args, says) in [
        (
            vec!["-c", "100", "--active", "10%", "-n", "100"],
            "drop -n, --close and --requests-per-conn",
        ),
        (
            vec!["-c", "100", "--active", "10%", "--close"],
            "drop -n, --close and --requests-per-conn",
        ),
        (vec!["-c", "10", "--active", "1%"], "leaves none sending"),
        (vec!["-c", "10", "--active", "0.00001%"], "from 0.0001% to 100%"),
        // 0% holds every connection: a rate would send nothing.
        (vec!["-c", "10", "--active", "0%", "--rate", "10"], "drop --rate"),
    ] {
        let out = Command::new(BIN)
            .args(["load", "http://127.0.0.1:9/"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// `--max-conns` past what the machine's settings hold for the design is refused, naming the
/// setting read now; nothing is changed. Within the ceiling it starts.
#[test]
fn a_count_past_the_designs_ceiling_is_refused_naming_the_setting() {
    let read = |path: &str| -> u64 { std::fs::read_to_string(path).unwrap().trim().parse().unwrap() };
    let maps = read("/proc/sys/vm/max_map_count");
    let (_, hard) = muxlab::sys::rlimit::nofile().unwrap();
    let refused = serve_refused;
    let thread_most = (maps / 4 + 1).to_string();
    refused(
        &["--model", "thread", "--max-conns", &thread_most],
        &["vm.max_map_count".into(), thousands(maps)],
    );
    let over = (2 * hard).to_string();
    refused(
        &["--model", "epoll", "--max-conns", &over],
        &[
            "descriptors: 1 process of".into(),
            "RLIMIT_NOFILE".into(),
            "--procs".into(),
        ],
    );
    // select's FD_SETSIZE is the design's own bound, refused connection by connection (counted
    // in rejected_fdsetsize), not a setting: its --max-conns past 1,024 is not refused.
    // Three processes hold twice one's descriptors.
    let srv = Group::start("epoll", &["--procs", "3", "--max-conns", &over]);
    assert_eq!(srv.listening["max_conns"].as_u64(), Some(2 * hard));
    let (_, status, _) = srv.stop();
    assert!(status.success());
}

/// `load` refuses a count its source addresses' ports cannot reach, naming the setting,
/// before opening anything.
#[test]
fn a_load_past_its_source_ports_is_refused_naming_the_setting() {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").unwrap();
    let mut w = range.split_whitespace().map(|x| x.parse::<u64>().unwrap());
    let ports = w.next().map(|lo| w.next().unwrap() - lo + 1).unwrap();
    let c = (ports + 1).to_string();
    let out = Command::new(BIN)
        .args([
            "load",
            "http://127.0.0.1:9/",
            "-c",
            &c,
            "--bind",
            "127.0.0.2",
            "-d",
            "1s",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("net.ipv4.ip_local_port_range") && err.contains("need 2 source addresses"),
        "{err}"
    );
    assert!(err.contains("nothing was changed"), "{err}");
}

/// `muxlab models` gives each design's ceiling on this machine, from its settings.
#[test]
fn models_says_each_designs_ceiling_on_this_machine() {
    let out = Command::new(BIN).arg("models").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let maps: u64 = std::fs::read_to_string("/proc/sys/vm/max_map_count")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let line = |model: &str| {
        text.lines()
            .skip_while(|l| !l.starts_with("CONNECTIONS ONE SERVER HOLDS"))
            .find(|l| l.split_whitespace().next() == Some(model))
            .unwrap_or_else(|| panic!("no ceiling for {model}: {text}"))
            .to_string()
    };
    assert!(line("thread").contains(&thousands(maps / 4)), "{}", line("thread"));
    assert!(line("green").contains("descriptors") || line("green").contains("vm.max_map_count"));
    assert!(line("select").contains("1,024"));
    assert!(line("prefork").contains("one connection at a time per worker"));
    let epoll = text.lines().find(|l| l.starts_with("epoll ")).unwrap();
    assert!(epoll.contains("forms process groups: --procs"), "{epoll}");
    let thread = text.lines().find(|l| l.starts_with("thread ")).unwrap();
    assert!(!thread.contains("forms process groups"), "{thread}");
    // The same in JSON.
    let out = Command::new(BIN).args(["models", "--json"]).output().unwrap();
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let model = |name: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(model("epoll")["groups"], true);
    assert_eq!(model("thread")["groups"], false);
    assert_eq!(model("thread")["ceiling"]["connections"], maps / 4);
    assert!(model("thread")["ceiling"]["bound"]
        .as_str()
        .unwrap()
        .contains("vm.max_map_count"));
    assert_eq!(model("prefork")["ceiling"], Value::Null);
}
