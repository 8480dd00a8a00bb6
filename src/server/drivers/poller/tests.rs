//! The contract tests every backend passes.

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;

use crate::server::Trigger;
use std::time::Duration;

use crate::server::drivers::poller::*;

/// The contract every backend keeps: a token is reported once its descriptor is ready for
/// what it is watched for, not before, and not after it is deregistered.
fn contract(p: &mut impl Poller) {
    let (a, mut b) = UnixStream::pair().unwrap();
    let (c, _d) = UnixStream::pair().unwrap();
    let mut ready = Vec::new();
    p.register(a.as_fd(), 7, Interest::READ).unwrap();
    p.register(c.as_fd(), 9, Interest::READ).unwrap();
    p.wait(&mut ready, Duration::from_millis(10)).unwrap();
    assert!(ready.is_empty(), "nothing written yet: {ready:?}");
    b.write_all(b"x").unwrap();
    let examined = p.wait(&mut ready, Duration::from_millis(1000)).unwrap();
    assert_eq!(ready, vec![7]);
    assert!(examined >= 1);
    // A socket is writable at once.
    p.modify(c.as_fd(), 9, Interest::WRITE).unwrap();
    p.deregister(a.as_fd()).unwrap();
    p.wait(&mut ready, Duration::from_millis(1000)).unwrap();
    assert_eq!(ready, vec![9]);
    p.deregister(c.as_fd()).unwrap();
    p.wait(&mut ready, Duration::from_millis(10)).unwrap();
    assert!(ready.is_empty());
}

#[test]
fn select_keeps_the_contract() {
    contract(&mut Select::new());
}

#[test]
fn poll_keeps_the_contract() {
    contract(&mut Poll::new());
}

#[test]
fn epoll_keeps_the_contract() {
    contract(&mut Epoll::new(Trigger::Level).unwrap());
}

#[test]
fn select_refuses_what_it_cannot_watch() {
    let p = Select::new();
    assert_eq!(p.fd_limit(), Some(crate::sys::select::FD_SETSIZE));
    assert!(!p.edge());
    assert!(Epoll::new(Trigger::Edge).unwrap().edge());
}
