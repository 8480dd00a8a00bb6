//! The common request head read in one pass ([`scan`]): what nearly every client sends (an
//! upper-case method, a visible-ASCII target, HTTP/1.0 or 1.1, CRLF line ends, a few headers
//! of token names and visible-ASCII values) and nothing else. It reads a strict subset of
//! what httparse accepts, the same way (the same method, target, version, headers with their
//! values trimmed, and length); anything outside it (an incomplete head, bare LF, obs-text, a
//! byte either would refuse, more than [`MOST`] headers) is `None`, and httparse reads the
//! head as before, its verdict and errors unchanged. What it saves is httparse's general
//! machinery on the request every keep-alive benchmark repeats (`scripts/callgrind_serve.sh`).

/// The most headers a head read here may carry (more: httparse reads it).
pub(super) const MOST: usize = 12;

/// A header: its name and its value (without the whitespace around it).
pub(super) type Header<'a> = (&'a [u8], &'a [u8]);

/// A request line read, and the head's whole length.
pub(super) struct Line<'a> {
    pub(super) method: &'a [u8],
    pub(super) target: &'a [u8],
    pub(super) http10: bool,
    /// The head's bytes, through its blank line.
    pub(super) len: usize,
    /// How many of the headers passed in it filled.
    pub(super) headers: usize,
}

/// RFC 9110's tchar: a header name's bytes.
const TOKEN: [bool; 256] = byte_table!(b => {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~'
        )
});
/// A target's bytes read here: visible ASCII.
const TARGET: [bool; 256] = byte_table!(b => matches!(b, 0x21..=0x7e));
/// A value's bytes read here: visible ASCII, space and tab.
const VALUE: [bool; 256] = byte_table!(b => matches!(b, b'\t' | 0x20..=0x7e));

/// The end of the run of bytes from `i` that `t` keeps.
#[inline]
fn run(data: &[u8], mut i: usize, t: &[bool; 256]) -> usize {
    while i < data.len() && t[usize::from(data[i])] {
        i += 1;
    }
    i
}

/// [`run`], eight bytes at a time while they are all in `lo..=hi` (a range `t` keeps, `lo` at
/// most 128, `hi` at most 127), byte by byte from the first eight that may not be.
#[inline]
fn run_in(data: &[u8], mut i: usize, t: &[bool; 256], lo: u8, hi: u8) -> usize {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    while let Some(w) = data.get(i..i + 8) {
        let w = u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        // A byte below `lo` borrows into its high bit; one above `hi` carries into it.
        let below = w.wrapping_sub(ONES * u64::from(lo)) & !w;
        let above = w.wrapping_add(ONES * u64::from(127 - hi)) | w;
        if (below | above) & HIGH != 0 {
            break;
        }
        i += 8;
    }
    run(data, i, t)
}

/// Reads the head at the start of `data`, its headers into `headers`; `None` where it is not
/// all there or not of the common shape (httparse then reads it).
pub(super) fn scan<'a>(data: &'a [u8], headers: &mut [Header<'a>; MOST]) -> Option<Line<'a>> {
    let mut i = 0;
    while i < data.len() && data[i].is_ascii_uppercase() {
        i += 1;
    }
    if i == 0 || data.get(i) != Some(&b' ') {
        return None;
    }
    let method = &data[..i];
    let from = i + 1;
    i = run_in(data, from, &TARGET, 0x21, 0x7e);
    if i == from || data.get(i) != Some(&b' ') {
        return None;
    }
    let target = &data[from..i];
    let version = data.get(i + 1..i + 11)?;
    let http10 = match version {
        b"HTTP/1.1\r\n" => false,
        b"HTTP/1.0\r\n" => true,
        _ => return None,
    };
    i += 11;
    let mut n = 0;
    loop {
        if data.get(i..i + 2)? == b"\r\n" {
            return Some(Line {
                method,
                target,
                http10,
                len: i + 2,
                headers: n,
            });
        }
        let name_from = i;
        i = run(data, i, &TOKEN);
        if i == name_from || data.get(i) != Some(&b':') || n == MOST {
            return None;
        }
        let name = &data[name_from..i];
        i += 1;
        while i < data.len() && matches!(data[i], b' ' | b'\t') {
            i += 1;
        }
        let value_from = i;
        i = run_in(data, i, &VALUE, 0x20, 0x7e);
        if data.get(i..i + 2)? != b"\r\n" {
            return None;
        }
        let mut end = i;
        while end > value_from && matches!(data[end - 1], b' ' | b'\t') {
            end -= 1;
        }
        headers[n] = (name, &data[value_from..end]);
        n += 1;
        i += 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A head's method, target, whether HTTP/1.0, length and headers.
    type Read = (Vec<u8>, Vec<u8>, bool, usize, Vec<(Vec<u8>, Vec<u8>)>);

    /// What httparse makes of `data`: the head's parts, or `None` where it is not complete.
    fn httparse_reads(data: &[u8]) -> Option<Read> {
        let mut h = [httparse::EMPTY_HEADER; 64];
        let mut req = httparse::Request::new(&mut h);
        match req.parse(data) {
            Ok(httparse::Status::Complete(len)) => Some((
                req.method?.as_bytes().to_vec(),
                req.path?.as_bytes().to_vec(),
                req.version? == 0,
                len,
                req.headers
                    .iter()
                    .map(|h| (h.name.as_bytes().to_vec(), h.value.to_vec()))
                    .collect(),
            )),
            _ => None,
        }
    }

    /// A xorshift draw.
    struct Draw(u64);

    impl Draw {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        /// One of `list`, whose first `good` entries are well-formed: seven times in eight
        /// one of those.
        fn pick(&mut self, list: &[&'static [u8]], good: usize) -> &'static [u8] {
            let n = if self.below(8) == 0 { list.len() } else { good };
            list[self.below(n)]
        }
    }

    const METHODS: [&[u8]; 7] = [b"GET", b"HEAD", b"POST", b"PUT", b"get", b"M-SEARCH", b""];
    const TARGETS: [&[u8]; 9] = [
        b"/",
        b"/a?b=c&d",
        b"*",
        b"http://h/x",
        b"/%20",
        b"/0123456789abcdef/ghijklmnop",
        b"/\x7f",
        b"/\xc3\xa9",
        b"/0123456789\x7fabcdef\x01xyz",
    ];
    const VERSIONS: [&[u8]; 6] = [
        b"HTTP/1.1",
        b"HTTP/1.0",
        b"HTTP/2.0",
        b"http/1.1",
        b"HTTP/1.1 ",
        b"HTTP/1.10",
    ];
    const NAMES: [&[u8]; 8] = [
        b"Host",
        b"Content-Length",
        b"X-A_b",
        b"X",
        b"Bad Name",
        b"",
        b"a\x7f",
        b"Conn;ection",
    ];
    const VALUES: [&[u8]; 12] = [
        b"x",
        b"  spaced  ",
        b"",
        b"\tt\t",
        b"1, 2",
        b" ",
        b"Mozilla/5.0 (X11; Linux x86_64) tab\there",
        b"a\x7fb",
        b"caf\xc3\xa9",
        b"a\x00b",
        b"abcdefghijklm\x7fnopqrstuvwxyz",
        b"abcdefghijklmnop\xffqrstuvwxyz",
    ];
    const SPACES: [&[u8]; 3] = [b" ", b"  ", b"\t"];
    const COLONS: [&[u8]; 3] = [b":", b": ", b" :"];
    const ENDS: [&[u8]; 3] = [b"\r\n", b"\n", b"\r"];
    const FOLDS: [&[u8]; 2] = [b"", b" folded\r\n"];

    /// A request head of random parts, now and then wrong in a way httparse refuses or reads
    /// otherwise (bare LF or CR, DEL, NUL, obs-text, a space before the colon, a folded line,
    /// two spaces in the request line, more headers than [`MOST`] or than httparse's 64),
    /// then maybe cut short or with a byte changed.
    fn random_head(d: &mut Draw) -> Vec<u8> {
        let mut h = Vec::new();
        for (list, good) in [
            (&METHODS[..], 4),
            (&SPACES, 1),
            (&TARGETS, 6),
            (&SPACES, 1),
            (&VERSIONS, 2),
            (&ENDS, 1),
        ] {
            h.extend_from_slice(d.pick(list, good));
        }
        let headers = [0, 1, 2, 3, 5, MOST, MOST + 1, 70][d.below(8)];
        for _ in 0..headers {
            for (list, good) in [(&FOLDS[..], 1), (&NAMES, 4), (&COLONS, 2), (&VALUES, 7), (&ENDS, 1)] {
                h.extend_from_slice(d.pick(list, good));
            }
        }
        h.extend_from_slice(d.pick(&ENDS, 1));
        if d.below(4) == 0 {
            h.extend_from_slice(b"GET / HTTP/1.1\r\n");
        }
        match d.below(4) {
            0 => h.truncate(d.below(h.len() + 1)),
            1 => {
                let at = d.below(h.len());
                h[at] = d.below(256) as u8;
            }
            _ => {}
        }
        h
    }

    /// The eight-at-a-time run stops where the byte-by-byte one does, whatever byte stands at
    /// whichever place of a word (a borrow or carry never hides a byte out of range).
    #[test]
    fn a_run_eight_at_a_time_ends_where_the_byte_by_byte_run_does() {
        for (t, lo, hi) in [(&TARGET, 0x21, 0x7e), (&VALUE, 0x20, 0x7e)] {
            for len in [8, 16, 19] {
                for at in 0..len {
                    for b in 0..=255u8 {
                        let mut data = vec![lo; len];
                        for (i, d) in data.iter_mut().enumerate() {
                            *d = [lo, hi, b'a', b'~'][i % 4];
                        }
                        data[at] = b;
                        assert_eq!(run_in(&data, 0, t, lo, hi), run(&data, 0, t), "{data:?}");
                        assert_eq!(run_in(&data, 1, t, lo, hi), run(&data, 1, t), "{data:?}");
                    }
                }
            }
        }
    }

    /// Wherever the scan reads a head, httparse reads the same one (its method, target,
    /// version, headers and length); and the scan does read most well-formed ones.
    #[test]
    fn the_scan_reads_what_httparse_reads_or_leaves_it_to_httparse() {
        let mut d = Draw(0x2545_f491_4f6c_dd1d);
        let (mut read, mut left) = (0, 0);
        for _ in 0..200_000 {
            let data = random_head(&mut d);
            let mut h = [(&b""[..], &b""[..]); MOST];
            let Some(line) = scan(&data, &mut h) else {
                left += 1;
                continue;
            };
            read += 1;
            let theirs = httparse_reads(&data).unwrap_or_else(|| panic!("httparse refuses {data:?}"));
            let ours = (
                line.method.to_vec(),
                line.target.to_vec(),
                line.http10,
                line.len,
                h[..line.headers]
                    .iter()
                    .map(|(n, v)| (n.to_vec(), v.to_vec()))
                    .collect::<Vec<_>>(),
            );
            assert_eq!(ours, theirs, "{:?}", String::from_utf8_lossy(&data));
        }
        assert!(read > 20_000 && left > 20_000, "read {read}, left {left}");
        // What clients send takes the scan: wrk's, curl's, ab's (HTTP/1.0), a tab in a value,
        // a long target, exactly MOST headers.
        let twelve = format!("GET / HTTP/1.1\r\nHost: h\r\n{}\r\n", "X-N: v\r\n".repeat(MOST - 1));
        for (head, headers) in [
            (&b"GET /x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"[..], 1),
            (
                b"GET / HTTP/1.1\r\nHost: localhost:80\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n",
                3,
            ),
            (
                b"GET / HTTP/1.0\r\nHost: h\r\nUser-Agent: ApacheBench/2.3\r\nAccept: */*\r\n\r\n",
                3,
            ),
            (
                b"POST /upload?name=a%20b&x=1 HTTP/1.1\r\nHost: h\r\nX-T:\ta\tb \r\nContent-Length: 3\r\n\r\n",
                3,
            ),
            (twelve.as_bytes(), MOST),
        ] {
            let mut h = [(&b""[..], &b""[..]); MOST];
            let line = scan(head, &mut h).unwrap_or_else(|| panic!("{:?}", String::from_utf8_lossy(head)));
            assert_eq!((line.len, line.headers), (head.len(), headers));
        }
        let mut h = [(&b""[..], &b""[..]); MOST];
        let pipelined = b"GET /x HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: wrk\r\n\r\nGET";
        let line = scan(pipelined, &mut h).expect("the head before the next");
        assert_eq!((line.len, line.headers), (pipelined.len() - 3, 2));
    }
}
