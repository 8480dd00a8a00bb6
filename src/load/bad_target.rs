//! [`BadTarget`]: a target URL that cannot be read or resolved.

use std::fmt;

/// A target URL refused: as given, and why.
#[derive(Debug)]
pub struct BadTarget {
    pub url: String,
    pub fault: TargetFault,
}

/// Why a target URL is refused, with the part at fault.
#[derive(Debug)]
pub enum TargetFault {
    /// No `SCHEME://`.
    NotAUrl,
    /// A scheme no target has (the URL's, before `://`).
    UnknownScheme,
    /// Nothing between `://` and the path.
    NoHost,
    /// A scheme with no default port, and none given.
    NoPort,
    /// The host and port do not resolve.
    Unresolved { authority: String, source: std::io::Error },
    /// The host and port resolve to no address.
    NoAddress { authority: String },
    /// A path on a target that has none.
    HasPath,
}

impl fmt::Display for BadTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = &self.url;
        let scheme = url.split_once("://").map_or("", |(s, _)| s);
        match &self.fault {
            TargetFault::NotAUrl => write!(
                f,
                "'{url}' is not a target URL: write http://HOST:PORT/PATH, h2c://HOST:PORT/PATH, echo://HOST:PORT, packet://HOST:PORT, resp://HOST:PORT or memcache://HOST:PORT"
            ),
            TargetFault::UnknownScheme => write!(
                f,
                "unknown scheme '{scheme}': use http://, https://, h2c://, echo://, packet://, resp:// or memcache://"
            ),
            TargetFault::NoHost => write!(f, "'{url}' has no host"),
            TargetFault::NoPort => write!(f, "'{url}' needs a port: {scheme}://HOST:PORT"),
            TargetFault::Unresolved { authority, source } => write!(f, "cannot resolve '{authority}': {source}"),
            TargetFault::NoAddress { authority } => write!(f, "'{authority}' resolved to no address"),
            TargetFault::HasPath => write!(f, "'{url}': {scheme} targets have no path"),
        }
    }
}

impl std::error::Error for BadTarget {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.fault {
            TargetFault::Unresolved { source, .. } => Some(source),
            _ => None,
        }
    }
}
