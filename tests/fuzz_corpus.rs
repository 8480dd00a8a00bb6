//! Replays the committed fuzz corpus (`fuzz/corpus/TARGET/*`) through the fuzz targets' entry
//! points on stable Rust: an input that once found a bug, or that covers a path, keeps being
//! checked in every `cargo test`.

use std::path::Path;

fn replay(target: &str, entry: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus").join(target);
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = e.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let r = std::panic::catch_unwind(|| entry(&data));
        assert!(r.is_ok(), "{target}: {} fails", path.display());
        n += 1;
    }
    assert!(n > 0, "{target}: the corpus is empty");
    eprintln!("{target}: {n} inputs replayed");
}

#[test]
fn http_session_corpus() {
    replay("http_session", muxlab::fuzz::http_session);
}

#[test]
fn packet_framing_corpus() {
    replay("packet_framing", muxlab::fuzz::packet_framing);
}

#[test]
fn http_response_corpus() {
    replay("http_response", muxlab::fuzz::http_response);
}

#[test]
fn scenario_toml_corpus() {
    replay("scenario_toml", muxlab::fuzz::scenario_toml);
}

#[test]
fn h2_session_corpus() {
    replay("h2_session", muxlab::fuzz::h2_session);
}

#[test]
fn h2_client_corpus() {
    replay("h2_client", muxlab::fuzz::h2_client);
}

#[test]
fn resp_session_corpus() {
    replay("resp_session", muxlab::fuzz::resp_session);
}

#[test]
fn memcache_session_corpus() {
    replay("memcache_session", muxlab::fuzz::memcache_session);
}
