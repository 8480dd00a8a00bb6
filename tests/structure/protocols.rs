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

/// Each method a dispatch body defines, with the methods its arms forward to (`=> s.NAME(`).
pub fn forwarding(body: &str) -> Vec<(String, Vec<String>)> {
    body.split("fn ")
        .skip(1)
        .filter_map(|chunk| {
            let end = chunk.find(['<', '('])?;
            let name = chunk[..end].trim().to_string();
            let calls = chunk
                .match_indices("=> s.")
                .filter_map(|(i, m)| chunk[i + m.len()..].split_once('(').map(|(n, _)| n.to_string()))
                .collect();
            Some((name, calls))
        })
        .collect()
}

/// The patterns of every match arm in `code` (comments left out): the text before each `=>`
/// back to what ends the arm before it (`{`, `,`, or the `}` of a block arm, which rustfmt
/// leaves without a comma), outside parentheses.
pub fn arm_patterns(code: &str) -> Vec<String> {
    let code: String = code
        .lines()
        .map(|l| l.split_once("//").map_or(l, |(c, _)| c))
        .collect::<Vec<_>>()
        .join("\n");
    let b = code.as_bytes();
    let mut out = Vec::new();
    for (at, _) in code.match_indices("=>") {
        let mut depth = 0i32;
        let mut i = at;
        while i > 0 {
            i -= 1;
            match b[i] {
                b')' | b']' => depth += 1,
                b'(' | b'[' => {
                    depth -= 1;
                    if depth < 0 {
                        break; // the arm opens inside a repetition: `$( … => … )+`
                    }
                }
                b'{' | b'}' | b',' if depth == 0 => break,
                // The end of a repetition (`$( … )+`) before it: the arm opens after it.
                b'+' | b'*' if depth == 0 && i > 0 && b[i - 1] == b')' => break,
                _ => {}
            }
        }
        // An arm's attributes (`#[allow(..)]`) are not its pattern.
        let mut p = code[i + 1..at].trim();
        while let Some(rest) = p.strip_prefix("#[") {
            p = rest.split_once(']').map_or("", |(_, r)| r).trim();
        }
        out.push(p.to_string());
    }
    out
}

/// The arms that answer for "the others": `_` or a bare binding (`other =>`), however the
/// match is laid out.
pub fn catch_all_arms(code: &str) -> Vec<String> {
    arm_patterns(code)
        .into_iter()
        .filter(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c == '_' || c.is_ascii_lowercase() || c.is_ascii_digit())
        })
        .collect()
}

/// The payload type of each variant of `enum NAME` in `code`, as (its module path's first
/// segment, if any, and its name), a `Box` looked through.
pub fn payloads(code: &str, name: &str) -> Vec<(Option<String>, String)> {
    let file = syn::parse_file(code).unwrap();
    let mut out = Vec::new();
    for e in file.items.iter().filter_map(|i| match i {
        syn::Item::Enum(e) if e.ident == name => Some(e),
        _ => None,
    }) {
        for v in &e.variants {
            let Some(field) = v.fields.iter().next() else { continue };
            let mut ty = &field.ty;
            while let syn::Type::Path(p) = ty {
                let last = p.path.segments.last().unwrap();
                if let (true, syn::PathArguments::AngleBracketed(a)) = (last.ident == "Box", &last.arguments) {
                    if let Some(syn::GenericArgument::Type(inner)) = a.args.first() {
                        ty = inner;
                        continue;
                    }
                }
                let first = (p.path.segments.len() > 1).then(|| p.path.segments[0].ident.to_string());
                out.push((first, last.ident.to_string()));
                break;
            }
        }
    }
    out
}
