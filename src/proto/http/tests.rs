//! The HTTP/1.1 session, fed whole and split at every byte: what it answers and refuses.

use crate::proto::http::*;
use crate::proto::{Fed, Protocol};

fn run(chunks: &[&[u8]]) -> (String, Fed) {
    let mut s = HttpSession::default();
    let mut out = Vec::new();
    let mut total = Fed::default();
    for c in chunks {
        let f = s.feed_each(c, &mut out, &mut crate::proto::ServeAll);
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

const POST: &str = "POST / HTTP/1.1\r\nHost: x\r\n";
const NEXT: &str = "GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n";

/// A POST with `Transfer-Encoding: te` and `body` after its head.
fn te(te: &str, body: &str) -> String {
    format!("{POST}Transfer-Encoding: {te}\r\n\r\n{body}")
}

/// The shapes of request smuggling in a head (framing headers, fields, lines), each with the
/// status it must get.
fn head_shapes() -> Vec<(&'static str, String, &'static str)> {
    vec![
        (
            "CL.TE",
            format!("{POST}Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nG"),
            "400",
        ),
        // The same rule as CL.TE (both framings: 400), in the other order.
        (
            "TE.CL",
            format!("{POST}Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n5c\r\n"),
            "400",
        ),
        (
            "TE.TE: a second coding header",
            format!("{POST}Transfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n\r\n"),
            "501",
        ),
        (
            "TE.TE: chunked twice",
            format!("{POST}Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "400",
        ),
        ("TE.TE: xchunked", te("xchunked", ""), "501"),
        ("TE.TE: chunked, identity", te("chunked, identity", ""), "501"),
        (
            "TE.TE: space before the colon",
            format!("{POST}Transfer-Encoding : chunked\r\n\r\n0\r\n\r\n"),
            "400",
        ),
        (
            "TE.TE: obs-fold",
            format!("{POST}Transfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n"),
            "400",
        ),
        (
            "obs-fold in any field",
            format!("{POST}X-A: a\r\n b\r\nContent-Length: 0\r\n\r\n"),
            "400",
        ),
        (
            "a bare CR in a field",
            format!("{POST}X-A: a\rb\r\nContent-Length: 0\r\n\r\n"),
            "400",
        ),
        (
            "a bare CR in the request line",
            "GET /\r HTTP/1.1\r\nHost: x\r\n\r\n".to_string(),
            "400",
        ),
        (
            "two different lengths",
            format!("{POST}Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"),
            "400",
        ),
        (
            "a length list",
            format!("{POST}Content-Length: 5, 5\r\n\r\nhello"),
            "400",
        ),
    ]
}

/// The shapes of request smuggling in a chunked body (size lines, extensions, trailers).
fn chunk_shapes() -> Vec<(&'static str, String, &'static str)> {
    vec![
        (
            "size line ended by a bare LF",
            te("chunked", &format!("5\n\r\nhello\r\n0\r\n\r\n{NEXT}")),
            "400",
        ),
        (
            "last chunk ended by a bare LF",
            te("chunked", &format!("0\n\r\n{NEXT}")),
            "400",
        ),
        (
            "a bare CR before the size line's CRLF",
            te("chunked", "5\r\r\nhello\r\n0\r\n\r\n"),
            "400",
        ),
        ("a bare CR ending the size line", te("chunked", "5\r0\r\n\r\n"), "400"),
        (
            "chunk data ended by a bare LF",
            te("chunked", "5\r\nhello\n0\r\n\r\n"),
            "400",
        ),
        ("space after the size", te("chunked", "5 \r\nhello\r\n0\r\n\r\n"), "400"),
        (
            "a sign before the size",
            te("chunked", "+5\r\nhello\r\n0\r\n\r\n"),
            "400",
        ),
        ("0x before the size", te("chunked", "0x5\r\nhello\r\n0\r\n\r\n"), "400"),
        (
            "an extension without a name",
            te("chunked", "5;\r\nhello\r\n0\r\n\r\n"),
            "400",
        ),
        (
            "an extension with an empty value",
            te("chunked", "5;a=\r\nhello\r\n0\r\n\r\n"),
            "400",
        ),
        (
            "an unterminated quoted value",
            te("chunked", "5;a=\"b\r\nhello\r\n0\r\n\r\n"),
            "400",
        ),
        (
            "a control character in an extension",
            te("chunked", "5;a=b\x01\r\nhello\r\n0\r\n\r\n"),
            "400",
        ),
        (
            "trailing space after an extension",
            te("chunked", "5;a=b \r\nhello\r\n0\r\n\r\n"),
            "400",
        ),
        (
            "an extension over 4 KiB",
            te("chunked", &format!("5;a={}\r\nhello\r\n0\r\n\r\n", "b".repeat(4200))),
            "400",
        ),
        (
            "a trailer with space before its colon",
            te("chunked", "5\r\nhello\r\n0\r\nT : 1\r\n\r\n"),
            "400",
        ),
        (
            "a folded trailer",
            te("chunked", "5\r\nhello\r\n0\r\nT: 1\r\n 2\r\n\r\n"),
            "400",
        ),
        (
            "a bare CR in a trailer",
            te("chunked", "5\r\nhello\r\n0\r\nT: 1\r2\r\n\r\n"),
            "400",
        ),
    ]
}

/// Request smuggling lives where two parsers read one byte stream differently: a front end that
/// is lenient where we are strict is harmless (it sends what we refuse), one that is strict where
/// we are lenient is not. So framing is as strict as RFC 9112 says, each case with its status;
/// every refusal closes the connection, and nothing after it (the smuggled request some rows
/// carry) is answered.
#[test]
fn smuggling_shapes_are_refused_with_their_status_and_close() {
    for (what, req, status) in head_shapes().iter().chain(&chunk_shapes()) {
        let (out, fed) = run(&[req.as_bytes()]);
        assert!(
            out.starts_with(&format!("HTTP/1.1 {status} ")) && fed.close && fed.requests == 1,
            "{what}: want {status} and close, got {out:?} ({fed:?})"
        );
        assert!(!out.contains("200 OK"), "{what}: something was answered: {out:?}");
    }
}

/// What the grammar allows is served, and the request after it too.
#[test]
fn chunk_extensions_and_codings_the_grammar_allows_are_served() {
    let good: Vec<(&str, String)> = vec![
        (
            "extensions with whitespace around ; and =",
            te("chunked", "5 ; a = b ;c;d=\"q \\\" x\"\r\nhello\r\n0;e\r\n\r\n"),
        ),
        ("CHUNKED in capitals", te("CHUNKED", "5\r\nhello\r\n0\r\n\r\n")),
        ("a tab before the coding", te("\tchunked", "5\r\nhello\r\n0\r\n\r\n")),
        ("leading zeros", te("chunked", "0005\r\nhello\r\n000\r\n\r\n")),
        ("trailers", te("chunked", "5\r\nhello\r\n0\r\nT: 1\r\nU:2 \t3\r\n\r\n")),
    ];
    for (what, req) in &good {
        let (out, fed) = run(&[format!("{req}{NEXT}").as_bytes()]);
        assert!(
            out.starts_with("HTTP/1.1 200 ") && out.contains("\r\n\r\nhello") && fed.requests == 2 && !fed.close,
            "{what}: {out:?}"
        );
    }
}

/// A bare LF ends a head line (RFC 9112 §2.2 lets a recipient accept it), the same in the
/// request line, the fields and the trailers; it never ends a chunk-size line or chunk data.
#[test]
fn a_bare_lf_ends_head_lines_alike_and_never_a_chunk_line() {
    let (out, fed) = run(&[b"GET / HTTP/1.1\nHost: x\n\nGET / HTTP/1.1\r\nHost: x\n\r\n"]);
    assert_eq!((out.matches("200 OK").count(), fed.close), (2, false), "{out}");
    let (out, fed) =
        run(&[b"POST / HTTP/1.1\nHost: x\nTransfer-Encoding: chunked\n\n5\r\nhello\r\n0\r\nT: 1\nU: 2\r\n\n"]);
    assert!(
        out.starts_with("HTTP/1.1 200") && out.ends_with("hello") && !fed.close,
        "{out}"
    );
    let (out, _) = run(&[b"POST / HTTP/1.1\nHost: x\nTransfer-Encoding: chunked\n\n5\nhello\r\n0\r\n\r\n"]);
    assert!(out.starts_with("HTTP/1.1 400"), "{out}");
}
