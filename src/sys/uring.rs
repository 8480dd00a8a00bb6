//! io_uring: one ring, a provided-buffer ring for multishot receives, and sends whose buffers
//! the ring keeps alive until their completion. A safe API over the `io-uring` crate:
//!
//! - [`Ring::accept_multi`]: one submission, a completion per accepted connection (5.19+).
//! - [`Ring::recv_multi`]: one submission per connection, a completion per arrival, the data in
//!   a buffer the kernel picked from the provided-buffer ring (6.0+); give it back with
//!   [`Ring::recycle`].
//! - [`Ring::send`]: the ring owns the bytes until the send completes, then returns them.
//! - [`Ring::wait`]: submit everything queued and wait for a completion or a timeout (one
//!   io_uring_enter, counted as one syscall).

use std::collections::HashMap;
use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

use io_uring::types::{BufRingEntry, SubmitArgs, Timespec};
use io_uring::{cqueue, opcode, squeue, types, IoUring, Probe};

/// Buffer group id of the provided-buffer ring.
const BGID: u16 = 0;

/// The provided-buffer ring: `entries` descriptors in a page-aligned mapping shared with the
/// kernel, pointing into one allocation of `entries * size` bytes.
struct BufRing {
    ring: *mut BufRingEntry,
    ring_len: usize,
    entries: u16,
    size: usize,
    data: Box<[u8]>,
    tail: u16,
}

impl BufRing {
    fn new(entries: u16, size: usize) -> io::Result<BufRing> {
        let ring_len = entries as usize * std::mem::size_of::<BufRingEntry>();
        // SAFETY: an anonymous private mapping with no address hint; checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                ring_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        super::count();
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut br = BufRing {
            ring: p.cast(),
            ring_len,
            entries,
            size,
            data: vec![0u8; entries as usize * size].into_boxed_slice(),
            tail: 0,
        };
        for bid in 0..entries {
            br.push(bid);
        }
        br.publish();
        Ok(br)
    }

    /// Queues buffer `bid` at the tail (visible to the kernel after `publish`).
    fn push(&mut self, bid: u16) {
        let slot = (self.tail & (self.entries - 1)) as usize;
        // SAFETY: slot < entries, inside the mapping; `data` outlives the ring registration
        // (both are dropped with the Ring, after the io_uring instance).
        let e = unsafe { &mut *self.ring.add(slot) };
        e.set_addr(self.data[bid as usize * self.size..].as_ptr() as u64);
        e.set_len(self.size as u32);
        e.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes queued buffers visible to the kernel (a release store of the tail).
    fn publish(&self) {
        // SAFETY: ring points at the first entry of a valid, initialised buffer ring; the tail
        // field is a u16 the kernel reads with acquire semantics.
        unsafe {
            let tail = BufRingEntry::tail(self.ring) as *const std::sync::atomic::AtomicU16;
            (*tail).store(self.tail, std::sync::atomic::Ordering::Release);
        }
    }

    fn buffer(&self, bid: u16, len: usize) -> &[u8] {
        let start = bid as usize * self.size;
        &self.data[start..start + len.min(self.size)]
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // SAFETY: the mapping was made in new() with this length and is not used after drop.
        unsafe { libc::munmap(self.ring.cast(), self.ring_len) };
    }
}

/// One completion.
#[derive(Debug, Clone, Copy)]
pub struct Completion {
    pub user_data: u64,
    /// The result: a new fd (accept), bytes (recv, send), or `-errno`.
    pub result: i32,
    /// A multishot request stays armed.
    pub more: bool,
    /// The provided buffer holding received data.
    pub buffer: Option<u16>,
}

/// An io_uring instance with its buffer ring and in-flight send buffers.
pub struct Ring {
    ring: IoUring,
    bufs: BufRing,
    /// Bytes of in-flight sends, by user_data, kept alive until their completion.
    sending: HashMap<u64, Vec<u8>>,
}

impl Ring {
    /// A ring of `entries` submissions with `buffers` provided buffers of `size` bytes (a power
    /// of two count). Fails with a clear message where the kernel lacks what the model needs.
    pub fn new(entries: u32, buffers: u16, size: usize) -> io::Result<Ring> {
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
            (opcode::RecvMulti::CODE, "recv"),
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
        // Ring (and so the io_uring instance, dropped first) is dropped.
        unsafe {
            ring.submitter()
                .register_buf_ring_with_flags(bufs.ring as u64, bufs.entries, BGID, 0)
        }
        .map_err(|e| lacks("provided-buffer rings need Linux 5.19+", e))?;
        super::count();
        Ok(Ring {
            ring,
            bufs,
            sending: HashMap::new(),
        })
    }

    fn push(&mut self, sqe: squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: every entry built here references only memory the Ring keeps alive until
            // the operation completes (send buffers in `sending`, recv buffers in `bufs`).
            if unsafe { self.ring.submission().push(&sqe) }.is_ok() {
                return Ok(());
            }
            // The submission queue is full: hand it to the kernel and retry.
            self.ring.submit()?;
            super::count();
        }
    }

    /// Arms a multishot accept on `listener`.
    pub fn accept_multi(&mut self, listener: RawFd, user_data: u64) -> io::Result<()> {
        let sqe = opcode::AcceptMulti::new(types::Fd(listener))
            .flags(libc::SOCK_CLOEXEC)
            .build()
            .user_data(user_data);
        self.push(sqe)
    }

    /// Arms a multishot receive on `fd` into the provided buffers.
    pub fn recv_multi(&mut self, fd: RawFd, user_data: u64) -> io::Result<()> {
        self.push(opcode::RecvMulti::new(types::Fd(fd), BGID).build().user_data(user_data))
    }

    /// Sends `data` on `fd`; the ring keeps it until the completion, whose `take_sent` returns it.
    pub fn send(&mut self, fd: RawFd, data: Vec<u8>, user_data: u64) -> io::Result<()> {
        let sqe = opcode::Send::new(types::Fd(fd), data.as_ptr(), data.len() as u32)
            .flags(libc::MSG_NOSIGNAL)
            .build()
            .user_data(user_data);
        // The Vec's heap block does not move when the Vec is moved into the map.
        self.sending.insert(user_data, data);
        self.push(sqe)
    }

    /// The bytes of a completed send.
    pub fn take_sent(&mut self, user_data: u64) -> Option<Vec<u8>> {
        self.sending.remove(&user_data)
    }

    /// Submits what is queued and waits for at least one completion or `timeout`.
    pub fn wait(&mut self, timeout: Duration) -> io::Result<()> {
        let ts = Timespec::new().sec(timeout.as_secs()).nsec(timeout.subsec_nanos());
        let args = SubmitArgs::new().timespec(&ts);
        super::count();
        match self.ring.submitter().submit_with_args(1, &args) {
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

    /// Takes every completion available.
    pub fn completions(&mut self, out: &mut Vec<Completion>) {
        out.clear();
        for cqe in self.ring.completion() {
            out.push(Completion {
                user_data: cqe.user_data(),
                result: cqe.result(),
                more: cqueue::more(cqe.flags()),
                buffer: cqueue::buffer_select(cqe.flags()),
            });
        }
    }

    /// The bytes a receive completion delivered.
    pub fn buffer(&self, bid: u16, len: usize) -> &[u8] {
        self.bufs.buffer(bid, len)
    }

    /// Gives a provided buffer back to the kernel.
    pub fn recycle(&mut self, bid: u16) {
        self.bufs.push(bid);
        self.bufs.publish();
    }
}

/// Takes ownership of the descriptor an accept completion returned (`result >= 0`). Only pass
/// the result of an accept completion: the kernel made that descriptor for this process and
/// nothing else owns it.
pub fn adopt_accepted(result: i32) -> std::os::fd::OwnedFd {
    assert!(result >= 0, "not a descriptor: {result}");
    // SAFETY: a non-negative accept result is a new descriptor owned by nobody else.
    unsafe { std::os::fd::FromRawFd::from_raw_fd(result) }
}
