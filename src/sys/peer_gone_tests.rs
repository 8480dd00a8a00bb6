//! The level-triggered "peer gone" path (`socket::peer_gone`), deterministically: a reset that
//! arrives after the server's last write and before it pauses, its error already taken by a
//! write, still reads as gone; a peer that only half-closed, or is still there, does not.

use std::io::Write;
use std::net::{TcpListener, TcpStream};

use super::poll::{entry, poll};
use super::socket::{peer_gone, set_linger_reset};

/// A connected pair: (the client's end, the server's end).
fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (server, _) = l.accept().unwrap();
    (client, server)
}

/// Waits (up to 5 s) until the kernel has taken the peer's reset on `s`, without taking its
/// error (poll reports it; SO_ERROR stays pending).
fn reset_arrived(s: &TcpStream) {
    let mut fds = [entry(std::os::fd::AsRawFd::as_raw_fd(s), 0)];
    let n = poll(&mut fds, 5_000).unwrap();
    assert!(
        n == 1 && fds[0].revents & (libc::POLLERR | libc::POLLHUP) != 0,
        "no reset arrived"
    );
}

#[test]
fn a_reset_whose_error_a_write_took_before_the_pause_is_still_a_peer_gone() {
    let (client, mut server) = pair();
    server.write_all(b"answer").unwrap();
    set_linger_reset(&client).unwrap();
    drop(client);
    reset_arrived(&server);
    // The write between the reset and the pause takes the pending error.
    assert!(server.write_all(b"more").is_err(), "a write to a reset peer fails");
    assert!(
        peer_gone(&server).unwrap(),
        "the error was taken, the state says closed"
    );
}

#[test]
fn a_reset_whose_error_is_pending_is_a_peer_gone() {
    let (client, server) = pair();
    set_linger_reset(&client).unwrap();
    drop(client);
    reset_arrived(&server);
    assert!(peer_gone(&server).unwrap());
}

#[test]
fn a_peer_that_half_closed_or_stays_is_not_gone() {
    let (client, server) = pair();
    assert!(!peer_gone(&server).unwrap(), "a live peer");
    client.shutdown(std::net::Shutdown::Write).unwrap();
    let mut fds = [entry(std::os::fd::AsRawFd::as_raw_fd(&server), super::poll::IN)];
    assert_eq!(poll(&mut fds, 5_000).unwrap(), 1, "the FIN arrived");
    assert!(
        !peer_gone(&server).unwrap(),
        "a half-closed peer still waits for its answers"
    );
}
