//! Readers for "a protocol is one type": the `Protocol` trait's methods, the types that
//! implement it, and the one dispatch in `proto/session.rs` (its variant lists and the calls
//! its matches forward).

use std::collections::BTreeSet;

/// The methods of `trait NAME` in `code`.
pub fn trait_methods(code: &str, name: &str) -> BTreeSet<String> {
    let file = syn::parse_file(code).unwrap();
    file.items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Trait(t) if t.ident == name => Some(t),
            _ => None,
        })
        .flat_map(|t| &t.items)
        .filter_map(|i| match i {
            syn::TraitItem::Fn(f) => Some(f.sig.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// The variants of `enum NAME` in `code`.
pub fn variants(code: &str, name: &str) -> BTreeSet<String> {
    let file = syn::parse_file(code).unwrap();
    file.items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Enum(e) if e.ident == name => Some(e),
            _ => None,
        })
        .flat_map(|e| &e.variants)
        .map(|v| v.ident.to_string())
        .collect()
}

/// The self types of `impl ... TRAIT for TYPE` in `code` (a generic blanket impl gives its
/// parameter's name).
pub fn implementors(code: &str, trait_name: &str) -> BTreeSet<String> {
    let Ok(file) = syn::parse_file(code) else {
        return BTreeSet::new();
    };
    file.items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Impl(im) => Some(im),
            _ => None,
        })
        .filter(|im| {
            im.trait_
                .as_ref()
                .is_some_and(|(p, _)| p.segments.last().is_some_and(|s| s.ident == trait_name))
        })
        .filter_map(|im| match &*im.self_ty {
            syn::Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// The variant lists of every `dispatch!(TYPE { A, B, .. })` in `code`, by type.
pub fn dispatched(code: &str) -> Vec<(String, BTreeSet<String>)> {
    code.match_indices("\ndispatch!(")
        .filter_map(|(i, m)| {
            let rest = &code[i + m.len()..];
            let (ty, rest) = rest.split_once('{')?;
            let (list, _) = rest.split_once('}')?;
            let vs = list
                .split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string);
            Some((ty.trim().to_string(), vs.collect()))
        })
        .collect()
}

/// The body of `macro_rules! NAME` in `code`, from its name to its last brace.
pub fn macro_body<'a>(code: &'a str, name: &str) -> Option<&'a str> {
    let at = code.find(&format!("macro_rules! {name}"))?;
    let rest = &code[at..];
    let mut depth = 0usize;
    for (i, c) in rest.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(&rest[..=i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The methods a dispatch body forwards: each `=> s.NAME(` in an arm of its matches.
pub fn forwarded(body: &str) -> BTreeSet<String> {
    body.match_indices("=> s.")
        .filter_map(|(i, m)| body[i + m.len()..].split_once('(').map(|(n, _)| n.to_string()))
        .collect()
}

/// A match arm that answers for "the others": `_ =>` (or a binding that catches them all).
pub fn catch_all_arms(code: &str) -> usize {
    code.lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("_ =>") || t.contains("| _ =>") || t.starts_with("other =>")
        })
        .count()
}
