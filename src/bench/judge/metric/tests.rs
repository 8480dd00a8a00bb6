use super::*;
use crate::bench::judge::bound::client_limit;
use crate::bench::record::{Cell, StreamFigures, Why};

/// `m`'s rank of `c` alone (no other cell beside it).
fn alone(m: &Metric, c: &Cell) -> Rank {
    rankable(m, c, &[c])
}

/// A cell of `requests` answered requests with a p99 of 900 µs and 1,000 req/s.
fn cell(requests: u64) -> Cell {
    let mut c = Cell::new("e", "t", 10, 0);
    c.figures.p50_us = Some(300.0);
    c.figures.p99_us = Some(900.0);
    c.figures.throughput_rps = 1000.0;
    c.figures.requests = requests;
    c
}

#[test]
fn a_starved_latency_is_measured_but_not_ranked_and_other_metrics_do_not_care() {
    let mut c = cell(10_000);
    c.figures.starved_conns = 3;
    assert_eq!(P99.value(&c), Some(900.0));
    assert_eq!(alone(&P99, &c), Rank::Unranked(900.0, Unranked::Starved));
    assert_eq!(alone(&THROUGHPUT, &c), Rank::Unranked(1000.0, Unranked::Elsewhere));
    c.figures.starved_conns = 0;
    assert_eq!(alone(&P99, &c), Rank::ranked_unplaced(900.0));
    assert_eq!(alone(&THROUGHPUT, &c), Rank::ranked_unplaced(1000.0));
    // Not measured is not a value, least of all 0.
    c.figures.p99_us = Some(0.0);
    assert_eq!(alone(&P99, &c), Rank::NotMeasured);
}

/// A design that starved connections in one cell is ranked nowhere: not at the counts where
/// it served everyone either (it is named best on nothing), whatever the metric but capacity.
#[test]
fn a_design_that_starved_anywhere_is_ranked_nowhere() {
    let good = cell(10_000);
    let mut bad = cell(10_000);
    bad.connections = 1000;
    bad.figures.starved_conns = 5;
    let other = {
        let mut o = cell(10_000);
        o.target = "u".into();
        o
    };
    let beside = [&good, &bad, &other];
    assert_eq!(
        rankable(&P99, &good, &beside),
        Rank::Unranked(900.0, Unranked::Elsewhere)
    );
    assert_eq!(
        rankable(&P99, &other, &beside),
        Rank::ranked_unplaced(900.0),
        "another design is not"
    );
    let mut elsewhere = bad.clone();
    elsewhere.experiment = "another".into();
    assert_eq!(
        rankable(&P99, &good, &[&good, &elsewhere]),
        Rank::ranked_unplaced(900.0),
        "another experiment's cells are passed over"
    );
}

/// The sample floor: n ≥ 10 / (1 − q). A p99 of 79 requests (its maximum) is not ranked; a
/// p50 of them is.
#[test]
fn a_quantile_from_fewer_samples_than_its_floor_is_not_ranked() {
    assert_eq!(
        (floor(0.5), floor(0.9), floor(0.99), floor(0.999)),
        (20, 100, 1000, 10_000)
    );
    let c = cell(79);
    assert_eq!(
        alone(&P99, &c),
        Rank::Unranked(900.0, Unranked::TooFewSamples { n: 79, needed: 1000 })
    );
    assert_eq!(alone(&P50, &c), Rank::ranked_unplaced(300.0));
    assert_eq!(
        alone(&P99, &cell(1000)),
        Rank::ranked_unplaced(900.0),
        "at the floor exactly"
    );
    assert_eq!(alone(&P99, &cell(999)).ranked(), None);
    assert_eq!(alone(&THROUGHPUT, &c), Rank::ranked_unplaced(1000.0), "not a quantile");
    // Streams: a gap p99 from its gaps, a first-event p99 from its first events; not counted
    // (results from before) is not ranked either.
    let mut s = cell(0);
    s.figures.streams = Some(StreamFigures {
        gap_p99_us: Some(21_000.0),
        ttfe_p99_us: Some(5_000.0),
        gaps: Some(14),
        first_events: Some(1000),
        ..StreamFigures::default()
    });
    assert_eq!(
        alone(&GAP_P99, &s).why_not(),
        Some(Unranked::TooFewSamples { n: 14, needed: 1000 })
    );
    assert_eq!(alone(&TTFE_P99, &s), Rank::ranked_unplaced(5_000.0));
    s.figures.streams.as_mut().unwrap().first_events = None;
    assert_eq!(alone(&TTFE_P99, &s).why_not(), Some(Unranked::SamplesUnknown));
}

/// A design that starved connections or lost requests is ranked on neither memory nor
/// latency; a memory difference under a mebibyte over all the connections is none (the
/// reactor's 0.04 KiB against 0.8 KiB at 100 connections is 76 KiB: not "20×").
#[test]
fn memory_and_latency_of_designs_that_did_not_serve_everyone_are_not_ranked() {
    let mut c = cell(10_000);
    c.connections = 1000;
    c.figures.mem_per_conn_kib = Some(0.5);
    c.figures.server_cpu_us_per_req = Some(10.0);
    c.figures.server_cpu_cores = Some(0.5);
    c.figures.established = 1000;
    assert_eq!(alone(&MEMORY, &c), Rank::ranked_unplaced(0.5));
    c.figures.starved_conns = 998;
    assert_eq!(alone(&MEMORY, &c).why_not(), Some(Unranked::Starved));
    c.figures.starved_conns = 0;
    c.figures.errors = 3;
    assert_eq!(
        (alone(&MEMORY, &c).why_not(), alone(&P99, &c).why_not()),
        (Some(Unranked::Lost), Some(Unranked::Lost))
    );
    assert!(!resolved(&MEMORY, 0.04, 0.8, 100), "76 KiB in all");
    assert!(resolved(&MEMORY, 1.0, 20.0, 100), "1,900 KiB in all");
    assert!(resolved(&P99, 1.0, 1.01, 1), "only memory has a floor");
}

/// Event streams: late events are a share, every event late a measured 100 %; no CPU read over
/// the window is no CPU per event; a cell whose connections got no event is not ranked on its
/// gaps; memory per stream is there though no request completed in the window.
#[test]
fn stream_figures_at_their_edges() {
    let mut c = cell(0);
    c.figures.throughput_rps = 0.0;
    c.figures.streams = Some(StreamFigures {
        events: 1000,
        window_s: 2.0,
        gap_p99_us: Some(21_000.0),
        gaps: Some(990),
        first_events: Some(10),
        server_events: Some(1000),
        server_late: Some(1000),
        ..StreamFigures::default()
    });
    assert_eq!(LATE.value(&c), Some(100.0), "every event late is measured");
    assert_eq!(
        THROUGHPUT.value(&c),
        None,
        "no request completed is no throughput, not 0"
    );
    c.figures.server_cpu_cores = Some(0.0);
    assert_eq!(CPU_EVENT.value(&c), None, "no CPU read is not a cost of 0");
    c.figures.server_cpu_cores = Some(0.01);
    assert!(
        (CPU_EVENT.value(&c).unwrap() - 20.0).abs() < 1e-9,
        "0.02 s of CPU over 1,000 events"
    );
    c.figures.mem_per_conn_kib = Some(18.0);
    c.figures.established = 10;
    assert_eq!(
        MEMORY.value(&c),
        Some(18.0),
        "memory per stream, with no request completed"
    );
    c.figures.starved_conns = 2;
    assert_eq!(alone(&GAP_P99, &c).why_not(), Some(Unranked::Starved));
}

/// Shares differ when their counts' Poisson intervals do: 3.98 % of 100,000 against 0.12 % is
/// clear (the ratio of the shares on time, 1.04×, said nothing); 3 in 1,000 against 5 in
/// 1,000 is not. None of n is bounded by the rule of three.
#[test]
fn shares_are_told_apart_by_their_counts_and_none_is_said_by_the_rule_of_three() {
    assert!(shares_apart((3_980, 100_000), (120, 100_000)));
    assert!(!shares_apart((3, 1000), (5, 1000)));
    assert!(!shares_apart((0, 100), (1, 100)));
    assert!(shares_apart((0, 10_000), (40, 10_000)));
    let (lo, hi) = poisson_interval(0);
    assert!(lo == 0.0 && (hi - 3.69).abs() < 0.05, "{hi}");
    let (lo, hi) = poisson_interval(100);
    assert!((lo - 81.4).abs() < 0.5 && (hi - 121.6).abs() < 0.5, "{lo} {hi}");
    assert_eq!(share_said(0, 10_000), "< 0.030% (none of 10,000)");
    assert_eq!(share_said(398, 10_000), "3.98%");
}

/// A cell the client bound (its CPUs busy, or its own turnaround in a closed loop) says nothing
/// of the server's throughput or latency: measured, not ranked; a server nobody watched is
/// judged by its client alone.
#[test]
fn a_cell_the_client_bound_is_not_ranked_on_throughput_or_latency() {
    let mut c = cell(10_000);
    c.figures.server_cpu_us_per_req = Some(20.0);
    c.figures.why = Some(Why::default());
    assert_eq!(alone(&THROUGHPUT, &c), Rank::ranked_unplaced(1000.0));
    c.figures.client_bound = true;
    assert_eq!(alone(&THROUGHPUT, &c).why_not(), Some(Unranked::NotTheServer));
    assert_eq!(alone(&P99, &c).why_not(), Some(Unranked::NotTheServer));
    assert_eq!(P99.value(&c), Some(900.0), "still measured");
    assert_eq!(
        alone(&CPU, &c),
        Rank::ranked_unplaced(20.0),
        "its CPU per request is the server's own"
    );
    // Not watched (no server figures): the client's saturation alone decides.
    c.figures.why = None;
    assert_eq!(alone(&P99, &c).why_not(), Some(Unranked::NotTheServer));
    c.figures.client_bound = false;
    assert_eq!(alone(&P99, &c), Rank::ranked_unplaced(900.0));
    // Little's law: 10 connections at 1,000 req/s are a 10 ms cycle; 0.9 ms of latency leaves
    // 9.1 ms to the client's own turnaround.
    c.figures.why = Some(Why {
        closed_no_think: true,
        connections: 10,
        latency_mean_us: Some(900.0),
        ..Why::default()
    });
    assert!(matches!(
        client_limit(&c),
        Some(crate::load::limit::ClientLimit::Turnaround { .. })
    ));
    assert_eq!(alone(&P99, &c).why_not(), Some(Unranked::NotTheServer));
}

#[test]
fn memory_under_a_page_over_all_connections_is_not_ranked() {
    let mut c = Cell::new("e", "t", 100, 0);
    c.figures.server_cpu_us_per_req = Some(5.0);
    c.figures.server_cpu_cores = Some(0.2);
    c.figures.established = 100;
    c.figures.mem_per_conn_kib = Some(0.03);
    assert_eq!(MEMORY.value(&c), Some(0.03));
    assert_eq!(alone(&MEMORY, &c).why_not(), Some(Unranked::Unresolved), "3 KiB in all");
    c.figures.mem_per_conn_kib = Some(0.05);
    assert_eq!(alone(&MEMORY, &c), Rank::ranked_unplaced(0.05), "5 KiB in all");
}

#[test]
fn every_metric_is_found_by_its_name_and_better_follows_its_direction() {
    for m in ALL {
        assert_eq!(Metric::named(m.name).unwrap().short, m.short, "{}", m.name);
    }
    assert!(Metric::named("latency").is_none());
    assert_eq!(THROUGHPUT.better(200.0, 100.0), 2.0);
    assert_eq!(P99.better(100.0, 200.0), 2.0);
    assert_eq!(P99.best_of(300.0, 100.0), 100.0);
    assert_eq!(CAPACITY.whole(19_691.0), "19,691 req/s");
}
