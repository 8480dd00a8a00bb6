//! Why a report page was not written: each fault its variant, its words, its exit code.

use std::path::Path;

use crate::report::Error;

#[test]
fn a_report_of_nothing_is_the_users_and_says_what_to_run() {
    let e = Error::NoSeries {
        path: "/runs/run.json".into(),
    };
    assert!(e.is_usage());
    assert_eq!(
        e.to_string(),
        "/runs/run.json has no time series: run muxlab load with --timeseries FILE (or --interval D) and --json"
    );
    let e = Error::NothingShared {
        a: "runs/a".into(),
        b: "runs/b".into(),
    };
    assert!(e.is_usage());
    assert_eq!(
        e.to_string(),
        "runs/a and runs/b share no finished cell (same experiment, target and connections)"
    );
}

#[test]
fn a_page_not_written_names_it_and_is_not_the_users() {
    let kept = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/results/quick.json");
    let results = crate::bench::read(&kept).unwrap();
    // A folder no one made: writing into it fails.
    let nowhere = std::env::temp_dir().join(format!("muxlab-report-{}/no/such/dir", std::process::id()));
    let e = crate::report::write_html(&nowhere, &results).unwrap_err();
    assert!(
        matches!(&e, Error::Write { path, .. } if path.starts_with(nowhere.parent().unwrap())),
        "{e:?}"
    );
    assert!(!e.is_usage());
    assert!(
        e.to_string().starts_with(&format!("writing {}", nowhere.display())),
        "{e}"
    );
}
