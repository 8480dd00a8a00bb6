//! Certificates made for a test: a CA and a leaf signed by it, and a self-signed one.

use std::path::{Path, PathBuf};

/// A CA and a leaf for localhost / 127.0.0.1 signed by it: (ca.pem, leaf.pem, leaf.key).
pub fn certificates(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "muxlab test CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let leaf_key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let leaf_cert = leaf.signed_by(&leaf_key, &ca_cert, &ca_key).unwrap();
    // A self-signed certificate that says it is a CA, as `openssl req -x509` makes by default.
    let self_key = KeyPair::generate().unwrap();
    let mut own = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    own.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let own_cert = own.self_signed(&self_key).unwrap();
    std::fs::write(dir.join("self.pem"), own_cert.pem()).unwrap();
    std::fs::write(dir.join("self.key"), self_key.serialize_pem()).unwrap();
    let paths = (dir.join("ca.pem"), dir.join("leaf.pem"), dir.join("leaf.key"));
    std::fs::write(&paths.0, ca_cert.pem()).unwrap();
    std::fs::write(&paths.1, leaf_cert.pem()).unwrap();
    std::fs::write(&paths.2, leaf_key.serialize_pem()).unwrap();
    paths
}
