//! A gap's cause, priced: named only by a figure whose prediction covers between half the
//! gap and twice it, in its direction.

use super::*;

/// A difference is named by a figure only where what it predicts covers half the gap: a
/// model kept 90% busy beside a product at 50% has an M/M/1 p99 gap of 4.6 × (10 − 2) = 36.8
/// E[S] — it names a gap of 40 E[S], not one of 400.
#[test]
fn a_gap_is_named_only_by_a_figure_that_covers_half_of_it() {
    let xs = keepalive();
    // Node's row: p99 past the round trip in E[S] (10 µs each side) and the busy share of each.
    let row_of = |(model_es, model_busy): (f64, f64), (product_es, product_busy): (f64, f64)| {
        let mut cells = rounds("ka", "reactor", 70.0, 20.0 + 10.0 * model_es, 10.0, model_busy, EVEN);
        cells.extend(rounds(
            "ka",
            "node",
            70.0,
            20.0 + 10.0 * product_es,
            10.0,
            product_busy,
            EVEN,
        ));
        super::rows(&xs, &cells)
            .into_iter()
            .find(|r| r.product == "node")
            .unwrap()
    };
    let pair = |model_p99_es: f64| row_of((model_p99_es, 0.9), (20.0, 0.5));
    let near = pair(60.0);
    assert_eq!(near.answer, Some(Answer::Differs), "{near:?}");
    assert!(
        near.cause
            .starts_with("reactor kept its CPUs 90% busy, node 50% (utilization: it predicts +36.84 E[S]")
            && near.cause.contains("of the p99 gap of +40.00 E[S], 92%"),
        "{}",
        near.cause
    );
    let far = pair(420.0);
    assert_eq!(far.answer, Some(Answer::Differs));
    assert!(
        far.cause.starts_with(
            "no measured figure covers half the p99 gap of +400.00 E[S] (and at most twice it): utilization 9%"
        ),
        "{}",
        far.cause
    );
    // A prediction far past the gap (36.84 E[S] against 10: 368 %) is not what made it.
    let over = row_of((30.0, 0.9), (20.0, 0.5));
    assert_eq!(over.answer, Some(Answer::Differs), "{over:?}");
    assert!(
        over.cause.starts_with(
            "no measured figure covers half the p99 gap of +10.00 E[S] (and at most twice it): utilization 368%"
        ),
        "{}",
        over.cause
    );
    // In the other direction (the busier side the faster) it names nothing either.
    let node = row_of((60.0, 0.5), (20.0, 0.9));
    assert!(
        node.cause.starts_with("no measured figure covers half"),
        "{}",
        node.cause
    );
}
