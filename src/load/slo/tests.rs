use super::*;
use crate::load::{LoadArgs, Outcome, Target};

#[test]
fn a_target_reads_and_writes_back_and_a_bad_one_is_one_line() {
    let s: Slo = "p99<=5ms, short:p50<=1ms,p999<=20ms".parse().unwrap();
    assert_eq!(s.0.len(), 3);
    assert_eq!(s.0[1].class.as_deref(), Some("short"));
    assert_eq!(s.to_string(), "p99<=5ms,short:p50<=1ms,p999<=20ms");
    assert_eq!(s.to_string().parse::<Slo>().unwrap(), s);
    for (bad, says) in [
        ("p99<5ms", "no '<='"),
        ("p98<=5ms", "'p98' is not a quantile"),
        ("p99<=fast", "'fast'"),
        ("p99<=0s", "more than zero"),
        (":p99<=1ms", "empty class"),
    ] {
        let e = bad.parse::<Slo>().unwrap_err().0;
        assert!(e.contains(says) && e.lines().count() == 1, "{bad}: {e}");
    }
}

/// A document of a second's open loop at `offered` whose requests all took `latency_us`, sent
/// `lag_us` late, with the client `busy` (share of its CPU).
fn doc(offered: f64, completed: u64, latency_us: u64, lag_us: u64, busy: f64) -> Document {
    let w = crate::load::Workload {
        rate: Some(offered),
        duration: Some(Duration::from_secs(1)),
        ..Default::default()
    };
    let spec = LoadArgs::new(Target::parse("http://127.0.0.1:1/").unwrap(), 4, w)
        .resolve()
        .unwrap();
    let mut o = Outcome::empty(4, false);
    o.elapsed = Duration::from_secs(1);
    o.offered_rps = Some(offered);
    o.cpu_slots = 1;
    o.client_cpu = Duration::from_secs_f64(busy);
    o.tally.requests = completed;
    for _ in 0..completed {
        o.tally.latency.record_ns(latency_us * 1000);
        o.tally.send_lag.record_ns(lag_us * 1000);
    }
    Document::new(&spec, &o)
}

#[test]
fn a_probe_holds_fails_or_says_nothing_when_the_client_was_the_limit() {
    let slo: Slo = "p99<=5ms".parse().unwrap();
    let p = judge(&slo, 1000.0, &doc(1000.0, 1000, 2000, 50, 0.2));
    assert_eq!((p.holds, p.note.as_deref()), (Some(true), None));
    let p = judge(&slo, 1000.0, &doc(1000.0, 1000, 9000, 50, 0.2));
    assert_eq!(p.holds, Some(false));
    assert!(p.note.unwrap().starts_with("p99 9."), "the failing figure");
    // The client's CPUs busy: nothing said of the server, whether it held or not.
    for latency in [2000, 9000] {
        let p = judge(&slo, 1000.0, &doc(1000.0, 1000, latency, 50, 0.95));
        assert_eq!(p.holds, None);
        assert!(p.note.unwrap().contains("95% busy"));
    }
    // Held, but sent late or short of the rate: the client's limit too.
    let p = judge(&slo, 1000.0, &doc(1000.0, 1000, 2000, 1300, 0.2));
    assert!(p.holds.is_none() && p.note.unwrap().contains("fell behind"));
    // A late client fails the target by its own lateness: that says nothing of the server.
    let p = judge(&slo, 1000.0, &doc(1000.0, 1000, 9000, 1300, 0.2));
    assert!(p.holds.is_none() && p.note.unwrap().contains("fell behind"));
    // Late by under a quarter of the target: the corrected latency holds that lateness already.
    assert_eq!(
        judge(&slo, 1000.0, &doc(1000.0, 1000, 2000, 1100, 0.2)).holds,
        Some(true)
    );
    let p = judge(&slo, 1000.0, &doc(1000.0, 900, 2000, 50, 0.2));
    assert!(p.holds.is_none() && p.note.unwrap().contains("under 98%"));
    // Poisson arrivals: fewer scheduled than the rate says, all of them completed, holds.
    let mut poisson = doc(1000.0, 958, 2000, 50, 0.2);
    if let Some(o) = poisson.results.open_loop.as_mut() {
        o.scheduled = Some(958);
    }
    assert_eq!(judge(&slo, 1000.0, &poisson).holds, Some(true));
    // Short of the rate because the server failed: a failure, not the client's.
    let p = judge(&slo, 1000.0, &doc(1000.0, 900, 9000, 50, 0.2));
    assert_eq!(p.holds, Some(false));
    // Connections that never completed a request, though the schedule gave each several.
    let mut starved = doc(1000.0, 1000, 2000, 50, 0.2);
    starved.results.fairness.starved = 3;
    let p = judge(&slo, 1000.0, &starved);
    assert_eq!(p.holds, Some(false));
    assert!(p.note.unwrap().contains("3 connections starved"));
    // At a rate that leaves some connections without a request, none is starved for it.
    let mut idle = doc(4.0, 4, 2000, 50, 0.2);
    idle.results.fairness.starved = 3;
    assert_eq!(judge(&slo, 4.0, &idle).holds, Some(true));
    // A class the target names that never completed fails it.
    let p = judge(
        &"short:p99<=5ms".parse().unwrap(),
        1000.0,
        &doc(1000.0, 1000, 2000, 50, 0.2),
    );
    assert_eq!(p.holds, Some(false));
    assert!(p.note.unwrap().contains("nothing completed"));
}

fn probe(rate: f64, holds: Option<bool>) -> Probe {
    Probe {
        offered_rps: rate,
        achieved_rps: Some(rate),
        p50_us: Some(100.0),
        p99_us: Some(1000.0),
        holds,
        note: None,
    }
}

/// A server that holds up to 7,300 req/s: rising from 1,000 by doubling, then bisecting until
/// the bracket is within 2 %.
#[test]
fn the_search_rises_then_bisects_to_two_percent() {
    let slo: Slo = "p99<=5ms".parse().unwrap();
    let mut s = Search::new(1000.0, Duration::from_secs(600), Duration::from_millis(1));
    let mut rates = Vec::new();
    while let Some(r) = s.next_rate() {
        rates.push(r);
        s.record(probe(r, Some(r <= 7300.0)), Duration::from_secs(2));
    }
    assert_eq!(&rates[..4], &[1000.0, 2000.0, 4000.0, 8000.0]);
    let c = s.finish(&slo);
    let (lo, hi) = (c.rps.unwrap(), c.failed_at.unwrap());
    assert!(lo <= 7300.0 && hi > 7300.0 && (hi - lo) / lo <= 0.02, "{lo} {hi}");
    assert!(c.inconclusive.is_none() && c.probes.len() == rates.len());
    assert!(describe(&c).contains(&format!(
        "capacity    {} req/s at p99<=5ms",
        thousands(lo.round() as u64)
    )));
}

#[test]
fn a_search_ends_inconclusive_at_the_clients_limit_out_of_time_or_with_nothing_held() {
    let slo: Slo = "p99<=5ms".parse().unwrap();
    let mut s = Search::new(1000.0, Duration::from_secs(600), Duration::from_millis(1));
    s.next_rate();
    s.record(probe(1000.0, Some(true)), Duration::from_secs(2));
    s.next_rate();
    let mut limit = probe(2000.0, None);
    limit.achieved_rps = Some(1500.0);
    limit.note = Some("the client's CPUs were 97% busy".into());
    s.record(limit, Duration::from_secs(2));
    assert_eq!(s.next_rate(), None);
    let c = s.finish(&slo);
    assert_eq!(c.rps, None, "never a capacity it did not see");
    assert!(c
        .inconclusive
        .unwrap()
        .starts_with("the client could not offer more than 1,500 req/s"));
    // No time for even one probe.
    let mut s = Search::new(1000.0, Duration::from_millis(10), Duration::from_secs(3));
    assert_eq!(s.next_rate(), None);
    assert!(s.finish(&slo).inconclusive.unwrap().contains("--slo-time"));
    // Failing all the way down.
    let mut s = Search::new(1000.0, Duration::from_secs(600), Duration::from_millis(1));
    while let Some(r) = s.next_rate() {
        s.record(probe(r, Some(false)), Duration::from_secs(2));
    }
    let c = s.finish(&slo);
    assert!(c.rps.is_none() && c.inconclusive.unwrap().contains("no rate held"));
}

/// The one definition of the client's limit, read off a document: its CPUs at 90 % or more
/// (exactly 90 % included), late by over a quarter of the tightest bound, or short of its
/// schedule while the target held; nothing else.
#[test]
fn the_client_was_the_limit_by_its_cpus_its_lateness_or_its_shortfall_and_nothing_else() {
    use crate::load::ClientLimit;
    let of = |d: &Document, held: bool| ClientLimit::of(&d.results, Some(5000.0), held);
    assert_eq!(of(&doc(1000.0, 1000, 2000, 50, 0.5), true), None);
    // 0.9 of its one CPU over the second: the limit, and the document says so.
    let busy = doc(1000.0, 1000, 2000, 50, 0.9);
    assert!(matches!(of(&busy, true), Some(ClientLimit::Busy(u)) if (u - 0.9).abs() < 1e-9));
    assert!(busy.results.client_saturated, "at 90 % exactly");
    assert!(!doc(1000.0, 1000, 2000, 50, 0.899).results.client_saturated);
    // Late: a send lag p99 over 1.25 ms against 5 ms, whether the target held or not.
    for held in [true, false] {
        assert!(matches!(
            of(&doc(1000.0, 1000, 2000, 1300, 0.2), held),
            Some(ClientLimit::Behind(_))
        ));
    }
    assert_eq!(of(&doc(1000.0, 1000, 2000, 1200, 0.2), true), None, "under a quarter");
    // Short of its schedule: the client's limit only where the target held.
    assert_eq!(of(&doc(1000.0, 900, 2000, 50, 0.2), true), Some(ClientLimit::Short));
    assert_eq!(of(&doc(1000.0, 900, 2000, 50, 0.2), false), None);
    // Without a target only its CPUs can say.
    assert_eq!(
        ClientLimit::of(&doc(1000.0, 900, 2000, 1300, 0.2).results, None, true),
        None
    );
}

/// `Search::drive` is the probe loop of `load --slo` and of bench: it keeps what the last probe
/// that held measured, the last that failed, and the one that stopped the search.
#[test]
fn drive_keeps_the_last_probe_that_held_the_last_that_failed_and_the_one_that_stopped() {
    let slo: Slo = "p99<=5ms".parse().unwrap();
    let window = Duration::from_secs(1);
    let search = || Search::new(1000.0, Duration::from_secs(600), Duration::from_millis(1));
    // Holds below 3,000 req/s: 1,000, 2,000 held, 4,000 failed, then bisection.
    let found = search().drive(&slo, window, |rate| Probed::Ran(probe(rate, Some(rate < 3000.0)), rate));
    let (held, failed) = (found.held.unwrap(), found.failed.unwrap());
    assert_eq!(found.capacity.rps, Some(held), "the answer is the last probe that held");
    assert!(
        held < 3000.0 && failed >= 3000.0 && (failed - held) / held <= 0.02,
        "{held} {failed}"
    );
    assert_eq!(found.stopped, None);
    // A probe that could not run ends the search with no answer, what it measured kept.
    let found = search().drive(&slo, window, |rate| match rate > 1500.0 {
        true => Probed::Stopped("interrupted".into(), Some(rate)),
        false => Probed::Ran(probe(rate, Some(true)), rate),
    });
    assert_eq!(
        (found.held, found.stopped, found.failed),
        (Some(1000.0), Some(2000.0), None)
    );
    assert_eq!(found.capacity.rps, None);
    assert_eq!(found.capacity.inconclusive.as_deref(), Some("interrupted"));
}
