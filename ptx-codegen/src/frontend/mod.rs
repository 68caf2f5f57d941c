//! The frontend: a `syn::ItemFn` in, a typed [`ir::Function`] out, or every diagnostic the
//! function deserves, each at its own span.
//!
//! The checker follows rustc's rules for the scalar subset of Rust (literal inference,
//! operator typing, `as` casts), so a function it accepts means on the GPU what it means
//! on the CPU. Whatever the GPU cannot run gets an error that says what is supported.

mod blocks;
mod callees;
mod calls;
mod consts;
mod diagnostics;
mod exprs;
mod infer;
mod items;
mod loops;
mod obligations;
mod operators;
mod patterns;
mod resolve;
mod signature;
mod syntax;

use proc_macro2::Span;

use crate::ir::{FnId, Function, LocalId, Program, RetType, Type};
use crate::ty::ScalarType;
pub use callees::{external_callees, path_key};
use diagnostics::SpanRange;
use infer::InferTable;
use items::{ConstDef, ItemScope};
use loops::LoopFrame;
use obligations::Obligation;
use signature::{FnSig, fn_sig};

/// A helper function the vectorized function calls, collected from the crate (a
/// `#[device]` function): its id, its item, and its own callees (as written in its body)
/// with their ids.
#[derive(Clone, Debug)]
pub struct HelperDef {
    pub id: String,
    pub item: syn::ItemFn,
    pub callees: Vec<(String, String)>,
}

/// Checks a function alone (no helpers from elsewhere in the crate).
pub fn check_function(item: &syn::ItemFn) -> Result<Program, syn::Error> {
    check_program(item, &[], &[])
}

/// Checks a vectorized function and the helpers it calls, and produces the program's
/// kernel IR or all its errors combined. `entry_callees` maps the paths the function calls
/// (as written, e.g. `"utils::smooth"`) to helper ids.
pub fn check_program(
    entry: &syn::ItemFn,
    entry_callees: &[(String, String)],
    helpers: &[HelperDef],
) -> Result<Program, syn::Error> {
    let mut cx = ProgramCx {
        functions: vec![None; helpers.len() + 1],
        sigs: vec![None; helpers.len() + 1],
        ..ProgramCx::default()
    };
    let ids: Vec<(String, FnId)> =
        helpers.iter().enumerate().map(|(i, h)| (h.id.clone(), FnId(i as u32 + 1))).collect();
    let scope_of = |callees: &[(String, String)]| ItemScope {
        fns: callees
            .iter()
            .filter_map(|(path, id)| ids.iter().find(|(i, _)| i == id).map(|(_, f)| (path.clone(), *f)))
            .collect(),
        consts: Vec::new(),
    };
    cx.sigs[0] = fn_sig(entry);
    for (i, h) in helpers.iter().enumerate() {
        cx.sigs[i + 1] = fn_sig(&h.item);
    }
    cx.check_fn(FnId(0), entry, vec![scope_of(entry_callees)], Vec::new());
    for (i, h) in helpers.iter().enumerate() {
        cx.check_fn(FnId(i as u32 + 1), &h.item, vec![scope_of(&h.callees)], Vec::new());
    }
    cx.check_recursion();
    cx.check_obligations();
    if let Some(e) = cx.combined_errors() {
        return Err(e);
    }
    let functions = std::mem::take(&mut cx.functions).into_iter().collect::<Option<Vec<_>>>();
    let tuples = std::mem::take(&mut cx.tuples);
    functions
        .map(|functions| Program { functions, tuples })
        .ok_or_else(|| syn::Error::new_spanned(&entry.sig.ident, "internal compiler error: a function was not checked"))
}

/// Checks a function whose calls of `external` paths (functions defined elsewhere, whose
/// definitions have not been fetched yet) are taken on trust: every other problem is
/// reported now, before the macro goes to fetch them.
pub fn precheck(entry: &syn::ItemFn, external: &[String]) -> Result<(), syn::Error> {
    // FnId(1) stands for every external function: no signature, so its calls check their
    // arguments and give an error type without a message.
    let mut cx = ProgramCx { functions: vec![None, None], sigs: vec![fn_sig(entry), None], ..ProgramCx::default() };
    let scope = ItemScope { fns: external.iter().map(|p| (p.clone(), FnId(1))).collect(), consts: Vec::new() };
    cx.check_fn(FnId(0), entry, vec![scope], Vec::new());
    cx.calls.retain(|&(_, to, _)| to != FnId(1));
    cx.check_recursion();
    cx.check_obligations();
    cx.combined_errors().map_or(Ok(()), Err)
}

/// What the scalar types of a signature are, without checking the body: the macro needs
/// them to generate the call wrapper even when the body has errors.
pub fn signature_types(sig: &syn::Signature) -> Result<(Vec<ScalarType>, RetType), syn::Error> {
    let mut cx = ProgramCx::default();
    let (params, ret) = FnChecker::new(&mut cx, None, Vec::new(), Vec::new()).signature(sig);
    match (cx.errors.is_empty(), ret) {
        (true, Some(ret)) => Ok((params.iter().map(|p| p.ty).collect(), ret)),
        _ => Err(cx.combined_errors().unwrap_or_else(|| syn::Error::new_spanned(&sig.ident, "invalid signature"))),
    }
}

struct LocalInfo {
    name: String,
    ty: Type,
    mutable: bool,
    is_param: bool,
    span: Span,
}

/// What the whole program's check shares: the diagnostics, the type inference and what it
/// must prove at the end, and the program's functions, constants and tuple types.
#[derive(Default)]
struct ProgramCx {
    errors: Vec<syn::Error>,
    infer: InferTable,
    obligations: Vec<Obligation>,
    /// The program's functions by [`FnId`], filled as they are checked.
    functions: Vec<Option<Function>>,
    sigs: Vec<Option<FnSig>>,
    consts: Vec<ConstDef>,
    /// Calls between the program's functions: (caller, callee, where).
    calls: Vec<(FnId, FnId, SpanRange)>,
    /// Loop ids are unique in the program, not just in a function.
    next_loop: u32,
    /// The program's tuple types, after inference ([`Program::tuples`]).
    tuples: Vec<Vec<ScalarType>>,
}

/// The check of one function body (or of one `const` item's value): its variables, scopes
/// and loops, over the program's shared state.
struct FnChecker<'p> {
    prog: &'p mut ProgramCx,
    locals: Vec<LocalInfo>,
    scopes: Vec<Vec<(String, LocalId)>>,
    loops: Vec<LoopFrame>,
    /// The current function's result type (a scalar or a tuple).
    ret: Option<Type>,
    generic_names: Vec<String>,
    /// The functions and constants visible here, innermost last.
    item_scopes: Vec<ItemScope>,
    /// The function whose calls these are (for the call graph).
    current: Option<FnId>,
    /// The variables of the functions around a nested one, for a better message when it
    /// uses one (Rust's nested functions cannot).
    outer_locals: Vec<String>,
}

impl<'p> FnChecker<'p> {
    fn new(
        prog: &'p mut ProgramCx,
        current: Option<FnId>,
        item_scopes: Vec<ItemScope>,
        outer_locals: Vec<String>,
    ) -> FnChecker<'p> {
        FnChecker {
            prog,
            locals: Vec::new(),
            scopes: Vec::new(),
            loops: Vec::new(),
            ret: None,
            generic_names: Vec::new(),
            item_scopes,
            current,
            outer_locals,
        }
    }

    fn new_local(&mut self, name: String, ty: Type, mutable: bool, is_param: bool, span: Span) -> LocalId {
        self.locals.push(LocalInfo { name, ty, mutable, is_param, span });
        LocalId(self.locals.len() as u32 - 1)
    }

    fn declare(&mut self, name: String, ty: Type, mutable: bool, span: Span) -> LocalId {
        let id = self.new_local(name.clone(), ty, mutable, false, span);
        if name != "_" {
            self.scopes.last_mut().expect("a scope is open").push((name, id));
        }
        id
    }

    fn lookup(&self, name: &str) -> Option<LocalId> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == name).map(|(_, id)| *id)
    }

    /// A constant declared by a `const` item in scope.
    fn lookup_const(&self, name: &str) -> Option<usize> {
        self.item_scopes.iter().rev().flat_map(|s| s.consts.iter().rev()).find(|(n, _)| n == name).map(|(_, i)| *i)
    }

    /// A function in scope: a nested `fn`, or a helper called by this path.
    fn lookup_fn(&self, path: &str) -> Option<FnId> {
        self.item_scopes.iter().rev().flat_map(|s| s.fns.iter().rev()).find(|(n, _)| n == path).map(|(_, f)| *f)
    }
}

#[cfg(test)]
mod tests;
