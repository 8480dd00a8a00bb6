//! TLS around what a connection speaks (any [`Protocol`] whose protocol ALPN may choose,
//! [`Negotiate`]): rustls's server connection is sans-I/O like our sessions, so a
//! [`TlsSession`] takes ciphertext in and gives ciphertext out, with the protocol session
//! inside seeing plaintext. Every model serves HTTPS (`serve --tls`) without a line of its own.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;

use rustls::{ServerConfig, ServerConnection};

use super::{Answer, Each, Fed, Negotiate, Protocol, Request};

/// The server configuration of `--tls CERT,KEY` or `--tls self-signed`; the error says what
/// is wrong with the value and what to give instead.
/// With `h2`, ALPN offers `h2` and `http/1.1` and the session for the chosen one is built
/// after the handshake.
pub fn server_config(spec: &str, h2: bool) -> Result<Arc<ServerConfig>, BadTls> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bad = |fault| BadTls {
        spec: spec.to_string(),
        fault,
    };
    let (certs, key) = if spec == "self-signed" {
        let c = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .map_err(|e| bad(TlsFault::SelfSigned(e)))?;
        // rcgen serialises a key pair as PKCS#8.
        let key = PrivateKeyDer::Pkcs8(c.key_pair.serialize_der().into());
        (vec![c.cert.der().clone()], key)
    } else {
        let (cert, key) = spec.split_once(',').ok_or_else(|| bad(TlsFault::NotCertAndKey))?;
        let certs = CertificateDer::pem_file_iter(cert)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|source| {
                bad(TlsFault::NotCertificates {
                    path: cert.into(),
                    source,
                })
            })?;
        if certs.is_empty() {
            return Err(bad(TlsFault::NoCertificate { path: cert.into() }));
        }
        let key = PrivateKeyDer::from_pem_file(key).map_err(|source| {
            bad(TlsFault::NotAKey {
                path: key.into(),
                source,
            })
        })?;
        (certs, key)
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(TlsFault::Versions(e)))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| bad(TlsFault::Mismatch(e)))?;
    if h2 {
        cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    }
    Ok(Arc::new(cfg))
}

/// A `--tls` value that makes no server configuration: the value given and what is wrong.
#[derive(Debug)]
pub struct BadTls {
    pub spec: String,
    pub fault: TlsFault,
}

/// What is wrong with a `--tls` value.
#[derive(Debug)]
pub enum TlsFault {
    /// `self-signed`, and rcgen could not make the certificate.
    SelfSigned(rcgen::Error),
    /// Neither `self-signed` nor `CERT,KEY`.
    NotCertAndKey,
    /// The certificate file does not read as PEM certificates.
    NotCertificates {
        path: PathBuf,
        source: rustls::pki_types::pem::Error,
    },
    /// The certificate file holds none.
    NoCertificate { path: PathBuf },
    /// The key file does not read as a PEM private key.
    NotAKey {
        path: PathBuf,
        source: rustls::pki_types::pem::Error,
    },
    /// rustls has no protocol version to offer.
    Versions(rustls::Error),
    /// The certificate and the key do not go together.
    Mismatch(rustls::Error),
}

impl std::fmt::Display for BadTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.fault {
            TlsFault::SelfSigned(e) => write!(f, "--tls self-signed: {e}"),
            TlsFault::NotCertAndKey => write!(f, "--tls '{}': give CERT.pem,KEY.pem or self-signed", self.spec),
            TlsFault::NotCertificates { path, source } => {
                write!(f, "--tls: {}: not PEM certificates ({source})", path.display())
            }
            TlsFault::NoCertificate { path } => write!(f, "--tls: {} holds no certificate", path.display()),
            TlsFault::NotAKey { path, source } => {
                write!(f, "--tls: {}: not a PEM private key ({source})", path.display())
            }
            TlsFault::Versions(e) => write!(f, "--tls: {e}"),
            TlsFault::Mismatch(e) => write!(f, "--tls: the certificate and key do not go together ({e})"),
        }
    }
}

impl std::error::Error for BadTls {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.fault {
            TlsFault::SelfSigned(e) => Some(e),
            TlsFault::NotCertificates { source, .. } | TlsFault::NotAKey { source, .. } => Some(source),
            TlsFault::Versions(e) | TlsFault::Mismatch(e) => Some(e),
            TlsFault::NotCertAndKey | TlsFault::NoCertificate { .. } => None,
        }
    }
}

/// A protocol session behind TLS.
pub struct TlsSession<P> {
    tls: ServerConnection,
    inner: P,
    /// The inner session was chosen by ALPN (done once the handshake ends).
    chosen: bool,
    /// The client sent close_notify while the inner session owed answers other threads are
    /// running: the close comes once they have gone.
    peer_closed: bool,
    /// Plaintext the inner session produced, reused.
    plain_out: Vec<u8>,
    /// Ciphertext not given to rustls yet: the output reached its bound ([`Each::room`]).
    cipher: Vec<u8>,
    /// The last feed stopped at the bound on output: input waits, in the inner session, in
    /// rustls or in `cipher`.
    held: bool,
}

impl<P: Protocol> std::fmt::Debug for TlsSession<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSession")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

/// The inner session's hook: what it sees as output is plaintext, what the model's hook sees
/// is ciphertext. The plaintext of the responses before a request is encrypted into `out`
/// first (whatever the model's hook sends of `out` goes), and the room left is the model's
/// less what is still plaintext.
struct Sealed<'a, F: Each + ?Sized> {
    tls: &'a mut ServerConnection,
    out: &'a mut Vec<u8>,
    each: &'a mut F,
}

impl<F: Each + ?Sized> Each for Sealed<'_, F> {
    fn request(&mut self, req: Request<'_>, plain: &mut Vec<u8>) -> Answer {
        if !plain.is_empty() {
            let _ = self.tls.writer().write_all(plain);
            plain.clear();
            flush(self.tls, self.out);
        }
        self.each.request(req, self.out)
    }

    fn room(&self, pending: usize) -> usize {
        self.each.room(self.out.len() + pending)
    }

    fn command(&mut self, op: super::keyed::Op<'_>, replies: &mut dyn super::keyed::Replies) -> super::keyed::Outcome {
        // The reply goes into the plaintext; the store is the hook's.
        self.each.command(op, replies)
    }

    fn answer(&mut self, ticket: u64) -> Option<super::keyed::Answered> {
        self.each.answer(ticket)
    }

    fn again(&mut self, again: super::keyed::Again) {
        self.each.again(again)
    }

    fn sent_all(&self) -> bool {
        self.out.is_empty() && !self.tls.wants_write() && self.each.sent_all()
    }
}

impl<P: Negotiate> TlsSession<P> {
    pub fn new(cfg: Arc<ServerConfig>, inner: P) -> Result<TlsSession<P>, rustls::Error> {
        Ok(TlsSession {
            tls: ServerConnection::new(cfg)?,
            inner,
            chosen: false,
            peer_closed: false,
            plain_out: Vec::new(),
            cipher: Vec::new(),
            held: false,
        })
    }

    /// Hands the plaintext waiting (what the inner session held, then what rustls decrypted) to
    /// the inner session, its replies straight back into TLS; `false` when the output reached
    /// its bound first.
    fn plaintext<F: Each + ?Sized>(&mut self, out: &mut Vec<u8>, each: &mut F, fed: &mut Fed) -> bool {
        let mut buf = [0u8; 16 * 1024];
        let mut n = 0;
        loop {
            if n > 0 || self.inner.holding() {
                let mut hook = Sealed {
                    tls: &mut self.tls,
                    out,
                    each,
                };
                // Erased: the inner session's feed is not instantiated once more per layer.
                let hook: &mut dyn Each = &mut hook;
                fed.add(self.inner.feed_each(&buf[..n], &mut self.plain_out, hook));
                if !self.plain_out.is_empty() {
                    let _ = self.tls.writer().write_all(&self.plain_out);
                    self.plain_out.clear();
                }
                flush(&mut self.tls, out);
                if self.inner.holding() {
                    return false;
                }
            }
            if fed.close {
                return true;
            }
            if each.room(out.len()) == 0 {
                // Decrypted plaintext stays in rustls until the output drains.
                return false;
            }
            n = match self.tls.reader().read(&mut buf) {
                Ok(0) => {
                    self.peer_closed = true;
                    fed.close = !self.inner.answers_owed();
                    return true;
                }
                Ok(n) => n,
                Err(_) => return true,
            };
        }
    }

    /// Encrypts what the inner session wrote into `out` (closing TLS when it asked to close).
    fn seal(&mut self, out: &mut Vec<u8>, fed: Fed) -> Fed {
        if !self.plain_out.is_empty() {
            let _ = self.tls.writer().write_all(&self.plain_out);
            self.plain_out.clear();
        }
        flush(&mut self.tls, out);
        if fed.close {
            self.tls.send_close_notify();
            flush(&mut self.tls, out);
        }
        fed
    }
}

impl<P: Negotiate> Protocol for TlsSession<P> {
    /// Ciphertext in, ciphertext out; the inner session sees the plaintext. What the bound on
    /// output holds back waits, and goes first at the next feed.
    fn feed_each<F: Each + ?Sized>(&mut self, input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        let mut fed = Fed::default();
        let mut cipher = std::mem::take(&mut self.cipher);
        let mut data = if cipher.is_empty() {
            input
        } else {
            cipher.extend_from_slice(input);
            &cipher[..]
        };
        self.held = false;
        loop {
            self.held = !self.plaintext(out, each, &mut fed);
            if self.held || fed.close || data.is_empty() {
                break;
            }
            match self.tls.read_tls(&mut data) {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => {
                    fed.close = true;
                    break;
                }
            }
            if self.tls.process_new_packets().is_err() {
                // rustls queued an alert saying why: send it, then close.
                flush(&mut self.tls, out);
                fed.close = true;
                return fed;
            }
            if !self.chosen && !self.tls.is_handshaking() {
                self.chosen = true;
                if let Some(s) = self.inner.for_alpn(self.tls.alpn_protocol()) {
                    self.inner = s;
                }
            }
        }
        if self.held && !data.is_empty() {
            self.cipher = data.to_vec();
        }
        if fed.close {
            self.held = false;
            self.tls.send_close_notify();
        }
        flush(&mut self.tls, out);
        fed
    }

    /// The inner session's pieces due at `now`, encrypted into `out`.
    fn advance_each<F: Each + ?Sized>(&mut self, now: std::time::Instant, out: &mut Vec<u8>, each: &mut F) -> Fed {
        let mut hook = Sealed {
            tls: &mut self.tls,
            out,
            each,
        };
        let hook: &mut dyn Each = &mut hook;
        let fed = self.inner.advance_each(now, &mut self.plain_out, hook);
        self.seal(out, fed)
    }

    /// The inner session's response for `ticket`, encrypted into `out`.
    fn complete_each<F: Each + ?Sized>(&mut self, ticket: u64, out: &mut Vec<u8>, each: &mut F) -> Fed {
        let mut hook = Sealed {
            tls: &mut self.tls,
            out,
            each,
        };
        let hook: &mut dyn Each = &mut hook;
        let mut fed = self.inner.complete_each(ticket, &mut self.plain_out, hook);
        // What the answers' output left the inner session holding goes on once it drains.
        self.held = self.inner.holding();
        fed.close |= self.peer_closed && !self.inner.answers_owed() && !self.held;
        self.seal(out, fed)
    }

    /// Still in the handshake, or inside a request head (what `--header-timeout` limits).
    fn head_pending(&self) -> bool {
        self.tls.is_handshaking() || self.inner.head_pending()
    }

    /// Input held back at the bound on output, to go on with.
    fn holding(&self) -> bool {
        self.held
    }

    /// Gives up what a burst grew, once it is empty: the bytes given up.
    fn trim(&mut self) -> usize {
        super::shed(&mut self.plain_out, 4 * 1024) + super::shed(&mut self.cipher, 0) + self.inner.trim()
    }

    /// When the inner session's next later piece is due.
    fn due(&self) -> Option<std::time::Instant> {
        self.inner.due()
    }

    /// The inner session owes a response later.
    fn owes(&self) -> bool {
        self.inner.owes()
    }

    /// The inner session owes answers other threads are running.
    fn answers_owed(&self) -> bool {
        self.inner.answers_owed()
    }

    /// All the records went: the inner session's output has gone too.
    fn output_gone(&mut self, bound: usize) {
        self.inner.output_gone(bound)
    }

    /// The inner session reads no more until a response owed later has gone (nor anything
    /// once the client has closed).
    fn paused(&self) -> bool {
        self.inner.paused() || self.peer_closed
    }

    /// The inner session's output waits for the client's flow-control window.
    fn window_held(&self) -> bool {
        self.inner.window_held()
    }

    /// Input held: ciphertext not given to rustls yet, and the inner session's.
    fn behind(&self) -> usize {
        self.cipher.len() + self.inner.behind()
    }

    /// The inner session's tickets waiting.
    fn tickets(&self) -> Vec<u64> {
        self.inner.tickets()
    }

    /// The inner session's cancelled tickets.
    fn cancelled(&mut self) -> Vec<u64> {
        self.inner.cancelled()
    }

    /// The inner session cut short ([`Protocol::cut`]), its last frames
    /// encrypted into `out`.
    fn cut(&mut self, out: &mut Vec<u8>) {
        self.plain_out.clear();
        self.inner.cut(&mut self.plain_out);
        if !self.plain_out.is_empty() {
            let _ = self.tls.writer().write_all(&self.plain_out);
            flush(&mut self.tls, out);
        }
    }

    /// The inner session's last words (HTTP/2's GOAWAY), encrypted into `out`.
    fn farewell(&mut self, out: &mut Vec<u8>) {
        self.plain_out.clear();
        self.inner.farewell(&mut self.plain_out);
        if !self.plain_out.is_empty() {
            let _ = self.tls.writer().write_all(&self.plain_out);
            flush(&mut self.tls, out);
        }
    }

    /// Behind TLS a head that timed out gets no answer: the connection just closes.
    fn timeout_response(&self) -> &'static [u8] {
        b""
    }
}

/// Moves every queued TLS record to `out`.
fn flush(tls: &mut ServerConnection, out: &mut Vec<u8>) {
    while tls.wants_write() {
        if tls.write_tls(out).is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::proto::tls::*;

    #[test]
    fn a_tls_value_that_makes_no_configuration_says_what_to_give() {
        let e = server_config("cert.pem", false).unwrap_err();
        assert!(matches!(e.fault, TlsFault::NotCertAndKey));
        assert_eq!(e.to_string(), "--tls 'cert.pem': give CERT.pem,KEY.pem or self-signed");
        let e = server_config("/no/such/cert.pem,/no/such/key.pem", false).unwrap_err();
        assert!(
            matches!(&e.fault, TlsFault::NotCertificates { path, .. } if path == std::path::Path::new("/no/such/cert.pem"))
        );
        assert!(
            e.to_string()
                .starts_with("--tls: /no/such/cert.pem: not PEM certificates ("),
            "{e}"
        );
        assert!(server_config("self-signed", true).is_ok());
    }
}
