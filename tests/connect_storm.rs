//! A connect storm, in a suite of its own (its 59,000 connections would crowd the CPU and
//! the port space of tests running beside it).

mod common;

use common::*;

/// Connecting is part of the run: 19,000 think-time connections right after 40,000 short ones
/// (whose TIME_WAIT sockets crowd 127.0.0.1's ports) all come up and are served, the window
/// starting once they are up. Before, each connect spent about a millisecond in the kernel's
/// port search before the engine served any event: "0 of 19,000 established", errors none.
#[test]
fn many_connections_right_after_many_short_ones_all_come_up_and_are_served() {
    let srv = Server::start("epoll", &["--max-conns", "19500"]);
    let url = format!("http://{}/", srv.addr);
    let (code, short, err) = load(&[&url, "--close", "-c", "50", "-n", "40000"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(short["requests"], 40000, "{short}");
    let (code, doc, err) = load(&[&url, "-c", "19000", "--think", "1s", "-d", "3s"]);
    assert_eq!(code, 0, "{err}");
    let c = &doc["connections"];
    assert_eq!(
        (c["established"].as_u64(), c["never_connected"].as_u64()),
        (Some(19000), Some(0)),
        "{c}"
    );
    assert_eq!(c["unresolved_at_start"], 0, "{c}");
    assert_eq!(doc["error_total"], 0, "{}", doc["errors"]);
    assert_eq!(
        doc["fairness"]["starved"], 0,
        "every connection is served in the window"
    );
    assert!(doc["requests"].as_u64().unwrap() >= 19000, "{}", doc["requests"]);
    srv.stop();
}
