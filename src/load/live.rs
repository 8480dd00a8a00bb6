//! `load --metrics`: the client's view, live. Each engine thread counts its answers' durations
//! into its own buckets ([`Live`], beside its tally) and stores its figures in its progress
//! words now and then; a scrape sums them ([`Snapshot::read`]). A run split over processes
//! sums its parts' snapshots, which they print as `metrics` lines ([`Board`]).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::engine::Progress;
use super::ERROR_CLASSES;
use crate::metrics::{Exposition, Format, Labels, SLOTS};

/// A thread's duration histogram: what its answers took, from their intended send time
/// (coordinated-omission corrected in an open loop; the send in a closed one).
#[derive(Debug, Clone)]
pub struct Live {
    counts: [u64; SLOTS],
    sum_ns: u64,
}

impl Default for Live {
    fn default() -> Live {
        Live {
            counts: [0; SLOTS],
            sum_ns: 0,
        }
    }
}

impl Live {
    #[inline]
    pub fn observe(&mut self, ns: u64, n: u64) {
        self.counts[crate::metrics::slot(ns)] += n;
        self.sum_ns = self.sum_ns.saturating_add(ns.saturating_mul(n));
    }

    /// Stores the histogram in a thread's progress words.
    pub fn publish(&self, p: &Progress) {
        for (w, &c) in p.counts.iter().zip(&self.counts) {
            w.store(c, Ordering::Relaxed);
        }
        p.sum_ns.store(self.sum_ns, Ordering::Relaxed);
    }
}

/// The figures a scrape reads: a process's threads', or a split run's parts', summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Requests completed and sent in the window.
    pub requests: u64,
    pub sent: u64,
    /// Connections open now.
    pub open: u64,
    /// Errors by class, in [`ERROR_CLASSES`]' order.
    pub errors: Vec<u64>,
    /// The duration histogram: counts per bucket, and their sum in nanoseconds.
    pub counts: Vec<u64>,
    pub sum_ns: u64,
}

impl Default for Snapshot {
    fn default() -> Snapshot {
        Snapshot {
            requests: 0,
            sent: 0,
            open: 0,
            errors: vec![0; ERROR_CLASSES.len()],
            counts: vec![0; SLOTS],
            sum_ns: 0,
        }
    }
}

impl Snapshot {
    /// The sum of the threads' progress words.
    pub fn read(progress: &[Progress]) -> Snapshot {
        let mut s = Snapshot::default();
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        for p in progress {
            s.requests += get(&p.done);
            s.sent += get(&p.sent);
            s.open += get(&p.open);
            s.sum_ns += get(&p.sum_ns);
            for (e, a) in s.errors.iter_mut().zip(&p.by_class) {
                *e += get(a);
            }
            for (c, a) in s.counts.iter_mut().zip(&p.counts) {
                *c += get(a);
            }
        }
        s
    }

    /// Adds another's figures (a part's); one of another shape (not this program's) is left out.
    pub fn add(&mut self, o: &Snapshot) {
        if o.errors.len() != self.errors.len() || o.counts.len() != self.counts.len() {
            return;
        }
        self.requests += o.requests;
        self.sent += o.sent;
        self.open += o.open;
        self.sum_ns += o.sum_ns;
        for (a, b) in self.errors.iter_mut().zip(&o.errors) {
            *a += b;
        }
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
    }
}

/// A split run's parts' latest snapshots, which its scrape sums.
#[derive(Debug, Clone)]
pub struct Board(Arc<Mutex<Vec<Snapshot>>>);

impl Board {
    pub fn new(parts: usize) -> Board {
        Board(Arc::new(Mutex::new(vec![Snapshot::default(); parts])))
    }

    /// Part `i` said this.
    pub fn set(&self, i: usize, s: Snapshot) {
        if let Some(slot) = crate::sync::lock(&self.0).get_mut(i) {
            *slot = s;
        }
    }

    pub fn sum(&self) -> Snapshot {
        let mut total = Snapshot::default();
        for s in crate::sync::lock(&self.0).iter() {
            total.add(s);
        }
        total
    }
}

/// `--metrics`: serves `read`'s figures at `addr` while the run goes (an error: the address
/// could not be bound).
pub fn serve<F>(addr: std::net::SocketAddr, meta: Meta, read: F) -> Result<crate::metrics::Endpoint, super::Error>
where
    F: Fn() -> Snapshot + Send + 'static,
{
    crate::metrics::start(addr, move |format| render(meta, &read(), format))
        .map_err(|source| super::Error::MetricsAddr { addr, source })
}

/// After the run: a scrape is waited for (`--metrics-linger`, 5 s by default), so the last
/// figures are read.
/// Says so on stderr when `say`.
pub fn linger(endpoint: Option<crate::metrics::Endpoint>, spec: &super::Spec, say: bool) {
    let Some(e) = endpoint else { return };
    // Stopped (Ctrl-C): no waiting.
    if super::stop::STOP.load(std::sync::atomic::Ordering::Relaxed) != 0 {
        return;
    }
    let most = spec.args().metrics_linger.unwrap_or(std::time::Duration::from_secs(5));
    if say && !most.is_zero() {
        eprintln!(
            "muxlab: --metrics: waiting up to {} for a scrape of the final figures at http://{}/metrics",
            crate::units::exact_duration(most),
            e.addr
        );
    }
    e.linger(most);
}

impl Meta {
    /// What `spec`'s whole run is (its share, where it is one).
    pub fn of(spec: &super::Spec) -> Meta {
        let share = spec.share();
        Meta {
            http: spec.target().kind == super::Kind::Http,
            offered: share.rate,
            connections: share.connections,
        }
    }
}

/// What a scrape says of the run beside its figures.
#[derive(Debug, Clone, Copy)]
pub struct Meta {
    /// HTTP (1.1 or 2): OpenTelemetry's names.
    pub http: bool,
    /// The offered rate of an open loop (requests/s over the whole run); `None`: closed loop.
    pub offered: Option<f64>,
    /// Connections the run keeps.
    pub connections: usize,
}

/// A scrape's body.
pub fn render(meta: Meta, s: &Snapshot, format: Format) -> String {
    let mut e = Exposition::new(format);
    let name = match meta.http {
        true => "http_client_request_duration_seconds",
        false => "muxlab_client_request_duration_seconds",
    };
    // From the intended send time: the schedule's in an open loop (corrected for coordinated
    // omission), when the request was due in a closed one (its send; its connect with --close).
    let labels: Labels = match meta.offered {
        Some(_) => vec![("schedule", "open".into()), ("measured_from", "intended".into())],
        None => vec![("schedule", "closed".into()), ("measured_from", "intended".into())],
    };
    let mut counts = [0u64; SLOTS];
    counts.copy_from_slice(&s.counts);
    e.histogram(
        name,
        "What each request of the window took, as the client saw it, from its intended send time: the schedule's in an open loop (coordinated-omission corrected: what it called for and the close found unanswered counts too), when it was due in a closed loop (its send; its connect with --close).",
        [(labels, &counts, s.sum_ns as f64 / 1e9)],
    );
    let one = |v: u64| [(Labels::new(), v as f64)];
    e.counter(
        "muxlab_load_requests",
        "Requests completed in the window (the summary's requests).",
        one(s.requests),
    );
    e.counter("muxlab_load_requests_sent", "Requests sent in the window.", one(s.sent));
    e.counter(
        "muxlab_load_errors",
        "Errors by class (the summary's errors).",
        ERROR_CLASSES
            .iter()
            .zip(&s.errors)
            .map(|((_, class), &n)| (vec![("class", class.to_string())], n as f64))
            .collect::<Vec<_>>(),
    );
    e.gauge("muxlab_load_connections_open", "Connections open now.", one(s.open));
    e.gauge(
        "muxlab_load_connections",
        "Connections the run keeps (-c).",
        one(meta.connections as u64),
    );
    if let Some(rate) = meta.offered {
        e.gauge(
            "muxlab_load_offered_rate",
            "The open loop's offered rate, requests per second.",
            [(Labels::new(), rate)],
        );
    }
    e.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_sums_its_threads_and_a_board_its_parts() {
        let progress: Vec<Progress> = (0..2).map(|_| Progress::default()).collect();
        let mut live = Live::default();
        live.observe(50_000, 3);
        live.publish(&progress[0]);
        live.publish(&progress[1]);
        progress[1].done.store(6, Ordering::Relaxed);
        progress[0].by_class[2].store(1, Ordering::Relaxed);
        let s = Snapshot::read(&progress);
        assert_eq!(s.counts.iter().sum::<u64>(), 6);
        assert_eq!(s.sum_ns, 300_000);
        assert_eq!((s.requests, s.errors[2]), (6, 1));
        let board = Board::new(2);
        board.set(0, s.clone());
        board.set(1, s.clone());
        board.set(1, s.clone()); // a later line replaces the part's earlier one
        let mut bad = s.clone();
        bad.counts.pop();
        let mut total = board.sum();
        total.add(&bad);
        assert_eq!(total.requests, 12, "the ill-shaped snapshot is left out");
        assert_eq!(total.counts.iter().sum::<u64>(), 12);
    }

    #[test]
    fn an_open_loop_labels_its_histogram_corrected_and_says_its_rate() {
        let s = Snapshot::default();
        let open = render(
            Meta {
                http: true,
                offered: Some(500.0),
                connections: 4,
            },
            &s,
            Format::Text,
        );
        assert!(
            open.contains("http_client_request_duration_seconds_count{schedule=\"open\",measured_from=\"intended\"} 0"),
            "{open}"
        );
        assert!(open.contains("muxlab_load_offered_rate 500"), "{open}");
        let closed = render(
            Meta {
                http: false,
                offered: None,
                connections: 4,
            },
            &s,
            Format::Text,
        );
        assert!(
            closed.contains(
                "muxlab_client_request_duration_seconds_count{schedule=\"closed\",measured_from=\"intended\"} 0"
            ),
            "{closed}"
        );
        assert!(!closed.contains("offered_rate"), "{closed}");
    }
}
