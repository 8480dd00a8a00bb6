//! io_uring: one ring, a provided-buffer ring for multishot receives, and sends whose buffers
//! the ring keeps alive until their completion. A safe API over the `io-uring` crate, sound for
//! every caller:
//!
//! - The ring picks every operation's `user_data` itself (a slot in its table of operations and
//!   that slot's generation), so no two operations in flight can be confused. The caller tags
//!   receives and sends with a `u64` of its own (a connection's id), handed back on completion.
//! - No operation can reach a descriptor after its owner closed it. A queued entry names its
//!   descriptor by number, and is handed to the kernel only at the next submit: were the number
//!   closed in between and reused (another thread accepts), the operation would act on someone
//!   else's connection. So a connection's descriptor is shared ([`SharedFd`]): the table of
//!   operations keeps a reference until the operation's last completion, and the descriptor is
//!   closed only once the caller and every operation on it have let go. The listener of
//!   [`Ring::accept_multi`] is borrowed for the ring's whole life (`'l`).
//! - [`Ring::accept_multi`]: one submission, a completion per accepted connection (5.19+),
//!   each an [`OwnedFd`].
//! - [`Ring::recv_once`]: one receive, its data in a buffer the kernel picked from the
//!   provided-buffer ring (6.0+), at most one buffer's worth. The completion lends it as a
//!   [`RecvBuf`]; read it with [`Ring::buffer`], give it back with [`Ring::recycle`].
//! - [`Ring::send`]: the ring owns the bytes until the send completes, then hands them back; a
//!   send that cannot be queued hands them back at once.
//! - [`Ring::timeout`]: a timeout operation, its completion tagged like a receive's.
//! - [`Ring::wait`]: submit everything queued and wait for a completion (or for a batch, up
//!   to a short extra wait) or a timeout (one io_uring_enter, counted as one syscall).

use std::io;
use std::marker::PhantomData;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::rc::Rc;
use std::time::Duration;

mod bufring;

pub use bufring::RecvBuf;
use bufring::{BufRing, BGID};

use io_uring::types::{CancelBuilder, SubmitArgs, Timespec};
use io_uring::{cqueue, opcode, squeue, types, IoUring, Probe};

/// A connection's descriptor, shared between its owner and the operations in flight on it: it
/// is closed when the last of them lets go, never while an operation, queued or issued, names it.
pub type SharedFd = Rc<OwnedFd>;

/// What an operation in flight is, recorded when it was queued, with the descriptor it acts on
/// (held until its last completion).
enum Op {
    Accept,
    Recv { tag: u64, _fd: SharedFd },
    Send { tag: u64, buf: Vec<u8>, _fd: SharedFd },
}

/// What a completion reports of its operation (the descriptor stays with the record, or is
/// let go with it).
enum Done {
    Accept,
    Recv { tag: u64 },
    Send { tag: u64, buf: Vec<u8> },
}

/// An operation in flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpId(u64);

/// One completion, decoded with what the ring recorded for its operation.
#[derive(Debug)]
pub enum Completion {
    /// A multishot accept produced a connection, or failed (EMFILE, ...). `more`: still armed.
    Accept { conn: io::Result<OwnedFd>, more: bool },
    /// A receive for `tag` delivered bytes (`Ok(Some)`), reached end of stream (`Ok(None)`)
    /// or failed (ENOBUFS: every provided buffer was in use).
    Recv {
        tag: u64,
        data: io::Result<Option<RecvBuf>>,
    },
    /// A send for `tag` finished: how many bytes went out (or the error), and the bytes back.
    Send {
        tag: u64,
        sent: io::Result<usize>,
        buf: Vec<u8>,
    },
}

/// An io_uring instance with its buffer ring and its table of operations in flight; `'l` is
/// how long the listener it accepts from lives.
pub struct Ring<'l> {
    ring: IoUring,
    bufs: BufRing,
    /// Operations in flight, by slot; `user_data` is slot | generation << 32.
    ops: Vec<(u32, Option<Op>)>,
    free: Vec<u32>,
    /// Raw completions of one reap, kept to reuse its allocation.
    raw: Vec<(u64, i32, u32)>,
    listener: PhantomData<BorrowedFd<'l>>,
}

impl<'l> Ring<'l> {
    /// A ring of `entries` submissions with `buffers` provided buffers of `size` bytes (a power
    /// of two count). Fails with a clear message where the kernel lacks what the model needs.
    pub fn new(entries: u32, buffers: u16, size: usize) -> io::Result<Ring<'l>> {
        let lacks = |what: &str, e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
        // One thread submits and reaps (SINGLE_ISSUER), and completions' task work runs when it
        // waits rather than interrupting it (DEFER_TASKRUN, Linux 6.1+); plain ring otherwise.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::new(entries))
            .map_err(|e| {
                lacks("io_uring_setup failed (is io_uring disabled, kernel.io_uring_disabled, or is this kernel older than 5.1?)", e)
            })?;
        super::count();
        let mut probe = Probe::new();
        ring.submitter()
            .register_probe(&mut probe)
            .map_err(|e| lacks("io_uring probe (needs Linux 5.6+)", e))?;
        for (code, name) in [
            (opcode::AcceptMulti::CODE, "accept"),
            (opcode::Recv::CODE, "recv"),
            (opcode::Send::CODE, "send"),
        ] {
            if !probe.is_supported(code) {
                return Err(io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!("this kernel's io_uring lacks {name}"),
                ));
            }
        }
        let bufs = BufRing::new(buffers.next_power_of_two(), size)?;
        // SAFETY: bufs.ring is a page-aligned mapping of `entries` BufRingEntry, valid until the
        // Ring is dropped, and the Ring's Drop ends every operation before freeing it.
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(bufs.ring as u64, bufs.entries, BGID, 0)
        }
        .map_err(|e| lacks("provided-buffer rings need Linux 5.19+", e))?;
        super::count();
        Ok(Ring {
            ring,
            bufs,
            ops: Vec::new(),
            free: Vec::new(),
            raw: Vec::new(),
            listener: PhantomData,
        })
    }

    /// Records `op` and queues `sqe` for it; on failure the op is handed back.
    fn push(&mut self, sqe: squeue::Entry, op: Op) -> Result<OpId, (io::Error, Op)> {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.ops.push((0, None));
                self.ops.len() as u32 - 1
            }
        };
        let entry = &mut self.ops[slot as usize];
        entry.0 = entry.0.wrapping_add(1);
        entry.1 = Some(op);
        let user_data = slot as u64 | (entry.0 as u64) << 32;
        match self.queue(&sqe.user_data(user_data)) {
            Ok(()) => Ok(OpId(user_data)),
            Err(e) => {
                let op = self.ops[slot as usize].1.take().expect("just recorded");
                self.free.push(slot);
                Err((e, op))
            }
        }
    }

    /// Puts `sqe` on the submission queue, handing a full queue to the kernel first.
    fn queue(&mut self, sqe: &squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: every entry the Ring queues references only memory it keeps alive until
            // the operation completes: send bytes and timeouts' times in `ops`, receive buffers
            // in `bufs` (a cancel references none). The descriptor an entry names stays open, under that number,
            // until the operation's last completion: a connection's through the SharedFd its
            // record in `ops` holds, the listener through the borrow for 'l.
            if unsafe { self.ring.submission().push(sqe) }.is_ok() {
                return Ok(());
            }
            super::count();
            self.ring.submit()?;
        }
    }

    /// Arms a multishot accept on `listener`, which outlives the ring.
    pub fn accept_multi(&mut self, listener: BorrowedFd<'l>) -> io::Result<()> {
        let sqe = opcode::AcceptMulti::new(types::Fd(listener.as_raw_fd()))
            .flags(libc::SOCK_CLOEXEC)
            .build();
        self.push(sqe, Op::Accept).map(drop).map_err(|(e, _)| e)
    }

    /// Arms one receive on `fd` into a provided buffer: a single completion, [`Completion::Recv`],
    /// bringing at most one buffer's bytes. What a caller that must bound
    /// what arrives arms, one at a time. The ring holds `fd` open until it completes.
    pub fn recv_once(&mut self, fd: &SharedFd, tag: u64) -> io::Result<OpId> {
        let sqe = opcode::Recv::new(types::Fd(fd.as_raw_fd()), std::ptr::null_mut(), self.bufs.size as u32)
            .buf_group(BGID)
            .build()
            .flags(squeue::Flags::BUFFER_SELECT);
        let op = Op::Recv {
            tag,
            _fd: Rc::clone(fd),
        };
        self.push(sqe, op).map_err(|(e, _)| e)
    }

    /// Sends `data` on `fd`; the ring keeps the bytes, and `fd` open, until the completion, which
    /// hands the bytes back with `tag`. When the send cannot be queued, the bytes come back with
    /// the error.
    pub fn send(&mut self, fd: &SharedFd, data: Vec<u8>, tag: u64) -> Result<(), (io::Error, Vec<u8>)> {
        // The Vec's heap block does not move when the Vec is moved into the table.
        let sqe = opcode::Send::new(types::Fd(fd.as_raw_fd()), data.as_ptr(), data.len() as u32)
            .flags(libc::MSG_NOSIGNAL)
            .build();
        let op = Op::Send {
            tag,
            buf: data,
            _fd: Rc::clone(fd),
        };
        self.push(sqe, op).map(drop).map_err(|(e, op)| match op {
            Op::Send { buf, .. } => (e, buf),
            _ => unreachable!("a send records a send"),
        })
    }

    /// Whether [`Ring::wait`] can wait for a batch (the kernel's min-wait, Linux 6.12+).
    pub fn batches(&self) -> bool {
        self.ring.params().is_feature_min_timeout()
    }

    /// Submits what is queued and waits up to `timeout` for completions: for one when `batch`
    /// is `None`; with `Some((n, min_wait))`, for `n`, but no longer than `min_wait` once one
    /// is there (where the kernel cannot, for one).
    pub fn wait(&mut self, timeout: Duration, batch: Option<(usize, Duration)>) -> io::Result<()> {
        let ts = Timespec::new().sec(timeout.as_secs()).nsec(timeout.subsec_nanos());
        let (want, min_wait) = match batch {
            Some((n, min)) if n > 1 && self.batches() => (n, min.as_micros().min(u32::MAX as u128) as u32),
            _ => (1, 0),
        };
        let args = SubmitArgs::new().timespec(&ts).min_wait_usec(min_wait);
        super::count();
        match self.ring.submitter().submit_with_args(want, &args) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Takes every completion available, decoded.
    pub fn completions(&mut self, out: &mut Vec<Completion>) {
        out.clear();
        let mut raw = std::mem::take(&mut self.raw);
        raw.extend(
            self.ring
                .completion()
                .map(|cqe| (cqe.user_data(), cqe.result(), cqe.flags())),
        );
        for (user_data, result, flags) in raw.drain(..) {
            if let Some(c) = self.decode(user_data, result, flags) {
                out.push(c);
            }
        }
        self.raw = raw;
    }

    fn decode(&mut self, user_data: u64, result: i32, flags: u32) -> Option<Completion> {
        let (slot, gen) = (user_data as u32, (user_data >> 32) as u32);
        let more = cqueue::more(flags);
        let entry = self.ops.get_mut(slot as usize).filter(|e| e.0 == gen)?;
        // A multishot operation that stays armed keeps its record (and its descriptor); the
        // last completion of any operation frees it.
        let op = if more {
            match entry.1.as_ref()? {
                Op::Accept => Done::Accept,
                Op::Recv { .. } | Op::Send { .. } => {
                    unreachable!("only accepts are multishot")
                }
            }
        } else {
            let op = entry.1.take()?;
            self.free.push(slot);
            match op {
                Op::Accept => Done::Accept,
                Op::Recv { tag, .. } => Done::Recv { tag },
                Op::Send { tag, buf, .. } => Done::Send { tag, buf },
            }
        };
        let err = || io::Error::from_raw_os_error(-result);
        Some(match op {
            Done::Accept => Completion::Accept {
                // SAFETY: a non-negative result of an accept this ring queued is a descriptor
                // the kernel just made for this process; nothing else owns it.
                conn: if result >= 0 {
                    Ok(unsafe { OwnedFd::from_raw_fd(result) })
                } else {
                    Err(err())
                },
                more,
            },
            Done::Recv { tag } => Completion::Recv {
                tag,
                data: match cqueue::buffer_select(flags) {
                    Some(bid) if result > 0 => Ok(Some(self.bufs.lend(bid, result as usize))),
                    Some(bid) => {
                        // A buffer with no bytes: give it straight back.
                        self.bufs.lend(bid, 0);
                        self.recycle(RecvBuf { bid, len: 0 });
                        Ok(None)
                    }
                    None if result >= 0 => Ok(None),
                    None => Err(err()),
                },
            },
            Done::Send { tag, buf } => Completion::Send {
                tag,
                sent: if result >= 0 { Ok(result as usize) } else { Err(err()) },
                buf,
            },
        })
    }

    /// The bytes a receive completion delivered.
    pub fn buffer(&self, buf: &RecvBuf) -> &[u8] {
        self.bufs.bytes(buf)
    }

    /// Gives a provided buffer back to the kernel.
    pub fn recycle(&mut self, buf: RecvBuf) {
        self.bufs.push(buf.bid);
        self.bufs.publish();
    }

    fn in_flight(&self) -> bool {
        self.ops.iter().any(|(_, op)| op.is_some())
    }
}

impl Drop for Ring<'_> {
    /// Ends every operation before the memory they use is freed: cancel them all, reap their
    /// completions (closing any connection an accept still delivered, and letting go of the
    /// descriptors the operations held). Should some operation not end within a second, its
    /// memory and descriptor are leaked rather than freed under the kernel.
    fn drop(&mut self) {
        let _ = self.ring.submit();
        let _ = self
            .ring
            .submitter()
            .register_sync_cancel(Some(Timespec::new().sec(1)), CancelBuilder::any());
        let mut done = Vec::new();
        for _ in 0..100 {
            if !self.in_flight() {
                break;
            }
            let _ = self.wait(Duration::from_millis(10), None);
            self.completions(&mut done);
            for c in done.drain(..) {
                if let Completion::Recv {
                    data: Ok(Some(buf)), ..
                } = c
                {
                    self.recycle(buf);
                }
            }
        }
        if self.in_flight() {
            let ops = std::mem::take(&mut self.ops);
            std::mem::forget(ops);
            // Replace the buffer ring by an empty one and leak the real one.
            if let Ok(empty) = BufRing::new(1, 1) {
                std::mem::forget(std::mem::replace(&mut self.bufs, empty));
            }
        }
    }
}
