//! The load a pair ran at: `busy_of` rungs and their source, one rate (and a pool's
//! occupancy), `rate_of`, and what each row says of it.

use super::*;
use crate::bench::record::Cell;

/// `busy_of`: the experiment that set the rates is a calibration, no pair of its own; each
/// side is read in its own cost at the load it ran (not the one that set its rate), and a
/// utilization more than 5 points off the aim is said beside the row.
#[test]
fn under_busy_of_the_source_is_no_pair_each_side_is_read_in_its_cost_there_and_an_aim_missed_is_said() {
    let xs = scenario(
        "[[experiment]]\nname = \"cal\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
         connections = [100]\nrate = 1000\nduration = \"1s\"\n\
         [[experiment]]\nname = \"at70\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
         connections = [100]\nbusy_of = \"70% of cal\"\nduration = \"1s\"\n",
    );
    let mut cells = rounds("cal", "reactor", 30.0, 60.0, 8.0, 0.1, EVEN);
    cells.extend(rounds("cal", "node", 30.0, 60.0, 32.0, 0.1, EVEN));
    // At 70 % each costs other than in cal: E[S] is its cost here.
    cells.extend(rounds("at70", "reactor", 20.0 + 18.0, 20.0 + 180.0, 9.0, 0.71, EVEN));
    cells.extend(rounds("at70", "node", 20.0 + 80.0, 20.0 + 800.0, 40.0, 0.62, EVEN));
    let rows = super::rows(&xs, &cells);
    assert_eq!(rows.len(), 1, "cal sets the rates, at70 is the pair: {rows:?}");
    let r = &rows[0];
    assert_eq!((r.service_model_us, r.service_product_us), (Some(9.0), Some(40.0)));
    assert!((r.p99_ratio.unwrap().median - 1.0).abs() < 1e-9, "{r:?}");
    assert_eq!((r.load.as_str(), r.aimed), ("each 70% busy by its own E[S]", Some(0.7)));
    assert_eq!(r.answer, Some(Answer::Stands), "{r:?}");
    assert_eq!(r.note, "node kept its CPUs 62% busy, not the 70% aimed at");
}

/// A blocking call is part of E[S]; a pool's occupancy is its load, and Go, keeping no pool,
/// is compared at the same rate and said so; utilization names nothing there.
#[test]
fn blocking_calls_are_read_with_the_call_in_e_s_and_the_pool_as_the_load() {
    let xs = scenario(
        "[[experiment]]\nname = \"calls\"\nproto = \"http\"\nmodels = [\"green\", \"offload\"]\n\
         peers = [\"go\", \"node worker_threads=4\"]\nworkers = 4\nwork = \"sleep:exp(1ms)\"\n\
         connections = [100]\nrate = 2800\nduration = \"1s\"\n",
    );
    let call = |mut c: Cell| {
        c.figures.why.as_mut().unwrap().work_sleep_us = Some(1000.0);
        c
    };
    let mut cells: Vec<Cell> = Vec::new();
    for (t, p99, cpu, busy) in [
        ("green", 20.0 + 4.0 * 1040.0, 40.0, 0.1),
        ("go", 20.0 + 4.0 * 1050.0, 50.0, 0.15),
        ("offload", 20.0 + 3.0 * 1030.0, 30.0, 0.1),
        ("node worker_threads=4", 20.0 + 30.0 * 1200.0, 200.0, 0.6),
    ] {
        cells.extend(rounds("calls", t, 1000.0, p99, cpu, busy, EVEN).into_iter().map(call));
    }
    let rows = super::rows(&xs, &cells);
    let go = row(&rows, "go");
    assert_eq!(go.service_model_us, Some(1040.0));
    assert_eq!(go.answer, Some(Answer::Stands), "{go:?}");
    assert!(
        go.note.contains("Go keeps no pool") && go.note.contains("equal λ"),
        "{}",
        go.note
    );
    let node = row(&rows, "node worker_threads=4");
    assert_eq!(node.load, "one rate, 2,800 req/s: a pool of 4 at 70%, of 4 at 70%");
    assert_eq!(node.answer, Some(Answer::Differs));
    assert!(
        node.cause
            .contains("utilization names nothing where the work is a blocking call"),
        "{}",
        node.cause
    );
}

/// A pair limited by its CPUs at one rate is not at equal load where its busy shares differ
/// by more than 5 points: the row says so, and points to `busy_of`.
#[test]
fn one_rate_for_a_pair_limited_by_its_cpus_at_different_busy_shares_is_said_not_equal_load() {
    let xs = scenario(
        "[[experiment]]\nname = \"hol\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
         connections = [100]\nrate = 5000\nduration = \"1s\"\n",
    );
    let mut cells = rounds("hol", "reactor", 60.0, 620.0, 10.0, 0.31, EVEN);
    cells.extend(rounds("hol", "node", 180.0, 2420.0, 40.0, 0.60, EVEN));
    let rows = super::rows(&xs, &cells);
    assert!(
        rows[0]
            .note
            .starts_with("one rate is not equal load: reactor kept its CPUs 31% busy, node 60%"),
        "{}",
        rows[0].note
    );
    let mut cells = rounds("hol", "reactor", 60.0, 620.0, 10.0, 0.58, EVEN);
    cells.extend(rounds("hol", "node", 180.0, 2420.0, 40.0, 0.60, EVEN));
    assert_eq!(super::rows(&xs, &cells)[0].note, "");
}

/// A ladder of `busy_of` rungs, each naming the one below: every rung is a pair, only the root
/// at one rate of its own is the calibration.
#[test]
fn every_rung_of_a_busy_of_ladder_is_a_pair_and_only_its_root_is_not() {
    let exp = |name: &str, keys: &str| {
        format!(
            "[[experiment]]\nname = \"{name}\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
             connections = [100]\nduration = \"1s\"\n{keys}"
        )
    };
    let xs = scenario(&format!(
        "{}{}{}{}",
        exp("root", "rate = 1000\n"),
        exp("at50", "busy_of = \"50% of root\"\n"),
        exp("at70", "busy_of = \"70% of at50\"\n"),
        exp("at90", "busy_of = \"90% of at70\"\n")
    ));
    let mut cells = Vec::new();
    for (x, busy) in [("root", 0.1), ("at50", 0.5), ("at70", 0.7), ("at90", 0.9)] {
        cells.extend(rounds(x, "reactor", 60.0, 620.0, 10.0, busy, EVEN));
        cells.extend(rounds(x, "node", 180.0, 2420.0, 40.0, busy, EVEN));
    }
    let found: Vec<(String, Option<f64>)> = super::rows(&xs, &cells)
        .into_iter()
        .map(|r| (r.experiment, r.aimed))
        .collect();
    assert_eq!(
        found,
        [
            ("at50".to_string(), Some(0.5)),
            ("at70".to_string(), Some(0.7)),
            ("at90".to_string(), Some(0.9))
        ]
    );
}

/// A rate an earlier experiment set (`rate_of`) is one rate for both, not a closed loop.
#[test]
fn a_rate_of_experiment_is_one_rate_not_a_closed_loop() {
    let xs = scenario(
        "[[experiment]]\nname = \"sat\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
         connections = [100]\nduration = \"1s\"\n\
         [[experiment]]\nname = \"at50\"\nproto = \"http\"\nmodels = [\"reactor\"]\npeers = [\"node\"]\n\
         connections = [100]\nrate_of = \"50% of sat\"\nduration = \"1s\"\n",
    );
    let mut cells = rounds("at50", "reactor", 60.0, 620.0, 10.0, 0.3, EVEN);
    cells.extend(rounds("at50", "node", 180.0, 2420.0, 40.0, 0.6, EVEN));
    let r = super::rows(&xs, &cells)
        .into_iter()
        .find(|r| r.experiment == "at50")
        .unwrap();
    assert_eq!(r.load, "one rate, 50% of sat");
    assert!(r.note.starts_with("one rate is not equal load"), "{}", r.note);
}
