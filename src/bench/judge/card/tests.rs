use super::*;
use crate::bench::record::{Cell, CellStatus, Why};

/// A cell whose figures are known: 10,000 requests, a mean of 1,000 µs, the server 30 µs of
/// CPU per request of which the work asked 20, 1 s of run-queue wait (100 µs per request),
/// 400 µs waiting inside and 900 µs of residence per request, a 50 µs loopback round trip
/// whose client used 8 µs, and 12 µs of the client's CPU per request.
fn cell() -> Cell {
    let mut c = Cell::new("e", "thread", 100, 0);
    c.status = CellStatus::Ok;
    c.figures.requests = 10_000;
    c.figures.throughput_rps = 10_000.0;
    c.figures.server_cpu_cores = Some(0.3);
    c.figures.server_cpu_us_per_req = Some(30.0);
    c.figures.why = Some(Why {
        latency_mean_us: Some(1000.0),
        server_cpus: Some(1),
        work_cpu_us: Some(20.0),
        work_sleep_us: Some(300.0),
        runq_wait_s: Some(1.0),
        server_requests: Some(20_000),
        residence_ns: Some(20_000 * 900_000),
        wait_inside_ns: Some(20_000 * 400_000),
        imbalance: Some(1.5),
        connections: 100,
        round_trip_us: Some(50.0),
        round_trip_client_cpu_us: Some(8.0),
        client_cpu_us: Some(12.0),
        ..Why::default()
    });
    c
}

#[test]
fn the_mean_is_disjoint_intervals_plus_a_real_residual_and_the_costs_stand_beside() {
    let card = of(&cell()).unwrap();
    let part = |n: &str| card.parts.iter().find(|p| p.name == n).unwrap().us;
    let cost = |n: &str| card.costs.iter().find(|p| p.name == n).unwrap().us;
    assert_eq!(part("waiting inside"), Some(400.0));
    assert_eq!(part("handling"), Some(500.0), "900 µs of residence less 400 of waiting");
    assert_eq!(part("run-queue wait"), Some(100.0), "1 s over 10,000 requests");
    assert_eq!(
        part("outside the server"),
        Some(54.0),
        "a 50 µs round trip and the client's 12 µs of CPU less the 8 in it"
    );
    assert_eq!(
        (
            cost("work CPU"),
            cost("work waiting"),
            cost("design CPU"),
            cost("server CPU")
        ),
        (Some(20.0), Some(300.0), Some(10.0), Some(30.0)),
        "costs are beside the parts"
    );
    // 1,000 − (400 + 500 + 100 + 54) = −54: a residual, printed as it is.
    assert!((card.unexplained_us.unwrap() + 54.0).abs() < 1e-9, "{card:?}");
    let text = card.text();
    assert!(text.contains("unexplained") && text.contains("-5%"), "{text}");
    assert!(text.contains("cost       work CPU 20us"), "{text}");
    assert!(text.contains("imbalance  1.50×"), "{text}");
    // Beside a prediction of an 800 µs mean: a 200 µs gap, which the parts the model leaves
    // out cover only where each share is within it (outside: 54 µs is 27 %; the negative
    // residual carries none).
    let mut c = cell();
    c.figures.predicted = Some(crate::queueing::Prediction {
        p50_us: Some(400.0),
        p99_us: Some(2000.0),
        mean_us: Some(800.0),
        capacity_rps: 20_000.0,
        throughput_rps: 10_000.0,
        classes: Vec::new(),
        design_cpu_us: Some(10.0),
        slice_us: Some(1500.0),
        capacity_cost_bound: false,
        costs_from: None,
        store_p99_us: None,
    });
    let card = of(&c).unwrap();
    assert_eq!(card.gap_us, Some(200.0));
    assert_eq!(card.not_modelled, vec![("outside the server".to_string(), 0.27)]);
    // A prediction far shorter than every part: no share above 100 %.
    c.figures.predicted.as_mut().unwrap().mean_us = Some(950.0);
    assert!(of(&c).unwrap().not_modelled.iter().all(|(_, s)| *s <= 1.0));
}

/// What was not measured stays "–" and makes no residual, never counted as zero; a server
/// nobody watched says its time inside was not measured.
#[test]
fn a_part_not_measured_is_absent_not_zero() {
    let mut c = cell();
    c.figures.why.as_mut().unwrap().runq_wait_s = None;
    let card = of(&c).unwrap();
    assert_eq!(card.parts.iter().find(|p| p.name == "run-queue wait").unwrap().us, None);
    assert_eq!(card.unexplained_us, None, "no residual over a part not measured");
    assert!(
        card.text().contains("run-queue wait               –"),
        "{}",
        card.text()
    );
    let mut peer = cell();
    let w = peer.figures.why.as_mut().unwrap();
    (w.server_requests, w.residence_ns, w.wait_inside_ns) = (None, None, None);
    let card = of(&peer).unwrap();
    assert_eq!(card.unexplained_us, None);
    assert!(
        card.text()
            .contains("the server's own time (waiting inside, handling): not measured"),
        "{}",
        card.text()
    );
    assert!(
        !card.text().contains("100%"),
        "never unexplained 100 %: {}",
        card.text()
    );
}

/// Where the client was the limit its queueing is not measured: the part outside is the rest
/// of the mean, and says so.
#[test]
fn a_client_bound_card_infers_the_outside_part_and_says_how() {
    let mut c = cell();
    c.figures.client_bound = true;
    c.figures.client_cpu_util = 0.99;
    let card = of(&c).unwrap();
    let outside = card.parts.iter().find(|p| p.name == "outside the server").unwrap();
    assert!(outside.inferred && outside.us == Some(0.0), "{outside:?}");
    assert_eq!(
        card.unexplained_us, None,
        "no residual beside a part inferred from the mean"
    );
    assert!(
        card.text().contains("inferred as the mean less the parts inside it"),
        "{}",
        card.text()
    );
}

/// Without the server's figures there is no card; the machine's lack of a PMU is said, never 0.
#[test]
fn no_server_figures_no_card_and_no_pmu_is_said() {
    let mut c = cell();
    c.figures.why = None;
    assert!(of(&c).is_none());
    let card = of(&cell()).unwrap();
    match crate::testing::host_fact(crate::sys::host::Fact::Pmu).present {
        true => assert!(card.not_available.is_empty(), "{:?}", card.not_available),
        false => assert!(card.not_available[0].contains("not available on this machine (no PMU)")),
    }
}

/// The part that carries the gap between two designs is named with its share; one that covers
/// under half of it, or a gap within the noise, names nothing.
#[test]
fn the_part_that_carries_a_gap_is_named_and_a_small_one_never() {
    let with = |target: &str, mean: f64, runq_s: f64, residence_us: u64| -> Cell {
        let mut c = cell();
        c.target = target.into();
        let w = c.figures.why.as_mut().unwrap();
        w.latency_mean_us = Some(mean);
        w.runq_wait_s = Some(runq_s);
        w.residence_ns = Some(20_000 * residence_us * 1000);
        c
    };
    // thread waits 600 µs more per request in the run queue, of an 800 µs gap.
    let cells = [with("reactor", 1000.0, 1.0, 900), with("thread", 1800.0, 7.0, 900)];
    let refs: Vec<&Cell> = cells.iter().collect();
    let s = why_gap(&refs, "reactor", "thread", 100).unwrap();
    assert!(
        s.contains("thread's mean is 800us longer than reactor's, 75% of it in run-queue wait"),
        "{s}"
    );
    // 200 µs more of run-queue wait and 300 µs more of handling for an 800 µs gap: no part
    // carries half of it.
    let cells = [with("reactor", 1000.0, 1.0, 900), with("thread", 1800.0, 3.0, 1200)];
    let refs: Vec<&Cell> = cells.iter().collect();
    assert_eq!(why_gap(&refs, "reactor", "thread", 100), None);
    // A gap of 5 %: within the noise.
    let cells = [with("reactor", 1000.0, 1.0, 900), with("thread", 1050.0, 7.0, 900)];
    let refs: Vec<&Cell> = cells.iter().collect();
    assert_eq!(why_gap(&refs, "reactor", "thread", 100), None);
    // 600 µs more of run-queue wait for a 400 µs gap (handling ran 200 µs the other way): a
    // share over 100 % is carried by no one part.
    let cells = [with("reactor", 1000.0, 1.0, 900), with("thread", 1400.0, 7.0, 700)];
    let refs: Vec<&Cell> = cells.iter().collect();
    assert_eq!(
        why_gap(&refs, "reactor", "thread", 100),
        None,
        "never over 100 % of the gap"
    );
}
