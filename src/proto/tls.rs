//! TLS around any session: rustls's server connection is sans-I/O like our sessions, so a
//! [`TlsSession`] takes ciphertext in and gives ciphertext out, with the protocol session
//! inside seeing plaintext. Every model serves HTTPS (`serve --tls`) without a line of its own.

use std::io::{Read, Write};
use std::sync::Arc;

use rustls::{ServerConfig, ServerConnection};

use super::{Answer, Each, Fed, Request, Session};
use crate::units::BadValue;

/// The server configuration of `--tls CERT,KEY` or `--tls self-signed`; the error says what
/// is wrong with the value and what to give instead.
/// With `h2`, ALPN offers `h2` and `http/1.1` and the session for the chosen one is built
/// after the handshake.
pub fn server_config(spec: &str, h2: bool) -> Result<Arc<ServerConfig>, BadValue> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let bad = |what: String| BadValue(what);
    let (certs, key) = if spec == "self-signed" {
        let c = rcgen::generate_simple_self_signed(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .map_err(|e| bad(format!("--tls self-signed: {e}")))?;
        let key =
            PrivateKeyDer::try_from(c.key_pair.serialize_der()).map_err(|e| bad(format!("--tls self-signed: {e}")))?;
        (vec![c.cert.der().clone()], key)
    } else {
        let (cert, key) = spec
            .split_once(',')
            .ok_or_else(|| bad(format!("--tls '{spec}': give CERT.pem,KEY.pem or self-signed")))?;
        let certs = CertificateDer::pem_file_iter(cert)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|e| bad(format!("--tls: {cert}: not PEM certificates ({e})")))?;
        if certs.is_empty() {
            return Err(bad(format!("--tls: {cert} holds no certificate")));
        }
        let key =
            PrivateKeyDer::from_pem_file(key).map_err(|e| bad(format!("--tls: {key}: not a PEM private key ({e})")))?;
        (certs, key)
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(format!("--tls: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| bad(format!("--tls: the certificate and key do not go together ({e})")))?;
    if h2 {
        cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    }
    Ok(Arc::new(cfg))
}

/// A protocol session behind TLS.
pub struct TlsSession {
    tls: ServerConnection,
    inner: Session,
    /// The inner session was chosen by ALPN (done once the handshake ends).
    chosen: bool,
    /// Plaintext the inner session produced, reused.
    plain_out: Vec<u8>,
}

impl std::fmt::Debug for TlsSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsSession")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl TlsSession {
    pub fn new(cfg: Arc<ServerConfig>, inner: Session) -> Result<TlsSession, rustls::Error> {
        Ok(TlsSession {
            tls: ServerConnection::new(cfg)?,
            inner,
            chosen: false,
            plain_out: Vec::new(),
        })
    }

    /// Still in the handshake, or inside a request head (what `--header-timeout` limits).
    pub fn head_pending(&self) -> bool {
        self.tls.is_handshaking() || self.inner.head_pending()
    }

    /// Ciphertext in, ciphertext out; the inner session sees the plaintext.
    pub fn feed<F: Each>(&mut self, mut input: &[u8], out: &mut Vec<u8>, each: &mut F) -> Fed {
        let mut fed = Fed::default();
        while !input.is_empty() {
            match self.tls.read_tls(&mut input) {
                Ok(0) => break,
                Ok(_) => {}
                Err(_) => {
                    fed.close = true;
                    break;
                }
            }
            if self.tls.process_new_packets().is_err() {
                // rustls queued an alert saying why: send it, then close.
                self.flush(out);
                fed.close = true;
                return fed;
            }
            if !self.chosen && !self.tls.is_handshaking() {
                self.chosen = true;
                if let Some(s) = self.inner.for_alpn(self.tls.alpn_protocol()) {
                    self.inner = s;
                }
            }
            // Each piece of plaintext goes straight to the inner session (any split feeds the
            // same), its replies straight back into TLS.
            let mut buf = [0u8; 16 * 1024];
            loop {
                let n = match self.tls.reader().read(&mut buf) {
                    Ok(0) => {
                        fed.close = true;
                        break;
                    }
                    Ok(n) => n,
                    Err(_) => break,
                };
                self.plain_out.clear();
                // The hook sees ciphertext: the plaintext of the responses before a request is
                // encrypted into `out` first, and whatever the hook sends of `out` goes.
                let tls = &mut self.tls;
                let mut hook = |req: Request<'_>, plain: &mut Vec<u8>| {
                    if !plain.is_empty() {
                        let _ = tls.writer().write_all(plain);
                        plain.clear();
                        while tls.wants_write() && tls.write_tls(out).is_ok() {}
                    }
                    each(req, out)
                };
                // Erased: the inner session's feed is not instantiated once more per layer.
                let hook: &mut dyn FnMut(Request<'_>, &mut Vec<u8>) -> Answer = &mut hook;
                let f = self.inner.feed_each(&buf[..n], &mut self.plain_out, &mut { hook });
                fed.add(f);
                if !self.plain_out.is_empty() {
                    let _ = self.tls.writer().write_all(&self.plain_out);
                }
            }
        }
        if fed.close {
            self.tls.send_close_notify();
        }
        self.flush(out);
        fed
    }

    /// The inner session's last words (HTTP/2's GOAWAY), encrypted into `out`.
    pub fn farewell(&mut self, out: &mut Vec<u8>) {
        self.plain_out.clear();
        self.inner.farewell(&mut self.plain_out);
        if !self.plain_out.is_empty() {
            let _ = self.tls.writer().write_all(&self.plain_out);
            self.flush(out);
        }
    }

    /// Moves every queued TLS record to `out`.
    fn flush(&mut self, out: &mut Vec<u8>) {
        while self.tls.wants_write() {
            if self.tls.write_tls(out).is_err() {
                break;
            }
        }
    }
}
