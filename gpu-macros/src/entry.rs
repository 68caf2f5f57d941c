//! The entry points of `#[vectorize]` and `#[device]`: each parses its function, fetches
//! the definitions of the functions it calls (see `chain`), compiles it, and emits it with
//! its generated API (`#[vectorize]`) or its hidden closure module (`#[device]`).

use proc_macro2::TokenStream;
use quote::quote;

use ptx_codegen::{Options, PtxCache, Target, frontend};

use crate::api;
use crate::chain;
use crate::host;
use crate::signature::{Signature, instantiate};
use crate::source::{Surroundings, associated_error, with_module_consts};
use crate::vectorized::{Compiled, Instance, Vectorized};

pub fn vectorize(args: TokenStream, item: TokenStream) -> TokenStream {
    with_function("#[vectorize]", "fn f(x: f32) -> f32 { … }", item, |func, surroundings| {
        vectorize_in_surroundings(args, func, surroundings)
    })
}

/// What every attribute does first, before its own work (`rest`): parses its function
/// (`usage` shows one), refuses a function in an `impl` or `trait` (which could not hold
/// the module the macro defines; the item is kept as written, so that the crate still
/// type-checks), and copies in the constants of its module that the function names, with
/// the checks that each copy is what rustc compiled.
pub(crate) fn with_function(
    attr: &str,
    usage: &str,
    item: TokenStream,
    rest: impl FnOnce(syn::ItemFn, Option<Surroundings>) -> TokenStream,
) -> TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let error =
                syn::Error::new(e.span(), format!("`{attr}` applies to a function: `{usage}`")).to_compile_error();
            return quote! { #error #item };
        }
    };
    let surroundings = Surroundings::of(&func);
    if surroundings.as_ref().is_some_and(Surroundings::is_associated) {
        let error = associated_error(&func, attr).to_compile_error();
        return quote! { #error #item };
    }
    let (func, const_checks) = with_module_consts(func, surroundings.as_ref());
    let rest = rest(func, surroundings);
    quote! { #const_checks #rest }
}

/// [`vectorize`] once the function has the constants of its module it uses.
fn vectorize_in_surroundings(args: TokenStream, func: syn::ItemFn, surroundings: Option<Surroundings>) -> TokenStream {
    // A generic function's calls are read from its first instance (where `T::from_f64` is
    // a method of a scalar type, not a call into the crate).
    let checked = Options::parse(args.clone()).ok().and_then(|o| instantiate(&func, &o).ok()).map(|(_, inst)| inst);
    let first = checked.as_ref().map_or(&func, |inst| &inst[0].1);
    let (paths, mut keys) = chain::callees_of(first);
    let (structs, struct_keys) = chain::struct_callees(first);
    let spelling = surroundings.as_ref().and_then(|s| s.consts_spelling_errors(&func));
    if paths.is_empty() && structs.is_empty() {
        // With a spelling error the function is not compiled: check it here for the rest.
        let failed = spelling.and_then(|e| combined([Some(e), frontend::precheck(first, &[]).err()]));
        return finish_vectorize(args, &func, Vec::new(), Vec::new(), failed);
    }
    // Report the function's own problems now; fetch the definitions of the functions it
    // calls (see `chain`) and of the structs it names only for a function that has none.
    // A call of itself, of a function not marked `#[device]`, or of one that calls back
    // would make the chain wait for a module that never comes. Without the definitions of
    // its structs the function is checked once they have arrived.
    let errors = [
        if structs.is_empty() { frontend::precheck(first, &keys).err() } else { None },
        recursion_error(&func.sig.ident, &paths, &keys, &["", "::scalar"]),
        surroundings.and_then(|s| s.call_errors(&paths, "vectorized function")),
        spelling,
    ];
    if let Some(e) = combined(errors) {
        return finish_vectorize(args, &func, Vec::new(), Vec::new(), Some(e));
    }
    keys.extend(struct_keys);
    let payload = quote! { (#args) [#(#keys)*] #func };
    chain::fetch(&paths, &structs, quote!(::gpu_runtime::__vectorize_resume), payload)
}

/// The last step of `#[vectorize]`'s chain: every callee's closure has arrived.
pub fn vectorize_resume(input: TokenStream) -> TokenStream {
    resume(
        input,
        |p| {
            let args;
            syn::parenthesized!(args in p);
            args.parse::<TokenStream>()
        },
        finish_vectorize,
    )
}

/// The last step of a chain, whose payload is `head [keys…] fn …`: every callee's closure
/// has arrived; `finish` gets the head, the function, its callees, their definitions, and
/// the errors of calls the closures show to be wrong.
pub(crate) fn resume<H>(
    input: TokenStream,
    head: impl Fn(syn::parse::ParseStream) -> syn::Result<H>,
    finish: impl FnOnce(H, &syn::ItemFn, Vec<(String, String)>, Vec<chain::Entry>, Option<syn::Error>) -> TokenStream,
) -> TokenStream {
    let parsed = syn::parse2::<chain::ChainInput>(input).and_then(|c| {
        let (head, keys, func) = syn::parse::Parser::parse2(
            |p: syn::parse::ParseStream| Ok((head(p)?, string_list(p)?, p.parse::<syn::ItemFn>()?)),
            c.payload,
        )?;
        Ok((c.closures, head, keys, func))
    });
    match parsed {
        Ok((closures, head, keys, func)) => {
            let misuse = chain::vectorized_called_by_name(&func, &keys, &closures);
            let (callees, entries) = chain::resolve(&keys, &closures);
            finish(head, &func, callees, entries, misuse)
        }
        Err(e) => e.to_compile_error(),
    }
}

pub(crate) fn string_list(p: syn::parse::ParseStream) -> syn::Result<Vec<String>> {
    let list;
    syn::bracketed!(list in p);
    let mut out = Vec::new();
    while !list.is_empty() {
        out.push(list.parse::<syn::LitStr>()?.value());
    }
    Ok(out)
}

/// Every error of `errors`, combined into one.
pub(crate) fn combined(errors: impl IntoIterator<Item = Option<syn::Error>>) -> Option<syn::Error> {
    let mut it = errors.into_iter().flatten();
    let mut first = it.next()?;
    it.for_each(|e| first.combine(e));
    Some(first)
}

/// Compiles the function (unless `failed` holds its errors already) and generates its API.
fn finish_vectorize(
    args: TokenStream,
    func: &syn::ItemFn,
    callees: Vec<(String, String)>,
    entries: Vec<chain::Entry>,
    failed: Option<syn::Error>,
) -> TokenStream {
    let mut errors: Vec<syn::Error> = Vec::new();
    let options = Options::parse(args.clone()).unwrap_or_else(|e| {
        errors.push(e);
        Options::default()
    });
    if options.launch_bounds.is_some() {
        errors.push(syn::Error::new_spanned(
            &args,
            "`launch_bounds` is a `#[kernel]` option: a `#[vectorize]` function's launches are \
             sized by the runtime",
        ));
    }
    let (generic, concrete) = match instantiate(func, &options) {
        Ok(x) => x,
        Err(e) => {
            errors.push(e);
            let diagnostics: TokenStream = errors.iter().map(syn::Error::to_compile_error).collect();
            let plain = stubbed(func);
            return quote! { #diagnostics #plain };
        }
    };
    let precheck_failed = failed.is_some();
    errors.extend(failed);
    // A helper that did not compile has reported its errors where it is defined.
    let helpers_ok = entries.iter().all(|e| e.ok);
    let helpers = chain::definitions(&entries).unwrap_or_else(|e| {
        errors.push(e);
        Vec::new()
    });
    let instances: Vec<Instance> = concrete
        .iter()
        .map(|(ty, f)| {
            let (compiled, ok) = if !precheck_failed && helpers_ok && errors.is_empty() {
                let result = if options.target == Target::Cuda {
                    // Through the PTX cache: a function unchanged since the last build is
                    // not compiled again.
                    ptx_codegen::compile_variants(f, &callees, &helpers, &options, PtxCache::for_build()).map(Some)
                } else {
                    // The CPU targets run the host original; the function is still checked
                    // against the kernel language, so it can move to the GPU unchanged.
                    frontend::check_program(f, &callees, &helpers).map(|_| None)
                };
                match result {
                    Ok(k) => (k, true),
                    Err(e) => {
                        errors.push(e);
                        (None, false)
                    }
                }
            } else {
                (None, false)
            };
            Instance { ty: *ty, compiled, ok }
        })
        .collect();
    let signature = frontend::signature_types_with(&concrete[0].1.sig, &callees);
    let diagnostics: TokenStream = errors.iter().map(syn::Error::to_compile_error).collect();
    // The call API exists even when the body has errors, so that the rest of the crate
    // type-checks and reports its own problems.
    let Ok((params, ret)) = signature else {
        let plain = stubbed(func);
        return quote! { #diagnostics #plain };
    };
    let signature = Signature::new(func, generic, &params, ret);
    let identity_error = match (&options.identity, signature.reducible()) {
        (Some(e), false) => syn::Error::new_spanned(
            e,
            "`identity` is for `name::reduce`, which exists for functions of the form `fn(T, T) -> T`",
        )
        .to_compile_error(),
        _ => TokenStream::new(),
    };
    let own = chain::Entry::new(func, callees.clone(), instances.iter().all(|i| i.ok), true);
    let closure: Vec<chain::Entry> = std::iter::once(own).chain(entries).collect();
    let api = crate::signature::with_struct_paths(&callees, || {
        api::generate(&Vectorized::new(func, signature, &options, Compiled { instances, closure }))
    });
    quote! { #diagnostics #identity_error #api }
}

/// The item with its body replaced (its problems are reported), so that uses of its name
/// elsewhere do not add errors of their own.
fn stubbed(func: &syn::ItemFn) -> syn::ItemFn {
    let mut plain = func.clone();
    plain.block = Box::new(syn::parse_quote!({ ::core::unreachable!("this function did not compile for the GPU") }));
    plain.attrs.push(syn::parse_quote!(#[allow(unused_variables, unused_mut, dead_code)]));
    plain
}

/// `#[device]`: the function stays as it is for the host, and gets a hidden module with
/// its closure, so that vectorized functions (and other device functions) can call it.
pub fn device(args: TokenStream, item: TokenStream) -> TokenStream {
    with_function("#[device]", "fn f(x: f32) -> f32 { … }", item, |func, surroundings| {
        device_in_surroundings(args, func, surroundings)
    })
}

/// [`device`] once the function has the constants of its module it uses.
fn device_in_surroundings(args: TokenStream, func: syn::ItemFn, surroundings: Option<Surroundings>) -> TokenStream {
    let mut errors = TokenStream::new();
    if !args.is_empty() {
        errors.extend(syn::Error::new_spanned(&args, "`#[device]` takes no arguments").to_compile_error());
    }
    let spelling = surroundings.as_ref().and_then(|s| s.consts_spelling_errors(&func));
    let (mut paths, mut keys) = chain::callees_of(&func);
    // A call of itself would make the chain wait for its own result: report it here.
    let own = func.sig.ident.to_string();
    let mut recursive = false;
    if let Some(e) = recursion_error(&func.sig.ident, &paths, &keys, &[""]) {
        recursive = true;
        errors.extend(e.to_compile_error());
        paths.retain(|p| frontend::path_key(p) != own);
        keys.retain(|k| *k != own);
    }
    let (structs, struct_keys) = chain::struct_callees(&func);
    if paths.is_empty() && structs.is_empty() {
        // With a spelling error the function is not compiled: check it here for the rest.
        let failed = spelling.and_then(|e| combined([Some(e), frontend::precheck_device(&func, &[]).err()]));
        let definition = finish_device(&func, Vec::new(), Vec::new(), recursive || failed.is_some());
        let failed = failed.map(|e| e.to_compile_error());
        return quote! { #errors #failed #definition };
    }
    let calls = surroundings.and_then(|s| s.call_errors(&paths, "device function"));
    // Without the definitions of the structs it names, the function is checked once they
    // have arrived.
    let precheck = if structs.is_empty() { frontend::precheck_device(&func, &keys).err() } else { None };
    keys.extend(struct_keys);
    if let Some(e) = combined([precheck, calls, spelling]) {
        let definition = finish_device(&func, Vec::new(), Vec::new(), true);
        let e = e.to_compile_error();
        return quote! { #errors #e #definition };
    }
    let fetch =
        chain::fetch(&paths, &structs, quote!(::gpu_runtime::__device_define), quote! { #recursive [#(#keys)*] #func });
    quote! { #errors #fetch }
}

/// The last step of `#[device]`'s chain.
pub fn device_define(input: TokenStream) -> TokenStream {
    resume(
        input,
        |p| Ok(p.parse::<syn::LitBool>()?.value),
        |failed, func, callees, entries, misuse| {
            let definition = finish_device(func, callees, entries, failed || misuse.is_some());
            let misuse = misuse.map(|e| e.to_compile_error());
            quote! { #misuse #definition }
        },
    )
}

/// The error for the calls among `paths` (keyed `keys`) of the function `own` itself, by
/// its name followed by one of `suffixes` (`""`, `"::scalar"`).
pub(crate) fn recursion_error(
    own: &syn::Ident,
    paths: &[syn::Path],
    keys: &[String],
    suffixes: &[&str],
) -> Option<syn::Error> {
    let name = own.to_string();
    let (i, _) = keys.iter().enumerate().find(|(_, k)| suffixes.iter().any(|s| **k == format!("{name}{s}")))?;
    Some(syn::Error::new_spanned(
        &paths[i],
        format!(
            "recursion is not supported on the GPU: `{name}` calls itself (a kernel has no call stack to grow); rewrite it as a loop"
        ),
    ))
}

/// Checks a device function with the functions it calls and emits it (for the host) with
/// its hidden module. `failed`: an error is already reported for it.
fn finish_device(
    func: &syn::ItemFn,
    callees: Vec<(String, String)>,
    entries: Vec<chain::Entry>,
    failed: bool,
) -> TokenStream {
    let mut errors = TokenStream::new();
    let ok = !failed && entries.iter().all(|e| e.ok) && {
        match chain::definitions(&entries).and_then(|helpers| frontend::check_device_program(func, &callees, &helpers))
        {
            Ok(_) => true,
            Err(e) => {
                errors = e.to_compile_error();
                false
            }
        }
    };
    let own = chain::Entry::new(func, callees, ok, false);
    let closure: Vec<chain::Entry> = std::iter::once(own).chain(entries).collect();
    let name = &func.sig.ident;
    let doc = format!("The definition of the device function `{name}`, for the functions that call it.");
    let module = chain::closure_macro(&closure);
    // With errors reported here, rustc need not report the same problems in the host copy.
    let host = if errors.is_empty() {
        let mut host = func.clone();
        host::special_math_hint(&mut host.block);
        // A device function a kernel calls runs in its simulator too: its arrays (shared
        // ones among them) are indexed through the simulator's traits, as the kernel's.
        crate::simcopy::rewrite_device_indexing(&mut host.block);
        host
    } else {
        stubbed(func)
    };
    quote! {
        #errors
        #host
        #[doc = #doc]
        #[doc(hidden)]
        #[allow(non_snake_case)]
        pub(crate) mod #name {
            #module
        }
    }
}
