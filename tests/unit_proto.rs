//! Unit tests of the protocol sessions.

mod proto_http {
    use muxlab::proto::http::*;
    use muxlab::proto::Fed;

    fn run(chunks: &[&[u8]]) -> (String, Fed) {
        let mut s = HttpSession::default();
        let mut out = Vec::new();
        let mut total = Fed::default();
        for c in chunks {
            let f = s.feed(c, &mut out);
            total.requests += f.requests;
            total.close |= f.close;
        }
        (String::from_utf8(out).unwrap(), total)
    }

    #[test]
    fn http10_closes_by_default_and_keeps_alive_on_request() {
        let (out, fed) = run(&[b"GET / HTTP/1.0\r\n\r\n"]);
        assert!(
            out.starts_with("HTTP/1.1 200 OK")
                && out.contains("Connection: close")
                && out.ends_with("<html>hello</html>")
        );
        assert!(fed.close);
        let (out, fed) = run(&[b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"]);
        assert!(out.contains("Connection: keep-alive") && !fed.close);
    }

    #[test]
    fn http11_keeps_alive_unless_close() {
        let (_, fed) = run(&[b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"]);
        assert!(!fed.close);
        let (out, fed) = run(&[b"GET / HTTP/1.1\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\n\r\n"]);
        assert!(
            fed.close && fed.requests == 1,
            "nothing after a close is answered: {out}"
        );
    }

    #[test]
    fn head_has_no_body_and_other_methods_get_405() {
        let (out, _) = run(&[b"HEAD / HTTP/1.1\r\n\r\n"]);
        assert!(out.contains("Content-Length: 18") && !out.contains("<html>"));
        let (out, fed) = run(&[b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\n\r\n"]);
        assert!(out.starts_with("HTTP/1.1 405") && out.contains("Allow: GET, HEAD"));
        assert_eq!(
            fed.requests, 2,
            "the POST body is skipped and the next request answered"
        );
        assert!(out.ends_with("<html>hello</html>"));
    }

    #[test]
    fn malformed_is_400_and_oversized_is_431() {
        let (out, fed) = run(&[b"GARBAGE\x01\r\n\r\n"]);
        assert!(out.starts_with("HTTP/1.1 400") && fed.close);
        let (out, fed) = run(&[b"GET / HTTP/1.1\r\nContent-Length: nope\r\n\r\n"]);
        assert!(out.starts_with("HTTP/1.1 400") && fed.close);
        let big = format!("GET / HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(9000));
        let (out, fed) = run(&[big.as_bytes()]);
        assert!(out.starts_with("HTTP/1.1 431") && fed.close);
        // Incomplete but already too long: 431 without waiting for the end.
        let partial = format!("GET / HTTP/1.1\r\nX-Big: {}", "a".repeat(9000));
        let (out, fed) = run(&[partial.as_bytes()]);
        assert!(out.starts_with("HTTP/1.1 431") && fed.close);
        let many: String = (0..100).map(|i| format!("X-{i}: v\r\n")).collect();
        let (out, _) = run(&[format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes()]);
        assert!(out.starts_with("HTTP/1.1 431"));
    }

    #[test]
    fn pipelined_requests_are_answered_in_order() {
        let req = b"GET / HTTP/1.1\r\n\r\nHEAD / HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n\r\n";
        let (out, fed) = run(&[req]);
        assert_eq!(fed.requests, 3);
        assert_eq!(out.matches("200 OK").count(), 3);
        assert_eq!(out.matches("<html>hello</html>").count(), 2);
    }
}
