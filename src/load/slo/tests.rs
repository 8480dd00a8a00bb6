use std::time::Duration;

use super::*;
use crate::load::{Document, LoadArgs, Outcome, Quantile, Slo, SloFault, Target};
use crate::units::thousands;

#[test]
fn a_target_reads_and_writes_back_and_a_bad_one_is_one_line() {
    let s: Slo = "p99<=5ms, short:p50<=1ms,p999<=20ms".parse().unwrap();
    assert_eq!(s.0.len(), 3);
    assert_eq!(s.0[1].class.as_deref(), Some("short"));
    assert_eq!(s.to_string(), "p99<=5ms,short:p50<=1ms,p999<=20ms");
    assert_eq!(s.to_string().parse::<Slo>().unwrap(), s);
    type Is = fn(&SloFault) -> bool;
    let cases: [(&str, Is, &str); 6] = [
        ("p99<5ms", |f| matches!(f, SloFault::NoBound), "no '<='"),
        (
            "p98<=5ms",
            |f| matches!(f, SloFault::NotAQuantile),
            "'p98' is not a quantile",
        ),
        (
            "p99<=5ms, short: p98 <=1ms",
            |f| matches!(f, SloFault::NotAQuantile),
            "--slo 'p99<=5ms, short: p98 <=1ms': ' short: p98 <=1ms': 'p98' is not a quantile",
        ),
        ("p99<=fast", |f| matches!(f, SloFault::NotADuration(_)), "'fast'"),
        ("p99<=0s", |f| matches!(f, SloFault::ZeroBound), "more than zero"),
        (":p99<=1ms", |f| matches!(f, SloFault::EmptyClass), "empty class"),
    ];
    for (bad, fault, says) in cases {
        let e = bad.parse::<Slo>().unwrap_err();
        assert!(fault(&e.fault), "{bad}: {e:?}");
        let e = e.to_string();
        assert!(e.contains(says) && e.lines().count() == 1, "{bad}: {e}");
    }
}

/// A document of a second's open loop at `offered` whose requests all took `latency_us`, sent
/// `lag_us` late, with the client `busy` (share of its CPU).
fn doc(offered: f64, completed: u64, latency_us: u64, lag_us: u64, busy: f64) -> Document {
    let w = crate::load::Workload {
        rate: Some(offered.into()),
        duration: Some(Duration::from_secs(1)),
        ..Default::default()
    };
    let spec = crate::load::resolve(LoadArgs::new(Target::parse("http://127.0.0.1:1/").unwrap(), 4, w)).unwrap();
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

fn p99(max: &str) -> Slo {
    format!("p99<={max}").parse().unwrap()
}

/// What a probe says: holds, and why it says nothing when it does not say.
fn said(p: &Probe) -> (Option<bool>, Option<Nothing>) {
    (p.holds, p.nothing)
}

/// A target that held is the server's success; one that failed, the server's failure: the
/// client's lag under the miss changes neither, nor does a busy client change a hold; a miss
/// by a client whose CPUs were saturated is the client's (it is late reading responses too).
/// (Before: a client 95 % busy, or late by a quarter of the target, took both from the server.)
#[test]
fn a_latency_miss_is_the_servers_unless_the_clients_lateness_accounts_for_it() {
    let slo = p99("5ms");
    assert_eq!(
        said(&judge(&slo, 1000.0, &doc(1000.0, 1000, 2000, 50, 0.2))),
        (Some(true), None)
    );
    let p = judge(&slo, 1000.0, &doc(1000.0, 1000, 9000, 50, 0.2));
    assert_eq!(said(&p), (Some(false), None));
    assert!(p.note.unwrap().starts_with("p99 9."), "the failing figure");
    // reactor at 32,000 req/s in the committed capacity results: p99 577 ms against 10 ms, the
    // client's send lag p99 3.78 ms. The miss is the server's.
    let p = judge(&p99("10ms"), 32000.0, &doc(32000.0, 32000, 577_000, 3780, 0.5));
    assert_eq!(said(&p), (Some(false), None), "{:?}", p.note);
    // A busy client's hold holds; its miss is its own.
    assert_eq!(
        said(&judge(&slo, 1000.0, &doc(1000.0, 1000, 2000, 50, 0.95))),
        (Some(true), None)
    );
    let p = judge(&slo, 1000.0, &doc(1000.0, 1000, 9000, 50, 0.95));
    assert_eq!(said(&p), (None, Some(Nothing::Client)));
    assert!(p.note.unwrap().contains("95% busy"));
    // Under 90 % it is the server's.
    assert_eq!(
        said(&judge(&slo, 1000.0, &doc(1000.0, 1000, 9000, 50, 0.85))).0,
        Some(false)
    );
    // fork's first probe in the committed results: p99 3.06 ms against 10 ms held, the send
    // lag p99 2.61 ms (over a quarter of the target). It holds.
    assert_eq!(
        said(&judge(&p99("10ms"), 2000.0, &doc(2000.0, 2000, 3060, 2610, 0.08))).0,
        Some(true)
    );
    // A miss that the lateness accounts for: 9 ms less a lag of 6 ms is within 5 ms.
    let p = judge(&slo, 1000.0, &doc(1000.0, 1000, 9000, 6000, 0.2));
    assert_eq!(said(&p), (None, Some(Nothing::Client)));
    assert!(p.note.unwrap().contains("accounts for the miss"));
    // 9 ms less 3 ms is still over 5 ms: the server's.
    assert_eq!(
        said(&judge(&slo, 1000.0, &doc(1000.0, 1000, 9000, 3000, 0.2))).0,
        Some(false)
    );
}

/// Errors and refusals fail a probe as the server's, whatever the latency and however busy the
/// client (before: a busy client turned a probe with errors into the client's limit).
#[test]
fn errors_and_refusals_fail_a_probe_whose_latency_held() {
    let slo = p99("5ms");
    let mut d = doc(1000.0, 1000, 2000, 50, 0.95);
    d.results.error_total = 7;
    d.results.errors.insert("reset".into(), 7);
    let p = judge(&slo, 1000.0, &d);
    assert_eq!(said(&p), (Some(false), None));
    assert_eq!(p.note.as_deref(), Some("7 errors (7 reset)"));
    assert_eq!(p.errors, Some(7));
    let mut d = doc(1000.0, 1000, 2000, 50, 0.2);
    d.results.non_2xx_3xx = 3;
    let p = judge(&slo, 1000.0, &d);
    assert_eq!(said(&p), (Some(false), None));
    assert!(p.note.unwrap().contains("3 responses not 2xx/3xx"));
}

/// Requests in flight at the close are not missing: with a mean latency of 30 ms in a 1 s
/// window, 3 % of the schedule is still in flight, and a 50 ms target that held holds (before:
/// under 98 % completed made it the client's limit). What the schedule called for before the
/// close less the bound and did not complete is the client's shortfall.
#[test]
fn requests_in_flight_at_the_close_are_not_missing_and_a_real_shortfall_is_the_clients() {
    let slo = p99("50ms");
    let scheduled = |mut d: Document| {
        if let Some(o) = d.results.open_loop.as_mut() {
            o.scheduled = Some(2000);
        }
        d
    };
    let d = scheduled(doc(2000.0, 1940, 30_000, 50, 0.2));
    assert_eq!(said(&judge(&slo, 2000.0, &d)), (Some(true), None));
    // 1,800 of 2,000 completed: short of 98 % of the 1,900 due before the close less 50 ms.
    let mut d = scheduled(doc(2000.0, 1800, 2000, 50, 0.2));
    d.results.sent = 1800;
    let p = judge(&slo, 2000.0, &d);
    assert_eq!(said(&p), (None, Some(Nothing::Client)));
    assert!(
        p.note.unwrap().contains("completed 1,800 of the 1,900"),
        "the requests due"
    );
    assert_eq!(p.sent_rps, Some(1800.0), "what the client sent per second");
    // Short because the server failed: the server's.
    let p = judge(&slo, 2000.0, &scheduled(doc(2000.0, 1800, 90_000, 50, 0.2)));
    assert_eq!(said(&p).0, Some(false));
}

/// A bound is judged on at least 10 / (1 − q) samples: 1,000 for a p99, 10,000 for a p999, a
/// class's counted alone (before: a p99 of 500 samples held).
#[test]
fn a_bound_with_too_few_samples_says_nothing_never_holds() {
    let p = judge(&p99("5ms"), 500.0, &doc(500.0, 500, 2000, 50, 0.2));
    assert_eq!(said(&p), (None, Some(Nothing::TooFewSamples)));
    assert!(p.note.unwrap().contains("500 of the 1,000"));
    assert_eq!(p.samples, Some(500));
    assert_eq!(
        said(&judge(&p99("5ms"), 1000.0, &doc(1000.0, 1000, 2000, 50, 0.2))).0,
        Some(true)
    );
    let p999: Slo = "p999<=5ms".parse().unwrap();
    let p = judge(&p999, 5000.0, &doc(5000.0, 5000, 2000, 50, 0.2));
    assert!(p.note.unwrap().contains("5,000 of the 10,000"));
    assert_eq!(Quantile::P50.fewest_samples(), 20);
    // A class's bound counts the class's samples.
    let class: Slo = "short:p99<=5ms".parse().unwrap();
    let mut d = doc(1000.0, 1000, 2000, 50, 0.2);
    let short = crate::load::ClassFigures {
        requests: 10,
        errors: 0,
        non_2xx_3xx: 0,
        latency_us: crate::load::Latency {
            count: 10,
            p99: Some(100.0),
            ..Default::default()
        },
    };
    d.results.classes.insert("short".into(), short);
    let p = judge(&class, 1000.0, &d);
    assert_eq!(said(&p), (None, Some(Nothing::TooFewSamples)));
    assert!(p.note.unwrap().contains("short:p99: 10 of the 1,000"));
    // What a search needs per probe: a class of a tenth needs ten times the requests.
    assert_eq!(class.fewest_requests(|_| Some(0.1)), 10_000.0);
}

fn probe(rate: f64, holds: Option<bool>) -> Probe {
    Probe {
        offered_rps: rate,
        achieved_rps: Some(rate),
        sent_rps: Some(rate),
        p50_us: Some(100.0),
        p99_us: Some(1000.0),
        holds,
        ..Probe::default()
    }
}

fn search(budget: u64) -> Search {
    Search::new(
        &p99("5ms"),
        1000.0,
        Duration::from_secs(budget),
        Duration::from_secs(2),
        Duration::ZERO,
        |_| None,
    )
}

/// Runs a search against `holds` (a rate, and how many times that rate was probed before →
/// whether it holds), returning the answer and the plans.
fn scripted(mut s: Search, holds: impl Fn(f64, usize) -> bool) -> (Capacity, Vec<Plan>) {
    let mut plans = Vec::new();
    while let Some(plan) = s.next_probe() {
        let before = plans.iter().filter(|p: &&Plan| p.rate == plan.rate).count();
        plans.push(plan);
        s.record(probe(plan.rate, Some(holds(plan.rate, before))), plan);
        assert!(plans.len() < 200, "the search ends");
    }
    (s.finish(&p99("5ms")), plans)
}

/// A server that holds up to 7,300 req/s: rising from 1,000 by doubling, bisecting until the
/// bracket is within 2 %, then both ends probed again over three windows; the answer only then.
#[test]
fn the_search_rises_bisects_then_rechecks_both_ends_before_answering() {
    let (c, plans) = scripted(search(600), |r, _| r <= 7300.0);
    let rates: Vec<f64> = plans.iter().map(|p| p.rate).collect();
    assert_eq!(&rates[..4], &[1000.0, 2000.0, 4000.0, 8000.0]);
    let (lo, hi) = (c.low.unwrap(), c.high.unwrap());
    assert!(lo <= 7300.0 && hi > 7300.0 && (hi - lo) / lo <= NARROW, "{lo} {hi}");
    assert_eq!(c.rps, Some(lo));
    let rechecks: Vec<&Plan> = plans.iter().filter(|p| p.recheck).collect();
    assert_eq!(rechecks.len(), 2, "{plans:?}");
    assert_eq!((rechecks[0].rate, rechecks[1].rate), (lo, hi), "the low end first");
    assert!(rechecks.iter().all(|p| p.window == Duration::from_secs(2) * RECHECK));
    assert_eq!(
        plans.last().map(|p| p.recheck),
        Some(true),
        "the answer comes after the re-checks"
    );
    assert!(c.inconclusive.is_none() && c.probes.len() == plans.len());
    assert!(c.probes.iter().filter(|p| p.recheck).count() == 2);
    assert!(describe(&c).contains(&format!(
        "capacity    {} req/s at p99<=5ms",
        thousands(lo.round() as u64)
    )));
}

/// One spurious result cannot put the answer outside its bracket: a hold at 8,000 (above the
/// true 7,300) the first time only, or a failure at 4,000 (below it) the first time only; the
/// re-check turns the end over and the search goes on (before: no re-check, and the answer
/// was 8,000 or under 4,000).
#[test]
fn one_spurious_hold_or_failure_cannot_put_the_answer_outside_its_bracket() {
    for (what, spurious) in [("hold at 8,000", 8000.0), ("failure at 4,000", 4000.0)] {
        let (c, plans) = scripted(search(600), |r, before| match r == spurious && before == 0 {
            true => r > 7300.0,
            false => r <= 7300.0,
        });
        let (lo, hi) = (c.low.unwrap(), c.high.unwrap());
        assert!(lo <= 7300.0 && hi > 7300.0, "{what}: [{lo}, {hi}] {plans:?}");
        assert_eq!(c.rps, Some(lo), "{what}");
        assert!(
            plans.iter().any(|p| p.recheck && p.rate == spurious),
            "{what}: re-checked"
        );
    }
}

#[test]
fn a_search_out_of_time_says_at_least_its_low_end_and_gives_no_capacity() {
    // Time for a few 2 s probes: the bracket is found, not narrowed.
    let (c, plans) = scripted(search(9), |r, _| r <= 7300.0);
    assert!(plans.len() == 4, "{plans:?}");
    assert_eq!((c.rps, c.low, c.high), (None, Some(4000.0), Some(8000.0)));
    assert!(c
        .inconclusive
        .unwrap()
        .contains("ran out: ≥ 4,000 req/s, failed at 8,000 (not narrowed)"));
    // No time for even one probe.
    let mut s = search(1);
    assert_eq!(s.next_probe(), None);
    assert!(s
        .finish(&p99("5ms"))
        .inconclusive
        .unwrap()
        .contains("ran out before a rate held"));
}

/// A probe whose client was the limit is run once more at the same rate; twice ends the search
/// at the client's limit, quoting what it sent and what held below.
#[test]
fn a_search_ends_at_the_clients_limit_quoting_what_it_sent_and_at_least_what_held() {
    let mut s = search(600);
    let plan = s.next_probe().unwrap();
    s.record(probe(1000.0, Some(true)), plan);
    let limit = Probe {
        nothing: Some(Nothing::Client),
        sent_rps: Some(1500.0),
        achieved_rps: Some(1400.0),
        note: Some("the client's CPUs were 97% busy".into()),
        ..probe(2000.0, None)
    };
    let plan = s.next_probe().unwrap();
    s.record(limit.clone(), plan);
    let again = s.next_probe().unwrap();
    assert_eq!(again, plan, "once more at the same rate");
    s.record(limit, again);
    assert_eq!(s.next_probe(), None);
    let c = s.finish(&p99("5ms"));
    assert_eq!(c.rps, None, "never a capacity it did not see");
    let why = c.inconclusive.unwrap();
    assert!(
        why.starts_with("the client could not offer more than 1,500 req/s"),
        "{why}"
    );
    assert!(why.ends_with("≥ 1,000 req/s (the client's limit)"), "{why}");
}

/// A probe too short for its target's samples is lengthened (a p99 at 100 req/s needs 11 s of
/// a 2 s window); failing all the way down, the search stops where no probe in the time left
/// could carry enough samples.
#[test]
fn a_probe_is_lengthened_for_its_samples_and_a_descent_stops_where_none_can_carry_them() {
    let mut s = Search::new(
        &p99("5ms"),
        100.0,
        Duration::from_secs(600),
        Duration::from_secs(2),
        Duration::ZERO,
        |_| None,
    );
    let plan = s.next_probe().unwrap();
    assert_eq!(plan.window, Duration::from_secs(11));
    // A window no shorter than four of the target's loosest bound: a p99 of 1 s cannot fail
    // in a window of 500 ms.
    let slo = p99("1s");
    let mut s = Search::new(
        &slo,
        5000.0,
        Duration::from_secs(600),
        Duration::from_millis(500),
        Duration::ZERO,
        |_| None,
    );
    assert_eq!(s.next_probe().unwrap().window, Duration::from_secs(4));
    let (c, plans) = scripted(search(60), |_, _| false);
    assert!(c.rps.is_none() && c.low.is_none());
    assert!(c.inconclusive.unwrap().contains("too few samples"), "{plans:?}");
    // A probe that says it had too few samples ends the search with that reason.
    let mut s = search(600);
    let plan = s.next_probe().unwrap();
    s.record(
        Probe {
            nothing: Some(Nothing::TooFewSamples),
            note: Some("too few samples for p99: 10 of the 1,000 it needs".into()),
            ..probe(1000.0, None)
        },
        plan,
    );
    assert!(s.finish(&p99("5ms")).inconclusive.unwrap().contains("10 of the 1,000"));
}

/// `Search::drive` is the probe loop of `load --slo` and of bench: it keeps what the latest
/// probes at the bracket's two ends measured, and the one that stopped the search.
#[test]
fn drive_keeps_the_probes_at_the_brackets_ends_and_the_one_that_stopped() {
    let slo = p99("5ms");
    // Holds below 3,000 req/s.
    let found = search(600).drive(&slo, |plan| {
        Probed::Ran(probe(plan.rate, Some(plan.rate < 3000.0)), plan)
    });
    let (held, failed) = (found.held.unwrap(), found.failed.unwrap());
    assert_eq!(found.capacity.rps, Some(held.rate), "the answer is the low end");
    assert!(
        held.recheck && failed.recheck,
        "the ends' latest probes are their re-checks"
    );
    assert!(held.rate < 3000.0 && failed.rate >= 3000.0, "{held:?} {failed:?}");
    assert!(found.stopped.is_none());
    // A probe that could not run ends the search with no answer, what it measured kept.
    let found = search(600).drive(&slo, |plan| match plan.rate > 1500.0 {
        true => Probed::Stopped("interrupted".into(), Some(plan.rate)),
        false => Probed::Ran(probe(plan.rate, Some(true)), plan.rate),
    });
    assert_eq!(
        (found.held, found.stopped, found.failed),
        (Some(1000.0), Some(2000.0), None)
    );
    assert_eq!(found.capacity.rps, None);
    assert_eq!(found.capacity.inconclusive.as_deref(), Some("interrupted"));
}
