//! Every `muxlab` command shown in README.md and docs/*.md parses as written: each line of a
//! shell (or bare) code block that runs muxlab (`$B ...`, `muxlab ...`, `cargo run --release -- ...`) is
//! split as a shell would and handed to the CLI's own parser, without running it.

use clap::Parser;

/// The words of a shell line: single and double quotes, backslash escapes; a comment (` #`)
/// and an output redirection at the end (`> file`) are not the command's.
fn words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut any) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    any = true;
                }
            }
            (None, '#') if cur.is_empty() && !any => break,
            (None, '>') if cur.is_empty() && !any => break,
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The muxlab command lines of `text`'s `sh` blocks (continuations joined), with where they are.
fn commands(name: &str, text: &str) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    let (mut fence, mut pending): (Option<bool>, String) = (None, String::new());
    for (n, line) in text.lines().enumerate() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            // A fence opens a block (its language said) or closes the open one. A shell block
            // (or a bare one: it may hold commands too) is read; a TOML or JSON one is not.
            fence = match fence {
                None => Some(matches!(lang.trim(), "" | "sh" | "bash" | "console")),
                Some(_) => None,
            };
            continue;
        }
        if fence != Some(true) {
            continue;
        }
        let line = line.trim();
        if let Some(body) = line.strip_suffix('\\') {
            pending.push_str(body);
            pending.push(' ');
            continue;
        }
        let whole = std::mem::take(&mut pending) + line;
        let w = words(&whole);
        let rest = match w.first().map(String::as_str) {
            Some("$B") | Some("muxlab") => &w[1..],
            Some("cargo") if w.get(1..4) == Some(&["run".into(), "--release".into(), "--".into()]) => &w[4..],
            _ => continue,
        };
        let mut args = vec!["muxlab".to_string()];
        args.extend(rest.iter().cloned());
        found.push((format!("{name}:{}: {whole}", n + 1), args));
    }
    found
}

#[test]
fn every_command_in_the_readme_and_the_docs_parses_as_written() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap() {
        let p = e.unwrap().path();
        // design.md is a copy of the team's DESIGN.md, whose command list is a synopsis
        // (`muxlab bench [NAME | FILE.toml]`, each line with its description), not lines to run.
        if p.extension().is_some_and(|x| x == "md") && !p.ends_with("design.md") {
            files.push(p);
        }
    }
    let (mut checked, mut bad) = (0, Vec::new());
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let name = f.strip_prefix(root).unwrap().display().to_string();
        for (at, args) in commands(&name, &text) {
            checked += 1;
            match muxlab::cli::Cli::try_parse_from(&args) {
                // `--version` and `--help` parse: clap answers them instead of running.
                Err(e)
                    if matches!(
                        e.kind(),
                        clap::error::ErrorKind::DisplayVersion | clap::error::ErrorKind::DisplayHelp
                    ) => {}
                Err(e) => bad.push(format!("{at}\n    {}", e.to_string().lines().next().unwrap_or(""))),
                Ok(_) => {}
            }
        }
    }
    assert!(checked >= 40, "only {checked} commands found: the extraction is broken");
    assert!(
        bad.is_empty(),
        "{} commands do not parse:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn the_extraction_splits_as_a_shell_does_and_the_parser_refuses_a_bad_flag() {
    assert_eq!(
        words(r#"$B load 'http://x/?a=1&b=2' -H "A: b c" --x\ y  # a comment"#),
        ["$B", "load", "http://x/?a=1&b=2", "-H", "A: b c", "--x y"]
    );
    assert_eq!(
        words("$B merge a.json b.json > run.json"),
        ["$B", "merge", "a.json", "b.json"]
    );
    let cmds = commands(
        "t",
        "```sh\n$B load http://x/ \\\n  -c 2\nls -l\n```\n$B not-in-a-block\n",
    );
    assert_eq!(cmds.len(), 1);
    assert_eq!(cmds[0].1, ["muxlab", "load", "http://x/", "-c", "2"]);
    assert!(muxlab::cli::Cli::try_parse_from(["muxlab", "load", "http://x/", "--no-such-flag"]).is_err());
}
