//! The HTTP/1.1 session, fed whole and split at every byte: what it answers and refuses.

use crate::proto::http::*;
use crate::proto::Fed;

fn run(chunks: &[&[u8]]) -> (String, Fed) {
    let mut s = HttpSession::default();
    let mut out = Vec::new();
    let mut total = Fed::default();
    for c in chunks {
        let f = s.feed(c, &mut out, &mut |_, _| crate::proto::Answer::Serve);
        total.requests += f.requests;
        total.close |= f.close;
    }
    (String::from_utf8(out).unwrap(), total)
}

#[test]
fn http10_closes_by_default_and_keeps_alive_on_request() {
    let (out, fed) = run(&[b"GET / HTTP/1.0\r\n\r\n"]);
    assert!(
        out.starts_with("HTTP/1.1 200 OK") && out.contains("Connection: close") && out.ends_with("<html>hello</html>")
    );
    assert!(fed.close);
    let (out, fed) = run(&[b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"]);
    assert!(out.contains("Connection: keep-alive") && !fed.close);
}

#[test]
fn http11_keeps_alive_unless_close() {
    let (_, fed) = run(&[b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"]);
    assert!(!fed.close);
    let (out, fed) = run(&[b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"]);
    assert!(
        fed.close && fed.requests == 1,
        "nothing after a close is answered: {out}"
    );
}

#[test]
fn head_has_no_body_and_other_methods_get_405() {
    let (out, _) = run(&[b"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n"]);
    assert!(out.contains("Content-Length: 18") && !out.contains("<html>"));
    let (out, fed) =
        run(&[b"DELETE / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: x\r\n\r\n"]);
    assert!(out.starts_with("HTTP/1.1 405") && out.contains("Allow: GET, HEAD, POST, PUT"));
    assert_eq!(
        fed.requests, 2,
        "the DELETE body is skipped and the next request answered"
    );
    assert!(out.ends_with("<html>hello</html>"));
}

#[test]
fn post_and_put_echo_their_body_however_it_is_framed() {
    let (out, fed) =
        run(&[b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: x\r\n\r\n"]);
    assert!(
        out.starts_with("HTTP/1.1 200 OK") && out.contains("Content-Length: 5\r\n"),
        "{out}"
    );
    assert!(out.contains("\r\n\r\nhelloHTTP/1.1 200 OK"), "{out}");
    assert_eq!(fed.requests, 2);
    let chunked =
        b"PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n4;a=b\r\nabcd\r\n2\r\nef\r\n0\r\nT: 1\r\n\r\n";
    // The same answer for every split of the stream.
    let whole = run(&[chunked]);
    for cut in 1..chunked.len() {
        assert_eq!(run(&[&chunked[..cut], &chunked[cut..]]), whole, "cut at {cut}");
    }
    assert!(
        whole.0.contains("Content-Length: 6\r\n") && whole.0.ends_with("\r\n\r\nabcdef"),
        "{}",
        whole.0
    );
    assert_eq!(
        whole.1,
        Fed {
            requests: 1,
            ..Fed::default()
        }
    );
    let (out, _) = run(&[b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n"]);
    assert_eq!(
        out, "HTTP/1.1 100 Continue\r\n\r\n",
        "100 Continue before the body arrives"
    );
}

#[test]
fn framing_errors_get_their_status_and_close() {
    for (req, want) in [
        (&b"GET / HTTP/1.1\r\n\r\n"[..], "HTTP/1.1 400"),
        (b"GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", "HTTP/1.1 400"),
        (
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
            "HTTP/1.1 400",
        ),
        (b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.1 400"),
        (
            b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "HTTP/1.1 501",
        ),
        (
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\n",
            "HTTP/1.1 400",
        ),
        (
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n",
            "HTTP/1.1 413",
        ),
        (
            b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "HTTP/1.1 400",
        ),
        (b"POST / HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n", "HTTP/1.1 417"),
    ] {
        let (out, fed) = run(&[req]);
        assert!(
            out.starts_with(want) && fed.close,
            "{}: {out}",
            String::from_utf8_lossy(req)
        );
    }
    // HTTP/1.0 needs no Host.
    assert!(run(&[b"GET / HTTP/1.0\r\n\r\n"]).0.starts_with("HTTP/1.1 200"));
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
    let req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\nHEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n";
    let (out, fed) = run(&[req]);
    assert_eq!(fed.requests, 3);
    assert_eq!(out.matches("200 OK").count(), 3);
    assert_eq!(out.matches("<html>hello</html>").count(), 2);
}
