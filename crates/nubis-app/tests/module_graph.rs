//! No module circles, checked on the source of every crate of the workspace: within a crate, the
//! modules (one per file) that name each other through `crate::`, `super::` or `self::` paths in
//! code (imports and expressions; not comments, not tests) form no cycle. Naming an ancestor (a
//! re-export of the parent) or a descendant (a child module) is not an edge: only siblings and
//! cousins count. Two modules that need each other share a third, leaf module instead.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

type Module = Vec<String>;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module a file is (`src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; `lib.rs` is the root).
fn module_of(src: &Path, file: &Path) -> Module {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut m: Module = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    if matches!(m.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        m.pop();
    }
    m
}

/// Every path of a file that starts with `crate`, `super` or `self`, as its segments.
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut p = prefix.clone();
                p.push(n.ident.to_string());
                self.0.push(p);
            }
            syn::UseTree::Rename(r) => {
                let mut p = prefix.clone();
                p.push(r.ident.to_string());
                self.0.push(p);
            }
            syn::UseTree::Glob(_) => self.0.push(prefix.clone()),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        self.0.push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, p);
    }

    // Inline modules (tests, almost always) are left out: their `super` is the file itself.
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}
}

/// The module `path` (seen from `from`) names, if it names one of `modules`.
fn target(from: &Module, path: &[String], modules: &BTreeSet<Module>) -> Option<Module> {
    let (mut base, mut rest) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") => (from.clone(), &path[1..]),
        Some("super") => (from.clone(), path),
        _ => return None,
    };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest = &rest[1..];
    }
    (1..=rest.len()).rev().map(|k| [base.clone(), rest[..k].to_vec()].concat()).find(|m| modules.contains(m))
}

/// The modules of a crate and the modules each names.
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mut files = Vec::new();
    sources(src, &mut files);
    let modules: BTreeSet<Module> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges = BTreeMap::new();
    for f in &files {
        let from = module_of(src, f);
        let file = syn::parse_file(&std::fs::read_to_string(f).unwrap()).unwrap();
        let mut paths = Paths::default();
        paths.visit_file(&file);
        let to: BTreeSet<Module> = paths
            .0
            .iter()
            .filter_map(|p| target(&from, p, &modules))
            .filter(|t| !t.starts_with(&from) && !from.starts_with(t))
            .collect();
        edges.insert(from, to);
    }
    edges
}

/// The cycles of a graph: its strongly connected components of more than one module.
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    let reach = |from: &Module| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(m) = todo.pop() {
            for n in edges.get(&m).into_iter().flatten() {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&Module, BTreeSet<Module>> = edges.keys().map(|m| (m, reach(m))).collect();
    let mut out: Vec<Vec<Module>> = Vec::new();
    for m in edges.keys() {
        if !reached[m].contains(m) || out.iter().any(|c| c.contains(m)) {
            continue;
        }
        out.push(edges.keys().filter(|n| reached[m].contains(*n) && reached[*n].contains(m)).cloned().collect());
    }
    out
}

#[test]
fn no_crate_of_the_workspace_has_a_module_circle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut found = Vec::new();
    let mut crates_seen = 0;
    for e in std::fs::read_dir(crates).unwrap() {
        let src = e.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        crates_seen += 1;
        for c in cycles(&graph(&src)) {
            let names: Vec<String> = c.iter().map(|m| m.join("::")).collect();
            found.push(format!("{}: {}", src.parent().unwrap().display(), names.join(" <-> ")));
        }
    }
    assert!(crates_seen >= 8, "the workspace's crates were not found under {}", crates.display());
    assert!(found.is_empty(), "module circles:\n{}", found.join("\n"));
}

#[test]
fn the_check_sees_a_circle_through_imports_and_expressions() {
    let m = |s: &str| -> Module { s.split("::").map(String::from).collect() };
    let modules: BTreeSet<Module> = ["a", "a::b", "a::c", "d"].into_iter().map(m).collect();
    let path = |s: &str| -> Vec<String> { s.split("::").map(String::from).collect() };
    assert_eq!(target(&m("a::b"), &path("super::c::f"), &modules), Some(m("a::c")));
    assert_eq!(target(&m("a::b"), &path("crate::d::X"), &modules), Some(m("d")));
    assert_eq!(target(&m("a::b"), &path("super::super::d"), &modules), Some(m("d")));
    assert_eq!(target(&m("a::b"), &path("std::x"), &modules), None);
    let edges: BTreeMap<Module, BTreeSet<Module>> = [
        (m("a::b"), [m("a::c")].into()),
        (m("a::c"), [m("d")].into()),
        (m("d"), [m("a::b")].into()),
        (m("a"), BTreeSet::new()),
    ]
    .into();
    assert_eq!(cycles(&edges), vec![vec![m("a::b"), m("a::c"), m("d")]]);
    let mut acyclic = edges.clone();
    acyclic.insert(m("d"), BTreeSet::new());
    assert!(cycles(&acyclic).is_empty());
}
