//! The frontend: a `syn::ItemFn` in, a typed [`ir::Function`] out, or every diagnostic the
//! function deserves, each at its own span.
//!
//! The checker follows rustc's rules for the scalar subset of Rust (literal inference,
//! operator typing, `as` casts), so a function it accepts means on the GPU what it means
//! on the CPU. Whatever the GPU cannot run gets an error that says what is supported.
//!
//! A check runs in two contexts (see `context`): the program's, shared by all its
//! functions, and a function's, fresh for each function body and `const` value. The
//! checks themselves are grouped by what they check, one module each.

mod blocks;
mod builtins;
mod callees;
mod calls;
mod complex;
mod const_eval;
mod consts;
mod context;
mod copies;
mod diagnostics;
mod exprs;
mod infer;
mod items;
mod kernel;
mod library;
mod loops;
mod mma;
mod obligations;
mod operators;
mod patterns;
mod resolve;
mod signature;
mod structs;
mod syntax;
mod xoroshiro;

use crate::ir::{FnId, Program, RetType, Type};
use crate::ty::ScalarType;
pub use callees::{external_callees, path_key};
use context::ItemScope;
use context::{FnChecker, ProgramCx};
use signature::fn_sig;
pub use structs::{
    FIELD_TYPES, StructEntry, define_structs, field_struct_paths, struct_def, struct_paths, struct_type,
    struct_type_path,
};
pub use syntax::{scalar_type, unchecked_call};
pub use xoroshiro::expand_xoroshiro_calls;

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
    check(entry, entry_callees, helpers, Mode::Vectorized)
}

/// [`check_program`] for an explicit kernel (`#[kernel]`): the entry takes slices and
/// scalars and returns nothing, and the program may use arrays and the `gpu::` built-ins.
pub fn check_kernel_program(
    entry: &syn::ItemFn,
    entry_callees: &[(String, String)],
    helpers: &[HelperDef],
) -> Result<Program, syn::Error> {
    check(entry, entry_callees, helpers, Mode::Kernel)
}

/// [`check_program`] for a `#[device]` function by itself: a scalar function that may use
/// the kernel language (local and shared arrays, the `gpu::` built-ins), which only a
/// kernel can then call (a vectorized function's own check refuses them).
pub fn check_device_program(
    entry: &syn::ItemFn,
    entry_callees: &[(String, String)],
    helpers: &[HelperDef],
) -> Result<Program, syn::Error> {
    check(entry, entry_callees, helpers, Mode::Device)
}

/// What a check's entry function is.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Mode {
    /// A vectorized function: scalars only.
    Vectorized,
    /// An explicit kernel: slices, arrays and the `gpu::` built-ins; it returns nothing.
    Kernel,
    /// A device function: a scalar signature, the kernel language in its body.
    Device,
}

impl Mode {
    fn program(self, functions: usize) -> ProgramCx {
        ProgramCx {
            functions: vec![None; functions],
            sigs: vec![None; functions],
            kernel: self != Mode::Vectorized,
            kernel_entry: self == Mode::Kernel,
            ..ProgramCx::default()
        }
    }
}

fn check(
    entry: &syn::ItemFn,
    entry_callees: &[(String, String)],
    helpers: &[HelperDef],
    mode: Mode,
) -> Result<Program, syn::Error> {
    let entry = &*xoroshiro::expanded(entry);
    let (entry_callees, helpers) = library::link(entry, entry_callees, helpers);
    let (entry_callees, helpers) = (&*entry_callees, &*helpers);
    let mut cx = mode.program(helpers.len() + 1);
    let ids: Vec<(String, FnId)> =
        helpers.iter().enumerate().map(|(i, h)| (h.id.clone(), FnId(i as u32 + 1))).collect();
    let scope_of = |callees: &[(String, String)]| ItemScope {
        fns: callees
            .iter()
            .filter_map(|(path, id)| ids.iter().find(|(i, _)| i == id).map(|(_, f)| (path.clone(), *f)))
            .collect(),
        consts: Vec::new(),
        structs: structs::scope(callees),
    };
    cx.sigs[0] = if cx.kernel_entry { None } else { fn_sig(entry, structs::scope(entry_callees)) };
    for (i, h) in helpers.iter().enumerate() {
        cx.sigs[i + 1] = fn_sig(&h.item, structs::scope(&h.callees));
    }
    cx.check_fn(FnId(0), entry, vec![scope_of(entry_callees)], Vec::new());
    for (i, h) in helpers.iter().enumerate() {
        cx.check_fn(FnId(i as u32 + 1), &h.item, vec![scope_of(&h.callees)], Vec::new());
    }
    cx.check_recursion();
    cx.check_obligations();
    let arrays = cx.final_arrays();
    if let Some(e) = cx.combined_errors() {
        return Err(e);
    }
    let ice = |what: &str| syn::Error::new_spanned(&entry.sig.ident, format!("internal compiler error: {what}"));
    let functions = std::mem::take(&mut cx.functions).into_iter().collect::<Option<Vec<_>>>();
    let tuples = std::mem::take(&mut cx.tuples);
    let program = functions
        .map(|functions| Program { functions, tuples, arrays })
        .ok_or_else(|| ice("a function was not checked"))?;
    // An error type stands for a problem already reported; with none reported, it would
    // lower to a kernel that computes nothing. Refuse it loudly instead.
    if let Some(f) = program.functions.iter().find(|f| has_error_type(f)) {
        return Err(ice(&format!("`{}` has an expression without a type, but no error was reported", f.name)));
    }
    Ok(program)
}

/// Whether a checked function still holds the error type anywhere.
fn has_error_type(f: &crate::ir::Function) -> bool {
    let mut found = f.locals.iter().any(|l| l.ty == Type::Error);
    crate::ir::visit_block(&f.body, &mut |e| found |= e.ty == Type::Error);
    found
}

/// Checks a function whose calls of `external` paths (functions defined elsewhere, whose
/// definitions have not been fetched yet) are taken on trust: every other problem is
/// reported now, before the macro goes to fetch them.
pub fn precheck(entry: &syn::ItemFn, external: &[String]) -> Result<(), syn::Error> {
    precheck_as(entry, external, Mode::Vectorized)
}

/// [`precheck`] for an explicit kernel.
pub fn precheck_kernel(entry: &syn::ItemFn, external: &[String]) -> Result<(), syn::Error> {
    precheck_as(entry, external, Mode::Kernel)
}

/// [`precheck`] for a device function ([`check_device_program`]).
pub fn precheck_device(entry: &syn::ItemFn, external: &[String]) -> Result<(), syn::Error> {
    precheck_as(entry, external, Mode::Device)
}

fn precheck_as(entry: &syn::ItemFn, external: &[String], mode: Mode) -> Result<(), syn::Error> {
    let entry = &*xoroshiro::expanded(entry);
    // FnId(1) stands for every external function: no signature, so its calls check their
    // arguments and give an error type without a message.
    let mut cx = mode.program(2);
    cx.sigs[0] = if cx.kernel_entry { None } else { fn_sig(entry, Vec::new()) };
    // The device library's functions are taken on trust here too: the full check links them.
    let library = library::library_calls(entry).into_iter().map(|(key, _)| key);
    let scope = ItemScope {
        fns: external.iter().cloned().chain(library).map(|p| (p, FnId(1))).collect(),
        consts: Vec::new(),
        structs: Vec::new(),
    };
    cx.check_fn(FnId(0), entry, vec![scope], Vec::new());
    cx.calls.retain(|&(_, to, _)| to != FnId(1));
    cx.check_recursion();
    cx.check_obligations();
    cx.combined_errors().map_or(Ok(()), Err)
}

/// What the scalar types of a signature are, without checking the body: the macro needs
/// them to generate the call wrapper even when the body has errors.
pub fn signature_types(sig: &syn::Signature) -> Result<(Vec<ScalarType>, RetType), syn::Error> {
    signature_types_in(sig, Vec::new())
}

/// [`signature_types`] of a function that writes the paths `callees` (path → id), user
/// structs among them.
pub fn signature_types_with(
    sig: &syn::Signature,
    callees: &[(String, String)],
) -> Result<(Vec<ScalarType>, RetType), syn::Error> {
    signature_types_in(sig, structs::scope(callees))
}

/// [`signature_types`] with the user structs in scope (path → type).
pub(super) fn signature_types_in(
    sig: &syn::Signature,
    structs: Vec<(String, ScalarType)>,
) -> Result<(Vec<ScalarType>, RetType), syn::Error> {
    let mut cx = ProgramCx::default();
    let scope = ItemScope { structs, ..ItemScope::default() };
    let (params, ret) = FnChecker::new(&mut cx, None, vec![scope], Vec::new()).signature(sig);
    match (cx.errors.is_empty(), ret) {
        (true, Some(ret)) => Ok((params.iter().map(|p| p.ty).collect(), ret)),
        _ => Err(cx.combined_errors().unwrap_or_else(|| syn::Error::new_spanned(&sig.ident, "invalid signature"))),
    }
}

/// A kernel's parameters from its signature alone (the macro needs them even when the
/// body has errors).
/// `callees` maps the paths the kernel writes to the ids of what they name (its user
/// structs among them).
pub fn kernel_signature(
    sig: &syn::Signature,
    callees: &[(String, String)],
) -> Result<Vec<crate::ExplicitParam>, syn::Error> {
    let mut cx = Mode::Kernel.program(1);
    let scope = ItemScope { structs: structs::scope(callees), ..ItemScope::default() };
    let params = FnChecker::new(&mut cx, Some(FnId(0)), vec![scope], Vec::new()).kernel_signature(sig);
    if let Some(e) = cx.combined_errors() {
        return Err(e);
    }
    Ok(params.iter().map(crate::ExplicitParam::of).collect())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod kernel_tests;
