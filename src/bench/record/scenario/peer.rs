//! The production servers an experiment sets beside its models (`peers`): what an entry names,
//! the protocol each speaks, how many threads serve (which decides its CPUs under
//! `threaded_cpus`), and the models that stand for it (the fidelity verdict compares them).
//! Entries use the products' own flags and knobs: `"nginx"`, `"nginx deferred"`,
//! `"redis-server"`, `"redis-server --io-threads 2"`, `"memcached"`, `"memcached -t 2"`; the
//! runtimes' servers in `products/`: `"go"` (net/http, a blocking call as the nanosleep system
//! call), `"go time.Sleep"` (the call as `time.Sleep`), either with `GOMAXPROCS=N` (default:
//! the experiment's `workers` where it sets them, as green's `--workers`, else Go's own, the
//! CPUs it may run on); `"node"` (http, the work on its one loop) and
//! `"node worker_threads=N"` (the work handed to a pool of N worker threads).

use super::experiment::{Experiment, Protocol};

/// The most threads a peer entry may ask for.
pub const MAX_THREADS: usize = 64;

/// A peer entry, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// nginx with one worker; `deferred`: TCP_DEFER_ACCEPT on its listener.
    Nginx { deferred: bool },
    /// Debian's redis-server with `--io-threads N` (1: the main thread does all the I/O).
    Redis { io_threads: usize },
    /// Debian's memcached with `-t N` worker threads.
    Memcached { threads: usize },
    /// Go's net/http (`products/go`): `procs` is GOMAXPROCS (`None`: as said above);
    /// `time_sleep`: a blocking call is `time.Sleep`, not the nanosleep system call.
    Go { procs: Option<usize>, time_sleep: bool },
    /// Node's http (`products/node`): the work on the loop (`worker_threads` 0) or on a pool.
    Node { worker_threads: usize },
}

/// What the peers are, for an error that names them.
pub const KNOWN: &str = "nginx, \"nginx deferred\", redis-server (\"redis-server --io-threads N\"), memcached \
     (\"memcached -t N\"), go (\"go time.Sleep\", either with GOMAXPROCS=N) and node (\"node worker_threads=N\")";

/// Every product a peer entry may name, with the model that stands for it, in words (`bench
/// --list`).
pub const PRODUCTS: &[(&str, &str)] = &[
    ("nginx", "procs-accept"),
    ("redis-server", "reactor (--io-threads N: io-threads)"),
    ("memcached", "dispatch (and multi-reactor)"),
    ("go", "green"),
    ("node", "reactor (worker_threads=N: offload)"),
];

/// A `peers` entry refused: the entry as written, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPeer {
    pub entry: String,
    pub why: PeerFault,
}

/// Why a `peers` entry is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerFault {
    /// A count (`GOMAXPROCS`, `worker_threads`) outside 1 to [`MAX_THREADS`].
    Count { what: &'static str },
    /// A thread flag's count outside 1 to [`MAX_THREADS`].
    Threads { flag: &'static str },
    /// Words other than the product's one thread flag.
    OnlyFlag { flag: &'static str },
    /// go's words other than `GOMAXPROCS=N` and `time.Sleep`, each once.
    GoOptions,
    /// node's words other than `worker_threads=N`.
    NodeOptions,
    /// No peer of that name.
    Unknown,
}

impl std::fmt::Display for BadPeer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entry = &self.entry;
        let product = entry.split_whitespace().next().unwrap_or("");
        match self.why {
            PeerFault::Count { what } => write!(f, "'{entry}': {what} takes 1 to {MAX_THREADS}"),
            PeerFault::Threads { flag } => write!(f, "'{entry}': {flag} takes 1 to {MAX_THREADS} threads"),
            PeerFault::OnlyFlag { flag } => write!(f, "'{entry}': {product} takes only {flag} N"),
            PeerFault::GoOptions => write!(f, "'{entry}': go takes GOMAXPROCS=N and time.Sleep, each at most once"),
            PeerFault::NodeOptions => write!(f, "'{entry}': node takes only worker_threads=N"),
            PeerFault::Unknown => write!(f, "unknown peer '{entry}': the peers are {KNOWN}"),
        }
    }
}

impl std::error::Error for BadPeer {}

impl Peer {
    /// Reads an entry; the error says what it expected.
    pub fn parse(entry: &str) -> Result<Peer, BadPeer> {
        let words: Vec<&str> = entry.split_whitespace().collect();
        let bad = |why| BadPeer {
            entry: entry.to_string(),
            why,
        };
        let count = |n: &str, what: &'static str| -> Result<usize, BadPeer> {
            n.parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_THREADS).contains(n))
                .ok_or_else(|| bad(PeerFault::Count { what }))
        };
        let threads = |flag: &'static str, rest: &[&str]| -> Result<usize, BadPeer> {
            match rest {
                [] => Ok(1),
                [f, n] if *f == flag => count(n, flag).map_err(|_| bad(PeerFault::Threads { flag })),
                _ => Err(bad(PeerFault::OnlyFlag { flag })),
            }
        };
        match words.as_slice() {
            ["nginx"] => Ok(Peer::Nginx { deferred: false }),
            ["nginx", "deferred"] => Ok(Peer::Nginx { deferred: true }),
            ["redis-server", rest @ ..] => Ok(Peer::Redis {
                io_threads: threads("--io-threads", rest)?,
            }),
            ["memcached", rest @ ..] => Ok(Peer::Memcached {
                threads: threads("-t", rest)?,
            }),
            ["go", rest @ ..] => {
                let mut procs = None;
                let mut time_sleep = false;
                for w in rest {
                    match w.strip_prefix("GOMAXPROCS=") {
                        Some(n) if procs.is_none() => procs = Some(count(n, "GOMAXPROCS")?),
                        None if *w == "time.Sleep" && !time_sleep => time_sleep = true,
                        _ => return Err(bad(PeerFault::GoOptions)),
                    }
                }
                Ok(Peer::Go { procs, time_sleep })
            }
            ["node"] => Ok(Peer::Node { worker_threads: 0 }),
            ["node", w] if w.starts_with("worker_threads=") => Ok(Peer::Node {
                worker_threads: count(&w["worker_threads=".len()..], "worker_threads")?,
            }),
            ["node", ..] => Err(bad(PeerFault::NodeOptions)),
            _ => Err(bad(PeerFault::Unknown)),
        }
    }

    /// The product, as its binary is named.
    pub fn product(self) -> &'static str {
        match self {
            Peer::Nginx { .. } => "nginx",
            Peer::Redis { .. } => "redis-server",
            Peer::Memcached { .. } => "memcached",
            Peer::Go { .. } => "go",
            Peer::Node { .. } => "node",
        }
    }

    /// The models that stand for it (the designs it is built on), the first its own.
    /// memcached's worker threads each run an event loop, as multi-reactor's do; its
    /// listener hands accepted connections to them, as dispatch's does.
    pub fn stands_for(self) -> &'static [&'static str] {
        match self {
            Peer::Nginx { .. } => &["procs-accept"],
            Peer::Redis { io_threads: 1 } => &["reactor"],
            Peer::Redis { .. } => &["io-threads"],
            Peer::Memcached { .. } => &["dispatch", "multi-reactor"],
            Peer::Go { .. } => &["green"],
            Peer::Node { worker_threads: 0 } => &["reactor"],
            Peer::Node { .. } => &["offload"],
        }
    }

    /// The threads that serve its requests' work, to match a model's `--workers` (`workers`:
    /// the experiment's; `None`: not known without the machine's CPUs). Node's loop is one.
    pub fn serving_threads(self, workers: Option<usize>) -> Option<usize> {
        match self {
            Peer::Nginx { .. } => Some(1),
            Peer::Redis { io_threads } => Some(io_threads),
            Peer::Memcached { threads } => Some(threads),
            Peer::Go { procs, .. } => procs.or(workers),
            Peer::Node { worker_threads: 0 } => Some(1),
            Peer::Node { worker_threads } => Some(worker_threads),
        }
    }

    /// Whether it does none of `x`'s work where `x` has some (nginx, the stores): it serves
    /// another load than the models beside it, so it is neither ranked beside them nor set
    /// beside its model.
    pub fn idle_in(self, x: &Experiment) -> bool {
        (x.work.is_some() || x.work_from_request) && !self.does_work()
    }

    /// Whether it does the experiment's work (`work`, `work_from_request`); the others
    /// answer at once whatever the work.
    pub fn does_work(self) -> bool {
        matches!(self, Peer::Go { .. } | Peer::Node { .. })
    }

    /// Whether it serves `proto` as the experiment's models do.
    pub fn speaks(self, proto: Protocol) -> bool {
        match self {
            Peer::Nginx { .. } => matches!(proto, Protocol::Http | Protocol::H2),
            Peer::Redis { .. } => proto == Protocol::Resp,
            Peer::Memcached { .. } => proto == Protocol::Memcache,
            Peer::Go { .. } | Peer::Node { .. } => proto == Protocol::Http,
        }
    }

    /// The protocols it speaks, in words.
    pub fn protocols(self) -> &'static str {
        match self {
            Peer::Nginx { .. } => "http and h2",
            Peer::Redis { .. } => "resp",
            Peer::Memcached { .. } => "memcache",
            Peer::Go { .. } | Peer::Node { .. } => "http",
        }
    }

    /// The threads that serve requests (nginx: its one worker process; go: its Ps, `workers`
    /// where GOMAXPROCS is not given, else `cpus`; node: its loop and its pool).
    pub fn threads(self, workers: Option<usize>, cpus: usize) -> usize {
        match self {
            Peer::Nginx { .. } => 1,
            Peer::Redis { io_threads } => io_threads,
            Peer::Memcached { threads } => threads,
            Peer::Go { procs, .. } => procs.or(workers).unwrap_or(cpus),
            Peer::Node { worker_threads } => 1 + worker_threads,
        }
    }

    /// The work of `x` as the runtimes' servers in `products/` draw it: fixed times and
    /// `exp(MEAN)` only, no event streams; the error names what they cannot serve.
    pub fn serves_work(self, x: &Experiment, peer: &str) -> Result<(), BadPeerWork> {
        use crate::server::work::{Dist, Work};
        let bad = |fault| BadPeerWork {
            peer: peer.to_string(),
            fault,
        };
        if x.stream.is_some() {
            return Err(bad(PeerWorkFault::Streams));
        }
        let drawn = |w: &Work| {
            [&w.cpu, &w.sleep]
                .into_iter()
                .flatten()
                .all(|d| matches!(d, Dist::Fixed(_) | Dist::Exp(_)))
        };
        if let Some(w) = &x.work {
            let work: Work = w.parse().map_err(|e| bad(PeerWorkFault::Work(e)))?;
            if !drawn(&work) {
                return Err(bad(PeerWorkFault::DrawsWork { work: w.clone() }));
            }
        }
        if x.work_from_request {
            for m in &x.load.mix {
                if let Ok(Some(work)) = crate::server::query_work(&m.path, x.max_work()) {
                    if !drawn(&work) {
                        return Err(bad(PeerWorkFault::DrawsClass {
                            class: m.name.clone(),
                            path: m.path.clone(),
                        }));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A peer that cannot serve an experiment's work: the peer entry, and why.
#[derive(Debug)]
pub struct BadPeerWork {
    pub peer: String,
    pub fault: PeerWorkFault,
}

/// Why a peer cannot serve an experiment's work.
#[derive(Debug)]
pub enum PeerWorkFault {
    /// The experiment's event streams (`stream`): the products serve none.
    Streams,
    /// The experiment's `work` does not read.
    Work(<crate::server::Work as std::str::FromStr>::Err),
    /// The experiment's `work` draws times the products cannot.
    DrawsWork { work: String },
    /// A request class's work (`work_from_request`) draws times the products cannot.
    DrawsClass { class: String, path: String },
}

impl std::fmt::Display for BadPeerWork {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let peer = &self.peer;
        let draws = "(a server in products/) draws fixed times and exp(MEAN) only, not";
        match &self.fault {
            PeerWorkFault::Streams => write!(f, "\"{peer}\" serves no event streams (stream)"),
            PeerWorkFault::Work(e) => e.fmt(f),
            PeerWorkFault::DrawsWork { work } => write!(f, "\"{peer}\" {draws} work '{work}'"),
            PeerWorkFault::DrawsClass { class, path } => {
                write!(f, "\"{peer}\" {draws} class '{class}' ({path})")
            }
        }
    }
}

impl std::error::Error for BadPeerWork {}

#[cfg(test)]
mod tests {
    use super::*;

    /// `bench --list`'s words for each product name the model its entries stand for.
    #[test]
    fn the_listed_products_name_the_models_that_stand_for_them() {
        for (product, model) in PRODUCTS {
            let peer = Peer::parse(product).unwrap();
            assert_eq!(peer.product(), *product);
            assert!(model.starts_with(peer.stands_for()[0]), "{product}: {model}");
            for m in peer.stands_for() {
                assert!(model.contains(m), "{product}: {model} names {m}");
            }
        }
        let entries = ["redis-server --io-threads 2", "node worker_threads=2"];
        for e in entries {
            let p = Peer::parse(e).unwrap();
            let (_, said) = PRODUCTS.iter().find(|(n, _)| *n == p.product()).unwrap();
            assert!(said.contains(p.stands_for()[0]), "{e}: {said}");
        }
        assert_eq!(PRODUCTS.len(), 5, "every Peer variant is listed");
    }

    #[test]
    fn peer_entries_take_the_products_own_thread_flags_and_refuse_the_rest() {
        assert_eq!(Peer::parse("redis-server"), Ok(Peer::Redis { io_threads: 1 }));
        assert_eq!(
            Peer::parse("redis-server  --io-threads 2"),
            Ok(Peer::Redis { io_threads: 2 })
        );
        assert_eq!(Peer::parse("memcached -t 2"), Ok(Peer::Memcached { threads: 2 }));
        assert_eq!(Peer::parse("nginx deferred"), Ok(Peer::Nginx { deferred: true }));
        let refused = |e: &str| Peer::parse(e).map(|_| ()).map_err(|b| (b.why, b.to_string()));
        let (why, said) = refused("memcached -t 0").unwrap_err();
        assert!(
            why == PeerFault::Threads { flag: "-t" } && said.contains("1 to 64"),
            "{said}"
        );
        let (why, said) = refused("memcached --threads 2").unwrap_err();
        assert!(
            why == PeerFault::OnlyFlag { flag: "-t" } && said.contains("memcached takes only -t N"),
            "{said}"
        );
        let (why, said) = refused("redis").unwrap_err();
        assert!(
            why == PeerFault::Unknown && said.contains("unknown peer 'redis'"),
            "{said}"
        );
        assert!(Peer::Redis { io_threads: 1 }.speaks(Protocol::Resp));
        assert!(!Peer::Redis { io_threads: 1 }.speaks(Protocol::Memcache));
        assert!(!Peer::Nginx { deferred: false }.speaks(Protocol::Resp));
        assert_eq!(Peer::Memcached { threads: 2 }.threads(None, 2), 2);
        assert_eq!(
            Peer::parse("go GOMAXPROCS=4 time.Sleep"),
            Ok(Peer::Go {
                procs: Some(4),
                time_sleep: true
            })
        );
        assert_eq!(Peer::parse("go").unwrap().threads(Some(4), 2), 4);
        assert_eq!(Peer::parse("go").unwrap().threads(None, 2), 2);
        let (why, said) = refused("go GOMAXPROCS=0").unwrap_err();
        assert!(
            why == PeerFault::Count { what: "GOMAXPROCS" } && said.contains("1 to 64"),
            "{said}"
        );
        let (why, said) = refused("go time.Sleep time.Sleep").unwrap_err();
        assert!(why == PeerFault::GoOptions && said.contains("at most once"), "{said}");
        assert_eq!(
            Peer::parse("node worker_threads=4"),
            Ok(Peer::Node { worker_threads: 4 })
        );
        let (why, said) = refused("node --pool 4").unwrap_err();
        assert!(
            why == PeerFault::NodeOptions && said.contains("only worker_threads=N"),
            "{said}"
        );
        assert!(!Peer::parse("node").unwrap().speaks(Protocol::Resp));
        assert_eq!(Peer::parse("node worker_threads=2").unwrap().stands_for(), ["offload"]);
        assert_eq!(
            Peer::parse("redis-server --io-threads 2").unwrap().stands_for(),
            ["io-threads"]
        );
        assert_eq!(
            Peer::parse("memcached -t 2").unwrap().stands_for(),
            ["dispatch", "multi-reactor"]
        );
    }
}
