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

/// The map's rules, each a bullet of its "Rules the code keeps" section, with the test names
/// it gives in parentheses: `(`name`)`, a snake_case name.
pub fn rules_named(map: &str) -> Vec<(String, Vec<String>)> {
    let rules = map.split("## Rules the code keeps").nth(1).unwrap_or("");
    let rules = rules.split("\n## ").next().unwrap_or("");
    let mut out = Vec::new();
    for bullet in rules.split("\n- ").skip(1) {
        let mut names = Vec::new();
        for (i, _) in bullet.match_indices("(`") {
            if let Some((name, _)) = bullet[i + 2..].split_once("`)") {
                if !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                {
                    names.push(name.to_string());
                }
            }
        }
        let first = bullet.lines().next().unwrap_or("").to_string();
        out.push((first, names));
    }
    out
}
