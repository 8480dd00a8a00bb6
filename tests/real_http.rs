//! The load generator against a real nginx from Debian's packages: gzip responses in chunked
//! transfer coding, HTTPS with a certificate made for the test (a CA and a leaf, by rcgen), and
//! 404s counted by status class. Without nginx the tests print why and skip.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Output};

use common::BIN;
use serde_json::Value;

/// nginx with one worker: plain HTTP with gzip on, and HTTPS.
struct Nginx {
    nginx: common::nginx::Running,
    http: u16,
    https: u16,
    /// HTTPS with a self-signed certificate marked as a CA (what `openssl req -x509` makes).
    https_self: u16,
}

fn nginx() -> Option<Nginx> {
    use muxlab::bench::nginx::{free_port, launch_nginx, nginx_binary};
    let Some(bin) = nginx_binary() else {
        common::skip("nginx is not installed (apt-get install nginx-light; .ci/run does)");
        return None;
    };
    let dir = std::env::temp_dir().join(format!(
        "muxlab-real-http-{}-{}",
        std::process::id(),
        free_port().unwrap()
    ));
    std::fs::create_dir_all(dir.join("www")).unwrap();
    // Big enough for gzip, which then sends it chunked.
    std::fs::write(dir.join("www/index.html"), "hello, muxlab. ".repeat(400)).unwrap();
    let (_, leaf, key) = common::certs::certificates(&dir);
    let d = dir.display();
    let conf = |p: &[u16]| {
        format!(
            "worker_processes 1; daemon off; master_process on; pid {d}/nginx.pid; error_log {d}/error.log;\n\
             events {{ worker_connections 1024; }}\n\
             http {{ access_log off; gzip on; gzip_min_length 20; gzip_types text/plain;\n\
               server {{ listen 127.0.0.1:{}; root {d}/www; location /missing {{ return 404; }} }}\n\
               server {{ listen 127.0.0.1:{} ssl; ssl_certificate {}; ssl_certificate_key {};\n\
                        root {d}/www; location /missing {{ return 404; }} }}\n\
               server {{ listen 127.0.0.1:{} ssl; ssl_certificate {d}/self.pem; ssl_certificate_key {d}/self.key;\n\
                        root {d}/www; }} }}\n",
            p[0],
            p[1],
            leaf.display(),
            key.display(),
            p[2]
        )
    };
    let (child, ports) = launch_nginx(bin, None, &dir, "127.0.0.1", 3, &conf).unwrap_or_else(|e| panic!("{e}"));
    Some(Nginx {
        nginx: common::nginx::Running { child, dir },
        http: ports[0],
        https: ports[1],
        https_self: ports[2],
    })
}

fn load(args: &[&str]) -> (Output, Value) {
    let out = Command::new(BIN).arg("load").args(args).arg("--json").output().unwrap();
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (out, doc)
}

#[test]
fn gzip_responses_in_chunked_coding_are_read_without_an_error() {
    let Some(n) = nginx() else { return };
    // nginx really sends this one chunked.
    let mut s = TcpStream::connect(("127.0.0.1", n.http)).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let head = String::from_utf8_lossy(&raw[..raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap()]).to_lowercase();
    assert!(
        head.contains("transfer-encoding: chunked") && head.contains("content-encoding: gzip"),
        "{head}"
    );
    let url = format!("http://127.0.0.1:{}/", n.http);
    for extra in [&[][..], &["--close"][..], &["-m", "HEAD"][..]] {
        let mut args = vec![url.as_str(), "-c", "4", "-n", "2000", "-H", "Accept-Encoding: gzip"];
        args.extend_from_slice(extra);
        let (out, doc) = load(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(doc["error_total"], 0, "{extra:?}: {}", doc["errors"]);
        assert_eq!(doc["requests"], 2000);
        assert_eq!(doc["status_classes"]["2xx"], 2000);
    }
}

#[test]
fn https_with_a_trusted_ca_or_insecure_and_the_handshake_timed_apart() {
    let Some(n) = nginx() else { return };
    let ca = n.nginx.dir.join("ca.pem").display().to_string();
    let url = format!("https://localhost:{}/", n.https);
    let (out, doc) = load(&[
        &url,
        "-c",
        "4",
        "-n",
        "1000",
        "--cacert",
        &ca,
        "-H",
        "Accept-Encoding: gzip",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        (doc["requests"].as_u64(), doc["error_total"].as_u64()),
        (Some(1000), Some(0))
    );
    assert_eq!(doc["tls_handshake_us"]["count"], 4, "one handshake per connection");
    // Short connections: a handshake each, resumed only with --tls-resume.
    let (_, doc) = load(&[&url, "-c", "2", "-n", "200", "--close", "--cacert", &ca]);
    assert_eq!(
        (doc["requests"].as_u64(), doc["error_total"].as_u64()),
        (Some(200), Some(0))
    );
    assert_eq!(doc["tls_handshake_us"]["count"], 200);
    let (_, doc) = load(&[&url, "-c", "2", "-n", "200", "--close", "--cacert", &ca, "--tls-resume"]);
    assert_eq!(doc["error_total"], 0);
    // An IP address, no CA given: the certificate is not trusted unless --insecure.
    let by_ip = format!("https://127.0.0.1:{}/", n.https);
    let (out, doc) = load(&[&by_ip, "-c", "1", "-n", "5"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(doc["errors"]["tls"].as_u64().unwrap() > 0, "{}", doc["errors"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--insecure"));
    let (out, doc) = load(&[&by_ip, "-c", "1", "-n", "5", "--insecure"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(doc["requests"], 5);
    // A self-signed certificate marked as a CA, given with --cacert: trusted as it is (as curl
    // does), though it could not be a server certificate under a CA.
    let own = n.nginx.dir.join("self.pem").display().to_string();
    let url = format!("https://localhost:{}/", n.https_self);
    let (out, doc) = load(&[&url, "-c", "2", "-n", "100", "--cacert", &own]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        (doc["requests"].as_u64(), doc["error_total"].as_u64()),
        (Some(100), Some(0))
    );
}

#[test]
fn a_404_is_counted_by_status_class_not_as_a_transport_error() {
    let Some(n) = nginx() else { return };
    for url in [
        format!("http://127.0.0.1:{}/missing", n.http),
        format!("https://localhost:{}/missing", n.https),
    ] {
        let ca = n.nginx.dir.join("ca.pem").display().to_string();
        let mut args = vec![url.as_str(), "-c", "2", "-n", "300"];
        if url.starts_with("https") {
            args.extend(["--cacert", &ca]);
        }
        let (out, doc) = load(&args);
        assert_eq!(doc["error_total"], 0, "{url}: {}", doc["errors"]);
        assert_eq!(doc["status_classes"]["4xx"], 300, "{url}");
        assert_eq!(doc["status_classes"]["2xx"], 0);
        assert_eq!(doc["non_2xx_3xx"], 300);
        assert_eq!(
            out.status.code(),
            Some(0),
            "like wrk: non-2xx responses are reported, not failures"
        );
        let human = Command::new(BIN)
            .args(["load", &url, "-c", "1", "-n", "10"])
            .args(if url.starts_with("https") {
                vec!["--cacert", ca.as_str()]
            } else {
                vec![]
            })
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&human.stdout);
        assert!(text.contains("4xx 10") && text.contains("not 2xx or 3xx"), "{text}");
    }
}
