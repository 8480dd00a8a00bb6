//! The ring against real descriptors: ids, buffers lent and given back, one receive at a
//! time, batches, and descriptors held until their last operation.
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::rc::Rc;
use std::time::Duration;

use crate::sys::host::Fact;
use crate::sys::uring::*;
use crate::testing::host_fact;

/// A ring where the host has io_uring (a host fact); where it has not, the branch without:
/// making one is a clear error (the `uring` model refuses to start with it), and `None`.
fn ring() -> Option<Ring<'static>> {
    if !host_fact(Fact::IoUring).present {
        let e = Ring::new(8, 4, 64)
            .err()
            .expect("no ring where the host lacks io_uring");
        assert!(!e.to_string().is_empty());
        return None;
    }
    Some(Ring::new(8, 4, 64).unwrap())
}

/// A connected pair: the end the ring acts on, shared, and the peer.
fn pair() -> (SharedFd, UnixStream) {
    let (a, b) = UnixStream::pair().unwrap();
    (Rc::new(OwnedFd::from(a)), b)
}

fn reap(ring: &mut Ring, n: usize) -> Vec<Completion> {
    let mut all = Vec::new();
    let mut some = Vec::new();
    for _ in 0..200 {
        if all.len() >= n {
            break;
        }
        ring.wait(Duration::from_millis(10), None).unwrap();
        ring.completions(&mut some);
        all.append(&mut some);
    }
    all
}

#[test]
fn sends_with_the_same_tag_each_get_their_own_id_and_bytes_back() {
    let Some(mut ring) = ring() else { return };
    let (a, mut b) = pair();
    ring.send(&a, b"first".to_vec(), 42).unwrap();
    ring.send(&a, b"second".to_vec(), 42).unwrap();
    let done = reap(&mut ring, 2);
    let mut back: Vec<Vec<u8>> = done
        .into_iter()
        .map(|c| match c {
            Completion::Send { tag: 42, sent, buf } => {
                assert_eq!(sent.unwrap(), buf.len());
                buf
            }
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    back.sort();
    assert_eq!(back, vec![b"first".to_vec(), b"second".to_vec()]);
    let mut got = [0u8; 11];
    b.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"firstsecond");
}

#[test]
fn a_receive_brings_one_buffer_at_most_and_leaves_the_rest_in_the_socket() {
    let Some(mut ring) = ring() else { return };
    let (a, b) = pair();
    std::io::Write::write_all(&mut &b, &[7u8; 200]).unwrap();
    ring.recv_once(&a, 9).unwrap();
    let done = reap(&mut ring, 1);
    let [Completion::Recv {
        tag: 9,
        data: Ok(Some(buf)),
    }] = done.as_slice()
    else {
        panic!("{done:?}");
    };
    assert_eq!(ring.buffer(buf).len(), 64, "one buffer's worth");
    // Nothing more arrives until a receive is armed again: the rest waits in the socket.
    let mut some = Vec::new();
    ring.wait(Duration::from_millis(50), None).unwrap();
    ring.completions(&mut some);
    assert!(some.is_empty(), "{some:?}");
    let mut rest = [0u8; 200];
    assert_eq!(crate::sys::fd::read(&*a, &mut rest).unwrap(), 136);
}

#[test]
fn a_batch_wait_returns_the_whole_batch_or_what_is_there_after_the_extra_wait() {
    let Some(mut ring) = ring() else { return };
    let (a, _b) = pair();
    if !host_fact(Fact::IoUringMinWait).present {
        // The branch without: a batch wait returns with the first completion.
        assert!(!ring.batches());
        ring.send(&a, b"one".to_vec(), 1).unwrap();
        ring.wait(Duration::from_secs(20), Some((3, Duration::from_millis(1))))
            .unwrap();
        let mut some = Vec::new();
        ring.completions(&mut some);
        assert_eq!(some.len(), 1, "{some:?}");
        return;
    }
    for word in [&b"one"[..], b"two", b"three"] {
        ring.send(&a, word.to_vec(), 1).unwrap();
    }
    let mut some = Vec::new();
    let long = Duration::from_secs(20);
    ring.wait(long, Some((3, Duration::from_millis(1)))).unwrap();
    ring.completions(&mut some);
    assert_eq!(some.len(), 3, "{some:?}");
    // One completion where three are wanted: back after the extra wait, not the timeout.
    ring.send(&a, b"four".to_vec(), 1).unwrap();
    let t0 = std::time::Instant::now();
    ring.wait(long, Some((3, Duration::from_millis(1)))).unwrap();
    ring.completions(&mut some);
    assert_eq!(some.len(), 1, "{some:?}");
    assert!(t0.elapsed() < long / 2, "waited for the timeout: min-wait was ignored");
}

#[test]
fn a_receive_lends_its_buffer_until_it_is_recycled() {
    let Some(mut ring) = ring() else { return };
    let (a, b) = pair();
    ring.recv_once(&a, 7).unwrap();
    std::io::Write::write_all(&mut &b, b"hello").unwrap();
    let done = reap(&mut ring, 1);
    let Some(Completion::Recv {
        tag: 7,
        data: Ok(Some(buf)),
        ..
    }) = done.into_iter().next()
    else {
        panic!("no receive completion");
    };
    assert_eq!(ring.buffer(&buf), b"hello");
    ring.recycle(buf);
    ring.recv_once(&a, 7).unwrap();
    drop(b);
    // End of stream: a receive with nothing.
    let done = reap(&mut ring, 1);
    assert!(
        matches!(
            done.first(),
            Some(Completion::Recv {
                tag: 7,
                data: Ok(None),
                ..
            })
        ),
        "{done:?}"
    );
}

/// The fd-reuse hazard: a send is queued (not yet submitted), then its connection is
/// closed, and a new connection is made. Were the descriptor closed at once, the new
/// connection would get its number and the queued reply would go to the wrong client. The
/// ring holds the descriptor until the send completes: the number is not reused, the bytes
/// reach the first peer only, and the descriptor closes after the completion.
#[test]
fn a_queued_send_never_reaches_a_descriptor_closed_and_reused_before_it_was_submitted() {
    let Some(mut ring) = ring() else { return };
    let (a, mut first_peer) = pair();
    let number = a.as_raw_fd();
    ring.send(&a, b"for the first client".to_vec(), 1).unwrap();
    ring.recv_once(&a, 1).unwrap();
    drop(a); // the connection closes it, with both operations still only queued
    let (b, mut second_peer) = pair();
    assert_ne!(b.as_raw_fd(), number, "the number was reused while operations named it");
    let done = reap(&mut ring, 1);
    assert!(
        matches!(done.first(), Some(Completion::Send { sent: Ok(20), .. })),
        "{done:?}"
    );
    let mut got = [0u8; 20];
    first_peer.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"for the first client");
    second_peer.set_nonblocking(true).unwrap();
    let mut none = [0u8; 1];
    assert!(second_peer.read(&mut none).is_err(), "the second client got bytes");
    // The receive still holds the descriptor; once the peer stops sending, it completes for
    // the last time, and the descriptor is closed: the peer reads end of stream.
    assert!(std::fs::read_link(format!("/proc/self/fd/{number}")).is_ok());
    first_peer.shutdown(std::net::Shutdown::Write).unwrap();
    let done = reap(&mut ring, 1);
    assert!(
        matches!(done.first(), Some(Completion::Recv { data: Ok(None), .. })),
        "{done:?}"
    );
    first_peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(first_peer.read(&mut none).unwrap(), 0, "the descriptor stayed open");
}
