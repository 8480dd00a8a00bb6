//! Unit tests of the load generator's parts: targets, readers, tallies, splitting.

mod load_workload {
    use muxlab::load::workload::*;

    #[test]
    fn a_host_header_of_the_users_replaces_the_default_and_is_sent_once() {
        let t = Target::parse("http://127.0.0.1:8080/x").unwrap();
        let req = |headers: &[&str]| {
            let h: Vec<String> = headers.iter().map(|s| s.to_string()).collect();
            String::from_utf8(http_request("GET", &t, &h, false, &Payload::None, false)).unwrap()
        };
        let plain = req(&["Accept: */*"]);
        assert_eq!(plain.matches("Host: ").count(), 1, "{plain}");
        assert!(plain.contains("Host: 127.0.0.1:8080\r\n"), "{plain}");
        for own in ["Host: example.test", "HOST:example.test", "host:example.test"] {
            let r = req(&[own]);
            assert_eq!(r.to_ascii_lowercase().matches("host").count(), 1, "{r}");
            assert!(r.contains(own), "{r}");
        }
    }

    #[test]
    fn targets_parse_and_bad_ones_explain() {
        let t = Target::parse("http://127.0.0.1:8080/x?y").unwrap();
        assert_eq!((t.kind, t.addr.port(), t.path.as_str()), (Kind::Http, 8080, "/x?y"));
        assert_eq!(Target::parse("http://127.0.0.1").unwrap().addr.port(), 80);
        assert_eq!(Target::parse("echo://127.0.0.1:9000").unwrap().kind, Kind::Echo);
        assert!(Target::parse("echo://127.0.0.1")
            .unwrap_err()
            .to_string()
            .contains("needs a port"));
        assert!(Target::parse("127.0.0.1:80")
            .unwrap_err()
            .to_string()
            .contains("not a target URL"));
        assert!(Target::parse("ftp://x:1")
            .unwrap_err()
            .to_string()
            .contains("unknown scheme"));
        assert!(Target::parse("http://no-such-host.invalid:80/")
            .unwrap_err()
            .to_string()
            .contains("cannot resolve"));
    }

    #[test]
    fn http_reader_frames_split_and_pipelined_responses() {
        let one = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let stream = [
            &one[..],
            &one[..],
            b"HTTP/1.1 404 No\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        ]
        .concat();
        for cut in 0..stream.len() {
            let mut r = HttpReader::new(false);
            let mut got = Vec::new();
            for part in [&stream[..cut], &stream[cut..]] {
                r.push(part);
                while let Read::Done { status, close } = r.next_response() {
                    got.push((status, close));
                }
            }
            assert_eq!(got, vec![(200, false), (200, false), (404, true)], "cut at {cut}");
        }
        let mut r = HttpReader::new(false);
        r.push(b"SSH-2.0-OpenSSH\r\n\r\n");
        assert_eq!(r.next_response(), Read::Bad);
    }

    #[test]
    fn echo_reader_catches_one_flipped_byte_at_any_boundary() {
        let size = 128;
        let mut msgs = vec![0u8; size * 3];
        for s in 0..3 {
            pattern(7, s as u64, 0, &mut msgs[s * size..(s + 1) * size]);
        }
        let mut r = EchoReader::new(size);
        assert_eq!(r.push(7, &msgs[..100]), Ok(0));
        assert_eq!(r.push(7, &msgs[100..300]), Ok(2));
        assert_eq!(r.push(7, &msgs[300..]), Ok(1));
        let mut bad = msgs.clone();
        bad[200] ^= 1;
        let mut r = EchoReader::new(size);
        assert_eq!(r.push(7, &bad), Err(Mismatch));
        // Another connection's bytes do not pass either.
        let mut r = EchoReader::new(size);
        assert_eq!(r.push(8, &msgs[..size]), Err(Mismatch));
    }
}

mod load_tally {
    use muxlab::load::tally::*;

    #[test]
    fn jain_index() {
        assert!((jain(&[5, 5, 5, 5]).unwrap() - 1.0).abs() < 1e-12);
        assert!((jain(&[10, 0, 0, 0]).unwrap() - 0.25).abs() < 1e-12);
        // Nothing served: not measured, never "perfectly fair".
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0, 0, 0]), None);
    }

    #[test]
    fn tallies_round_trip_and_merge_losslessly() {
        let mut a = Tally::default();
        for v in [1_000u64, 2_000, 3_000, 1_000_000] {
            a.latency.record_ns(v);
        }
        a.requests = 4;
        a.error(ErrorClass::Reset);
        a.per_conn = vec![3, 1];
        a.per_second = vec![4];
        let b = Tally::from_wire(&a.to_wire()).expect("own wire form reads back");
        assert_eq!(b.latency.0, a.latency.0);
        assert_eq!((b.requests, b.errors, b.per_conn.clone()), (4, a.errors, vec![3, 1]));
        let mut m = a.clone();
        m.merge(&b);
        assert_eq!(m.latency.count(), 8);
        assert_eq!(m.per_conn, vec![3, 1, 3, 1]);
        assert_eq!(m.per_second, vec![8]);
        assert_eq!(m.error_total(), 2);
    }
}

mod load {
    use muxlab::load::*;

    #[test]
    fn splits_cover_everything_once() {
        let parts: Vec<_> = (0..3).map(|i| split(10, 3, i)).collect();
        assert_eq!(parts, vec![(4, 0), (3, 4), (3, 7)]);
        let q: u64 = (0..3).map(|i| split_weighted(1001, 10, parts[i].1, parts[i].0)).sum();
        assert_eq!(q, 1001);
    }
}

mod response_framing {
    use muxlab::load::workload::{HttpReader, Read};

    /// Feeds `wire` to a reader split at `cut`, collecting what it completes.
    fn read_all(wire: &[u8], cut: usize, head_only: bool) -> Vec<Read> {
        let mut r = HttpReader::new(head_only);
        let mut out = Vec::new();
        for part in [&wire[..cut], &wire[cut..]] {
            r.push(part);
            loop {
                match r.next_response() {
                    Read::More => break,
                    x => {
                        let stop = !matches!(x, Read::Done { .. });
                        out.push(x);
                        if stop {
                            return out;
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn chunked_bodies_with_trailers_interim_responses_and_head_frame_at_every_split() {
        let wire: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n\
            HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nDigest: abc\r\n\r\n\
            HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n\
            HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno!\
            HTTP/1.1 204 No Content\r\n\r\n";
        for cut in 0..=wire.len() {
            let got = read_all(wire, cut, false);
            assert_eq!(
                got,
                vec![
                    Read::Done {
                        status: 200,
                        close: false
                    },
                    Read::Done {
                        status: 404,
                        close: false
                    },
                    Read::Done {
                        status: 204,
                        close: false
                    }
                ],
                "cut at {cut}"
            );
        }
        // HEAD: a Content-Length but no body.
        let head: &[u8] =
            b"HTTP/1.1 200 OK\r\nContent-Length: 9999\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
        assert_eq!(read_all(head, 3, true).len(), 2);
        // Broken chunk framing is a bad response.
        assert_eq!(
            read_all(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                10,
                false
            ),
            vec![Read::Bad]
        );
    }

    #[test]
    fn a_body_without_length_runs_to_the_close() {
        let mut r = HttpReader::new(false);
        r.push(b"HTTP/1.0 200 OK\r\nServer: old\r\n\r\nsome body, ");
        assert_eq!(r.next_response(), Read::More);
        r.push(b"more body");
        assert_eq!(r.next_response(), Read::More);
        assert_eq!(
            r.at_close(),
            Some(Read::Done {
                status: 200,
                close: true
            })
        );
        // A response cut short by the close is not complete.
        let mut r = HttpReader::new(false);
        r.push(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
        assert_eq!(r.next_response(), Read::More);
        assert_eq!(r.at_close(), None);
    }
}

mod client_bound {
    use std::time::Duration;

    use muxlab::load::merge::{outcomes, Machines};
    use muxlab::load::summary::utilization;
    use muxlab::load::{tally::Tally, Outcome};

    fn outcome(cpu_ms: u64, slots: usize) -> Outcome {
        Outcome {
            tally: Tally::default(),
            connections: 1,
            offered_rps: None,
            window_start_ms: 0,
            elapsed: Duration::from_secs(1),
            connecting: Duration::ZERO,
            client_cpu: Duration::from_millis(cpu_ms),
            cpu_slots: slots,
            threads: slots,
            shards: 1,
            interrupted: false,
        }
    }

    /// The flag divides the window's client CPU by the CPUs the client could use: a client
    /// busy 95 % of one CPU is bound; the same CPU time over two CPUs is not.
    #[test]
    fn utilization_counts_the_cpus_the_client_may_use_both_ways() {
        assert!(utilization(&outcome(950, 1)) > 0.9);
        assert!(utilization(&outcome(950, 2)) < 0.5);
        assert!(utilization(&outcome(100, 1)) < 0.9);
    }

    /// Parts of a split run on one machine share the CPUs this process may use (its affinity,
    /// which they inherit): two parts pinned to one CPU, each busy half the window, are one
    /// saturated CPU, not half of two.
    #[test]
    fn a_split_run_on_one_pinned_cpu_is_flagged() {
        let me = muxlab::sys::affinity::get().unwrap();
        muxlab::sys::affinity::set(&me[..1]).unwrap();
        let merged = outcomes(&[outcome(480, 1), outcome(480, 1)], Machines::Same).unwrap();
        muxlab::sys::affinity::set(&me).unwrap();
        assert_eq!(merged.cpu_slots, 1);
        assert!(utilization(&merged) > 0.9, "{}", utilization(&merged));
    }
}
