//! The crate's import graph, resolved the way rustc resolves names (`syn` parses each file;
//! nothing is grepped): a node is a file of `src/`, and an arrow runs from a file to every file
//! that defines something it names — `use` paths, paths in code, paths in a macro's arguments —
//! following `crate::`, `super::`, `self::`, local imports, `pub use` re-exports and glob imports
//! to the file where the name is defined. A circle through a facade (`a.rs` names `super::X`,
//! which `mod.rs` re-exports from `b.rs`, and `b.rs` names `a.rs`) is a circle. A re-export is
//! itself an arrow from the facade to the file it names, so a `mod.rs` that re-exports its
//! children defines nothing they name: it is a facade, and the parts live in files of their own.
//!
//! Beside the arrows, the paths as written that walk into a plain file of an ancestor folder
//! (`crate::load::tally::Tally` from `load/engine/x.rs`) rather than through that folder's
//! facade (`crate::load::Tally`): a subfolder reaches its parent's parts only through the
//! parent's `mod.rs`. The crate root (`src/`) is not such a folder: its files are the layers and
//! the helpers beside `sys`, each named by its own path.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// The import graph of one crate.
pub struct Graph {
    mods: Vec<Module>,
    /// File -> the files it names (never itself).
    pub edges: BTreeMap<String, BTreeSet<String>>,
    /// (file, path as written, the ancestor folder's file it walks into).
    pub upward: BTreeSet<(String, String, String)>,
}

/// One module: a file, or an inline `mod x { .. }` inside one.
struct Module {
    file: String,
    parent: Option<usize>,
    children: HashMap<String, usize>,
    /// Names this module defines (types, functions, constants, statics, traits).
    items: HashSet<String>,
    /// An enum's variants, by the enum's name (a glob import of an enum names them).
    variants: HashMap<String, HashSet<String>>,
    /// `use` bindings: the name bound and the path it stands for.
    uses: Vec<(String, Vec<String>)>,
    /// `use x::*` prefixes.
    globs: Vec<Vec<String>>,
    /// Every path the module's code names, as written.
    refs: Vec<Vec<String>>,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Target {
    Mod(usize),
    /// An item, by the module that defines it.
    Item(usize),
}

/// Reads the crate whose files are `files` (path under `src/` -> source), from `lib.rs`.
pub fn read(files: &BTreeMap<String, String>) -> Graph {
    let mut g = Graph {
        mods: Vec::new(),
        edges: BTreeMap::new(),
        upward: BTreeSet::new(),
    };
    let lib = syn::parse_file(&files["lib.rs"]).expect("lib.rs parses");
    g.module("lib.rs", None, "", &lib.items, files);
    g.arrows();
    g
}

impl Graph {
    /// Adds the module of `items` (in `file`; its `mod x;` files live under `dir`) and its
    /// children; returns its index.
    fn module(
        &mut self,
        file: &str,
        parent: Option<usize>,
        dir: &str,
        items: &[syn::Item],
        files: &BTreeMap<String, String>,
    ) -> usize {
        let id = self.mods.len();
        self.mods.push(Module {
            file: file.to_string(),
            parent,
            children: HashMap::new(),
            items: HashSet::new(),
            variants: HashMap::new(),
            uses: Vec::new(),
            globs: Vec::new(),
            refs: Vec::new(),
        });
        let mut refs = Refs::default();
        for item in items {
            let name = match item {
                syn::Item::Mod(m) => {
                    let ident = m.ident.to_string();
                    let child = match &m.content {
                        Some((_, inner)) => self.module(file, Some(id), &format!("{dir}{ident}/"), inner, files),
                        None => {
                            let flat = format!("{dir}{ident}.rs");
                            let folder = format!("{dir}{ident}/mod.rs");
                            let path = if files.contains_key(&flat) { flat } else { folder };
                            let src = files
                                .get(&path)
                                .unwrap_or_else(|| panic!("{path} is declared by {file}"));
                            let ast = syn::parse_file(src).unwrap_or_else(|e| panic!("{path}: {e}"));
                            self.module(&path, Some(id), &format!("{dir}{ident}/"), &ast.items, files)
                        }
                    };
                    self.mods[id].children.insert(ident, child);
                    continue;
                }
                syn::Item::Use(u) => {
                    refs.visit_item_use(u);
                    continue;
                }
                syn::Item::Enum(e) => {
                    let variants = e.variants.iter().map(|v| v.ident.to_string()).collect();
                    self.mods[id].variants.insert(e.ident.to_string(), variants);
                    Some(e.ident.to_string())
                }
                syn::Item::Struct(s) => Some(s.ident.to_string()),
                syn::Item::Union(u) => Some(u.ident.to_string()),
                syn::Item::Type(t) => Some(t.ident.to_string()),
                syn::Item::Trait(t) => Some(t.ident.to_string()),
                syn::Item::TraitAlias(t) => Some(t.ident.to_string()),
                syn::Item::Fn(f) => Some(f.sig.ident.to_string()),
                syn::Item::Const(c) => Some(c.ident.to_string()),
                syn::Item::Static(s) => Some(s.ident.to_string()),
                syn::Item::Macro(m) => m.ident.as_ref().map(|i| i.to_string()),
                _ => None,
            };
            if let Some(n) = name {
                self.mods[id].items.insert(n);
            }
            refs.visit_item(item);
        }
        let m = &mut self.mods[id];
        m.uses = refs.uses;
        m.globs = refs.globs;
        m.refs = refs.paths;
        id
    }

    /// What `name` means inside module `m`, and whether it was reached directly (a child or an
    /// item of `m`) rather than through an import.
    fn lookup(&self, m: usize, name: &str, seen: &mut Vec<(usize, String)>) -> Option<(Target, bool)> {
        let module = &self.mods[m];
        if let Some(&c) = module.children.get(name) {
            return Some((Target::Mod(c), true));
        }
        if module.items.contains(name) {
            return Some((Target::Item(m), true));
        }
        let key = (m, name.to_string());
        if seen.contains(&key) {
            return None;
        }
        seen.push(key);
        let found = self.lookup_imported(m, name, seen);
        seen.pop();
        found.map(|t| (t, false))
    }

    /// `name` through module `m`'s imports: a binding first, then its globs.
    fn lookup_imported(&self, m: usize, name: &str, seen: &mut Vec<(usize, String)>) -> Option<Target> {
        let module = &self.mods[m];
        for (bound, path) in &module.uses {
            if bound == name {
                if let Some((t, _)) = self.resolve(m, path, seen) {
                    return Some(t);
                }
            }
        }
        for glob in &module.globs {
            match self.resolve(m, glob, seen) {
                Some((Target::Mod(g), _)) if g != m => {
                    if let Some((t, _)) = self.lookup(g, name, seen) {
                        return Some(t);
                    }
                }
                Some((Target::Item(e), _)) => {
                    let of_enum = glob.last().and_then(|en| self.mods[e].variants.get(en));
                    if of_enum.is_some_and(|vs| vs.contains(name)) {
                        return Some(Target::Item(e));
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// What `path`, written in module `from`, names, and the modules its own segments walk into
    /// (not those an import it passes through walks into).
    fn resolve(&self, from: usize, path: &[String], seen: &mut Vec<(usize, String)>) -> Option<(Target, Vec<usize>)> {
        let (first, rest) = path.split_first()?;
        let mut walked = Vec::new();
        let (mut cur, direct) = match first.as_str() {
            "crate" => (Target::Mod(0), true),
            "self" => (Target::Mod(from), true),
            "super" => (Target::Mod(self.mods[from].parent?), true),
            "Self" => return None,
            name => self.lookup(from, name, seen)?,
        };
        if let (Target::Mod(m), true) = (cur, direct) {
            walked.push(m);
        }
        for seg in rest {
            let Target::Mod(m) = cur else { break };
            let (next, direct) = match seg.as_str() {
                "super" => (Target::Mod(self.mods[m].parent?), true),
                "self" => continue,
                // A name a module of the crate does not show as an item is one a macro there
                // defines (`counters! { enum Counter .. }`): it is that module's file's.
                name => self.lookup(m, name, seen).unwrap_or((Target::Item(m), true)),
            };
            if let (Target::Mod(n), true) = (next, direct) {
                walked.push(n);
            }
            cur = next;
        }
        Some((cur, walked))
    }

    /// What `path` names in the value namespace where its last segment is also a module: the
    /// item or import of that name beside the module, if any.
    fn resolve_value(&self, from: usize, path: &[String]) -> Option<Target> {
        let (last, prefix) = path.split_last()?;
        let m = match prefix {
            [] => from,
            _ => match self.resolve(from, prefix, &mut Vec::new())?.0 {
                Target::Mod(m) => m,
                Target::Item(_) => return None,
            },
        };
        if self.mods[m].items.contains(last.as_str()) {
            return Some(Target::Item(m));
        }
        match self.lookup_imported(m, last, &mut Vec::new())? {
            Target::Item(t) => Some(Target::Item(t)),
            Target::Mod(_) => None,
        }
    }

    /// Resolves every module's references into arrows and upward walks.
    fn arrows(&mut self) {
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut upward = BTreeSet::new();
        for (id, m) in self.mods.iter().enumerate() {
            edges.entry(m.file.clone()).or_default();
            for path in &m.refs {
                let Some((target, walked)) = self.resolve(id, path, &mut Vec::new()) else {
                    continue;
                };
                let mut targets = vec![target];
                // A module and a function may share a name (`compare` the folder, `compare` the
                // function re-exported beside it): a path to the module names the item too.
                if let (Target::Mod(_), Some(item)) = (target, self.resolve_value(id, path)) {
                    targets.push(item);
                }
                for t in targets {
                    if let Target::Item(t) = t {
                        let to = &self.mods[t].file;
                        if *to != m.file {
                            edges.get_mut(&m.file).unwrap().insert(to.clone());
                        }
                    }
                }
                for w in walked {
                    let to = &self.mods[w].file;
                    if in_an_ancestor_folder(&m.file, to) {
                        upward.insert((m.file.clone(), path.join("::"), to.clone()));
                    }
                }
            }
        }
        self.edges = edges;
        self.upward = upward;
    }

    /// The number of modules (files and inline ones).
    pub fn modules(&self) -> usize {
        self.mods.len()
    }

    /// The circles: each strongly connected set of two or more files, sorted.
    pub fn circles(&self) -> Vec<Vec<String>> {
        strongly_connected(&self.edges)
            .into_iter()
            .filter(|c| c.len() > 1)
            .collect()
    }

    /// A circle's arrows, `a -> b` for each pair of its files that has one.
    pub fn arrows_within(&self, circle: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        for a in circle {
            for b in &self.edges[a] {
                if circle.contains(b) {
                    out.push(format!("{a} -> {b}"));
                }
            }
        }
        out
    }
}

/// Whether `to` is a plain file (not a folder's `mod.rs`) of a strict ancestor folder of
/// `from`'s folder, other than the crate root.
fn in_an_ancestor_folder(from: &str, to: &str) -> bool {
    if to.ends_with("mod.rs") || to == "lib.rs" {
        return false;
    }
    let folder = |f: &str| f.rsplit_once('/').map_or(String::new(), |(d, _)| d.to_string());
    let (mine, theirs) = (folder(from), folder(to));
    !theirs.is_empty() && mine.starts_with(&format!("{theirs}/"))
}

/// The strongly connected sets of `edges` (Tarjan's), each sorted, in sorted order.
fn strongly_connected(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: HashMap<&'a str, usize>,
        low: HashMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: HashSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut set = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                set.push(w.to_string());
                if w == v {
                    break;
                }
            }
            set.sort();
            s.out.push(set);
        }
    }
    let mut s = State {
        edges,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        on: HashSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// Collects a module's `use` bindings, globs and every path its code names.
#[derive(Default)]
struct Refs {
    uses: Vec<(String, Vec<String>)>,
    globs: Vec<Vec<String>>,
    paths: Vec<Vec<String>>,
}

impl Refs {
    fn flatten(&mut self, tree: &syn::UseTree, prefix: &mut Vec<String>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.flatten(&p.tree, prefix);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                let path = if name == "self" {
                    prefix.clone()
                } else {
                    [prefix.as_slice(), std::slice::from_ref(&name)].concat()
                };
                let bound = path.last().cloned().unwrap_or_default();
                self.paths.push(path.clone());
                self.uses.push((bound, path));
            }
            syn::UseTree::Rename(r) => {
                let path = if r.ident == "self" {
                    prefix.clone()
                } else {
                    [prefix.as_slice(), &[r.ident.to_string()]].concat()
                };
                self.paths.push(path.clone());
                self.uses.push((r.rename.to_string(), path));
            }
            syn::UseTree::Glob(_) => {
                self.paths.push(prefix.clone());
                self.globs.push(prefix.clone());
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.flatten(t, prefix);
                }
            }
        }
    }

    /// The paths `a::b::c` in a macro's tokens (its arguments are not parsed as code).
    fn scan(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            if let TokenTree::Group(g) = &trees[i] {
                self.scan(g.stream());
                i += 1;
                continue;
            }
            let TokenTree::Ident(first) = &trees[i] else {
                i += 1;
                continue;
            };
            let mut path = vec![first.to_string()];
            let mut j = i + 1;
            while j + 2 < trees.len() {
                let colons = matches!((&trees[j], &trees[j + 1]),
                    (TokenTree::Punct(a), TokenTree::Punct(b)) if a.as_char() == ':' && b.as_char() == ':');
                match trees.get(j + 2) {
                    Some(TokenTree::Ident(next)) if colons => {
                        path.push(next.to_string());
                        j += 3;
                    }
                    _ => break,
                }
            }
            if path.len() > 1 {
                self.paths.push(path);
            }
            i = j.max(i + 1);
        }
    }
}

impl<'ast> Visit<'ast> for Refs {
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // An inline module inside a function is not followed.
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if u.leading_colon.is_none() {
            self.flatten(&u.tree, &mut Vec::new());
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            self.paths
                .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.scan(m.tokens.clone());
    }
}

impl Graph {
    /// The circles among the parts of each folder: a part is a file directly in the folder, or
    /// one of its subfolders with everything under it; an arrow runs from one part to another
    /// where a file of the one names a file of the other. `(folder, its parts in a circle)`.
    /// The crate root's parts are the layers, which `layer` orders instead.
    pub fn folder_circles(&self) -> Vec<(String, Vec<String>)> {
        let folder_of = |f: &str| f.rsplit_once('/').map_or(String::new(), |(d, _)| d.to_string());
        let folders: BTreeSet<String> = self
            .edges
            .keys()
            .map(|f| folder_of(f))
            .filter(|d| !d.is_empty())
            .collect();
        let mut out = Vec::new();
        for folder in folders {
            let prefix = format!("{folder}/");
            // The part of `folder` a file belongs to, if any.
            let part = |f: &str| -> Option<String> {
                let rest = f.strip_prefix(&prefix)?;
                Some(match rest.split_once('/') {
                    Some((sub, _)) => format!("{sub}/"),
                    None => rest.trim_end_matches(".rs").to_string(),
                })
            };
            let mut parts: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for (from, tos) in &self.edges {
                let Some(a) = part(from) else { continue };
                let entry = parts.entry(a.clone()).or_default();
                for to in tos {
                    if let Some(b) = part(to).filter(|b| *b != a && b != "mod") {
                        if a != "mod" {
                            entry.insert(b);
                        }
                    }
                }
            }
            for c in strongly_connected(&parts).into_iter().filter(|c| c.len() > 1) {
                out.push((folder.clone(), c));
            }
        }
        out
    }
}
