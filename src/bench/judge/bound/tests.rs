use super::*;
use crate::bench::record::Cell;
use crate::bench::record::{CellStatus, Why};

/// A cell on one server CPU whose figures are known: `cores` of it used, `mean_us` latency,
/// `cpu_us` of server CPU per request.
fn cell(cores: f64, mean_us: f64, cpu_us: f64) -> Cell {
    let mut c = Cell::new("e", "reactor", 100, 0);
    c.status = CellStatus::Ok;
    c.figures.throughput_rps = 10_000.0;
    c.figures.requests = 10_000;
    c.figures.server_cpu_cores = Some(cores);
    c.figures.server_cpu_us_per_req = Some(cpu_us);
    c.figures.why = Some(Why {
        latency_mean_us: Some(mean_us),
        server_cpus: Some(1),
        user_s: Some(0.6),
        system_s: Some(0.3),
        connections: 100,
        ..Why::default()
    });
    c
}

fn label(c: &Cell) -> Bound {
    of(c).unwrap().bound
}

/// `sleep:` work on a single-threaded design in a closed loop: little CPU, long requests, and
/// the loop's cycle all latency (4 connections at 3,800 req/s: 1.05 ms each, the mean).
#[test]
fn sleep_work_on_one_thread_in_a_closed_loop_is_server_waiting() {
    let mut c = cell(0.05, 1050.0, 20.0);
    c.figures.throughput_rps = 3800.0;
    let w = c.figures.why.as_mut().unwrap();
    w.closed_no_think = true;
    w.connections = 4;
    let b = of(&c).unwrap();
    assert_eq!(b.bound, Bound::ServerWaiting, "{b:?}");
    assert!(
        b.evidence.contains("5% of its CPUs") && b.evidence.contains("1050 µs"),
        "{b:?}"
    );
}

/// A pinned client at 100 % against a cheap server is the client, whatever the server did; a
/// closed loop whose cycle the latency does not cover is too (Little's law).
#[test]
fn a_busy_client_or_one_whose_turnaround_paces_the_loop_is_the_client() {
    let mut c = cell(0.95, 100.0, 95.0);
    c.figures.client_bound = true;
    c.figures.client_cpu_util = 1.0;
    assert_eq!(label(&c), Bound::Client);
    // 100 connections at 10,000 req/s: a 10 ms cycle; 2 ms of latency leaves 8 ms to the client.
    let mut c = cell(0.3, 2000.0, 30.0);
    c.figures.why.as_mut().unwrap().closed_no_think = true;
    let b = of(&c).unwrap();
    assert_eq!(b.bound, Bound::Client, "{b:?}");
    assert!(b.evidence.contains("Little's law"));
    // 9.5 ms of the 10 ms cycle is latency: the server's.
    let mut c = cell(0.97, 9500.0, 97.0);
    c.figures.why.as_mut().unwrap().closed_no_think = true;
    assert_eq!(label(&c), Bound::ServerCpu);
}

/// An open loop well below capacity that completed its schedule is bound by what was offered.
#[test]
fn an_open_loop_below_capacity_is_offered() {
    let mut c = cell(0.2, 100.0, 20.0);
    let w = c.figures.why.as_mut().unwrap();
    w.open_loop = true;
    w.offered_completed = Some(true);
    assert_eq!(label(&c), Bound::Offered);
    // One that fell short says nothing of the offer.
    c.figures.why.as_mut().unwrap().offered_completed = Some(false);
    assert_ne!(label(&c), Bound::Offered);
}

/// Saturated CPUs: user time the larger share is the server's CPU, system time its kernel.
#[test]
fn a_saturated_server_is_its_cpu_or_its_kernel_by_the_larger_share() {
    assert_eq!(label(&cell(0.95, 500.0, 95.0)), Bound::ServerCpu);
    let mut c = cell(0.95, 500.0, 95.0);
    let w = c.figures.why.as_mut().unwrap();
    (w.user_s, w.system_s) = (Some(0.2), Some(0.7));
    let b = of(&c).unwrap();
    assert_eq!(b.bound, Bound::ServerKernel);
    assert!(b.evidence.contains("system time 78%"), "{b:?}");
    assert_eq!(label(&cell(0.90, 500.0, 90.0)), Bound::ServerCpu, "at 90 % exactly");
    assert_ne!(label(&cell(0.89, 500.0, 89.0)), Bound::ServerCpu);
}

/// Steal, or other tasks on the server's CPUs while the server waited for them: interference,
/// which says nothing of the server.
#[test]
fn steal_or_other_tasks_that_delayed_the_server_is_interference() {
    let mut c = cell(0.5, 500.0, 50.0);
    let w = c.figures.why.as_mut().unwrap();
    (w.cpus_total_s, w.cpus_busy_s, w.cpus_steal_s) = (Some(1.0), Some(0.55), Some(0.06));
    assert_eq!(label(&c), Bound::Interference);
    let w = c.figures.why.as_mut().unwrap();
    w.cpus_steal_s = Some(0.0);
    (w.cpus_busy_s, w.runq_wait_s) = (Some(0.65), Some(0.12));
    let b = of(&c).unwrap();
    assert_eq!(b.bound, Bound::Interference);
    // The smaller of the two shares is quoted first: others 15 %, the server waited 12 %.
    assert!(b.evidence.starts_with("delayed by other tasks: at least 12%"), "{b:?}");
    assert!(b.evidence.contains("15%"), "{b:?}");
    // The server's own 50 % and 5 % of others: not interference.
    c.figures.why.as_mut().unwrap().cpus_busy_s = Some(0.55);
    assert_ne!(label(&c), Bound::Interference);
    // The harness's own sampling on the server's CPUs (12 %) is not another task.
    let w = c.figures.why.as_mut().unwrap();
    (w.cpus_busy_s, w.harness_s) = (Some(0.67), Some(0.12));
    assert_ne!(label(&c), Bound::Interference);
    c.figures.why.as_mut().unwrap().harness_s = None;
    assert_eq!(label(&c), Bound::Interference);
    assert!(!Bound::Interference.speaks_for_the_server() && !Bound::Client.speaks_for_the_server());
    assert!(Bound::ServerCpu.speaks_for_the_server());
}

/// Steal on the CPUs of a server that mostly slept (6 % stolen, 8 % of its CPU used, 95 µs of
/// CPU per 2.4 ms request) took some 60 µs from each request: not what bound it. The same steal
/// under a CPU-heavy request, or a server using half its CPUs, is interference.
#[test]
fn steal_beside_a_sleeping_server_is_not_interference_unless_it_delayed_its_requests() {
    let mut c = cell(0.08, 2400.0, 95.0);
    c.figures.throughput_rps = 840.0;
    let w = c.figures.why.as_mut().unwrap();
    (w.cpus_total_s, w.cpus_busy_s, w.cpus_steal_s) = (Some(1.0), Some(0.10), Some(0.06));
    w.closed_no_think = true;
    w.connections = 2;
    let b = of(&c).unwrap();
    assert_eq!(b.bound, Bound::ServerWaiting, "{b:?}");
    c.figures.server_cpu_us_per_req = Some(1500.0);
    assert_eq!(
        label(&c),
        Bound::Interference,
        "a CPU-heavy request loses 900 µs of 2.4 ms"
    );
    c.figures.server_cpu_us_per_req = Some(95.0);
    c.figures.server_cpu_cores = Some(0.5);
    assert_eq!(label(&c), Bound::Interference, "half the CPUs used: capacity was taken");
}

/// A neighbour that used 84 % of the server's CPU while the server only slept (it never waited
/// for a CPU) did not delay it: a sleeping loop is still server-waiting.
#[test]
fn a_busy_neighbour_that_never_delayed_the_server_is_not_interference() {
    let mut c = cell(0.02, 1050.0, 20.0);
    c.figures.throughput_rps = 3800.0;
    let w = c.figures.why.as_mut().unwrap();
    (w.cpus_total_s, w.cpus_busy_s, w.cpus_steal_s) = (Some(1.0), Some(0.86), Some(0.0));
    w.runq_wait_s = Some(0.004);
    w.closed_no_think = true;
    w.connections = 4;
    let b = of(&c).unwrap();
    assert_eq!(b.bound, Bound::ServerWaiting, "{b:?}");
    // Without a run-queue reading, no delay is shown: not interference either.
    c.figures.why.as_mut().unwrap().runq_wait_s = None;
    assert_eq!(label(&c), Bound::ServerWaiting);
}

/// A design whose own threads queue behind each other (a thread per connection: 96 times its
/// window in run queues) on a quiet machine is not interference: nobody else used the CPUs.
#[test]
fn a_designs_own_threads_waiting_for_each_other_is_not_interference() {
    let mut c = cell(0.97, 9500.0, 97.0);
    let w = c.figures.why.as_mut().unwrap();
    (w.cpus_total_s, w.cpus_busy_s, w.cpus_steal_s) = (Some(1.0), Some(0.99), Some(0.0));
    w.runq_wait_s = Some(96.0);
    assert_eq!(label(&c), Bound::ServerCpu);
}

#[test]
fn none_fits_is_unclear_and_no_server_figures_is_no_label() {
    // Half the CPU, latency near the CPU per request, a closed loop: no threshold fits.
    assert_eq!(label(&cell(0.6, 100.0, 60.0)), Bound::Unclear);
    let mut c = cell(0.6, 100.0, 60.0);
    c.figures.why = None;
    assert_eq!(of(&c), None);
}

/// 1,000 event streams longer than the window: two complete in it, so conns ÷ throughput is a
/// 500 s "cycle" and Little's law would call any such cell the client's; a stream's time is the
/// server's schedule, so the law says nothing here.
#[test]
fn event_stream_cells_are_not_called_the_clients_by_littles_law() {
    let mut c = cell(0.3, 5_900_000.0, 150_000.0);
    c.figures.throughput_rps = 2.0;
    let w = c.figures.why.as_mut().unwrap();
    w.closed_no_think = true;
    w.connections = 1000;
    assert_eq!(label(&c), Bound::Client, "without streams, the law applies");
    c.figures.streams = Some(crate::bench::record::StreamFigures::default());
    assert_ne!(label(&c), Bound::Client);
}

/// One request in flight at a time (a closed loop of one connection, no waiting work) is bound
/// by its round trip, not "unclear"; with four connections, the same figures are not.
#[test]
fn one_request_in_flight_is_round_trip_bound() {
    let mut c = cell(0.4, 12.0, 5.0);
    c.figures.throughput_rps = 80_000.0;
    let w = c.figures.why.as_mut().unwrap();
    w.closed_no_think = true;
    w.connections = 1;
    w.per_connection = Some(1);
    w.round_trip_us = Some(9.5);
    let b = of(&c).unwrap();
    assert_eq!(b.bound, Bound::RoundTrip, "{b:?}");
    assert!(b.evidence.contains("9.5 µs"), "{b:?}");
    let w = c.figures.why.as_mut().unwrap();
    w.connections = 4;
    c.figures.throughput_rps = 320_000.0;
    assert_ne!(label(&c), Bound::RoundTrip);
}
