//! What an engine thread is given of its run's [`Spec`], as the typed part each of its pieces
//! needs, read once: the pacing and the window ([`Pace`]), where it connects ([`Reach`]), what it
//! checks of the answers that it must know itself ([`Checks`]) and its limits ([`Limits`]). The
//! protocol's part is the client's (`load::client::Setup`); nothing reads the `Spec` after.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use crate::load::{Pacing, Spec};

/// When requests go, and the window they count in.
#[derive(Debug, Clone)]
pub(super) struct Pace {
    pub(super) pacing: Pacing,
    pub(super) warmup: Duration,
    /// The window's length (`-d`); none with `-n`.
    pub(super) duration: Option<Duration>,
    /// Requests in flight per connection (`--pipeline`, `--streams`).
    pub(super) pipeline: usize,
    /// A keyed target's `--pipeline` N, sent together once the last batch is answered (1
    /// elsewhere).
    pub(super) batch: usize,
    /// One request per connection, like ab (`--close`): its clock starts at the connect.
    pub(super) close: bool,
    /// Requests one socket may carry: 1 with `--close`, K with `--requests-per-conn K`.
    pub(super) per_socket: Option<u64>,
    /// Requests wait until every connection is up (`--connect-first`).
    pub(super) connect_first: bool,
    /// The time series' interval (`--timeseries`).
    pub(super) interval: Option<Duration>,
}

/// Where connections go.
#[derive(Debug, Clone)]
pub(super) struct Reach {
    pub(super) addr: SocketAddr,
    /// Source addresses connections bind to in turn (`--bind`).
    pub(super) sources: Vec<Ipv4Addr>,
    /// TLS (https targets), and the name the server's certificate must carry.
    pub(super) tls: Option<(Arc<rustls::ClientConfig>, String)>,
    /// The server's name, as a failure says it.
    pub(super) host: String,
}

/// What the engine checks of answers itself.
#[derive(Debug, Clone, Copy)]
pub(super) struct Checks {
    /// Every response is an event stream (`--sse`): none is awaited after the window.
    pub(super) sse: bool,
}

/// How long the engine waits.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// A connect, a request, a stall, and the wait after the window (`--timeout`).
    pub(super) timeout: Duration,
}

/// The parts of `spec` an engine thread keeps.
pub(super) fn of(spec: &Spec) -> (Pace, Reach, Checks, Limits) {
    let close = spec.close();
    let pace = Pace {
        pacing: spec.pacing,
        warmup: spec.warmup(),
        duration: spec.duration,
        pipeline: spec.pipeline(),
        batch: spec.batch(),
        close,
        per_socket: if close { Some(1) } else { spec.requests_per_conn() },
        connect_first: spec.connect_first(),
        interval: spec.args().interval,
    };
    let target = spec.target();
    let reach = Reach {
        addr: target.addr,
        sources: spec.sources().to_vec(),
        tls: spec.tls.clone().map(|cfg| (cfg, target.host_name().to_string())),
        host: target.host.clone(),
    };
    (
        pace,
        reach,
        Checks { sse: spec.sse() },
        Limits {
            timeout: spec.timeout(),
        },
    )
}
