//! The write shape, checked on the source of this crate (see `src/write.rs`):
//!
//! - a write transaction is opened only by `App::write` (no `.begin()` or `.begin_as()` anywhere else);
//! - a closure handed to `write`, and every function that takes the transaction (`Tx`), reads
//!   only through the transaction: it never names the store, and every call of a method of
//!   `self` either hands the transaction on or is one of the helpers listed below, which read
//!   nothing.

use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::visit::Visit;

/// Methods of `App` that a write may call without handing it the transaction: they read no
/// stored state (configuration, the catalog, the clock, formatting, checks on values).
const PURE_HELPERS: &[&str] = &["public_pool", "system_client"];

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

fn mentions(tokens: TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == name,
        TokenTree::Group(g) => mentions(g.stream(), name),
        _ => false,
    })
}

/// Calls of `self.method(..)` that do not hand on the transaction and are not pure helpers.
struct SelfCalls<'a> {
    tx: &'a [String],
    found: Vec<String>,
}

impl<'ast> Visit<'ast> for SelfCalls<'_> {
    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        let on_self = matches!(&*c.receiver, syn::Expr::Path(p) if p.path.is_ident("self"));
        let method = c.method.to_string();
        if on_self && method != "write" && !PURE_HELPERS.contains(&method.as_str()) {
            let hands_on = c.args.iter().any(|a| self.tx.iter().any(|t| mentions(a.to_token_stream(), t)));
            if !hands_on {
                self.found.push(method);
            }
        }
        syn::visit::visit_expr_method_call(self, c);
    }
}

struct Check<'a> {
    file: &'a str,
    problems: Vec<String>,
}

impl Check<'_> {
    /// A body that runs inside a write transaction, whose transaction is named `tx`.
    fn inside_write(&mut self, what: &str, tx: &[String], body: TokenStream, block: &dyn Fn(&mut SelfCalls)) {
        if mentions(body.clone(), "store") {
            self.problems.push(format!("{}: {what} reaches the store instead of the transaction", self.file));
        }
        let mut calls = SelfCalls { tx, found: Vec::new() };
        block(&mut calls);
        for m in calls.found {
            self.problems.push(format!(
                "{}: {what} calls self.{m}(..) without the transaction (a read outside the write?)",
                self.file
            ));
        }
    }
}

/// The names of the parameters of type `Tx` (`&mut Tx<'_>`).
fn tx_params(sig: &syn::Signature) -> Vec<String> {
    sig.inputs
        .iter()
        .filter_map(|a| match a {
            syn::FnArg::Typed(t) if mentions(t.ty.to_token_stream(), "Tx") => match &*t.pat {
                syn::Pat::Ident(i) => Some(i.ident.to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

impl<'ast> Visit<'ast> for Check<'_> {
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let tx = tx_params(&f.sig);
        // `App::write` itself opens and commits the transaction.
        if !tx.is_empty() && !self.file.ends_with("src/write.rs") {
            let what = format!("fn {}", f.sig.ident);
            self.inside_write(&what, &tx, f.block.to_token_stream(), &|v| v.visit_block(&f.block));
        }
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let tx = tx_params(&f.sig);
        if !tx.is_empty() {
            let what = format!("fn {}", f.sig.ident);
            self.inside_write(&what, &tx, f.block.to_token_stream(), &|v| v.visit_block(&f.block));
        }
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
        let method = c.method.to_string();
        if (method == "begin" || method == "begin_as") && !self.file.ends_with("src/write.rs") {
            self.problems.push(format!("{}: a transaction begun outside App::write", self.file));
        }
        if method == "write" {
            for a in &c.args {
                if let syn::Expr::Closure(cl) = a {
                    let tx: Vec<String> = cl
                        .inputs
                        .iter()
                        .filter_map(|p| match p {
                            syn::Pat::Ident(i) => Some(i.ident.to_string()),
                            _ => None,
                        })
                        .collect();
                    let body = cl.body.to_token_stream();
                    self.inside_write("a write closure", &tx, body, &|v| v.visit_expr(&cl.body));
                }
            }
        }
        syn::visit::visit_expr_method_call(self, c);
    }
}

#[test]
fn writes_read_only_through_their_transaction() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    let mut closures = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        closures += text.matches(".write(|").count();
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let name = format!("src/{}", f.strip_prefix(&src).unwrap().display());
        let mut c = Check { file: &name, problems: Vec::new() };
        c.visit_file(&ast);
        problems.extend(c.problems);
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
    assert!(closures > 50, "the check found only {closures} writes: is it reading the right files?");
}

/// The check itself catches what it is for.
#[test]
fn the_check_catches_a_read_outside_the_transaction() {
    let bad = r#"
        impl App {
            async fn a(&self) { self.write(|tx| Box::pin(async move { self.store.grants_of_user(1).await })).await; }
            async fn b(&self) { let tx = self.store.begin().await; }
            async fn c(&self, tx: &mut Tx<'_>) { self.grants_view(1, 2).await; }
            async fn d(&self, tx: &mut Tx<'_>) { self.user_insert_new(tx, 1).await; }
        }
    "#;
    let ast = syn::parse_file(bad).unwrap();
    let mut c = Check { file: "src/example.rs", problems: Vec::new() };
    c.visit_file(&ast);
    assert_eq!(c.problems.len(), 3, "{:?}", c.problems);
    assert!(c.problems[0].contains("reaches the store"));
    assert!(c.problems.iter().any(|p| p.contains("begun outside")));
    assert!(c.problems.iter().any(|p| p.contains("self.grants_view")));
}
