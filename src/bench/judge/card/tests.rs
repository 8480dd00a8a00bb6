use super::*;
use crate::bench::record::{CellStatus, Why};

/// A cell whose figures are known: 10,000 requests, a mean of 1,000 µs, the server 30 µs of
/// CPU per request of which the work asked 20, 1 s of run-queue wait (100 µs per request),
/// 400 µs waiting inside and 900 µs of residence per request.
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
        ..Why::default()
    });
    c
}

#[test]
fn the_mean_is_the_named_parts_plus_what_is_left_printed_as_it_is() {
    let card = of(&cell()).unwrap();
    let part = |n: &str| card.parts.iter().find(|p| p.name == n).unwrap().us;
    assert_eq!(part("work CPU"), Some(20.0));
    assert_eq!(part("work waiting"), Some(300.0));
    assert_eq!(part("design CPU"), Some(10.0), "30 µs of CPU less the work's 20");
    assert_eq!(part("run-queue wait"), Some(100.0), "1 s over 10,000 requests");
    assert_eq!(part("waiting inside"), Some(400.0));
    assert_eq!(
        part("kernel and client"),
        Some(0.0),
        "1,000 µs of latency less 900 of residence and 100 of run-queue wait"
    );
    // 1,000 − (20 + 300 + 10 + 100 + 400 + 0) = 170.
    assert!((card.unexplained_us.unwrap() - 170.0).abs() < 1e-9, "{card:?}");
    let text = card.text();
    assert!(text.contains("unexplained") && text.contains("17%"), "{text}");
    // Beside a prediction of a 500 µs mean: a 500 µs gap, of which the model leaves out the
    // kernel and client (0) and the unexplained 170 µs (34 %).
    let mut c = cell();
    c.figures.predicted = Some(crate::queueing::Prediction {
        p50_us: Some(400.0),
        p99_us: Some(2000.0),
        mean_us: Some(500.0),
        capacity_rps: 20_000.0,
        throughput_rps: 10_000.0,
        classes: Vec::new(),
        design_cpu_us: Some(10.0),
        slice_us: Some(1500.0),
    });
    let card = of(&c).unwrap();
    assert_eq!(card.gap_us, Some(500.0));
    assert_eq!(
        card.not_modelled,
        vec![
            ("kernel and client".to_string(), 0.0),
            ("unexplained".to_string(), 0.34)
        ]
    );
    assert!(
        card.text()
            .contains("of that gap, not in the model: kernel and client 0%, unexplained 34%"),
        "{}",
        card.text()
    );
    assert!(text.contains("imbalance  1.50×"), "{text}");
}

/// What was not measured stays "–" and out of the sum, never counted as zero: run-queue wait
/// unmeasured is then part of the time before the server's read ("kernel and client").
#[test]
fn a_part_not_measured_is_absent_not_zero() {
    let mut c = cell();
    c.figures.why.as_mut().unwrap().runq_wait_s = None;
    let card = of(&c).unwrap();
    assert_eq!(card.parts.iter().find(|p| p.name == "run-queue wait").unwrap().us, None);
    // Kernel and client is then 100 µs (no run-queue wait to take off), the sum 830.
    let kernel = card.parts.iter().find(|p| p.name == "kernel and client").unwrap().us;
    assert_eq!(kernel, Some(100.0));
    assert!((card.unexplained_us.unwrap() - 170.0).abs() < 1e-9, "{card:?}");
    assert!(card.text().contains("run-queue wait             –"), "{}", card.text());
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
    let with = |target: &str, mean: f64, runq_s: f64, residence_us: u64| {
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
    // 200 µs more of run-queue wait and 300 µs more in the kernel and client for an 800 µs gap: no part
    // carries half of it.
    let cells = [with("reactor", 1000.0, 1.0, 900), with("thread", 1800.0, 3.0, 1200)];
    let refs: Vec<&Cell> = cells.iter().collect();
    assert_eq!(why_gap(&refs, "reactor", "thread", 100), None);
    // A gap of 5 %: within the noise.
    let cells = [with("reactor", 1000.0, 1.0, 900), with("thread", 1050.0, 7.0, 900)];
    let refs: Vec<&Cell> = cells.iter().collect();
    assert_eq!(why_gap(&refs, "reactor", "thread", 100), None);
}
