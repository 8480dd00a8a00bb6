//! Writing a SET or a GET in the target's protocol: RESP (`resp://`: redis, valkey, muxlab's
//! `--proto resp`) or memcached's text protocol (`memcache://`).

use super::keys::{name, KEY_LEN};

/// The protocol spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Resp,
    Memcache,
}

/// A keyed target's request classes, by their place: the one definition of which class is
/// which command ([`Verb::of_class`]).
pub const CLASSES: [&str; 2] = ["set", "get"];

/// The command a request class stands for: class 0 is SET, class 1 GET.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Set,
    Get,
}

impl Verb {
    pub fn of_class(class: u8) -> Verb {
        match class {
            0 => Verb::Set,
            _ => Verb::Get,
        }
    }
}

use crate::proto::keyed::decimal;

/// Appends a SET of key `k` whose value of `len` bytes `value` appends.
pub fn set(d: Dialect, out: &mut Vec<u8>, k: u64, len: usize, value: impl FnOnce(&mut Vec<u8>)) {
    let key = name(k);
    match d {
        Dialect::Resp => {
            out.extend_from_slice(b"*3\r\n$3\r\nSET\r\n$");
            decimal(out, KEY_LEN as u64);
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(&key);
            out.extend_from_slice(b"\r\n$");
            decimal(out, len as u64);
            out.extend_from_slice(b"\r\n");
        }
        Dialect::Memcache => {
            out.extend_from_slice(b"set ");
            out.extend_from_slice(&key);
            out.extend_from_slice(b" 0 0 ");
            decimal(out, len as u64);
            out.extend_from_slice(b"\r\n");
        }
    }
    let before = out.len();
    value(out);
    debug_assert_eq!(out.len() - before, len);
    out.extend_from_slice(b"\r\n");
}

/// Appends a GET of key `k`.
pub fn get(d: Dialect, out: &mut Vec<u8>, k: u64) {
    let key = name(k);
    match d {
        Dialect::Resp => {
            out.extend_from_slice(b"*2\r\n$3\r\nGET\r\n$");
            decimal(out, KEY_LEN as u64);
            out.extend_from_slice(b"\r\n");
        }
        Dialect::Memcache => out.extend_from_slice(b"get "),
    }
    out.extend_from_slice(&key);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_written_as_each_protocol_spells_them() {
        let mut out = Vec::new();
        set(Dialect::Resp, &mut out, 7, 3, |o| o.extend_from_slice(b"abc"));
        get(Dialect::Resp, &mut out, 7);
        assert_eq!(
            out,
            b"*3\r\n$3\r\nSET\r\n$15\r\nmx:000000000007\r\n$3\r\nabc\r\n*2\r\n$3\r\nGET\r\n$15\r\nmx:000000000007\r\n"
        );
        let mut out = Vec::new();
        set(Dialect::Memcache, &mut out, 12, 2, |o| o.extend_from_slice(b"hi"));
        get(Dialect::Memcache, &mut out, 12);
        assert_eq!(out, b"set mx:000000000012 0 0 2\r\nhi\r\nget mx:000000000012\r\n");
    }
}
