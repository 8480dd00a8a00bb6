//! [`Rule`]: the rules of a load's flags (or a scenario's keys of the same names) that a
//! command line can break, each with the values it was given; its words say in one line what
//! to change. [`Error::Invalid`](super::Error::Invalid) pairs one with the key it is about.

use std::fmt;
use std::path::PathBuf;

use super::pacing::MAX_RATE;
use super::workload::MAX_STREAMS;
use super::Rate;

/// A rule of the flags that a command line breaks.
#[derive(Debug)]
pub enum Rule {
    ConnectionsZero,
    /// A count of connections the machine's settings cannot hold.
    Settings(super::preflight::Need),
    /// `--active` with a run that ends connections (-n, --close, --requests-per-conn).
    ActiveEndsConnections,
    /// `--active 0%` (every connection holds) with a rate: nothing would be sent at it.
    ActiveHoldsAllAtRate,
    /// `--active` that leaves no connection sending.
    ActiveNone {
        active: super::Active,
        connections: usize,
    },
    ThreadsZero,
    IntervalUnderOneMs,
    TooManyIntervals,
    SizeNotEcho,
    TlsFlagsNotHttps,
    HeadersOverOneFrame,
    RateAndThink,
    RateNotPositive,
    /// A rate (or a ramp's peak) no client of this machine sends (boxed: a ramp's steps are
    /// many).
    RateOverMax {
        rate: Box<Rate>,
    },
    RampWithRequests,
    RampWithSlo,
    BodyAndBodySize,
    /// `--body @FILE` whose file cannot be read.
    BodyUnreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    BodyNotHttp,
    ChunkedWithoutBody,
    SloWithRequests,
    SloWithThink,
    SloTimeZero,
    /// `--slo` names a class no `--mix` gives.
    SloClassNotInMix {
        class: String,
    },
    DurationAndRequests,
    LengthZero,
    H2NotHttp,
    ChunkedWithH2,
    PipelineWithH2,
    StreamsZero,
    StreamsOverMax,
    StreamsWithoutH2,
    PipelineZero,
    PipelineWithClose,
    CloseNotHttp,
    CloseWithRequestsPerConn,
    RequestsPerConnZero,
    ConnectRateNotPositive,
    /// `--shard I/N` with more shares than connections.
    ShardsOverConnections {
        connections: usize,
        shards: usize,
    },
    SizeZero,
    BindNotIpv4,
    TimeoutZero,
    SseNotHttp,
    /// A `-H` that is not `Name: value` on one line.
    NotAHeader {
        header: String,
    },
    /// `--start-at` more than an hour ahead (`ahead`, in seconds).
    StartTooFar {
        at: u64,
        ahead: u64,
    },
    MixOnKeyed,
    MixNotHttp,
    MixOverMax,
    /// Two classes of one name.
    ClassTwice {
        name: String,
    },
    MixWithHead,
}

impl Rule {
    /// The words of a rule that carries no value (`None` for one whose words [`Display`](fmt::Display)
    /// builds from its values).
    fn fixed(&self) -> Option<&'static str> {
        Some(match self {
            Rule::ConnectionsZero => "-c must be at least 1",
            Rule::ActiveEndsConnections => {
                "--active holds most connections open for the whole run: drop -n, --close and --requests-per-conn (run for a --duration)"
            }

            Rule::ActiveHoldsAllAtRate => {
                "--active 0% holds every connection and sends nothing: drop --rate (or give a share that sends)"
            }
            Rule::ThreadsZero => "-t must be at least 1",
            Rule::IntervalUnderOneMs => "--interval must be at least 1ms",
            Rule::TooManyIntervals => "--interval makes over 100,000 intervals of the window: make it longer",
            Rule::SizeNotEcho => {
                "--size applies to echo:// and packet:// targets (a keyed store's values have --value-size)"
            }
            Rule::TlsFlagsNotHttps => "--insecure, --cacert and --tls-resume apply to https:// targets",
            Rule::HeadersOverOneFrame => {
                "the request's headers (-H, the path) take more than one HTTP/2 frame (16 KiB): shorten them"
            }
            Rule::RateAndThink => "--rate (open loop) and --think (closed loop) exclude each other",
            Rule::RateNotPositive => "--rate must be a positive number",
            Rule::RampWithRequests => "a ramp runs for a time: give -d (or nothing: its length), not -n",
            Rule::RampWithSlo => "--slo searches fixed rates: give --rate as one number (the first probe's)",
            Rule::BodyAndBodySize => "give --body or --body-size, not both",
            Rule::BodyNotHttp => "--body and --body-size apply to http:// targets",
            Rule::ChunkedWithoutBody => "--chunked sends a body: give --body or --body-size",
            Rule::SloWithRequests => "--slo probes rates for a time each (-d): drop -n",
            Rule::SloWithThink => "--slo probes open-loop rates: drop --think",
            Rule::SloTimeZero => "--slo-time must be more than zero",
            Rule::DurationAndRequests => "give either -d (duration) or -n (requests), not both",
            Rule::LengthZero => "-n and -d must be more than zero",
            Rule::H2NotHttp => "--h2 applies to http:// and https:// targets",
            Rule::ChunkedWithH2 => "--chunked is HTTP/1.1's: HTTP/2 frames the body itself",
            Rule::PipelineWithH2 => {
                "--pipeline is HTTP/1.1's: HTTP/2 keeps --streams requests in flight per connection"
            }
            Rule::StreamsZero => "--streams must be at least 1",
            Rule::StreamsWithoutH2 => {
                "--streams is HTTP/2's: give an h2c:// target, or https:// with --h2 (HTTP/1.1 has --pipeline)"
            }
            Rule::PipelineZero => "--pipeline must be at least 1",
            Rule::PipelineWithClose => "--pipeline needs keep-alive connections: drop --close",
            Rule::CloseNotHttp => "--close applies to http:// targets",
            Rule::CloseWithRequestsPerConn => {
                "--close already means one request per connection: drop --requests-per-conn"
            }
            Rule::RequestsPerConnZero => "--requests-per-conn must be at least 1",
            Rule::ConnectRateNotPositive => "--connect-rate must be a positive number",
            Rule::SizeZero => "--size must be at least 1 byte",
            Rule::BindNotIpv4 => "--bind takes IPv4 addresses, the target is IPv6",
            Rule::TimeoutZero => "--timeout must be more than zero",
            Rule::SseNotHttp => {
                "--sse reads HTTP responses as event streams: give an http://, https:// or h2c:// target"
            }
            Rule::MixOnKeyed => {
                "a keyed target's request classes are its commands, set and get, weighted by --ratio (--slo get:p99<=1ms names one)"
            }
            Rule::MixNotHttp => "--mix and --mix-file apply to http:// targets",
            Rule::MixOverMax => "a mix holds at most 255 classes",
            Rule::MixWithHead => "a mix cannot hold HEAD requests (their responses carry no body)",
            Rule::RateOverMax { .. }
            | Rule::BodyUnreadable { .. }
            | Rule::SloClassNotInMix { .. }
            | Rule::StreamsOverMax
            | Rule::ShardsOverConnections { .. }
            | Rule::NotAHeader { .. }
            | Rule::StartTooFar { .. }
            | Rule::ClassTwice { .. }
            | Rule::ActiveNone { .. }
            | Rule::Settings(_) => return None,
        })
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(words) = self.fixed() {
            return f.write_str(words);
        }
        match self {
            Rule::RateOverMax { rate } => write!(
                f,
                "--rate {rate} is over {} requests a second, which no client of this machine sends (each request costs it about a microsecond of a CPU): a schedule that dense only falls behind",
                crate::units::thousands(MAX_RATE as u64)
            ),
            Rule::BodyUnreadable { path, source } => {
                write!(f, "cannot read --body @{}: {source}", path.display())
            }
            Rule::SloClassNotInMix { class } => write!(f, "--slo names the class '{class}', which no --mix gives"),
            Rule::StreamsOverMax => write!(f, "--streams is at most {MAX_STREAMS}"),
            Rule::ShardsOverConnections { connections, shards } => write!(
                f,
                "-c {connections} cannot be split into {shards} shares: every share needs a connection"
            ),
            Rule::NotAHeader { header } => write!(
                f,
                "-H '{header}' is not a header: give 'Name: value' (a name of letters, digits and -, one line)"
            ),
            Rule::StartTooFar { at, ahead } => write!(
                f,
                "--start-at {at} is {ahead} s away (more than an hour): give milliseconds since the epoch, e.g. $(date -d '+20 sec' +%s%3N)"
            ),
            Rule::ClassTwice { name } => write!(f, "the class name '{name}' is given twice"),
            Rule::Settings(need) => write!(f, "{need}; nothing was changed"),
            Rule::ActiveNone { active, connections } => write!(
                f,
                "--active {active} of {connections} connections leaves none sending: raise -c or --active"
            ),
            _ => unreachable!("fixed() has the words of every other rule"),
        }
    }
}
