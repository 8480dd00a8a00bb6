//! Echo, packet, RESP and memcache scripted: wrong bytes and values, cut messages and replies, replies to nothing.

use std::time::Instant;

use super::*;

#[test]
fn echo_bytes_that_differ_are_a_mismatch_and_a_message_the_close_cuts_an_unexpected_close() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("echo://127.0.0.1:1", "size = 8", t0);
    c.send(t0, t0, 0, t0, &mut b);
    c.send(t0, t0, 0, t0, &mut b);
    let out = sent(&mut c);
    assert_eq!(out.len(), 16, "two messages of 8 bytes");
    c.input(&out[..12], t0, &mut b).unwrap();
    assert_eq!(b.answered, [(0, None)], "the first is back whole, the second half");
    assert_eq!(c.closed(t0, &mut b), Err(ErrorClass::UnexpectedClose));
    let (mut c, mut b) = up("echo://127.0.0.1:1", "size = 8", t0);
    c.send(t0, t0, 0, t0, &mut b);
    let mut wrong = sent(&mut c);
    wrong[0] ^= 0xff;
    assert_eq!(c.input(&wrong, t0, &mut b), Err(ErrorClass::EchoMismatch));
}

#[test]
fn resp_a_value_that_is_not_the_one_written_is_a_wrong_value_and_the_connection_goes_on() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("resp://127.0.0.1:1", "keys = 1", t0);
    // A SET (class 0) then a GET (class 1) of the one key.
    c.send(t0, t0, 0, t0, &mut b);
    c.send(t0, t0, 1, t0, &mut b);
    let out = sent(&mut c);
    assert!(
        out.starts_with(b"*3\r\n$3\r\nSET\r\n"),
        "{:?}",
        String::from_utf8_lossy(&out)
    );
    c.input(b"+OK\r\n$5\r\nhello\r\n", t0, &mut b).unwrap();
    assert_eq!(
        b.answered,
        [(0, None), (1, None)],
        "both answered: a wrong value is an answer"
    );
    let k = b.tally.keyed.as_ref().unwrap();
    assert_eq!((k.sets, k.wrong), (1, 1), "{k:?}");
    assert_eq!(b.tally.errors_by_name().get("wrong_value"), Some(&1));
    assert!(c.is_up() && c.idle(), "the connection goes on");
    // A reply cut by the close, and a reply to no command.
    c.send(t0, t0, 1, t0, &mut b);
    sent(&mut c);
    c.input(b"$40\r\nonly part", t0, &mut b).unwrap();
    assert_eq!(c.closed(t0, &mut b), Err(ErrorClass::UnexpectedClose));
    let (mut c, mut b) = up("resp://127.0.0.1:1", "keys = 1", t0);
    assert_eq!(c.input(b"+OK\r\n", t0, &mut b), Err(ErrorClass::BadResponse));
}

#[test]
fn memcache_a_reply_that_answers_no_command_fails_the_connection() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("memcache://127.0.0.1:1", "keys = 1", t0);
    c.send(t0, t0, 0, t0, &mut b);
    assert!(sent(&mut c).starts_with(b"set "));
    c.input(b"STORED\r\n", t0, &mut b).unwrap();
    assert_eq!(b.answered, [(0, None)]);
    assert_eq!(c.input(b"STORED\r\n", t0, &mut b), Err(ErrorClass::BadResponse));
}

#[test]
fn packet_bytes_that_differ_are_a_mismatch_and_whole_ones_complete_in_order() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("packet://127.0.0.1:1", "size = 64", t0);
    for _ in 0..3 {
        c.send(t0, t0, 0, t0, &mut b);
    }
    let out = sent(&mut c);
    assert_eq!(out.len(), 192);
    // Back in two pieces cut mid-message.
    c.input(&out[..100], t0, &mut b).unwrap();
    c.input(&out[100..], t0, &mut b).unwrap();
    assert_eq!(b.answered.len(), 3);
    c.send(t0, t0, 0, t0, &mut b);
    let mut wrong = sent(&mut c);
    wrong[63] ^= 1;
    assert_eq!(c.input(&wrong, t0, &mut b), Err(ErrorClass::EchoMismatch));
}

#[test]
fn memcache_a_value_that_is_not_the_one_written_is_a_wrong_value_and_a_cut_reply_an_unexpected_close() {
    let t0 = Instant::now();
    let (mut c, mut b) = up("memcache://127.0.0.1:1", "keys = 1", t0);
    c.send(t0, t0, 0, t0, &mut b);
    c.send(t0, t0, 1, t0, &mut b);
    let out = String::from_utf8_lossy(&sent(&mut c)).into_owned();
    let key = out
        .lines()
        .find_map(|l| l.strip_prefix("get "))
        .expect("a get")
        .to_string();
    let reply = format!("STORED\r\nVALUE {key} 0 5\r\nhello\r\nEND\r\n");
    c.input(reply.as_bytes(), t0, &mut b).unwrap();
    assert_eq!(b.answered.len(), 2);
    assert_eq!(b.tally.keyed.as_ref().unwrap().wrong, 1);
    assert!(c.is_up() && c.idle(), "the connection goes on");
    c.send(t0, t0, 1, t0, &mut b);
    sent(&mut c);
    c.input(format!("VALUE {key} 0 50\r\npart").as_bytes(), t0, &mut b)
        .unwrap();
    assert_eq!(c.closed(t0, &mut b), Err(ErrorClass::UnexpectedClose));
}
