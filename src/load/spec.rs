//! The plan of a run: [`LoadArgs`](super::LoadArgs) checked and completed by
//! [`resolve`](super::LoadArgs::resolve). Only a `Spec` carries derived values (the pacing, the
//! body, the method, the TLS client), so nothing downstream can meet them unresolved.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use super::args::LoadArgs;
use super::shard::{split, split_weighted, Shard};
use super::workload::Class;
use super::{Pacing, Payload, Target};
use crate::sys;
use crate::units::CpuList;

/// A load run, ready to go.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Measure for this long after the warm-up; `None` when `requests` is given.
    pub duration: Option<Duration>,
    /// Send this many requests in all; `None` when `duration` is given.
    pub requests: Option<u64>,
    pub pacing: Pacing,
    /// What each HTTP request carries after its head.
    pub payload: Payload,
    /// The HTTP method, upper case.
    pub method: String,
    /// The TLS client of an https target.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// The request classes of `--mix` / `--mix-file` (empty: every request is the target's).
    pub classes: Vec<Class>,
    /// HTTP/2 (`h2c://`, or `--h2`).
    pub h2: bool,
    /// A keyed target's plan (`resp://`, `memcache://`).
    pub keyed: Option<super::keyed::Plan>,
    /// The arguments as given (what a shard process or a host is started with).
    pub(super) args: LoadArgs,
}

/// One process's share of a run (`--shard`, then `--subshard`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Share {
    /// Connection slots it runs.
    pub connections: usize,
    /// Global number of its first slot.
    pub first_slot: u64,
    /// Its part of `-n`.
    pub quota: Option<u64>,
    /// Its part of `--rate`.
    pub rate: Option<f64>,
    /// Its part of `--connect-rate`.
    pub connect_rate: Option<f64>,
    /// `--active`: which of its slots send.
    pub active: Option<super::Active>,
}

impl Share {
    /// The weight of slots `first .. first + n` (global numbers) in a split of the rate: the
    /// slots that send among them.
    pub fn senders(active: Option<super::Active>, first: u64, n: usize) -> f64 {
        match active {
            Some(a) => a.among(first, n as u64) as f64,
            None => n as f64,
        }
    }
}

impl Spec {
    /// The arguments this plan was made from.
    pub fn args(&self) -> &LoadArgs {
        &self.args
    }

    pub fn target(&self) -> &Target {
        &self.args.target
    }

    pub fn connections(&self) -> usize {
        self.args.connections
    }

    pub fn warmup(&self) -> Duration {
        self.args.workload.warmup
    }

    pub fn timeout(&self) -> Duration {
        self.args.workload.timeout
    }

    /// Requests in flight per connection: `--streams` (HTTP/2) or `--pipeline`.
    pub fn pipeline(&self) -> usize {
        match self.h2 {
            true => self.args.workload.streams,
            false => self.args.workload.pipeline,
        }
    }

    /// Commands a connection writes at once and has answered before the next batch: a keyed
    /// target's `--pipeline` (1 elsewhere: pipelined HTTP refills as responses come).
    pub fn batch(&self) -> usize {
        match self.keyed {
            Some(_) => self.args.workload.pipeline,
            None => 1,
        }
    }

    /// Every response is read as an event stream (`--sse`).
    pub fn sse(&self) -> bool {
        self.args.workload.sse
    }

    pub fn close(&self) -> bool {
        self.args.workload.close
    }

    pub fn requests_per_conn(&self) -> Option<u64> {
        self.args.workload.requests_per_conn
    }

    pub fn connect_first(&self) -> bool {
        self.args.workload.connect_first
    }

    /// Message size of echo and packet targets.
    pub fn size(&self) -> usize {
        self.args.workload.size
    }

    pub fn chunked(&self) -> bool {
        self.args.workload.chunked
    }

    pub fn headers(&self) -> &[String] {
        &self.args.workload.headers
    }

    pub fn cpus(&self) -> Option<&CpuList> {
        self.args.cpus.as_ref()
    }

    pub fn shard(&self) -> Option<Shard> {
        self.args.shard
    }

    pub fn subshard(&self) -> Option<Shard> {
        self.args.subshard
    }

    pub fn start_at(&self) -> Option<u64> {
        self.args.start_at
    }

    /// The source addresses of `--bind` (none: the kernel picks).
    pub fn sources(&self) -> &[Ipv4Addr] {
        self.args.sources()
    }

    /// Engine threads: `-t`, or one per CPU this process may run on.
    pub fn threads(&self) -> usize {
        self.args
            .threads
            .unwrap_or_else(|| sys::affinity::get().map(|c| c.len()).unwrap_or(1).max(1))
    }

    /// The same plan with other source addresses (a crowded loopback target spread out).
    pub fn with_sources(&self, bind: crate::units::AddrRange) -> Spec {
        let mut s = self.clone();
        s.args.workload.bind = Some(bind);
        s
    }

    /// This process's share: `--shard` picks a piece of the run, `--subshard` a piece of that.
    pub fn share(&self) -> Share {
        let total = self.connections();
        let mut conns = total;
        let mut first = 0;
        let mut ways = 1;
        for Shard(i, k) in [self.args.shard, self.args.subshard].into_iter().flatten() {
            let (n, off) = split(conns, k, i);
            conns = n;
            first += off;
            ways *= k;
        }
        let active = self.args.workload.active;
        let part = |whole: f64| whole * Share::senders(active, first as u64, conns) / Share::senders(active, 0, total);
        Share {
            connections: conns,
            first_slot: first as u64,
            quota: self.requests.map(|n| split_weighted(n, total, first, conns)),
            rate: match self.pacing {
                Pacing::Rate(r) => Some(part(r)),
                _ => None,
            },
            connect_rate: self.args.workload.connect_rate.map(|r| r / ways as f64),
            active,
        }
    }
}
