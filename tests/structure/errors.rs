//! Readers for "errors are types": the error types of a file (those that derive `Error` or
//! implement it) and their variants that carry nothing but text.

use std::collections::BTreeSet;

/// `TYPE` or `TYPE::VARIANT` for every error type of `code` (one that derives `Error`, or whose
/// name is in `errors` or ends in `Error`) that carries only text: its fields are all owned text
/// (`String`, `Box<str>`, `Cow<str>`, by any path), or its one field is a `&str`, or a field named
/// as a message (`message`, `msg`, `why`, `reason`, `detail`, `text`) holds a `String`. A
/// `&'static str` beside a value is a name (a flag, a key), not a message. A type or variant with
/// no fields carries no text.
pub fn text_only(code: &str, errors: &BTreeSet<String>) -> Vec<String> {
    let file = syn::parse_file(code).unwrap_or_else(|e| panic!("cannot parse: {e}"));
    let mut found = Vec::new();
    let mut items: Vec<&syn::Item> = file.items.iter().collect();
    while let Some(item) = items.pop() {
        match item {
            syn::Item::Mod(m) => items.extend(m.content.iter().flat_map(|(_, i)| i)),
            syn::Item::Struct(s) if is_error(&s.attrs, &s.ident, errors) && all_text(&s.fields) => {
                found.push(s.ident.to_string());
            }
            syn::Item::Struct(s) if is_fault(&s.ident) && unnamed_text(&s.fields) => {
                found.push(s.ident.to_string());
            }
            syn::Item::Enum(e) if is_error(&e.attrs, &e.ident, errors) => {
                for v in &e.variants {
                    if all_text(&v.fields) {
                        found.push(format!("{}::{}", e.ident, v.ident));
                    }
                }
            }
            syn::Item::Enum(e) if is_fault(&e.ident) => {
                for v in &e.variants {
                    if unnamed_text(&v.fields) {
                        found.push(format!("{}::{}", e.ident, v.ident));
                    }
                }
            }
            _ => {}
        }
    }
    found.sort();
    found
}

/// Whether the type is an error: it derives `Error` (thiserror's, by any path), is named in
/// `errors`, or its name ends in `Error`.
fn is_error(attrs: &[syn::Attribute], ident: &syn::Ident, errors: &BTreeSet<String>) -> bool {
    errors.contains(&ident.to_string())
        || ident.to_string().ends_with("Error")
        || attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
            a.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
                .is_ok_and(|ps| ps.iter().any(|p| p.segments.last().is_some_and(|s| s.ident == "Error")))
        })
}

/// Whether the type names a fault an error holds (`BadX`, `XFault`, `XRefusal`): the error
/// around it gives the context (the file, the line, the flag), so a fault may carry the value
/// given under its name (`UnknownKey { key: String }`), but not text with no name, nor a message.
fn is_fault(ident: &syn::Ident) -> bool {
    let name = ident.to_string();
    name.ends_with("Fault") || name.ends_with("Refusal") || (name.starts_with("Bad") && name.len() > 3)
}

/// Fields that are text with no name (`Weight(String)`, `Bad(&'static str)`), or a message.
fn unnamed_text(fields: &syn::Fields) -> bool {
    match fields {
        syn::Fields::Unnamed(_) => !fields.is_empty() && fields.iter().all(|f| is_text(&f.ty)),
        syn::Fields::Named(_) => fields.iter().any(is_message),
        syn::Fields::Unit => false,
    }
}

/// A text field named as a message.
fn is_message(f: &syn::Field) -> bool {
    is_text(&f.ty)
        && f.ident
            .as_ref()
            .is_some_and(|i| ["message", "msg", "why", "reason", "detail", "text"].contains(&i.to_string().as_str()))
}

fn all_text(fields: &syn::Fields) -> bool {
    let owned = |f: &syn::Field| is_text(&f.ty) && !matches!(f.ty, syn::Type::Reference(_));
    !fields.is_empty()
        && (fields.iter().all(owned)
            || (fields.len() == 1 && fields.iter().all(|f| is_text(&f.ty)))
            || fields.iter().any(is_message))
}

fn is_text(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(r) => is_text(&r.elem),
        syn::Type::Paren(p) => is_text(&p.elem),
        syn::Type::Group(g) => is_text(&g.elem),
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .is_some_and(|s| match s.ident.to_string().as_str() {
                "String" | "str" => true,
                "Box" | "Cow" | "Rc" | "Arc" => match &s.arguments {
                    syn::PathArguments::AngleBracketed(a) => a.args.iter().any(|g| match g {
                        syn::GenericArgument::Type(t) => is_text(t),
                        _ => false,
                    }),
                    _ => false,
                },
                _ => false,
            }),
        _ => false,
    }
}
