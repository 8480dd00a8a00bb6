//! The rules of the code's layout, read from `src/`, so that a change cannot quietly undo them:
//! layers import downward only (the order `lib.rs` states), bench's three rooms import one way
//! (run → judge → record), one `Metric` type, one module-file convention, and no function over
//! 100 lines.

use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// Every `.rs` file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()) {
        if e.is_dir() {
            out.extend(files(&e));
        } else if e.extension().is_some_and(|x| x == "rs") {
            out.push(e);
        }
    }
    out.sort();
    out
}

/// `path` relative to `src/`.
fn rel(path: &Path) -> String {
    path.strip_prefix(SRC).unwrap().to_string_lossy().into_owned()
}

/// A file's code without its comments (a doc comment may name a layer it does not import).
fn code(path: &Path) -> String {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The layer of a top-level module: each may use only those at its level or below. The
/// helpers with no layer of their own (`rng`, `units`, `sync`, `hist`, `testing`) sit at the
/// bottom beside `sys`.
fn layer(module: &str) -> Option<usize> {
    Some(match module {
        "sys" | "rng" | "units" | "sync" | "hist" | "testing" => 0,
        "proto" => 1,
        "server" => 2,
        "models" => 3,
        "load" => 4,
        "remote" => 5,
        "queueing" => 6,
        "bench" => 7,
        "report" => 8,
        "fuzz" | "advise" => 9,
        "cli" => 10,
        _ => return None,
    })
}

/// The top-level module a file of `src/` belongs to (`lib` and `main` for those files).
fn module_of(rel: &str) -> &str {
    rel.split('/').next().unwrap().trim_end_matches(".rs")
}

/// The `crate::X` modules a file's code names.
fn uses(code: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().last();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `muxlab_crate::`, not ours
        }
        let name: String = code[i + 7..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[test]
fn every_layer_imports_only_the_layers_below_it() {
    let mut wrong = Vec::new();
    for f in files(Path::new(SRC)) {
        let r = rel(&f);
        let Some(mine) = layer(module_of(&r)) else { continue };
        for used in uses(&code(&f)) {
            if layer(&used).is_some_and(|theirs| theirs > mine) {
                wrong.push(format!("{r} uses crate::{used}"));
            }
        }
    }
    assert!(wrong.is_empty(), "imports up the layers:\n{}", wrong.join("\n"));
}

#[test]
fn bench_imports_one_way_run_then_judge_then_record() {
    let bench = Path::new(SRC).join("bench");
    let rooms = ["record", "judge"];
    assert!(
        rooms.iter().all(|r| bench.join(r).is_dir()),
        "bench/record and bench/judge exist"
    );
    let mut wrong = Vec::new();
    for f in files(&bench) {
        let r = rel(&f);
        let text = code(&f);
        // What a room may name inside bench: itself, the rooms below it, and bench's error.
        let allowed: &[&str] = match r.split('/').nth(1) {
            Some("record") => &["record", "error"],
            Some("judge") => &["record", "judge", "error"],
            _ => continue,
        };
        for (i, _) in text.match_indices("crate::bench::") {
            let name: String = text[i + 14..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !allowed.contains(&name.as_str()) {
                wrong.push(format!("{r} names bench::{name}"));
            }
        }
        if r.starts_with("bench/record") && (text.contains("judge::") || text.contains("super::super")) {
            wrong.push(format!("{r} reaches out of the record"));
        }
    }
    assert!(
        wrong.is_empty(),
        "bench's rooms import the wrong way:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn there_is_one_metric_type() {
    let defined: Vec<String> = files(Path::new(SRC))
        .into_iter()
        .filter(|f| {
            let c = code(f);
            c.contains("struct Metric ") || c.contains("struct Metric{") || c.contains("type Metric ")
        })
        .map(|f| rel(&f))
        .collect();
    assert_eq!(defined, vec!["bench/judge/metric.rs"], "one Metric, in bench::judge");
}

#[test]
fn a_module_is_a_file_or_a_folder_with_mod_rs_never_both() {
    let both: Vec<String> = files(Path::new(SRC))
        .into_iter()
        .filter(|f| {
            f.file_name()
                .is_some_and(|n| n != "mod.rs" && n != "lib.rs" && n != "main.rs")
        })
        .filter(|f| f.with_extension("").is_dir())
        .map(|f| rel(&f))
        .collect();
    assert!(both.is_empty(), "x.rs beside x/ (use x/mod.rs): {both:?}");
}

/// The functions of a file longer than `most` lines: (line, name, length). A function runs from
/// its `fn` line to the closing brace at the same indent.
fn long_functions(text: &str, most: usize) -> Vec<(usize, String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let indent = l.len() - l.trim_start().len();
        let t = l.trim_start();
        let after = ["pub(crate) ", "pub(super) ", "pub ", "async ", "const ", "unsafe "]
            .iter()
            .fold(t, |t, p| t.strip_prefix(p).unwrap_or(t));
        if let Some(rest) = after.strip_prefix("fn ").filter(|_| !l.trim_end().ends_with(';')) {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let close = format!("{}}}", " ".repeat(indent));
            let end = (i + 1..lines.len())
                .find(|&j| lines[j].trim_end() == close)
                .unwrap_or(i);
            if end + 1 - i > most {
                out.push((i + 1, name, end + 1 - i));
            }
            i = end;
        }
        i += 1;
    }
    out
}

#[test]
fn no_function_is_over_100_lines() {
    let long: Vec<String> = files(Path::new(SRC))
        .into_iter()
        .flat_map(|f| {
            let r = rel(&f);
            long_functions(&std::fs::read_to_string(&f).unwrap(), 100)
                .into_iter()
                .map(move |(line, name, n)| format!("{r}:{line} {name} ({n} lines)"))
        })
        .collect();
    assert!(long.is_empty(), "functions over 100 lines:\n{}", long.join("\n"));
}

#[test]
fn the_long_function_reader_finds_a_long_function_and_its_end() {
    let body = "    x();\n".repeat(101);
    let text = format!("impl A {{\n    pub(crate) fn big() {{\n{body}    }}\n\n    fn small() {{}}\n}}\n");
    assert_eq!(long_functions(&text, 100), vec![(2, "big".to_string(), 103)]);
    assert!(long_functions(&text, 103).is_empty());
    assert_eq!(uses("use crate::load::Hist; x(crate::sys::a)"), vec!["load", "sys"]);
}
