#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| muxlab::fuzz::resp_session(data));
