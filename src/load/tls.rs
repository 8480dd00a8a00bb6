//! `https://` targets: the rustls client configuration of `--insecure`, `--cacert` and
//! `--tls-resume`, and how a server's certificate is checked. The engine drives the connections
//! (`engine::tls`).

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::Resumption;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::error::Error;

/// The client configuration for `--insecure`, `--cacert FILE` and `--tls-resume`; by default
/// the system's trusted roots verify the server, and every connection makes a full handshake.
pub fn client_config(
    insecure: bool,
    cacert: Option<&Path>,
    resume: bool,
    h2: bool,
) -> Result<Arc<ClientConfig>, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(Error::Tls)?;
    let algorithms = provider.signature_verification_algorithms;
    let checker = if insecure {
        Checker {
            webpki: None,
            pinned: Vec::new(),
            algorithms,
        }
    } else {
        let mut roots = RootCertStore::empty();
        let mut pinned = Vec::new();
        match cacert {
            Some(path) => {
                let certs = CertificateDer::pem_file_iter(path)
                    .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                    .map_err(|source| Error::CacertNotPem {
                        path: path.to_path_buf(),
                        source,
                    })?;
                if certs.is_empty() {
                    return Err(Error::CacertEmpty {
                        path: path.to_path_buf(),
                    });
                }
                for c in certs {
                    roots.add(c.clone()).map_err(|source| Error::CacertRefused {
                        path: path.to_path_buf(),
                        source,
                    })?;
                    pinned.push(c);
                }
            }
            None => {
                for c in rustls_native_certs::load_native_certs().certs {
                    let _ = roots.add(c);
                }
            }
        }
        if roots.is_empty() {
            return Err(Error::NoTrustedRoots);
        }
        let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(Error::Verifier)?;
        Checker {
            webpki: Some(webpki),
            pinned,
            algorithms,
        }
    };
    let mut cfg = builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(checker))
        .with_no_client_auth();
    if !resume {
        cfg.resumption = Resumption::disabled();
    }
    // ALPN with --h2: h2 first, http/1.1 too, so that a server without HTTP/2 picks http/1.1
    // and says so (see `alpn_check`) rather than failing the handshake. Without --h2 nothing
    // is offered, and the server speaks HTTP/1.1.
    if h2 {
        cfg.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    }
    Ok(Arc::new(cfg))
}

/// How the server's certificate is checked. `webpki`: the usual checks (a chain to a trusted
/// root, the name); `None` is `--insecure` (any certificate). And one more, as curl does: a
/// server certificate that is itself in `--cacert` (`pinned`) is trusted as it is: a
/// self-signed certificate made with `openssl req -x509` is marked as a CA, which the usual
/// checks refuse as a server's certificate, and the user asked to trust exactly that one. The
/// handshake's signatures are checked in every case.
#[derive(Debug)]
struct Checker {
    webpki: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    pinned: Vec<CertificateDer<'static>>,
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for Checker {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match &self.webpki {
            Some(_) if self.pinned.iter().any(|p| p.as_ref() == end_entity.as_ref()) => {
                Ok(ServerCertVerified::assertion())
            }
            Some(w) => w.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now),
            None => Ok(ServerCertVerified::assertion()),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// `--h2` over TLS: one handshake before the run, to find out whether the server picks `h2`.
/// A server that picks something else (or nothing) ends the run before it starts, in one line;
/// one that cannot be reached is left to the run, which counts why.
pub fn alpn_check(target: &super::Target, cfg: &Arc<ClientConfig>, timeout: std::time::Duration) -> Result<(), Error> {
    use std::io::Write;
    let Ok(mut tcp) = std::net::TcpStream::connect_timeout(&target.addr, timeout) else {
        return Ok(());
    };
    let _ = tcp.set_read_timeout(Some(timeout));
    let _ = tcp.set_write_timeout(Some(timeout));
    let Ok(name) = ServerName::try_from(target.host_name().to_string()) else {
        return Ok(());
    };
    let Ok(mut tls) = rustls::ClientConnection::new(cfg.clone(), name) else {
        return Ok(());
    };
    while tls.is_handshaking() {
        if tls.complete_io(&mut tcp).is_err() {
            // The run will meet the same failure and count it (and say it once).
            return Ok(());
        }
    }
    let picked = tls.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned());
    tls.send_close_notify();
    let _ = tls.complete_io(&mut tcp);
    let _ = tcp.flush();
    match picked.as_deref() {
        Some("h2") => Ok(()),
        _ => Err(Error::NotH2 {
            url: target.url.clone(),
            picked,
        }),
    }
}
