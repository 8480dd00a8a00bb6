//! A bad value on each command line users script (`--rate`, `--fail-if`, a scenario file, a
//! docs block) gives a message that says what is wrong and the exit code `muxlab --help`
//! documents for its kind.

use std::process::{Command, Output};

fn muxlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_muxlab")).args(args).output().unwrap()
}

fn said(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The code `muxlab --help` lists for a kind (its words, continued lines joined), read from
/// the help itself.
fn documented(kind: &str) -> i32 {
    let help = String::from_utf8(muxlab(&["--help"]).stdout).unwrap();
    let codes = help.split("Exit codes:").nth(1).expect("--help lists the exit codes");
    let mut entries: Vec<(i32, String)> = Vec::new();
    for l in codes.lines() {
        match (
            l.split_whitespace().next().and_then(|w| w.parse().ok()),
            entries.last_mut(),
        ) {
            (Some(code), _) => entries.push((code, l.to_string())),
            (None, Some((_, words))) => *words = format!("{words} {}", l.trim()),
            (None, None) => {}
        }
    }
    entries
        .iter()
        .find(|(_, words)| words.contains(kind))
        .map(|(code, _)| *code)
        .unwrap_or_else(|| panic!("--help lists no exit code for '{kind}':\n{codes}"))
}

#[test]
fn a_bad_value_on_each_command_line_says_why_and_exits_with_its_documented_code() {
    let bad_input = documented("bad input");
    assert_eq!(bad_input, 2);
    let o = muxlab(&["load", "http://127.0.0.1:9/", "--rate", "fast", "-n", "1"]);
    assert_eq!(o.status.code(), Some(bad_input), "{}", said(&o));
    assert!(
        said(&o).contains("'fast' is not a number of requests per second"),
        "{}",
        said(&o)
    );

    let o = muxlab(&["load", "http://127.0.0.1:9/", "--fail-if", "p98>1ms", "-n", "1"]);
    assert_eq!(o.status.code(), Some(bad_input), "{}", said(&o));
    assert!(
        said(&o).contains("'p98' in 'p98>1ms' is not a figure a gate holds"),
        "{}",
        said(&o)
    );

    // Refusals clap does not make (the layers' typed errors, read by kind in cli/exit.rs).
    let o = muxlab(&[
        "load",
        "http://127.0.0.1:9/",
        "--slo",
        "p99<=10ms",
        "--fail-if",
        "p99>1ms",
    ]);
    assert_eq!(o.status.code(), Some(bad_input), "{}", said(&o));
    assert!(
        said(&o).contains("--fail-if and --timeseries are of one run"),
        "{}",
        said(&o)
    );
    let o = muxlab(&["predict", "--model", "nope", "--work", "cpu:1ms", "-c", "1"]);
    assert_eq!(o.status.code(), Some(bad_input), "{}", said(&o));
    assert!(said(&o).contains("unknown model 'nope'"), "{}", said(&o));

    let dir = std::env::temp_dir().join(format!("muxlab-exit-codes-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("docs/results")).unwrap();
    let scenario = dir.join("bad.toml");
    std::fs::write(
        &scenario,
        "name = \"bad\"\ndescription = \"d\"\n\n[[experiment]]\nname = \"e\"\ndescription = \"d\"\nproto = \"http\"\nmodels = [\"epoll\"]\nconnections = [1]\nrequests = 10\nconcurency = [1]\n",
    )
    .unwrap();
    let o = muxlab(&["bench", scenario.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(bad_input), "{}", said(&o));
    assert!(
        said(&o).contains("bad.toml") && said(&o).contains("concurency"),
        "{}",
        said(&o)
    );

    // A docs block that cannot render: named on stderr, the run fails (1, as --help says).
    let failed = documented("a block that differs or cannot render");
    std::fs::write(
        dir.join("docs/t.md"),
        "x\n\n<!-- muxlab cells\nresult = \"no-such-run\"\nexperiments = [\"e\"]\nfigures = [\"p99\"]\n-->\nold\n<!-- /muxlab -->\n",
    )
    .unwrap();
    let o = muxlab(&["docs", "--root", dir.to_str().unwrap(), "docs/t.md"]);
    assert_eq!(o.status.code(), Some(failed), "{}", said(&o));
    assert!(
        said(&o).contains("docs/t.md:3 cells") && said(&o).contains("no-such-run"),
        "{}",
        said(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
