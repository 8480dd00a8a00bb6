//! A target's server standing for its cells ([`Standing`]): started (see `process`), each
//! burst a `muxlab load` pinned to the client CPUs with the server's process tree sampled over
//! the measured window only (`window`), the cell's figures derived; stopped, its stats line
//! completing the cells measured against it.

use std::net::{Ipv4Addr, SocketAddr};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::window::{harness_cpus, local_server_cpus, run_load, Cpus};
use crate::bench::predict::predicted;
use crate::bench::process::{exe, start_model, stop, Server};
use crate::bench::record::scenario::Experiment;
use crate::bench::record::{counters, figures, Samples};
use crate::bench::record::{Cell, CellStatus, Error};
use crate::bench::setup::{Placement, Sampler};
use crate::bench::{At, Target};
use crate::load::Document;
use crate::sys::procfs::ProcSample;
use crate::units::{AddrRange, CpuList};

/// The `muxlab load` command line for a cell: its workload, then where the load runs.
/// `cell` is the cell's number in the run (`rotate_sources` picks its source address by it).
fn load_args(x: &Experiment, addr: SocketAddr, conns: usize, place: &Placement, cell: usize) -> Vec<String> {
    let mut load = x.load_args(addr, conns);
    if x.rotate_sources && addr.ip().is_loopback() {
        // 127.0.0.10 .. 127.0.0.249, a new one per cell.
        load.workload.bind = Some(AddrRange(vec![Ipv4Addr::new(127, 0, 0, 10 + (cell % 240) as u8)]));
    }
    if let Some(w) = &place.metrics {
        load.metrics = Some(w.load());
        // No waiting for a last scrape: the cell's window would take it in. The document
        // holds the final figures; the server's are scraped once more before it stops.
        load.metrics_linger = Some(Duration::ZERO);
    }
    let hosts = place.hosts.as_ref().map(|h| h.load_flags()).filter(|f| !f.is_empty());
    if hosts.is_none() {
        load.threads = Some(place.client_threads);
        // Checked when the scenario was read; a list that still does not read leaves the
        // load to refuse it, naming it.
        load.cpus = Some(CpuList::from_str(&place.client_cpus).unwrap_or(CpuList(Vec::new())));
    }
    let mut a = vec!["load".to_string()];
    a.extend(load.to_args());
    a.extend(["--json".into(), "--progress-json".into()]);
    // On client hosts the load uses every CPU there, a thread each.
    a.extend(hosts.unwrap_or_default());
    a
}

/// A target's server, up for one cell, or for every burst of a paired group (`paired = true`:
/// every target's server up at once, the loads alternating between them).
pub struct Standing {
    target: Target,
    /// The model entry it serves (`None`: a peer or a server muxlab does not run).
    entry: Option<String>,
    /// Loads run against it: its counters cover all of them (and their warm-ups).
    bursts: usize,
    up: Result<Up, Error>,
    /// Where it runs (`Placement::of_target`).
    place: Placement,
}

struct Up {
    server: Server,
    sampler: Sampler,
    watched: bool,
    /// The tree before any load: what memory per connection is measured from.
    base: ProcSample,
}

impl Standing {
    /// Starts the target's server and the sampling of its process tree.
    pub fn start(x: &Experiment, target: &Target, place: &Placement) -> Standing {
        let place = &place.of_target(x, target);
        // The run's Prometheus scrapes it there (`prometheus = true`).
        let metrics = place.metrics.as_ref().and_then(|w| w.server(&x.name, &target.label()));
        let server = match target {
            Target::Model(m) | Target::Twin(m) => exe().and_then(|bin| start_model(&bin, m, x, place, metrics)),
            Target::Baseline(m, bin) => start_model(bin, m, x, place, metrics),
            Target::Peer(p) => crate::bench::peers::start(p, x, place),
            Target::External(a) => Ok(Server {
                child: None,
                pid: 0,
                addr: *a,
                lines: None,
                dir: None,
                session: None,
                stop_with: crate::sys::signal::SIGTERM,
            }),
        };
        let up = server
            .and_then(|s| Sampler::new(s.pid, place.hosts.as_deref()).map(|sampler| (s, sampler)))
            .and_then(|(server, mut sampler)| {
                let watched = sampler.watched();
                // Let workers finish starting, so their memory is in the baseline, not in the
                // per-connection cost.
                std::thread::sleep(Duration::from_millis(200));
                let base = sampler.all()?;
                Ok(Up {
                    server,
                    sampler,
                    watched,
                    base,
                })
            });
        let entry = match target {
            Target::Model(m) | Target::Twin(m) | Target::Baseline(m, _) => Some(m.clone()),
            Target::Peer(_) | Target::External(_) => None,
        };
        Standing {
            target: target.clone(),
            entry,
            bursts: 0,
            up,
            place: place.clone(),
        }
    }

    /// Measures one cell against the server: a load run, the server's tree sampled over its
    /// window. The figures that come from the server's counters wait for [`Standing::stop`].
    pub fn burst(&mut self, at: At, x: &Experiment, stop_flag: &AtomicU64) -> Cell {
        let started = Instant::now();
        let place = &self.place;
        self.bursts += 1;
        let mut cell = self.target.cell(&x.name, at);
        cell.placed = Some(crate::bench::record::Placed {
            server_cpus: place.server_cpus.clone(),
            client_cpus: place.client_cpus.clone(),
        });
        let up = match &mut self.up {
            Ok(up) => up,
            Err(e) => {
                cell.status = CellStatus::from(&*e);
                return cell;
            }
        };
        let cpus = local_server_cpus(place);
        let over = match (&self.entry, &cpus) {
            (Some(entry), Some(cpus)) => super::ceiling::over(entry, x, at.conns, cpus.len()),
            _ => None,
        };
        if let Some(why) = over {
            cell.status = CellStatus::from(&crate::bench::record::Error::Skipped(why));
            return cell;
        }
        let base = up.base;
        let mut peak = base;
        let cpu_source = up.sampler.cpu_source();
        let kernel_base = up.sampler.kernel_mem();
        let tcp_base = kernel_base.tcp_pages.unwrap_or(0);
        let mut tcp_peak = tcp_base;

        let args = load_args(x, up.server.addr, at.conns, place, at.number);
        let harness = harness_cpus(place);
        let on = Cpus {
            harness: harness.as_deref(),
            server: cpus.as_deref(),
        };
        let measured = run_load(x, args, on, stop_flag, &mut up.sampler, |s, tcp| {
            peak.rss = peak.rss.max(s.rss);
            peak.threads = peak.threads.max(s.threads);
            tcp_peak = tcp_peak.max(tcp.tcp_pages.unwrap_or(0));
        });
        cell.seconds = started.elapsed().as_secs_f64();
        let w = match measured {
            Ok(m) => m,
            Err(e) => {
                cell.status = CellStatus::from(&e);
                return cell;
            }
        };
        let holds = x.load.active.is_some_and(|a| a.holds_all());
        cell.status = status_after(&w.doc, x.duration(), stop_flag.load(Ordering::Relaxed) != 0, holds);
        let samples = Samples {
            base: &base,
            peak: &peak,
            begin: &w.begin,
            end: &w.end,
            span: w.span,
            cpus: w.cpus,
            harness: w.harness,
        };
        cell.figures = figures(&w.doc, &samples, up.watched.then_some(cpu_source).flatten());
        cell.figures.steal_pct = w.steal_pct;
        if let Some(why) = cell.figures.why.as_mut() {
            why.server_cpus = cpus.as_ref().map(Vec::len);
            let work = self
                .entry
                .as_deref()
                .and_then(|e| predicted::work_means(x, e, at.conns, &place.server_cpus));
            why.work_cpu_us = work.map(|w| w.0);
            why.work_sleep_us = work.map(|w| w.1);
            why.connections = at.conns;
            why.closed_no_think = x.load.rate.is_none() && x.load.think.is_none() && x.load.slo.is_none();
            why.per_connection = Some(x.load.pipeline.max(x.load.streams));
            why.round_trip_us = place.round_trip.map(|r| r.us);
            why.round_trip_client_cpu_us = place.round_trip.map(|r| r.client_cpu_us);
        }
        cell.figures.kernel_tcp_kib_per_conn =
            tcp_peak.saturating_sub(tcp_base) as f64 * 4.0 / cell.figures.established.max(1) as f64;
        // The slab's growth from before the load to the window's end (the connections all
        // open), as PSS's; `None` where either end was not read or it shrank.
        cell.figures.kernel_slab_kib_per_conn = match (kernel_base.slab_kib, w.kernel_end.slab_kib) {
            (Some(b), Some(e)) if e >= b && cell.figures.established > 0 => {
                Some((e - b) as f64 / cell.figures.established as f64)
            }
            _ => None,
        };
        let mut doc = w.doc;
        // The experiment's gates (`fail_if`), judged on this cell's load: the report shows them.
        if let Some(gates) = &x.load.fail_if {
            doc.gates = crate::load::gates::judge_all(gates, &doc);
        }
        cell.load = Some(Box::new(doc));
        cell
    }

    /// Stops the server. Its stats line completes `cells` (all measured against it): the
    /// counters' figures (syscalls per request and the like, over all of them), and a failed
    /// stop (a crash, processes left behind) fails them.
    pub fn stop(self, cells: &mut [&mut Cell]) {
        let Ok(up) = self.up else { return };
        drop(up.sampler);
        if self.place.metrics.is_some() && self.entry.is_some() {
            // The run's Prometheus scrapes it once more: its final counts are kept.
            std::thread::sleep(crate::bench::setup::prometheus::SCRAPE + Duration::from_millis(200));
        }
        let (stats, verdict) = stop(up.server);
        for cell in cells.iter_mut() {
            if let Some(st) = &stats {
                // The time per request in the server is a cell's only where the server served
                // that cell's load alone (its warm-up included); over several, it is nobody's.
                counters(&mut cell.figures, st, self.bursts == 1);
            }
            cell.server_stats = stats.clone();
            if let (Err(e), true) = (&verdict, cell.ok()) {
                cell.status = CellStatus::from(e);
            }
        }
    }
}

/// How a measured cell ended: interrupted, a window too short to be the planned run, nothing
/// completed (nothing measured), or ok.
/// `holds`: the load sends nothing by design (`active = "0%"`): it measured holding, and fails
/// where a connection was not held to the window's end instead.
pub(super) fn status_after(doc: &Document, planned: Option<Duration>, interrupted: bool, holds: bool) -> CellStatus {
    let c = &doc.results.connections;
    let unheld = c.never_connected + c.held_closed_by_server.unwrap_or(0);
    if interrupted {
        CellStatus::Interrupted
    } else if let Some(short) = short_window(doc, planned) {
        CellStatus::Failed(short)
    } else if holds && unheld > 0 {
        CellStatus::Failed(format!(
            "{} of {} connections were not held through the run ({} never came up, {} the server closed)",
            unheld,
            c.requested,
            c.never_connected,
            c.held_closed_by_server.unwrap_or(0)
        ))
    } else if holds {
        CellStatus::Ok
    } else if doc.results.requests == 0 && doc.results.sse.as_ref().is_none_or(|s| s.events == 0) {
        CellStatus::Failed("no request completed in the measured window: nothing was measured".into())
    } else {
        CellStatus::Ok
    }
}

/// Why a duration run's cell fails when its measured window is under half the planned one
/// (the load spent its time connecting, or stopped early); `None` when it is long enough.
pub(super) fn short_window(doc: &Document, planned: Option<Duration>) -> Option<String> {
    let planned = planned?.as_secs_f64();
    let window = doc.results.duration_s;
    (window < planned / 2.0).then(|| {
        format!("the measured window was {window:.2} s of the {planned:.2} s planned (under half): not a measurement of the planned run")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document of a window of `secs` that completed `requests`.
    fn doc(secs: f64, requests: u64) -> Document {
        let spec = crate::load::resolve(crate::load::LoadArgs::new(
            crate::load::Target::parse("http://127.0.0.1:1/").unwrap(),
            1,
            Default::default(),
        ))
        .unwrap();
        let mut o = crate::load::Outcome::empty(1, false);
        o.elapsed = Duration::from_secs_f64(secs);
        o.tally.requests = requests;
        Document::new(&spec, &o)
    }

    #[test]
    fn a_window_under_half_the_planned_one_fails_the_cell_and_a_run_without_duration_never_does() {
        let planned = Some(Duration::from_secs(4));
        let why = short_window(&doc(1.9, 5), planned).unwrap();
        assert!(why.contains("1.90 s of the 4.00 s planned"), "{why}");
        assert!(short_window(&doc(0.0, 5), planned).is_some());
        assert_eq!(short_window(&doc(2.0, 5), planned), None);
        assert_eq!(short_window(&doc(0.1, 5), None), None);
    }

    #[test]
    fn a_cell_that_completed_nothing_fails_and_an_interrupted_one_says_so() {
        let planned = Some(Duration::from_secs(1));
        assert_eq!(status_after(&doc(1.0, 5), planned, false, false), CellStatus::Ok);
        let nothing = status_after(&doc(1.0, 0), planned, false, false);
        assert!(
            matches!(&nothing, CellStatus::Failed(why) if why.contains("no request completed")),
            "{nothing:?}"
        );
        assert_eq!(
            status_after(&doc(0.1, 0), planned, true, false),
            CellStatus::Interrupted
        );
    }

    /// A load that holds every connection (`active = "0%"`) completes nothing by design: its
    /// cell is a measurement of holding, and fails where a connection was not held.
    #[test]
    fn a_hold_only_cell_passes_with_nothing_sent_and_fails_for_a_connection_not_held() {
        let planned = Some(Duration::from_secs(1));
        assert_eq!(status_after(&doc(1.0, 0), planned, false, true), CellStatus::Ok);
        let mut closed = doc(1.0, 0);
        closed.results.connections.held_closed_by_server = Some(3);
        let why = status_after(&closed, planned, false, true);
        assert!(
            matches!(&why, CellStatus::Failed(w) if w.contains("3 of 1 connections were not held") && w.contains("3 the server closed")),
            "{why:?}"
        );
        let mut never = doc(1.0, 0);
        never.results.connections.never_connected = 1;
        assert!(matches!(
            status_after(&never, planned, false, true),
            CellStatus::Failed(_)
        ));
    }
}
