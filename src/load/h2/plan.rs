//! What an HTTP/2 run sends: each request class's header fields and body, the HTTP/1.1 head
//! its HPACK blocks are measured against, and how responses are checked.

use crate::load::{http_request, Kind, Payload, Spec, Target};
use crate::proto::h2::frame;

/// One request class as HTTP/2 sends it: its header fields and body.
#[derive(Debug, Clone)]
pub struct H2Class {
    /// Names lowercase, pseudo-headers first.
    pub fields: Vec<(Vec<u8>, Vec<u8>)>,
    pub payload: Payload,
    /// The bytes of the same request's head in HTTP/1.1 (request line, Host, the `-H` lines,
    /// Content-Length, the blank line): the yardstick of HPACK's savings.
    pub(super) text: u64,
}

impl H2Class {
    /// A request of `method` for `path` at `authority` over `scheme`, with the user's `-H`
    /// headers (a `Host` becomes `:authority`; HTTP/1.1's connection headers are left out) and
    /// `payload`.
    pub fn new(
        method: &str,
        scheme: &str,
        authority: &str,
        path: &str,
        headers: &[String],
        payload: Payload,
    ) -> H2Class {
        // The same request's head as HTTP/1.1 sends it: what HPACK is measured against.
        let target = Target {
            url: String::new(),
            addr: std::net::SocketAddr::from(([0, 0, 0, 0], 0)),
            host: authority.to_string(),
            kind: Kind::Http,
            path: path.to_string(),
            tls: false,
            h2c: false,
        };
        // A generated body of the same length: the head alone, its Content-Length included.
        let body = match payload.is_empty() {
            true => Payload::None,
            false => Payload::Generated(payload.len()),
        };
        let text = http_request(method, &target, headers, false, &body, false).len();
        let mut authority = authority.to_string();
        let mut extra = Vec::new();
        for h in headers {
            let Some((name, value)) = h.split_once(':') else {
                continue;
            };
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim();
            match name.as_str() {
                "host" => authority = value.to_string(),
                "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "upgrade"
                | "content-length" => {}
                _ => extra.push((name.into_bytes(), value.as_bytes().to_vec())),
            }
        }
        let mut fields = vec![
            (b":method".to_vec(), method.as_bytes().to_vec()),
            (b":scheme".to_vec(), scheme.as_bytes().to_vec()),
            (b":path".to_vec(), path.as_bytes().to_vec()),
            (b":authority".to_vec(), authority.into_bytes()),
        ];
        fields.extend(extra);
        if !payload.is_empty() {
            fields.push((b"content-length".to_vec(), payload.len().to_string().into_bytes()));
        }
        H2Class {
            fields,
            payload,
            text: text as u64,
        }
    }

    /// Bytes of its header block with every field a literal (no table, no Huffman): what one
    /// request's block takes at most; one HEADERS frame must hold it (see `fits_one_frame`).
    pub fn literal_len(&self) -> usize {
        self.fields.iter().map(|(n, v)| n.len() + v.len() + 10).sum()
    }
}

/// Whether every class's header block fits one HEADERS frame of the size every server allows
/// (16 KiB; this client sends no CONTINUATION).
pub fn fits_one_frame(classes: &[H2Class]) -> bool {
    classes.iter().all(|c| c.literal_len() <= frame::MAX_FRAME)
}

/// What every connection of a run sends: the classes, and how responses are checked.
#[derive(Debug, Clone)]
pub struct H2Plan {
    pub classes: Vec<H2Class>,
    /// The requests are HEAD: responses carry no body.
    pub head_only: bool,
    /// Verify the body of every 200 against the generated body of this size (`--body-size`).
    pub verify: Option<usize>,
    /// Every 200 is an event stream (`--sse`); without it, those whose content-type says so.
    pub sse: bool,
}

impl H2Plan {
    /// The plan of an HTTP/2 run: each class's request (the target's alone without `--mix`).
    pub fn of(spec: &Spec) -> H2Plan {
        let t = spec.target();
        let scheme = if t.tls { "https" } else { "http" };
        let class = |method: &str, path: &str, payload: &Payload| {
            H2Class::new(method, scheme, &t.host, path, spec.headers(), payload.clone())
        };
        let classes = match spec.classes.is_empty() {
            true => vec![class(&spec.method, &t.path, &spec.payload)],
            false => spec
                .classes
                .iter()
                .map(|c| class(&c.method, &c.path, &c.payload))
                .collect(),
        };
        H2Plan {
            classes,
            head_only: spec.method.eq_ignore_ascii_case("HEAD"),
            sse: spec.sse(),
            verify: match spec.payload {
                Payload::Generated(n) => Some(n),
                _ => None,
            },
        }
    }
}
