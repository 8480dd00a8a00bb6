//! The engine's side of `https://` targets: the handshake after the TCP connect (timed on its
//! own), then ciphertext moved with `read_tls` / `write_tls` on the non-blocking descriptor
//! when epoll says so, and plaintext with the connection's reader and writer.

use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::time::Instant;

use rustls::pki_types::ServerName;
use rustls::ClientConnection;

use super::Engine;
use crate::load::ErrorClass;
use crate::sys;

/// A descriptor as `Read` + `Write` for rustls's `read_tls` / `write_tls`.
struct FdIo<'a>(&'a OwnedFd);

impl Read for FdIo<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        sys::fd::read(self.0, buf)
    }
}

impl Write for FdIo<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        sys::fd::write(self.0, buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Set once a TLS failure has been explained on stderr.
static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// What moving bytes found.
enum Moved {
    /// The socket has nothing more to read now (or reading was not asked for).
    Blocked,
    /// Decrypted bytes wait to be taken before more can be read.
    Full,
    /// The peer closed.
    Eof,
}

impl Engine<'_> {
    /// After the TCP connect of an https target: starts the handshake.
    pub(super) fn start_tls(&mut self, i: usize, now: Instant) {
        let Some((cfg, name)) = self.reach.tls.clone() else {
            return;
        };
        let name = match ServerName::try_from(name) {
            Ok(n) => n,
            Err(_) => return self.fail(i, ErrorClass::Other, now),
        };
        match ClientConnection::new(cfg, name) {
            Ok(tls) => {
                self.slots[i].handshaking(tls, now);
                self.drive_handshake(i, now);
            }
            Err(_) => self.fail(i, ErrorClass::Other, now),
        }
    }

    /// Moves handshake bytes; when it is done the connection is up (its time is recorded).
    pub(super) fn drive_handshake(&mut self, i: usize, now: Instant) {
        match self.tls_io(i, true) {
            Err(class) => return self.fail(i, class, now),
            Ok(Moved::Eof) => return self.fail(i, ErrorClass::UnexpectedClose, now),
            Ok(_) => {}
        }
        let counting = self.counting(now);
        if let Some(took) = self.slots[i].handshake_done(now) {
            if counting {
                self.ledger.tally.tls_handshake.record_ns(took.as_nanos() as u64);
            }
            self.when_up(i, now);
        }
    }

    /// Sends the queued ciphertext and, with `read`, reads until the socket would block: what
    /// arrives is decrypted and left in the connection's plaintext reader. (Reading only where
    /// the caller then takes the plaintext: with edge-triggered epoll, bytes read and left
    /// behind would raise no new event.)
    fn tls_io(&mut self, i: usize, read: bool) -> Result<Moved, ErrorClass> {
        let (Some(fd), Some(tls), _) = self.slots[i].wire() else {
            return Err(ErrorClass::Other);
        };
        let mut io = FdIo(fd);
        loop {
            let mut progress = false;
            while tls.wants_write() {
                match tls.write_tls(&mut io) {
                    Ok(n) => {
                        self.ledger.tally.bytes_out += n as u64;
                        progress = true;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(ErrorClass::of(&e)),
                }
            }
            if !read {
                return Ok(Moved::Blocked);
            }
            if !tls.wants_read() {
                return Ok(Moved::Full);
            }
            match tls.read_tls(&mut io) {
                Ok(0) => return Ok(Moved::Eof),
                Ok(n) => {
                    self.ledger.tally.bytes_in += n as u64;
                    if let Err(e) = tls.process_new_packets() {
                        // What happened is said once: every connection would say the same.
                        if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
                            let hint = match e {
                                rustls::Error::InvalidCertificate(_) => {
                                    " (trust its CA with --cacert FILE, or skip the check with --insecure)"
                                }
                                _ => "",
                            };
                            eprintln!("muxlab: TLS with {}: {e}{hint}", self.reach.host);
                        }
                        // Send the alert rustls queued, then give up on the connection.
                        let _ = tls.write_tls(&mut io);
                        return Err(ErrorClass::Tls);
                    }
                    progress = true;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if !tls.wants_write() {
                        return Ok(Moved::Blocked);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => progress = true,
                Err(e) => return Err(ErrorClass::of(&e)),
            }
            if !progress {
                return Ok(Moved::Blocked);
            }
        }
    }

    /// `flush` for TLS: the pending plaintext goes into the connection as far as rustls takes
    /// it (its buffer is bounded), ciphertext out; what rustls cannot take yet stays pending,
    /// as on a plain socket, for the next flush.
    pub(super) fn tls_flush(&mut self, i: usize) -> Result<(), ()> {
        loop {
            let (_, tls, conn) = self.slots[i].wire();
            let mut moved = false;
            if let Some(tls) = tls {
                while !conn.all_sent() {
                    match tls.writer().write(conn.unsent()) {
                        Ok(n) if n > 0 => {
                            conn.wrote(n);
                            moved = true;
                        }
                        _ => break,
                    }
                }
            }
            let done = conn.all_sent();
            if let Err(class) = self.tls_io(i, false) {
                self.fail(i, class, Instant::now());
                return Err(());
            }
            // Sending made room in rustls: hand it more, until the socket takes no more.
            if done || !moved {
                return Ok(());
            }
        }
    }

    /// `on_readable` for TLS: decrypts what arrived and hands the plaintext to `consume`,
    /// until the socket is drained.
    pub(super) fn tls_readable(&mut self, i: usize, mut now: Instant) {
        let mut first = true;
        for passes in 0.. {
            // As for plain connections: a server that keeps the socket full waits a turn.
            if passes == super::receive::READS_PER_TURN {
                return self.again.push(i);
            }
            // A later pass may read responses to requests sent during an earlier one: each
            // pass reads the clock anew, or those would measure zero.
            if !std::mem::take(&mut first) {
                now = Instant::now();
            }
            let moved = match self.tls_io(i, true) {
                Ok(m) => m,
                Err(class) => return self.fail(i, class, now),
            };
            loop {
                let (_, Some(tls), _) = self.slots[i].wire() else {
                    return;
                };
                match tls.reader().read(&mut self.buf) {
                    Ok(0) => return self.on_eof(i, now),
                    Ok(n) => {
                        if !self.consume(i, n, now) {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(_) => return self.on_eof(i, now),
                }
            }
            match moved {
                Moved::Eof => return self.on_eof(i, now),
                Moved::Blocked => return,
                Moved::Full => {}
            }
        }
    }
}
