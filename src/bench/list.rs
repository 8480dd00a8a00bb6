//! `muxlab bench --list`: the built-in scenarios with their cells, and the products a
//! scenario may set beside their models.

use super::peers;
use super::record::scenario;

/// `muxlab bench --list`.
pub fn list() -> String {
    let mut s = String::new();
    for (name, text) in scenario::BUILTIN {
        let sc = scenario::parse(text, name).expect("built-in scenarios parse (tested)");
        let cells: usize = sc
            .experiments
            .iter()
            .map(|x| (x.models.len() + x.peers.len()) * x.connections.len())
            .sum();
        s.push_str(&format!("{name:<26} {cells:>3} cells  {}\n", sc.description));
    }
    s.push_str(&peers::products());
    s.push_str("\nmuxlab bench NAME runs one; muxlab bench path/to/file.toml runs your own (see scenarios/).\n");
    s
}
