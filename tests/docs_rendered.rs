//! Every table and measured figure in README.md and docs/*.md is what `muxlab docs` renders
//! from the committed results: the blocks as committed, a changed figure caught and named, a
//! number with a unit outside a block listed unless its paragraph is marked, README's figures
//! found in the files they cite, the first-screen picture made from the run its caption names,
//! and that run's report fitting a 1,280 px window.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn docs(root: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("docs")
        .args(args)
        .arg("--root")
        .arg(root)
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A copy of the repository's docs (README.md, docs/, the first-screen script) to change.
fn copy_of_docs(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("muxlab-docs-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    for sub in ["docs/results", "scripts"] {
        std::fs::create_dir_all(d.join(sub)).unwrap();
    }
    let r = root();
    std::fs::copy(r.join("README.md"), d.join("README.md")).unwrap();
    std::fs::copy(r.join("scripts/first_screen.sh"), d.join("scripts/first_screen.sh")).unwrap();
    for dir in ["docs", "docs/results"] {
        for e in std::fs::read_dir(r.join(dir)).unwrap().flatten() {
            if e.path().is_file() {
                std::fs::copy(e.path(), d.join(dir).join(e.file_name())).unwrap();
            }
        }
    }
    d
}

/// The line (1-based) of the first block of `kind` in `text`, and the line of its first table
/// row holding a digit.
fn first_block(text: &str, kind: &str) -> (usize, usize) {
    let lines: Vec<&str> = text.lines().collect();
    let open = lines
        .iter()
        .position(|l| l.trim() == format!("<!-- muxlab {kind}"))
        .unwrap_or_else(|| panic!("no {kind} block"));
    let row = (open..lines.len())
        .find(|&i| {
            lines[i].starts_with("| ")
                && !lines[i].starts_with("| question")
                && lines[i].chars().any(|c| c.is_ascii_digit())
                && !lines[i].contains("---")
        })
        .unwrap();
    (open + 1, row + 1)
}

/// `text` with the first digit of line `n` (1-based) changed.
fn change_a_digit(text: &str, n: usize) -> String {
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let l = &mut lines[n - 1];
    // A figure, not a link: the first digit after the row's second cell begins.
    let from = l.match_indices(" | ").nth(1).map_or(0, |(i, _)| i);
    let at = l[from..].find(|c: char| c.is_ascii_digit()).unwrap() + from;
    let d = l.as_bytes()[at];
    let new = if d == b'9' { '1' } else { (d + 1) as char };
    l.replace_range(at..at + 1, &new.to_string());
    lines.join("\n") + "\n"
}

#[test]
fn every_block_in_readme_and_docs_renders_as_the_committed_results_say() {
    let o = docs(&root(), &["--check"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "run `muxlab docs` and commit what it renders:\n{}",
        text(&o)
    );
    // Something was rendered: the glance table and a table per committed result.
    let out = text(&o);
    let blocks: usize = out
        .split(" blocks in ")
        .next()
        .unwrap()
        .rsplit('\n')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(blocks >= 20, "{out}");
}

#[test]
fn a_changed_figure_in_the_glance_or_the_first_results_table_fails_naming_its_block() {
    let d = copy_of_docs("changed");
    let readme = std::fs::read_to_string(d.join("README.md")).unwrap();
    let (glance, row) = first_block(&readme, "glance");
    std::fs::write(d.join("README.md"), change_a_digit(&readme, row)).unwrap();
    let results = std::fs::read_to_string(d.join("docs/results.md")).unwrap();
    let (cells, row) = first_block(&results, "cells");
    std::fs::write(d.join("docs/results.md"), change_a_digit(&results, row)).unwrap();
    let o = docs(&d, &["--check"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains(&format!("differs: README.md:{glance} glance")), "{out}");
    assert!(
        out.contains(&format!("differs: docs/results.md:{cells} cells")),
        "{out}"
    );
    // Rendering puts the committed figures back, and the check passes again.
    assert_eq!(docs(&d, &[]).status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(d.join("README.md")).unwrap(), readme);
    assert_eq!(std::fs::read_to_string(d.join("docs/results.md")).unwrap(), results);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_measured_number_outside_a_block_is_listed_unless_its_paragraph_is_marked() {
    let d = copy_of_docs("unmarked");
    let tour = d.join("docs/tour.md");
    let before = std::fs::read_to_string(&tour).unwrap();
    std::fs::write(
        &tour,
        format!("{before}\nepoll answered in 4.71 ms, 1.70× reactor's.\n"),
    )
    .unwrap();
    let o = docs(&d, &["--check"]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let line = before.lines().count() + 2;
    assert!(
        out.contains(&format!("unmarked figure: docs/tour.md:{line}: 4.71 ms")),
        "{out}"
    );
    assert!(
        out.contains(&format!("unmarked figure: docs/tour.md:{line}: 1.70×")),
        "{out}"
    );
    std::fs::write(
        &tour,
        format!("{before}\n<!-- cited: the seed -->\nThe seed answered in 4.71 ms.\n"),
    )
    .unwrap();
    let o = docs(&d, &["--check"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_block_that_cannot_render_is_an_error_and_its_file_is_left_as_it_was() {
    let d = copy_of_docs("broken");
    let tour = d.join("docs/tour.md");
    let broken = "x\n\n<!-- muxlab cells\nresult = \"no-such-run\"\nexperiments = [\"e\"]\nfigures = [\"p99\"]\n-->\nold\n<!-- /muxlab -->\n";
    std::fs::write(&tour, broken).unwrap();
    let o = docs(&d, &[]);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("docs/tour.md:3 cells") && out.contains("no-such-run"),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&tour).unwrap(), broken);
    std::fs::write(
        &tour,
        broken.replace("no-such-run", "quick").replace("\"p99\"", "\"p98\""),
    )
    .unwrap();
    let out = text(&docs(&d, &[]));
    assert!(out.contains("no figure 'p98'"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

/// The commit of the binary a kept file records (`build_commit`, in its environment for a
/// bench run, at its top for a script's file).
fn build_commit(doc: &Value) -> Option<String> {
    doc["environment"]
        .get("build_commit")
        .or_else(|| doc.get("build_commit"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// Read without the renderer: every block that names its result's origin (`run`, `screen`,
/// and the scripts' `peers`, `advise`, `h2cost`, `h2client`) says "by the binary of commit X"
/// only where the result recorded its binary's commit, X being that commit; a result kept
/// before results recorded it claims no binary and says so.
#[test]
fn a_caption_names_a_binary_only_where_its_result_recorded_one() {
    let (mut named, mut unnamed) = (0, 0);
    for file in std::iter::once(root().join("README.md")).chain(
        std::fs::read_dir(root().join("docs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md")),
    ) {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut lines = text.lines().enumerate();
        while let Some((n, l)) = lines.next() {
            let Some(kind) = l.trim().strip_prefix("<!-- muxlab ") else {
                continue;
            };
            let block: Vec<&str> = lines
                .by_ref()
                .map(|(_, l)| l)
                .take_while(|l| !l.starts_with("<!-- /muxlab"))
                .collect();
            if !["run", "screen", "peers", "advise", "h2cost", "h2client"].contains(&kind) {
                continue;
            }
            let spec: toml::Value = toml::from_str(
                &block
                    .iter()
                    .take_while(|l| **l != "-->")
                    .copied()
                    .collect::<Vec<_>>()
                    .join("\n"),
            )
            .unwrap();
            let result = spec["result"].as_str().unwrap();
            // A caption may begin with the words: "By the binary ..." is the same claim.
            let body = block
                .iter()
                .skip_while(|l| **l != "-->")
                .copied()
                .collect::<Vec<_>>()
                .join("\n")
                .to_lowercase();
            let doc: Value = serde_json::from_str(
                &std::fs::read_to_string(root().join(format!("docs/results/{result}.json"))).unwrap(),
            )
            .unwrap();
            let at = format!("{}:{} {kind} ({result})", file.display(), n + 1);
            match build_commit(&doc) {
                Some(c) => {
                    assert!(
                        body.contains(&format!("by the binary of commit `{}`", &c[..8])),
                        "{at}: its result records the binary of {c}: {body}"
                    );
                    named += 1;
                }
                None => {
                    assert!(
                        !body.contains("by the binary") && !body.contains("binary of commit"),
                        "{at}: its result records no binary, yet the caption names one: {body}"
                    );
                    assert!(
                        body.contains("which binary ran it is not recorded"),
                        "{at}: the caption says the binary is not recorded: {body}"
                    );
                    unnamed += 1;
                }
            }
        }
    }
    // Every kept result's caption was read (re-keeping moves captions from one count to the
    // other).
    assert!(
        named + unnamed >= 20,
        "{named} captions with a binary, {unnamed} without"
    );
}

/// A figure as the docs write it (`4.71ms`, `84,808 req/s`, `6.3 µs`, `0.25%`, `17.50 KiB`),
/// in the unit the results file keeps it in (µs, req/s, µs, per cent, KiB).
fn parse_figure(s: &str) -> Option<f64> {
    let s = s.trim();
    let num_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(s.len());
    let v: f64 = s[..num_end].replace(',', "").parse().ok()?;
    let unit = s[num_end..].trim();
    Some(match unit {
        "us" | "µs" => v,
        "ms" => v * 1e3,
        "s" => v * 1e6,
        _ => v,
    })
}

/// Every figure a cell of `x` for `target` keeps, in the file's units.
fn kept_figures(cells: &[Value], x: &str, target: &str, conns: u64) -> Vec<f64> {
    let mut out = Vec::new();
    // Each figure's median over the repeats too: a glance shows the median, which over an even
    // number of repeats (server-cost's 8) is the mean of the middle two, no cell's own value
    // (server-cost's poll: 5.4 µs of cells at 4.9 and 5.8 to 6.1).
    let mut per: Vec<Vec<f64>> = vec![Vec::new(); 6];
    for c in cells.iter().filter(|c| {
        c["experiment"] == x
            && c["target"] == target
            && c["connections"] == conns
            && c.get("calibration").is_none_or(Value::is_null)
    }) {
        let f = &c["figures"];
        for (i, k) in [
            "throughput_rps",
            "p50_us",
            "p99_us",
            "p999_us",
            "server_cpu_us_per_req",
            "mem_per_conn_kib",
        ]
        .iter()
        .enumerate()
        {
            out.extend(f[k].as_f64());
            // The median is of the compared cells: an A/A twin's are the machine's noise.
            if c["twin"] != true {
                per[i].extend(f[k].as_f64());
            }
        }
        for k in f["classes"].as_array().into_iter().flatten() {
            out.extend(["p50_us", "p99_us", "p999_us"].iter().filter_map(|q| k[q].as_f64()));
        }
        let s = &f["streams"];
        out.extend(["ttfe_p99_us", "gap_p99_us"].iter().filter_map(|q| s[q].as_f64()));
        if let (Some(late), Some(all)) = (s["server_late"].as_f64(), s["server_events"].as_f64()) {
            out.push(late / all * 100.0);
        }
        // CPU per event: the server's CPUs busy over the window, over the events received.
        if let (Some(cores), Some(w), Some(ev)) = (
            f["server_cpu_cores"].as_f64(),
            s["window_s"].as_f64(),
            s["events"].as_f64(),
        ) {
            if ev > 0.0 {
                out.push(cores * w * 1e6 / ev);
            }
        }
    }
    for mut v in per.into_iter().filter(|v| !v.is_empty()) {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        out.push(if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        });
    }
    out
}

/// Read without the renderer: each row of README's glance table names a result file, and each
/// figure in it ("thread 4.71ms") is one that file's cells keep for that target (to the figure's
/// own rounding).
#[test]
fn readme_glance_figures_are_found_in_the_files_they_cite() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (open, _) = first_block(&readme, "glance");
    let spec: String = readme
        .lines()
        .skip(open)
        .take_while(|l| *l != "-->")
        .collect::<Vec<_>>()
        .join("\n");
    let spec: toml::Value = toml::from_str(&spec).unwrap();
    let rows: Vec<&str> = readme
        .lines()
        .skip(open)
        .skip_while(|l| !l.starts_with("| question"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let asked = spec["rows"].as_array().unwrap();
    assert_eq!(rows.len(), asked.len(), "a row per question");
    let mut checked = 0;
    for (row, ask) in rows.iter().zip(asked) {
        let cols: Vec<&str> = row.trim_matches('|').split(" | ").map(str::trim).collect();
        let link = cols[3];
        let file = link[link.find("](").unwrap() + 2..link.len() - 1].to_string();
        assert_eq!(file, format!("docs/results/{}.json", ask["result"].as_str().unwrap()));
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(root().join(&file)).unwrap()).unwrap();
        let cells = doc["cells"].as_array().unwrap();
        // "p99 latency at 500 connections: thread 4.71ms, queue-pool 5.37ms, reactor 2.25s"
        let (head, figures) = cols[2].split_once(": ").unwrap();
        let conns: u64 = head
            .split(" at ")
            .nth(1)
            .unwrap()
            .trim_end_matches(" connections")
            .trim_end_matches(" connection")
            .replace(',', "")
            .parse()
            .unwrap();
        for fig in figures.split(", ") {
            let cut = fig.rfind(' ').unwrap();
            // The value may carry its unit after a space ("84,808 req/s", "6.3 µs"); a target's
            // name may end in a number ("offload --workers 2 7.17ms").
            let (target, value) = match fig[cut + 1..].starts_with(|c: char| c.is_ascii_digit()) {
                true => (&fig[..cut], &fig[cut + 1..]),
                false => {
                    let s = fig[..cut].rfind(' ').unwrap();
                    (&fig[..s], &fig[s + 1..])
                }
            };
            let v = parse_figure(value).unwrap_or_else(|| panic!("{fig}"));
            let kept = kept_figures(cells, ask["experiment"].as_str().unwrap(), target, conns);
            let decimals = value
                .split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .next()
                .unwrap()
                .split('.')
                .nth(1)
                .map_or(0, str::len);
            let unit = parse_figure(&format!(
                "1{}",
                &value[value
                    .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
                    .unwrap_or(value.len())..]
            ))
            .unwrap();
            let step = unit * 10f64.powi(-(decimals as i32));
            assert!(
                kept.iter().any(|k| (k - v).abs() <= step / 2.0 + 1e-9 * k.abs()),
                "{file}: {target} at {conns} keeps none of {value} ({kept:?})"
            );
            checked += 1;
        }
    }
    assert!(checked >= rows.len() * 2, "{checked} figures checked");
}

#[test]
fn the_first_screen_picture_is_made_from_the_run_its_caption_names() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (open, _) = first_block(&readme, "screen");
    let block: Vec<&str> = readme
        .lines()
        .skip(open)
        .take_while(|l| !l.starts_with("<!-- /muxlab"))
        .collect();
    let spec: toml::Value = toml::from_str(
        &block
            .iter()
            .take_while(|l| **l != "-->")
            .copied()
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let result = format!("docs/results/{}.json", spec["result"].as_str().unwrap());
    let caption = block
        .iter()
        .find(|l| l.starts_with("*The report of"))
        .expect("a caption");
    assert!(
        caption.contains(&format!("]({result})")),
        "the caption names {result}: {caption}"
    );
    let run: Value = serde_json::from_str(&std::fs::read_to_string(root().join(&result)).unwrap()).unwrap();
    assert!(
        caption.contains(run["source"].as_str().unwrap()),
        "and the run: {caption}"
    );
    assert!(
        caption.contains(&run["commit"].as_str().unwrap()[..8]),
        "and its commit: {caption}"
    );
    let script = std::fs::read_to_string(root().join(spec["script"].as_str().unwrap())).unwrap();
    assert!(
        script.contains(&format!("IN={result}")),
        "the script makes the picture from {result}"
    );
    assert!(script.contains(&format!("OUT={}", spec["image"].as_str().unwrap())));
    assert!(block
        .iter()
        .any(|l| l.contains(&format!("]({})", spec["image"].as_str().unwrap()))));
    // A PNG of the window the script asks for.
    let png = std::fs::read(root().join(spec["image"].as_str().unwrap())).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (1280, 800));
    assert!(script.contains("--window-size=1280,800"));
}

/// The report users get for the committed quick run, every design and label in it, measured
/// in headless Chromium at 1,280 × 800: nothing reaches past the page's right edge.
#[test]
fn the_committed_quick_report_fits_a_1280_px_window() {
    let Some(chrome) = [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists()) else {
        return skip("the browser check: chromium is not installed (apt-get install chromium; .ci/run does)");
    };
    let d = std::env::temp_dir().join(format!("muxlab-docs-width-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::copy(root().join("docs/results/quick.json"), d.join("quick.json")).unwrap();
    let o = Command::new(BIN)
        .args(["report"])
        .arg(d.join("quick.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let out = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,800",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", d.join("profile").display()))
        .arg(format!("file://{}", d.join("quick.report.html").display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    let attr = |name: &str| -> String {
        let at = dom.find(&format!("{name}=\"")).unwrap_or_else(|| panic!("no {name}")) + name.len() + 2;
        dom[at..at + dom[at..].find('"').unwrap()].to_string()
    };
    assert_eq!(attr("data-overflow-x"), "no", "the page scrolls sideways at 1,280 px");
    let widest: u32 = attr("data-widest-table").parse().unwrap();
    assert!(widest > 0 && widest <= 1280, "the widest table or chart is {widest} px");
    assert_eq!(
        attr("data-overflowing"),
        "0",
        "elements past the page's width or spilling"
    );
    assert_eq!(attr("data-first-screen"), "yes");
    let _ = std::fs::remove_dir_all(&d);
}
