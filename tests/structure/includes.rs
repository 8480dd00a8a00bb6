//! What the binary is built from, read from the text: the roots `build.rs` watches (its
//! `WATCHED` list, where an edit re-runs it and so renews the binary's dirty flag) and the files
//! a source compiles in (`include_str!`, `include_bytes!`, `include!`).

/// The string literals of `build.rs`'s `const WATCHED` list (`None`: no such list).
pub fn watched(build_rs: &str) -> Option<Vec<String>> {
    let at = build_rs.find("const WATCHED")?;
    let rest = &build_rs[at..];
    // After the `=`: the type, `[&str; N]`, has a bracket too.
    let eq = rest.find('=')?;
    let open = eq + rest[eq..].find('[')?;
    let close = open + rest[open..].find(']')?;
    Some(literals(&rest[open + 1..close]))
}

/// Each `"..."` in `s`, without its quotes.
fn literals(s: &str) -> Vec<String> {
    s.split('"').skip(1).step_by(2).map(str::to_string).collect()
}

/// Each file `code` compiles in, as its macro names it: `Ok(path)` for a string literal,
/// `Err(text)` for an argument this reader cannot follow (a `concat!`, an `env!`), which a
/// person must then check.
pub fn included(code: &str) -> Vec<Result<String, String>> {
    let mut out = Vec::new();
    for mac in ["include_str!(", "include_bytes!(", "include!("] {
        for (at, _) in code.match_indices(mac) {
            // `include!(` is also the tail of the other two.
            if mac == "include!(" && code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let arg = &code[at + mac.len()..];
            let end = arg.find(')').unwrap_or(arg.len());
            let arg = arg[..end].trim();
            out.push(match arg.strip_prefix('"').and_then(|a| a.strip_suffix('"')) {
                Some(p) if !p.contains('"') => Ok(p.to_string()),
                _ => Err(format!("{mac}{arg})")),
            });
        }
    }
    out
}
