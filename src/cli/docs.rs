//! `muxlab docs` run: the blocks rendered or checked, what changed, and the exit code.

/// `muxlab docs`: renders the blocks (or checks them), says what changed, and exits 1 where a
/// block differs under --check, fails to render, or a number stands unmarked.
pub(super) fn run_docs(root: &std::path::Path, files: Vec<std::path::PathBuf>, check: bool) -> anyhow::Result<()> {
    let docs = crate::report::docs::files(root)?;
    let files = if files.is_empty() { docs } else { files };
    let out = crate::report::docs::run(root, &files, check)?;
    for e in &out.errors {
        eprintln!("muxlab docs: {e}");
    }
    for c in &out.changed {
        match check {
            true => eprintln!("differs: {c}"),
            false => println!("rendered: {c}"),
        }
    }
    for w in &out.written {
        println!("wrote {}", w.display());
    }
    for u in &out.unmarked {
        eprintln!(
            "unmarked figure: {u} (render it in a block, put it in code, or mark its paragraph <!-- cited: SOURCE --> or, where it is not a measurement, <!-- analytic: FIGURE what it is -->)"
        );
    }
    println!(
        "{} blocks in {} files; {} {}, {} unmarked figures, {} errors",
        out.blocks,
        files.len(),
        out.changed.len(),
        if check { "differ" } else { "rendered anew" },
        out.unmarked.len(),
        out.errors.len()
    );
    let failed = !out.errors.is_empty() || !out.unmarked.is_empty() || (check && !out.changed.is_empty());
    if failed {
        return Err(super::exit::Failure {
            exit: super::exit::Exit::Failed,
            message: format!(
                "{} errors, {} differ, {} unmarked figures",
                out.errors.len(),
                match check {
                    true => out.changed.len(),
                    false => 0,
                },
                out.unmarked.len()
            ),
        }
        .into());
    }
    Ok(())
}
