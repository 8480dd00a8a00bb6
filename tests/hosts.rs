//! Multi-host runs over real hosts: network namespaces on a bridge, each with its own OpenSSH
//! server (see `common/lab.rs`). Without root, ip or sshd the tests skip, saying why (and fail
//! under `MUXLAB_REQUIRE_ALL`, as in CI).

mod common;

use std::process::{Command, Output};
use std::time::Duration;

use common::{lab::Lab, Server, BIN};
use muxlab::load::Hist;
use serde_json::Value;

macro_rules! lab_or_skip {
    ($n:expr) => {
        match Lab::new($n) {
            Some(lab) => lab,
            None => return,
        }
    };
}

/// An epoll server inside host 1.
fn server_in_h1(lab: &Lab) -> Server {
    server_in_h1_speaking(lab, "http")
}

/// [`server_in_h1`] and its URL.
fn served_in_h1(lab: &Lab) -> (Server, String) {
    let server = server_in_h1(lab);
    let url = server.url();
    (server, url)
}

/// An epoll server inside host 1 with `--proto PROTO`.
fn server_in_h1_speaking(lab: &Lab, proto: &str) -> Server {
    let ns = lab.ns(1);
    let addr = lab.addr(1);
    Server::start_under(
        &["ip", "netns", "exec", &ns],
        "epoll",
        &["--proto", proto, "--addr", &addr],
    )
}

/// `muxlab load URL ARGS... --hosts h2,h3 --ssh-config LAB --remote-bin BIN --json` at a
/// server in host 1.
fn load_from_h2_h3(lab: &Lab, server: &Server, args: &[&str]) -> Command {
    load_url_from_h2_h3(lab, &server.url(), args)
}

/// The same against `url`.
fn load_url_from_h2_h3(lab: &Lab, url: &str, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("load").arg(url).args(args);
    c.args(["--hosts", &format!("{},{}", lab.host(2), lab.host(3))]);
    c.arg("--ssh-config")
        .arg(&lab.ssh_config)
        .args(["--remote-bin", BIN, "--json"]);
    c
}

fn muxlab(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run muxlab")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {} / {}", text(&out.stdout), text(&out.stderr)))
}

#[test]
fn fan_out_splits_exactly_and_the_server_counts_every_request() {
    let lab = lab_or_skip!(3);
    let server = server_in_h1(&lab);
    let out = load_from_h2_h3(&lab, &server, &["-c", "7", "-n", "10007"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc = json_of(&out);
    assert_eq!(doc["requests"], 10007, "{doc}");
    assert_eq!(doc["connections"]["requested"], 7);
    let per_host: Vec<u64> = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["requests"].as_u64().unwrap())
        .collect();
    assert_eq!(per_host.len(), 2);
    assert_eq!(per_host.iter().sum::<u64>(), 10007);
    // Slots 0..4 go to h2, 4..7 to h3: the -n share follows the slots (10007 * 4 / 7).
    assert_eq!(per_host[0], 10007 * 4 / 7);
    let stopped = server.stop();
    assert_eq!(stopped.total("requests"), 10007, "the server counted another total");
    for i in 1..=3 {
        assert!(
            lab.muxlab_left(i, Duration::from_secs(5)).is_empty(),
            "muxlab left on h{i}"
        );
    }
}

#[test]
fn an_h2_run_from_two_hosts_keeps_its_stream_figures() {
    let lab = lab_or_skip!(3);
    let server = server_in_h1_speaking(&lab, "h2");
    let url = format!("h2c://{}/", server.addr);
    let out = load_url_from_h2_h3(&lab, &url, &["-c", "6", "--streams", "4", "-n", "3000"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc = json_of(&out);
    assert_eq!(doc["requests"], 3000, "{doc}");
    assert_eq!(doc["error_total"], 0, "{doc}");
    let h = &doc["h2"];
    assert_eq!(h["streams"], 3000, "{h}");
    assert_eq!(h["lanes"], 24, "6 connections × 4 streams over both hosts: {h}");
    assert!(h["in_flight_max"].as_u64().unwrap() <= 4, "{h}");
    assert_eq!(server.stop().total("requests"), 3000);
}

#[test]
fn open_loop_rate_splits_exactly_and_the_hosts_start_together() {
    let lab = lab_or_skip!(3);
    let server = server_in_h1(&lab);
    let out = load_from_h2_h3(&lab, &server, &["-c", "5", "-d", "2s", "--rate", "3001"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc = json_of(&out);
    assert!(
        (doc["offered_rps"].as_f64().unwrap() - 3001.0).abs() < 1e-6,
        "{}",
        doc["offered_rps"]
    );
    // One agreed instant, and no host started before it.
    let start_at = doc["config"]["start_at_ms"].as_u64().unwrap();
    for h in doc["hosts"].as_array().unwrap() {
        assert!(
            h["window_start_ms"].as_u64().unwrap() >= start_at,
            "{h} started before {start_at}"
        );
    }
    server.stop();
}

#[test]
fn merge_adds_shares_up_losslessly() {
    let lab = lab_or_skip!(3);
    let (server, url) = served_in_h1(&lab);
    let mut files = Vec::new();
    let mut parts = Vec::new();
    for (i, host) in [2, 3].into_iter().enumerate() {
        let ns = lab.ns(host);
        let shard = format!("{i}/2");
        let out = Command::new("ip")
            .args([
                "netns", "exec", &ns, BIN, "load", &url, "-c", "5", "-n", "5003", "--shard", &shard, "--json",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let path = lab.dir.join(format!("part{i}.json"));
        std::fs::write(&path, &out.stdout).unwrap();
        parts.push(json_of(&out));
        files.push(path.display().to_string());
    }
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    let out = muxlab(&args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let merged = json_of(&out);
    assert_eq!(merged["requests"], 5003);
    assert_eq!(merged["config"]["connections"], 5);
    assert_eq!(
        merged["config"]["requests"], 5003,
        "the shares of one run describe that run"
    );
    let hist = |d: &Value| Hist::from_v2_base64(d["interchange"]["tally"]["latency"].as_str().unwrap()).unwrap();
    let mut sum = hist(&parts[0]);
    sum.merge(&hist(&parts[1]));
    assert_eq!(
        hist(&merged).0,
        sum.0,
        "the merged histogram is not the sum of the parts"
    );
    assert_eq!(merged["latency_us"]["p99"], sum.summary_us()["p99"]);
    assert_eq!(server.stop().total("requests"), 5003);
    // Merging again what merge wrote changes nothing but the parts list.
    let again = lab.dir.join("merged.json");
    std::fs::write(&again, &out.stdout).unwrap();
    let out2 = muxlab(&["merge", &again.display().to_string()]);
    assert_eq!(json_of(&out2)["requests"], 5003);
}

#[test]
fn a_host_that_loses_its_link_is_named_and_leaves_nothing_behind() {
    let lab = lab_or_skip!(3);
    let server = server_in_h1(&lab);
    let child = load_from_h2_h3(&lab, &server, &["-c", "4", "-d", "8s", "--timeout", "2s"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(4));
    lab.set_link(3, false);
    let out = child.wait_with_output().unwrap();
    lab.set_link(3, true);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("h3") && err.contains("lost"),
        "the lost host is not named: {err}"
    );
    let doc = json_of(&out);
    let h3 = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["host"] == "h3")
        .unwrap();
    assert!(h3["failed"].as_str().unwrap().contains("lost"), "{h3}");
    assert!(doc["requests"].as_u64().unwrap() > 0, "h2's result is kept");
    for i in [2, 3] {
        let left = lab.muxlab_left(i, Duration::from_secs(10));
        assert!(left.is_empty(), "muxlab processes left on h{i}: {left:?}");
    }
    server.stop();
}

#[test]
fn unreachable_hosts_and_other_versions_are_named_and_push_cleans_up() {
    let lab = lab_or_skip!(1);
    let (server, url) = served_in_h1(&lab);
    let cfg = lab.ssh_config.display().to_string();
    let nowhere = format!("10.231.{}.250", lab.addr(1).split('.').nth(2).unwrap());
    let hosts = format!("h1,{nowhere}");
    // `muxlab load URL -c 2 ARGS --ssh-config LAB`.
    let load = |args: &[&str]| {
        muxlab(
            &[
                &["load", url.as_str(), "-c", "2"],
                args,
                &["--ssh-config", cfg.as_str()],
            ]
            .concat(),
        )
    };
    let out = load(&["-d", "1s", "--timeout", "2s", "--hosts", &hosts, "--remote-bin", BIN]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains(&nowhere), "{}", text(&out.stderr));
    let out = load(&["-d", "1s", "--hosts", "h1", "--remote-bin", "/bin/true"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("not muxlab"), "{}", text(&out.stderr));
    let before = pushed_dirs();
    let out = load(&["-n", "1000", "--hosts", "h1", "--push", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(json_of(&out)["requests"], 1000);
    assert_eq!(pushed_dirs(), before, "--push left its copy behind");
    server.stop();
}

/// Namespace hosts share this machine's /tmp, as pods with a shared volume do: each host's
/// `--push` copy needs a directory of its own, every time (two hosts pushing at the same
/// millisecond once collided there and failed the run).
#[test]
fn push_to_hosts_that_share_tmp_gives_each_host_its_own_directory() {
    let lab = lab_or_skip!(3);
    let server = server_in_h1(&lab);
    let before = pushed_dirs();
    for run in 0..3 {
        let mut cmd = load_from_h2_h3(&lab, &server, &["-c", "4", "-n", "2000"]);
        let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        // The same run, with the binary pushed instead of --remote-bin.
        let i = args.iter().position(|a| a == "--remote-bin").unwrap();
        let mut push = Command::new(BIN);
        push.args(&args[..i]).args(&args[i + 2..]).arg("--push");
        cmd = push;
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "run {run}: {}", text(&out.stderr));
        assert_eq!(json_of(&out)["requests"], 2000, "run {run}");
    }
    assert_eq!(pushed_dirs(), before, "--push left its copies behind");
    assert_eq!(server.stop().total("requests"), 6000);
}

fn pushed_dirs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/tmp")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("muxlab-push-"))
        .collect();
    v.sort();
    v
}

#[test]
fn a_bench_with_the_server_on_another_host_samples_it_there() {
    let lab = lab_or_skip!(2);
    let scenario = lab.dir.join("two-hosts.toml");
    std::fs::write(
        &scenario,
        "name = \"two-hosts\"\ndescription = \"server on h1, load from h2\"\nserver_host = \"h1\"\n\
         client_hosts = [\"h2\"]\nrepeats = 1\n[[experiment]]\nname = \"http\"\nproto = \"http\"\nmodels = [\"epoll\"]\n\
         connections = [4]\nduration = \"2s\"\n",
    )
    .unwrap();
    // The binary copied there for the run, or one already there (--remote-bin).
    for (k, how) in [["--push", ""], ["--remote-bin", BIN]].iter().enumerate() {
        let out_dir = lab.dir.join(format!("results{k}"));
        let mut args = vec![
            "bench".to_string(),
            scenario.display().to_string(),
            "--ssh-config".into(),
            lab.ssh_config.display().to_string(),
            "--out".into(),
            out_dir.display().to_string(),
        ];
        args.extend(how.iter().filter(|a| !a.is_empty()).map(|a| a.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = muxlab(&args);
        assert!(
            out.status.success(),
            "{how:?}: {}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        let dir = std::fs::read_dir(&out_dir).unwrap().next().unwrap().unwrap().path();
        let results: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
        let cell = &results["cells"][0];
        assert_eq!(cell["status"], "ok", "{cell}");
        assert!(
            cell["figures"]["server_cpu_us_per_req"].as_f64().unwrap() > 0.0,
            "no server CPU sampled on h1: {cell}"
        );
        assert!(
            cell["server_stats"]["totals"]["requests"].as_u64().unwrap()
                >= cell["figures"]["requests"].as_u64().unwrap()
        );
        let machines = results["environment"]["hosts"]["machines"].as_array().unwrap();
        assert_eq!(machines.len(), 2);
        assert!(machines
            .iter()
            .all(|m| m["kernel"].as_str().is_some_and(|k| !k.is_empty())));
        assert_eq!(results["environment"]["server_addr"], lab.addr(1));
    }
    for i in 1..=2 {
        assert!(
            lab.muxlab_left(i, Duration::from_secs(5)).is_empty(),
            "muxlab left on h{i}"
        );
    }
}
