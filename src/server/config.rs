//! What `muxlab serve` was asked to do.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

use super::error::Error;
use super::flag::Flag;
pub use super::reserve::{BadReserve, Reserve, ReserveFault};
pub use super::work::Work;
use crate::proto::Proto;
use crate::units::{parse_duration, parse_size, CpuList};

/// `--idle-timeout`'s default (its flag says "60s": a test holds them equal).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The most processes a group (`--procs`) may have.
pub const MOST_PROCS: usize = 256;

/// How often a waiting model wakes to check the stop flag and idle connections.
pub const TICK: Duration = Duration::from_millis(100);

/// Bytes one read may bring in.
pub const READ_BUF: usize = 64 * 1024;

/// The protocol a server is asked to speak, as `--proto` names it (the packet protocol's
/// frame size is `--packet-size`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProtoName {
    Http,
    Echo,
    Packet,
    /// HTTP/2: prior knowledge on a cleartext port (which also answers HTTP/1.1), ALPN over
    /// --tls.
    H2,
    /// RESP2 (redis's protocol): GET, SET, INCR, ... against the server's keyed store.
    Resp,
    /// memcached's text protocol: get, set, incr, ... against the server's keyed store.
    Memcache,
}

/// What `muxlab serve` was asked: its flags as clap reads them. [`ServeArgs::validate`] checks
/// them against the model and makes the [`Config`] a server runs with.
#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// Protocol: http, echo, packet, h2 (HTTP/2; the same port answers HTTP/1.1), resp (redis's
    /// protocol) or memcache (memcached's text protocol).
    #[arg(long = "proto", short = 'P', value_enum, default_value = "http")]
    pub proto_name: ProtoName,
    /// Frame size of the packet protocol, in bytes.
    #[arg(long, default_value_t = 100)]
    pub packet_size: usize,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub addr: IpAddr,
    /// Port to listen on; 0 picks any free port (the listening line says which).
    #[arg(long, short = 'p', default_value_t = 8080)]
    pub port: u16,
    /// Worker threads or processes, for models that have workers [default: CPUs available: those
    /// of --cpus when given].
    #[arg(long, short = 'w')]
    pub workers: Option<usize>,
    /// Run the design as a group of this many processes, each with its own descriptor table
    /// and its own SO_REUSEPORT listener on the port (the kernel spreads connections over them
    /// by address hash): past the descriptors one process may open. Event-loop designs, uring
    /// and tokio only (see `muxlab models`); each process runs --workers workers.
    #[arg(long, default_value_t = 1)]
    pub procs: usize,
    /// listen() backlog, each listener's [default: 1024; a group's (--procs), net.core.somaxconn:
    /// its members close and take back many connections at once].
    #[arg(long)]
    pub backlog: Option<i32>,
    /// Most connections open at once; more are accepted and closed at once (counted as
    /// rejected) [default: 90 % of the descriptor limit; 1,000 for fork].
    #[arg(long)]
    pub max_conns: Option<usize>,
    /// resp and memcache: the keyed store, `owned` (one thread's table, no lock: only for a
    /// design with one thread that touches data), `locked` (one table behind one lock) or
    /// `striped:N` (N tables by key hash, a lock each, as memcached's item locks; MSET takes
    /// its stripes in order and is atomic) or `sharded` (multi-reactor and dispatch: a table
    /// per worker loop, a command for another worker's key sent to it and answered later)
    /// [default: the design's own, see `muxlab models`].
    #[arg(long = "store")]
    pub store_kind: Option<crate::store::Kind>,
    /// resp and memcache: the most keys the store holds; past it, a new key evicts by
    /// sampled LRU (of 5 keys drawn, the least recently used). Striped and sharded stores
    /// hold an equal share in each stripe or shard [default: no bound].
    #[arg(long)]
    pub max_keys: Option<usize>,
    /// resp and memcache: the most the store's entries may cost (key, value and 64 bytes
    /// each), e.g. 64MiB; past it, writes evict by sampled LRU. Shared out as --max-keys is
    /// [default: no bound].
    #[arg(long, value_parser = parse_size)]
    pub max_memory: Option<usize>,
    /// resp and memcache: the largest value a command may carry, e.g. 1MiB. Larger, RESP
    /// answers redis's `Protocol error: invalid bulk length` and closes (as redis does past its
    /// proto-max-bulk-len); memcache answers `SERVER_ERROR object too large for cache` and
    /// drops the value, a `set` unlinking the key's old one (as memcached does).
    #[arg(long, default_value = "1MiB", value_parser = parse_size)]
    pub max_value: usize,
    /// The largest HTTP request body accepted (larger: 413), e.g. 1MiB, 64KiB, 100000.
    #[arg(long, default_value = "1MiB", value_parser = parse_size)]
    pub max_body: usize,
    /// Close connections silent for this long, or whose output makes no progress for this long
    /// (a client that stops reading); 0 disables. Connections a load holds open without sending
    /// (`load --active`) are closed at it: for a longer hold give a longer one, or 0.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub idle_timeout: Duration,
    /// Answer 408 and close when a request head is not complete this long after its first byte
    /// (HTTP); 0 disables.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub header_timeout: Duration,
    /// Stop reading a connection while this much of its output is unsent, e.g. 256KiB (with
    /// h2, response bytes waiting for the client's flow-control window count too: past it the
    /// client is granted no more window; with resp and memcache, answers being built on other
    /// threads and the commands sent to them count too).
    #[arg(long, default_value = "256KiB", value_parser = parse_size)]
    pub max_output: usize,
    /// HTTP/2 streams one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS;
    /// more are refused with REFUSED_STREAM).
    #[arg(long, default_value_t = 100)]
    pub max_streams: u32,
    /// HTTP/2: resets of open or answered streams a client may send, N per WINDOW, before its
    /// connection ends with GOAWAY ENHANCE_YOUR_CALM (Rapid Reset); `off` for none. Netty's
    /// server default.
    #[arg(long, default_value = "200/30s", value_parser = crate::proto::Rate::from_str)]
    pub h2_client_resets: crate::proto::Rate,
    /// HTTP/2: stream errors a client may make the server reset, N per WINDOW (MadeYouReset);
    /// `off` for none. Netty's default.
    #[arg(long, default_value = "200/30s", value_parser = crate::proto::Rate::from_str)]
    pub h2_server_resets: crate::proto::Rate,
    /// HTTP/2: frames that produce no output a client may send, N per WINDOW (empty DATA,
    /// PRIORITY, unknown types, SETTINGS, PING, RST_STREAM and WINDOW_UPDATE on closed
    /// streams); `off` for none. Netty's and nginx's 10,000.
    #[arg(long, default_value = "10000/10s", value_parser = crate::proto::Rate::from_str)]
    pub h2_quiet_frames: crate::proto::Rate,
    /// Work per request, a service-time distribution: cpu:D spins D of the handling thread's
    /// CPU, sleep:D blocks it (a backend call), cpu:D1+sleep:D2 both; D is 200us, exp(MEAN),
    /// lognormal(MEAN,SIGMA), pareto(MEAN,ALPHA), mix(99.5%:50us,0.5%:5ms), bimodal1(MEAN),
    /// bimodal2(MEAN) or hist:FILE (a .hgrm listing in ms or an HdrHistogram V2 log in ns); a
    /// draw over 10s is cut there.
    #[arg(long = "work", value_name = "WORK", default_value = "none")]
    pub work_spec: String,
    /// Let an HTTP request name its own work in its query (GET /?cpu=2ms&sleep=1ms, each a D of
    /// --work but hist:, at most 128 bytes and two levels of parentheses), instead of --work
    /// (which a query naming none gets); requests are counted per class (its query) in the
    /// stats line.
    #[arg(long)]
    pub work_from_request: bool,
    /// With --work-from-request, the most work a request may name, CPU and wait together (over
    /// it on average: 400), and where its draws are cut (--work's own are cut at 10s).
    #[arg(long, default_value = "10ms", value_parser = parse_duration)]
    pub max_work: Duration,
    /// Make every GET an event stream (text/event-stream), with these defaults over
    /// events=10,every=100ms,size=32: events=N, every=D (a fixed time or a --work distribution,
    /// exp(20ms)), size=B (of each event's data), first=D0 (before the first event; default: a
    /// gap like the others). Without it only GET /stream?events=N&every=D&size=B&first=D0
    /// streams; a /stream query's keys win over these.
    #[arg(long, value_name = "SPEC", value_parser = super::stream_spec::StreamSpec::from_str)]
    pub stream: Option<super::stream_spec::StreamSpec>,
    /// The largest event stream a request may ask for, over it 400: events=N, time=D (the
    /// stream's time on average; a longer gap is cut here), size=B (of one event's data).
    #[arg(
        long,
        value_name = "BOUNDS",
        default_value = "events=100000,time=1h,size=64KiB",
        value_parser = super::stream_spec::StreamBounds::from_str
    )]
    pub max_stream: super::stream_spec::StreamBounds,
    /// An event sent more than this after its due time counts as late (the stats line's
    /// sse_late; every event's lateness is in its sse_late_le_* histogram).
    #[arg(long, default_value = "5ms", value_parser = parse_duration)]
    pub stream_slack: Duration,
    /// Model offload only: hand only work whose mean is over this to the pool; shorter work
    /// is done on the loop (0: all of it goes to the pool).
    #[arg(long, value_parser = parse_duration)]
    pub offload_over: Option<Duration>,
    /// Model offload only: under=D:K reserves K of the pool's workers for requests whose work
    /// has a mean under D (the short class); the others take any (Perséphone's DARC).
    #[arg(long, value_name = "under=D:K", value_parser = Reserve::from_str)]
    pub reserve: Option<Reserve>,
    /// Seed of the work's draws (with the worker and the process: forked workers do not repeat
    /// each other, and runs repeat).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// epoll trigger mode, model epoll only [default: level].
    #[arg(long, value_enum)]
    pub trigger: Option<Trigger>,
    /// With hundreds of connections open, wait for a batch of completions, at most this much
    /// longer once one is there; model uring only (io_uring's min-wait, Linux 6.12+): fewer
    /// wake-ups per request under load, at most this much added latency; the batch follows the
    /// last turn's, so a lone request does not wait. 0 waits for one completion [default: 100us].
    #[arg(long, value_parser = parse_duration)]
    pub batch_wait: Option<Duration>,
    /// Model green only: how much CPU a request's `cpu:` work uses before it lets the green
    /// threads in line go first (Go's scheduler slice); other code is not preempted
    /// [default: 10ms].
    #[arg(long, value_parser = parse_duration)]
    pub green_slice: Option<Duration>,
    /// Accept guard, model procs-accept only [default: exclusive].
    #[arg(long, value_enum)]
    pub accept: Option<AcceptGuard>,
    /// Lower the open-file limit to this many descriptors (to reproduce EMFILE).
    #[arg(long)]
    pub nofile: Option<u64>,
    /// Pin the server to these CPUs, e.g. 0 or 0,2-3.
    #[arg(long)]
    pub cpus: Option<CpuList>,
    /// Fault injection for testing harnesses: abort (SIGABRT) once this many requests were served.
    #[arg(long, hide = true)]
    pub crash_after_requests: Option<u64>,
    /// Serve live metrics at http://ADDR/metrics (Prometheus text, or OpenMetrics where the
    /// scraper's Accept names it), from a process of its own: every counter of the stats line
    /// by worker, connections held, requests in the server, and the request duration histogram
    /// (http_server_request_duration_seconds; muxlab_request_duration_seconds for echo, packet,
    /// resp and memcache; buckets 1 µs .. 10 s at most 1.5x apart). The histogram is sampled:
    /// it holds the requests of one read in eight on each thread (the reads timed for the
    /// stats line's residence, whose clock reads it shares: timing every read would cost a
    /// clock read more per request), each from when its loop learned of the input to when its
    /// response was ready for the kernel; muxlab_timed_requests_total is its count,
    /// muxlab_requests_total counts every request. Requests answered later (a pool's, a
    /// stream's events) are counted, not timed. E.g. 127.0.0.1:9464.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
    /// TCP_DEFER_ACCEPT on the listener: a connection is accepted only once its request has
    /// arrived (nginx's `listen ... deferred`), so the first read after accept finds it.
    #[arg(long)]
    pub defer_accept: bool,
    /// Serve over TLS (rustls): CERT.pem,KEY.pem, or self-signed (a certificate for localhost
    /// and 127.0.0.1 made at start). Every model wraps its sessions the same way.
    #[arg(long = "tls", value_name = "CERT,KEY|self-signed")]
    pub tls_spec: Option<String>,
}

/// A server's configuration: its flags, checked, with what they describe made (the protocol
/// with its frame size, the TLS configuration). Only [`ServeArgs::validate`] makes one; the
/// flags as given are reached through it (`cfg.workers`).
#[derive(Debug, Clone)]
pub struct Config {
    args: ServeArgs,
    pub proto: Proto,
    /// The work of `--work`.
    pub work: Work,
    /// The TLS configuration of `--tls`.
    pub tls: Option<std::sync::Arc<rustls::ServerConfig>>,
}

impl std::ops::Deref for Config {
    type Target = ServeArgs;
    fn deref(&self) -> &ServeArgs {
        &self.args
    }
}

impl ServeArgs {
    /// The listen() backlog: `--backlog`, else 1,024, else for a group `net.core.somaxconn`
    /// (the most the kernel grants).
    pub fn backlog(&self) -> i32 {
        match (self.backlog, self.procs) {
            (Some(b), _) => b,
            (None, 1) => 1024,
            (None, _) => crate::sys::settings::Settings::read()
                .somaxconn
                .map_or(1024, |s| s.min(i32::MAX as u64) as i32),
        }
    }

    /// The address to listen on.
    pub fn listen_addr(&self) -> SocketAddr {
        SocketAddr::new(self.addr, self.port)
    }

    /// The idle (and send) timeout; `None`: never.
    pub fn idle(&self) -> Option<Duration> {
        (!self.idle_timeout.is_zero()).then_some(self.idle_timeout)
    }

    /// The least time any timeout of a connection lies ahead of the step that sets it: a
    /// tick (giving back an idle spell's buffers), the header or the idle timeout, whichever
    /// is shortest.
    pub fn timeout_floor(&self) -> Duration {
        let mut floor = TICK;
        for t in [self.idle_timeout, self.header_timeout] {
            if !t.is_zero() && t < floor {
                floor = t;
            }
        }
        floor
    }

    /// The header timeout; `None`: never.
    pub fn header_deadline(&self) -> Option<Duration> {
        (!self.header_timeout.is_zero()).then_some(self.header_timeout)
    }

    /// The flags of keyed state (`--store`, `--max-value`) where they apply, and `--work`
    /// where it does not.
    fn check_keyed(&self, proto: Proto, work: &Work) -> Result<(), Error> {
        if (self.store_kind.is_some() || self.max_keys.is_some() || self.max_memory.is_some()) && !proto.keyed() {
            return Err(Error::KeyedFlagsWithoutKeyedProto);
        }
        if self.max_keys == Some(0) || self.max_memory == Some(0) {
            return Err(Error::ZeroKeyBound);
        }
        if self.max_value == 0 || self.max_value > 1 << 30 {
            return Err(Error::MaxValueOutOfRange {
                max_value: self.max_value,
            });
        }
        if proto.keyed() && !work.is_none() {
            return Err(Error::WorkWithKeyedProto);
        }
        Ok(())
    }

    /// The flags only some models honour: refused for the others, checked for range.
    fn check_model_flags(&self, model: &'static str, flags: &[Flag]) -> Result<(), Error> {
        let refuse = |flag: Flag| Err(Error::Unhonoured { model, flag });
        if self.trigger.is_some() && !flags.contains(&Flag::Trigger) {
            return refuse(Flag::Trigger);
        }
        if self.batch_wait.is_some() && !flags.contains(&Flag::BatchWait) {
            return refuse(Flag::BatchWait);
        }
        if let Some(wait) = self.batch_wait.filter(|d| *d > Duration::from_millis(10)) {
            return Err(Error::BatchWaitOver { wait });
        }
        if self.offload_over.is_some() && !flags.contains(&Flag::OffloadOver) {
            return refuse(Flag::OffloadOver);
        }
        if self.reserve.is_some() && !flags.contains(&Flag::Reserve) {
            return refuse(Flag::Reserve);
        }
        if self.green_slice.is_some() && !flags.contains(&Flag::GreenSlice) {
            return refuse(Flag::GreenSlice);
        }
        if let Some(slice) = self
            .green_slice
            .filter(|d| *d < Duration::from_micros(1) || *d > Duration::from_secs(1))
        {
            return Err(Error::GreenSliceOutOfRange { slice });
        }
        if self.accept.is_some() && !flags.contains(&Flag::Accept) {
            return refuse(Flag::Accept);
        }
        Ok(())
    }

    /// Checks the flags against the model they are for: a flag the model does not honour, or a
    /// value out of range, is one clear [`Error`] the user caused (exit 2), never silently ignored.
    /// Returns the configuration to run (the packet protocol with its `--packet-size`).
    pub fn validate(self, model: &'static str, workers: Workers, flags: &[Flag]) -> Result<Config, Error> {
        match (workers, self.workers) {
            (Workers::None, Some(n)) if n != 1 => return Err(Error::NoWorkers { model, workers: n }),
            (_, Some(0)) => return Err(Error::ZeroWorkers),
            (_, Some(n)) if n > 1024 => return Err(Error::TooManyWorkers { workers: n }),
            _ => {}
        }
        if !(1..=MOST_PROCS).contains(&self.procs) {
            return Err(Error::ProcsOutOfRange { procs: self.procs });
        }
        self.check_model_flags(model, flags)?;
        if let Some(backlog) = self.backlog.filter(|&b| b < 1) {
            return Err(Error::BacklogUnderOne { backlog });
        }
        if self.max_output == 0 {
            return Err(Error::ZeroMaxOutput);
        }
        if self.max_conns == Some(0) {
            return Err(Error::ZeroMaxConns);
        }
        if let Some(nofile) = self.nofile.filter(|&n| n < 16) {
            return Err(Error::NofileTooLow { nofile });
        }
        if self.work_from_request && !matches!(self.proto_name, ProtoName::Http | ProtoName::H2) {
            return Err(Error::WorkFromRequestNeedsHttp);
        }
        if self.stream.is_some() && !matches!(self.proto_name, ProtoName::Http | ProtoName::H2) {
            return Err(Error::StreamNeedsHttp);
        }
        if self.max_streams == 0 {
            return Err(Error::ZeroMaxStreams);
        }
        if self.max_work.is_zero() {
            return Err(Error::ZeroMaxWork);
        }
        let proto = match self.proto_name {
            ProtoName::Http => Proto::Http,
            ProtoName::Echo => Proto::Echo,
            ProtoName::Packet if self.packet_size == 0 => return Err(Error::ZeroPacketSize),
            ProtoName::Packet => Proto::Packet(self.packet_size),
            ProtoName::H2 => Proto::H2,
            ProtoName::Resp => Proto::Resp,
            ProtoName::Memcache => Proto::Memcache,
        };
        let tls = self
            .tls_spec
            .as_deref()
            .map(|spec| crate::proto::server_config(spec, proto == Proto::H2))
            .transpose()?;
        let work = self.work_spec.parse::<Work>()?;
        self.check_keyed(proto, &work)?;
        Ok(Config {
            args: self,
            proto,
            work,
            tls,
        })
    }
}

/// What `--workers` means for a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workers {
    /// The model has no workers; `--workers` is refused.
    None,
    Threads,
    Processes,
}

/// epoll's notification mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Trigger {
    /// Level-triggered: reported while ready; read once per event.
    Level,
    /// Edge-triggered: reported on change; accept and read until EAGAIN.
    Edge,
}

/// How worker processes sharing one listener avoid (or suffer) the thundering herd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AcceptGuard {
    /// No guard: every worker is woken for each connection.
    All,
    /// EPOLLEXCLUSIVE: the kernel wakes one waiter.
    Exclusive,
    /// An accept mutex in shared memory (nginx's accept_mutex).
    Mutex,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        cfg: super::ServeArgs,
    }

    /// serve's flags with none given: the idle timeout bench reasons from is the flag's own,
    /// and a group's backlog is the kernel's most (one process's stays 1,024).
    #[test]
    fn the_defaults_bench_reasons_from_are_the_flags_own() {
        let plain = Flags::parse_from(["t"]).cfg;
        assert_eq!(plain.idle_timeout, super::DEFAULT_IDLE_TIMEOUT);
        assert_eq!(plain.backlog(), 1024);
        let group = Flags::parse_from(["t", "--procs", "4"]).cfg;
        let somaxconn: i32 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(group.backlog(), somaxconn);
        let given = Flags::parse_from(["t", "--procs", "4", "--backlog", "77"]).cfg;
        assert_eq!(given.backlog(), 77);
    }
}
