//! `docs/code.md`, the map a new engineer reads first, held to the tree: every folder of `src/`
//! is on it, no folder it names is gone, and every rule it states names the structure test that
//! keeps it.

use std::collections::BTreeSet;
use std::path::Path;

/// The folders the map names: each entry of its folder list, `- `src/…/``, ending in `/`.
pub fn folders_named(map: &str) -> BTreeSet<String> {
    map.lines()
        .filter_map(|l| l.strip_prefix("- `src/"))
        .filter_map(|rest| rest.split_once('`').map(|(path, _)| format!("src/{path}")))
        .filter_map(|p| p.strip_suffix('/').map(str::to_string))
        .collect()
}

/// Every folder under `root` (`src` itself included), as `src/a/b`.
pub fn folders(root: &Path, rel: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::from([rel.to_string()]);
    for e in std::fs::read_dir(root).unwrap().map(|e| e.unwrap().path()) {
        if e.is_dir() {
            let name = e.file_name().unwrap().to_string_lossy().into_owned();
            out.extend(folders(&e, &format!("{rel}/{name}")));
        }
    }
    out
}

/// The test names the map's rules give in parentheses: `(`name`)` with a snake_case name.
pub fn rules_named(map: &str) -> BTreeSet<String> {
    let rules = map.split("## Rules the code keeps").nth(1).unwrap_or("");
    let mut out = BTreeSet::new();
    for (i, _) in rules.match_indices("(`") {
        let rest = &rules[i + 2..];
        if let Some((name, _)) = rest.split_once("`)") {
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                out.insert(name.to_string());
            }
        }
    }
    out
}
