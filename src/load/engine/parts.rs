//! What an engine thread is given of its run's [`Spec`], as the typed part each of its pieces
//! needs, read once: the schedule, pacing and window ([`Pace`]), where it connects ([`Reach`])
//! and its limits ([`Limits`]). What is sent and how answers are verified (request bytes, body
//! patterns, keyed checks, `--sse`) is the protocol's part, the client's
//! (`load::client::Setup`). Nothing else of the engine reads the `Spec`.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use crate::load::{Arrivals, Pacing, Rate, Spec};

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
    /// The seed of the run's random choices (request classes, Poisson gaps).
    pub(super) seed: u64,
    /// An open loop's sends are Poisson arrivals (else evenly spaced).
    pub(super) poisson: bool,
    /// A rate ramp (`--rate A..B`), the run's whole.
    pub(super) ramp: Option<Rate>,
    /// The request classes' cumulative weights, ending at 1.0 (empty without `--mix`).
    pub(super) weights: Vec<f64>,
    /// `--active`: which connection slots send (the rest hold).
    pub(super) active: Option<crate::load::Active>,
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

/// How long the engine waits.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    /// A connect, a request, a stall, and the wait after the window (`--timeout`).
    pub(super) timeout: Duration,
}

/// The parts of `spec` an engine thread keeps.
pub(super) fn of(spec: &Spec) -> (Pace, Reach, Limits) {
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
        seed: spec.args().workload.seed,
        poisson: spec.args().workload.arrivals == Arrivals::Poisson,
        ramp: spec.args().workload.rate.filter(|w| w.is_ramp()),
        weights: super::classes::cumulative(spec),
        active: spec.args().workload.active,
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
        Limits {
            timeout: spec.timeout(),
        },
    )
}
