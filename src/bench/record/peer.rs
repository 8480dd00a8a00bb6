//! The production servers an experiment sets beside its models (`peers`): what an entry names,
//! the protocol each speaks, and how many threads serve (which decides its CPUs under
//! `threaded_cpus`). Entries use the products' own flags: `"nginx"`, `"nginx deferred"`,
//! `"redis-server"`, `"redis-server --io-threads 2"`, `"memcached"`, `"memcached -t 2"`.

use super::scenario::Protocol;

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
}

/// What the peers are, for an error that names them.
pub const KNOWN: &str =
    "nginx, \"nginx deferred\", redis-server (\"redis-server --io-threads N\") and memcached (\"memcached -t N\")";

impl Peer {
    /// Reads an entry; the error says what it expected.
    pub fn parse(entry: &str) -> Result<Peer, String> {
        let words: Vec<&str> = entry.split_whitespace().collect();
        let threads = |flag: &str, rest: &[&str]| -> Result<usize, String> {
            match rest {
                [] => Ok(1),
                [f, n] if *f == flag => n
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=MAX_THREADS).contains(n))
                    .ok_or_else(|| format!("'{entry}': {flag} takes 1 to {MAX_THREADS} threads")),
                _ => Err(format!("'{entry}': {} takes only {flag} N", words[0])),
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
            _ => Err(format!("unknown peer '{entry}': the peers are {KNOWN}")),
        }
    }

    /// The product, as its binary is named.
    pub fn product(self) -> &'static str {
        match self {
            Peer::Nginx { .. } => "nginx",
            Peer::Redis { .. } => "redis-server",
            Peer::Memcached { .. } => "memcached",
        }
    }

    /// Whether it serves `proto` as the experiment's models do.
    pub fn speaks(self, proto: Protocol) -> bool {
        match self {
            Peer::Nginx { .. } => matches!(proto, Protocol::Http | Protocol::H2),
            Peer::Redis { .. } => proto == Protocol::Resp,
            Peer::Memcached { .. } => proto == Protocol::Memcache,
        }
    }

    /// The protocols it speaks, in words.
    pub fn protocols(self) -> &'static str {
        match self {
            Peer::Nginx { .. } => "http and h2",
            Peer::Redis { .. } => "resp",
            Peer::Memcached { .. } => "memcache",
        }
    }

    /// The threads that serve requests (nginx: its one worker process).
    pub fn threads(self) -> usize {
        match self {
            Peer::Nginx { .. } => 1,
            Peer::Redis { io_threads } => io_threads,
            Peer::Memcached { threads } => threads,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_entries_take_the_products_own_thread_flags_and_refuse_the_rest() {
        assert_eq!(Peer::parse("redis-server"), Ok(Peer::Redis { io_threads: 1 }));
        assert_eq!(
            Peer::parse("redis-server  --io-threads 2"),
            Ok(Peer::Redis { io_threads: 2 })
        );
        assert_eq!(Peer::parse("memcached -t 2"), Ok(Peer::Memcached { threads: 2 }));
        assert_eq!(Peer::parse("nginx deferred"), Ok(Peer::Nginx { deferred: true }));
        assert!(Peer::parse("memcached -t 0").unwrap_err().contains("1 to 64"));
        assert!(Peer::parse("memcached --threads 2")
            .unwrap_err()
            .contains("takes only -t N"));
        assert!(Peer::parse("redis").unwrap_err().contains("unknown peer 'redis'"));
        assert!(Peer::Redis { io_threads: 1 }.speaks(Protocol::Resp));
        assert!(!Peer::Redis { io_threads: 1 }.speaks(Protocol::Memcache));
        assert!(!Peer::Nginx { deferred: false }.speaks(Protocol::Resp));
        assert_eq!(Peer::Memcached { threads: 2 }.threads(), 2);
    }
}
