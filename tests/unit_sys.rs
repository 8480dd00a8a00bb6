//! Unit tests of `sys` and the pollers: the contracts of the safe wrappers.

mod common;

mod sys_select {
    use std::os::fd::RawFd;
    use std::time::Duration;

    use muxlab::sys::select::*;

    #[test]
    fn a_set_knows_its_end_and_refuses_past_fd_setsize() {
        let mut s = FdSet::new();
        assert_eq!(s.end(), 0);
        assert!(s.insert(3));
        assert!(s.insert(FD_SETSIZE as RawFd - 1));
        assert_eq!(s.end(), FD_SETSIZE);
        assert!(!s.insert(FD_SETSIZE as RawFd));
        assert!(!s.insert(-1));
        assert_eq!(s.end(), FD_SETSIZE, "a refused descriptor does not move the end");
        assert!(s.contains(3) && !s.contains(4) && !s.contains(FD_SETSIZE as RawFd));
        // select with empty sets computes nfds = 0 and just waits.
        let (mut r, mut w) = (FdSet::new(), FdSet::new());
        assert_eq!(select(&mut r, &mut w, Duration::from_millis(1)).unwrap(), 0);
    }
}

mod sys_process {
    use muxlab::sys::process::*;

    #[test]
    fn fork_is_refused_while_other_threads_run() {
        // The test harness runs this on a thread of its own: the process has several.
        let t = std::thread::spawn(|| std::thread::sleep(std::time::Duration::from_millis(500)));
        assert!(muxlab::sys::procfs::threads(pid()).unwrap() > 1);
        let e = fork().err().expect("fork refused");
        assert!(e.to_string().contains("fork refused"), "{e}");
        t.join().unwrap();
    }
}

mod sys_cpu_time {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use crate::common::skip;
    use muxlab::sys::cgroup::{self, CpuGroup};
    use muxlab::sys::process::{pid, process_cpu_time, thread_cpu_time};

    /// A shell that waits for a line on stdin, then spins `loops` times and exits.
    fn spinner(loops: u32) -> std::process::Child {
        Command::new("sh")
            .args([
                "-c",
                &format!("read go; i=0; while [ $i -lt {loops} ]; do i=$((i+1)); done"),
            ])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap()
    }

    #[test]
    fn a_process_clock_counts_every_thread_with_sub_tick_resolution_and_an_unknown_pid_is_an_error() {
        let before = process_cpu_time(pid()).unwrap();
        // Another thread's CPU shows in the process's clock, exited or not.
        let spent = std::thread::spawn(|| {
            let t0 = thread_cpu_time();
            while thread_cpu_time() - t0 < Duration::from_millis(30) {}
            thread_cpu_time() - t0
        })
        .join()
        .unwrap();
        let after = process_cpu_time(pid()).unwrap();
        assert!(after - before >= spent, "{:?} < {spent:?}", after - before);
        // Two readings apart by far less than a clock tick (10 ms) differ.
        let a = process_cpu_time(pid()).unwrap();
        let t0 = thread_cpu_time();
        while thread_cpu_time() - t0 < Duration::from_micros(200) {}
        let b = process_cpu_time(pid()).unwrap();
        assert!(b > a && b - a < Duration::from_millis(10), "{a:?} {b:?}");
        assert!(process_cpu_time(i32::MAX - 1).is_err());
    }

    #[test]
    fn steal_and_total_come_from_proc_stat_and_grow() {
        let (s0, t0) = muxlab::sys::procfs::steal_and_total().unwrap();
        std::thread::sleep(Duration::from_millis(50));
        let (s1, t1) = muxlab::sys::procfs::steal_and_total().unwrap();
        assert!(t1 > t0 && s1 >= s0 && s1 - s0 <= t1 - t0, "{s0} {t0} {s1} {t1}");
    }

    #[test]
    fn a_cpu_group_counts_a_child_that_has_exited_and_is_removed_when_dropped() {
        let group = match CpuGroup::create() {
            Ok(g) => g,
            Err(e) => return skip(&format!("no cgroup v1 cpuacct group can be made here: {e}")),
        };
        let dir = group.path().to_path_buf();
        let mut child = spinner(300_000);
        group.add(child.id() as i32).unwrap();
        let start = Instant::now();
        let before = group.usage().unwrap();
        writeln!(child.stdin.take().unwrap(), "go").unwrap();
        assert!(child.wait().unwrap().success());
        let wall = start.elapsed();
        let used = group.usage().unwrap() - before;
        // The child spun on one CPU for (nearly) all of that time; it has exited and been
        // reaped, and the group still has its time.
        assert!(
            used >= Duration::from_millis(50) && used <= wall + Duration::from_millis(5),
            "{used:?} in {wall:?}"
        );
        drop(group);
        assert!(!dir.exists(), "{} is left", dir.display());
    }

    /// The kernel's current wake-up latency request, from /dev/cpu_dma_latency.
    fn dma_latency() -> i32 {
        let mut b = [0u8; 4];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/cpu_dma_latency").unwrap(), &mut b).unwrap();
        i32::from_ne_bytes(b)
    }

    #[test]
    fn polling_idle_is_held_while_the_value_lives_and_released_with_it() {
        let before = dma_latency();
        if before == 0 {
            return skip("another process holds /dev/cpu_dma_latency at 0: this test cannot see its own request");
        }
        let held = match muxlab::sys::cpuidle::PollingIdle::hold() {
            Ok(h) => h,
            Err(e) => return skip(&format!("idle CPUs cannot be made to poll here: {e}")),
        };
        assert_eq!(dma_latency(), 0, "idle CPUs are asked to poll");
        drop(held);
        assert_eq!(dma_latency(), before, "the request ends with the value");
    }

    #[test]
    fn groups_left_by_a_bench_that_died_are_removed_and_live_ones_are_not() {
        let live = match CpuGroup::create() {
            Ok(g) => g,
            Err(e) => return skip(&format!("no cgroup v1 cpuacct group can be made here: {e}")),
        };
        // A group named after a process that no longer runs.
        let mut gone = Command::new("true").spawn().unwrap();
        let dead = gone.id();
        gone.wait().unwrap();
        let stale = live.path().with_file_name(format!("muxlab.{dead}.0"));
        std::fs::create_dir(&stale).unwrap();
        assert!(cgroup::remove_stale() >= 1);
        assert!(!stale.exists());
        assert!(live.path().exists(), "a live bench's group was removed");
    }
}

mod sys_uring {
    use std::io::Read;
    use std::os::fd::{AsRawFd, OwnedFd};
    use std::os::unix::net::UnixStream;
    use std::rc::Rc;
    use std::time::Duration;

    use crate::common::skip;
    use muxlab::sys::uring::*;

    const LACKS: &str = "this kernel's io_uring lacks what the ring needs";

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
        let Ok(mut ring) = Ring::new(8, 4, 64) else {
            return skip(LACKS);
        };
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
    fn a_cancelled_multishot_receive_ends_with_ecanceled_and_delivers_nothing_more() {
        let Ok(mut ring) = Ring::new(8, 4, 64) else {
            return skip(LACKS);
        };
        let (a, b) = pair();
        let op = ring.recv_multi(&a, 9).unwrap();
        ring.cancel(op).unwrap();
        let done = reap(&mut ring, 1);
        assert!(
            matches!(
                done.as_slice(),
                [Completion::Recv { tag: 9, data: Err(e), more: false }] if e.raw_os_error() == Some(libc::ECANCELED)
            ),
            "{done:?}"
        );
        // Bytes sent now stay in the socket: nothing is armed to take them.
        std::io::Write::write_all(&mut &b, b"late").unwrap();
        let mut some = Vec::new();
        ring.wait(Duration::from_millis(50), None).unwrap();
        ring.completions(&mut some);
        assert!(some.is_empty(), "{some:?}");
        let mut got = [0u8; 4];
        assert_eq!(muxlab::sys::fd::read(&*a, &mut got).unwrap(), 4);
        assert_eq!(&got, b"late");
    }

    #[test]
    fn a_batch_wait_returns_the_whole_batch_or_what_is_there_after_the_extra_wait() {
        let Ok(mut ring) = Ring::new(8, 4, 64) else {
            return skip(LACKS);
        };
        if !ring.batches() {
            return skip("this kernel has no min-wait (Linux 6.12+): wait() waits for one");
        }
        let (a, _b) = pair();
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
        let Ok(mut ring) = Ring::new(8, 4, 64) else {
            return skip(LACKS);
        };
        let (a, b) = pair();
        ring.recv_multi(&a, 7).unwrap();
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
        drop(b);
        // End of stream ends the multishot receive.
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
        let Ok(mut ring) = Ring::new(8, 4, 64) else {
            return skip(LACKS);
        };
        let (a, mut first_peer) = pair();
        let number = a.as_raw_fd();
        ring.send(&a, b"for the first client".to_vec(), 1).unwrap();
        ring.recv_multi(&a, 1).unwrap();
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
            matches!(
                done.first(),
                Some(Completion::Recv {
                    data: Ok(None),
                    more: false,
                    ..
                })
            ),
            "{done:?}"
        );
        first_peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        assert_eq!(first_peer.read(&mut none).unwrap(), 0, "the descriptor stayed open");
    }
}

mod server_poller {
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::os::unix::net::UnixStream;

    use muxlab::server::config::Trigger;
    use std::time::Duration;

    use muxlab::server::poller::*;

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
        assert_eq!(p.fd_limit(), Some(muxlab::sys::select::FD_SETSIZE));
        assert!(!p.edge());
        assert!(Epoll::new(Trigger::Edge).unwrap().edge());
    }
}

mod server_deadline {
    use std::time::{Duration, Instant};

    use clap::Parser;
    use muxlab::proto::{Proto, Session};
    use muxlab::server::deadline::{Deadlines, Expired};

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        cfg: muxlab::server::ServeArgs,
    }

    fn cfg() -> muxlab::server::Config {
        let model = muxlab::models::find("epoll").unwrap();
        Flags::parse_from(["t", "--header-timeout", "1s", "--idle-timeout", "30s"])
            .cfg
            .validate(model.name, model.workers, model.flags)
            .unwrap()
    }

    /// A session holding the start of a head after one whole request.
    fn half_head() -> Session {
        let mut s = Session::new(Proto::Http);
        let mut out = Vec::new();
        let fed = s.feed(b"GET / HTTP/1.1\r\nHost: t\r\n\r\nGET / HT", &mut out);
        assert_eq!(fed.requests, 1);
        assert!(s.head_pending());
        s
    }

    #[test]
    fn the_head_timer_starts_at_each_head_and_stops_while_replies_wait() {
        let (cfg, t0) = (cfg(), Instant::now());
        let s = half_head();
        let mut d = Deadlines::new(t0);
        // A dribbled head: timed from its first byte, however often bytes come.
        d.input(&s, false, t0);
        d.input(&s, false, t0 + Duration::from_millis(900));
        assert_eq!(
            d.expired(&cfg, false, t0 + Duration::from_millis(1100)),
            Some(Expired::Header)
        );
        // A request answered in this input: the pending head is the next one's, timed from now.
        d.input(&s, true, t0 + Duration::from_millis(1000));
        assert_eq!(d.expired(&cfg, false, t0 + Duration::from_millis(1900)), None);
        assert_eq!(
            d.expired(&cfg, false, t0 + Duration::from_millis(2000)),
            Some(Expired::Header)
        );
        // Replies not taken (the server is not reading): no 408, the rest may wait in the socket.
        assert_eq!(d.expired(&cfg, true, t0 + Duration::from_secs(5)), None);
        // Output moved: the time the server was not reading is not the head's.
        d.output(t0 + Duration::from_secs(5));
        assert_eq!(d.expired(&cfg, false, t0 + Duration::from_millis(5900)), None);
        assert_eq!(
            d.expired(&cfg, false, t0 + Duration::from_secs(6)),
            Some(Expired::Header)
        );
    }
}
