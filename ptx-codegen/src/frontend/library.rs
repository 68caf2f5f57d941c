//! The runtime's device library: functions a kernel calls by `random::name` (or
//! `gpu_runtime::random::name`), whose source the compiler carries
//! ([`kernel_abi::RANDOM_SOURCE`]) instead of fetching it from the user's crate. A program
//! that calls one gets it, and the library functions it calls, as helpers; a program that
//! calls none is checked exactly as before.

use std::borrow::Cow;

use syn::visit::Visit;

use super::HelperDef;
use super::builtins::{LIBRARY_MODULE, library_name};
use super::callees::{external_callees, path_key};
use super::syntax;

/// The helper id of library function `name` (ids of the crate's own functions are their
/// paths in the crate, which never start with `gpu_runtime`).
fn id_of(name: &str) -> String {
    format!("gpu_runtime::{LIBRARY_MODULE}::{name}")
}

/// The library's functions, parsed from the source the compiler carries.
fn library() -> Vec<syn::ItemFn> {
    let file = syn::parse_file(kernel_abi::RANDOM_SOURCE).expect("the device library's source parses");
    file.items
        .into_iter()
        .filter_map(|i| match i {
            syn::Item::Fn(f) => Some(f),
            _ => None,
        })
        .collect()
}

/// The public functions of the library, for the message about a name it does not have.
pub(super) fn public_names() -> Vec<String> {
    library()
        .iter()
        .filter(|f| matches!(f.vis, syn::Visibility::Public(_)))
        .map(|f| syntax::name(&f.sig.ident))
        .collect()
}

/// The library paths `item` calls, each once, as `(key, name)`.
pub(super) fn library_calls(item: &syn::ItemFn) -> Vec<(String, String)> {
    struct Calls(Vec<(String, String)>);
    impl<'ast> Visit<'ast> for Calls {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            if let syn::Expr::Path(p) = &*c.func {
                if let Some(name) = library_name(&p.path).filter(|_| p.qself.is_none()) {
                    let key = path_key(&p.path);
                    if !self.0.iter().any(|(k, _)| *k == key) {
                        self.0.push((key, name));
                    }
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut calls = Calls(Vec::new());
    calls.visit_block(&item.block);
    calls.0
}

/// A function's callees: the path it calls, and the id of the helper that path reaches.
type Callees = [(String, String)];

/// The callees of `entry` and the helpers, with the library functions they call (and the
/// ones those call) added as helpers. Unchanged, and not copied, when none calls one.
pub(super) fn link<'a>(
    entry: &syn::ItemFn,
    entry_callees: &'a Callees,
    helpers: &'a [HelperDef],
) -> (Cow<'a, Callees>, Cow<'a, [HelperDef]>) {
    let entry_calls = library_calls(entry);
    let helper_calls: Vec<_> = helpers.iter().map(|h| library_calls(&h.item)).collect();
    if entry_calls.is_empty() && helper_calls.iter().all(Vec::is_empty) {
        return (Cow::Borrowed(entry_callees), Cow::Borrowed(helpers));
    }
    let library = library();
    let public =
        |name: &str| library.iter().any(|f| f.sig.ident == name && matches!(f.vis, syn::Visibility::Public(_)));
    // A call of a name the library lacks (or keeps private) stays unresolved: the checker
    // reports it with the names it has.
    let with_library = |callees: &[(String, String)], calls: &[(String, String)]| {
        let mut callees = callees.to_vec();
        callees.extend(calls.iter().filter(|(_, n)| public(n)).map(|(k, n)| (k.clone(), id_of(n))));
        callees
    };
    // The library functions reached from the calls, in the order first reached.
    let mut reached: Vec<String> = Vec::new();
    let mut next: Vec<String> =
        entry_calls.iter().chain(helper_calls.iter().flatten()).map(|(_, n)| n.clone()).collect();
    while let Some(name) = next.pop() {
        if reached.contains(&name) {
            continue;
        }
        let Some(f) = library.iter().find(|f| f.sig.ident == name) else { continue };
        next.extend(external_callees(f).iter().map(path_key));
        reached.push(name);
    }
    let mut linked: Vec<HelperDef> = helpers
        .iter()
        .zip(&helper_calls)
        .map(|(h, calls)| HelperDef { callees: with_library(&h.callees, calls), ..h.clone() })
        .collect();
    for f in library.iter().filter(|f| reached.iter().any(|r| f.sig.ident == r)) {
        // The library's functions call each other by their bare names.
        let callees = external_callees(f).iter().map(|p| (path_key(p), id_of(&path_key(p)))).collect();
        linked.push(HelperDef { id: id_of(&syntax::name(&f.sig.ident)), item: f.clone(), callees });
    }
    (Cow::Owned(with_library(entry_callees, &entry_calls)), Cow::Owned(linked))
}
