//! The blocks a renderer refuses, against the repository's kept results: each fault its
//! [`DocsError`] variant, with the words a doc's writer reads.

use std::path::{Path, PathBuf};

use super::blocks::Block;
use super::ctx::Ctx;
use super::error::DocsError;
use super::render::render;

/// The repository, rendering into README.md.
fn ctx() -> Ctx {
    Ctx {
        root: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        file: PathBuf::from("README.md"),
    }
}

/// What a block of `kind` with `spec` renders to.
fn block(kind: &str, spec: &str) -> Result<String, DocsError> {
    let b = Block {
        kind: kind.into(),
        spec: spec.into(),
        line: 1,
        body: 0..0,
    };
    render(&ctx(), &b)
}

#[test]
fn a_predicted_figure_the_block_does_not_show_is_named() {
    let e = block(
        "cells",
        "result = \"quick\"\nexperiments = [\"http-latency\"]\nfigures = [\"throughput\"]\npredicted = [\"p99\"]\n",
    )
    .unwrap_err();
    assert!(
        matches!(&e, DocsError::PredictedNotShown { key, figures } if key == "p99" && figures == &["throughput"]),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "predicted 'p99' is not one of the figures (throughput)");
}

#[test]
fn a_result_given_as_a_path_is_refused() {
    let e = block("run", "result = \"docs/results/quick\"\n").unwrap_err();
    assert!(
        matches!(&e, DocsError::ResultIsAPath { name } if name == Path::new("docs/results/quick")),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "result 'docs/results/quick' is a name in docs/results, not a path"
    );
}

#[test]
fn a_screen_names_its_missing_file_and_a_script_not_from_its_result() {
    let e = block(
        "screen",
        "result = \"quick\"\nimage = \"docs/no-such.png\"\nscript = \"scripts/first_screen.sh\"\n",
    )
    .unwrap_err();
    assert!(
        matches!(&e, DocsError::Missing { path } if path == Path::new("docs/no-such.png")),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "docs/no-such.png does not exist");
    // The script is there, but makes its picture from quick, not from this result.
    let e = block(
        "screen",
        "result = \"capacity\"\nimage = \"docs/first-screen.png\"\nscript = \"scripts/first_screen.sh\"\n",
    )
    .unwrap_err();
    assert!(
        matches!(&e, DocsError::NotFrom { script, result }
            if script == Path::new("scripts/first_screen.sh") && result == "capacity"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "scripts/first_screen.sh does not make its picture from docs/results/capacity.json"
    );
}

/// `against` on a `bench --baseline` run compares this binary with its baseline, cell by cell
/// (a row per model the baseline also served); on a run without one, each experiment's targets
/// with its reference, under that experiment's sentence; an experiment the run lacks is refused.
#[test]
fn against_compares_a_baseline_run_with_its_baseline_and_other_runs_with_their_reference() {
    let ba = block(
        "against",
        "result = \"before-after\"\nexperiments = [\"http-keepalive\"]\n",
    )
    .unwrap();
    assert!(ba.contains("B = this binary, A = its baseline"), "{ba}");
    assert!(ba.contains("| http-keepalive | epoll | 100 |"), "{ba}");
    assert!(
        !ba.contains("@baseline"),
        "baseline cells are the other side, not rows: {ba}"
    );
    assert!(!ba.contains("http-close"), "only the experiments named: {ba}");
    assert!(ba.contains("geometric mean B/A"), "{ba}");
    // B is this binary: in the kept run fork's short connections cost it less, thread's more.
    let close = block("against", "result = \"before-after\"\nexperiments = [\"http-close\"]\n").unwrap();
    assert!(
        close.contains("| http-close | fork | 50 |") && close.contains("0.91× [0.89–0.93] better"),
        "{close}"
    );
    assert!(close.contains("1.15× [1.11–1.18] WORSE"), "{close}");
    let calibrated = block(
        "against",
        "result = \"before-after\"\nexperiments = [\"offload-sleep\"]\n",
    )
    .unwrap();
    assert!(
        !calibrated.contains("calibration"),
        "calibration cells are not rows: {calibrated}"
    );
    let sc = block(
        "against",
        "result = \"server-cost\"\nexperiments = [\"http-keepalive\"]\n",
    )
    .unwrap();
    assert!(
        sc.contains("http-keepalive: server CPU per request against nginx"),
        "{sc}"
    );
    assert!(
        sc.contains("CPU/request / nginx") && sc.contains("| http-keepalive | epoll | 100 |"),
        "{sc}"
    );
    assert!(
        !sc.contains("| http-keepalive | nginx |"),
        "the reference is not a row of its own: {sc}"
    );
    assert!(
        !sc.contains("/ epoll") && !sc.contains("http-close"),
        "only http-keepalive: {sc}"
    );
    let e = block("against", "result = \"quick\"\n").unwrap_err();
    assert!(matches!(&e, DocsError::NothingToCompare { .. }), "{e:?}");
    let e = block("against", "result = \"before-after\"\nexperiments = [\"nope\"]\n").unwrap_err();
    assert!(
        matches!(&e, DocsError::NoExperiment { experiment, .. } if experiment == "nope"),
        "{e:?}"
    );
}
