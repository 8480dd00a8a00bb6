#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| muxlab::fuzz::memcache_session(data));
