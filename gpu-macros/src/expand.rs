//! The tokens `#[vectorize]` expands to.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use syn::ext::IdentExt;

use ptx_codegen::ir::RetType;
use ptx_codegen::{CompiledKernel, Options, ScalarType, Target, frontend};

use crate::chain;

pub fn vectorize(args: TokenStream, item: TokenStream) -> TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => return not_a_function(e, item, "#[vectorize]"),
    };
    // A generic function's calls are read from its first instance (where `T::from_f64` is
    // a method of a scalar type, not a call into the crate).
    let checked = Options::parse(args.clone()).ok().and_then(|o| instantiate(&func, &o).ok()).map(|(_, inst)| inst);
    let first = checked.as_ref().map_or(&func, |inst| &inst[0].1);
    let (paths, keys) = chain::callees_of(first);
    if paths.is_empty() {
        return finish_vectorize(args, &func, Vec::new(), Vec::new(), None);
    }
    // Report the function's own problems now; fetch the definitions of the functions it
    // calls (see `chain`) only for a function that has none.
    if let Err(e) = frontend::precheck(first, &keys) {
        return finish_vectorize(args, &func, Vec::new(), Vec::new(), Some(e));
    }
    let payload = quote! { (#args) [#(#keys)*] #func };
    chain::fetch(&paths, quote!(::gpu_runtime::__vectorize_resume), payload)
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
        |args, func, callees, entries| finish_vectorize(args, func, callees, entries, None),
    )
}

/// The last step of a chain, whose payload is `head [keys…] fn …`: every callee's closure
/// has arrived; `finish` gets the head, the function, its callees and their definitions.
fn resume<H>(
    input: TokenStream,
    head: impl Fn(syn::parse::ParseStream) -> syn::Result<H>,
    finish: impl FnOnce(H, &syn::ItemFn, Vec<(String, String)>, Vec<chain::Entry>) -> TokenStream,
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
            let (callees, entries) = chain::resolve(&keys, &closures);
            finish(head, &func, callees, entries)
        }
        Err(e) => e.to_compile_error(),
    }
}

fn string_list(p: syn::parse::ParseStream) -> syn::Result<Vec<String>> {
    let list;
    syn::bracketed!(list in p);
    let mut out = Vec::new();
    while !list.is_empty() {
        out.push(list.parse::<syn::LitStr>()?.value());
    }
    Ok(out)
}

fn not_a_function(e: syn::Error, item: TokenStream, attr: &str) -> TokenStream {
    let msg = syn::Error::new(e.span(), format!("`{attr}` applies to a function: `fn f(x: f32) -> f32 {{ … }}`"));
    let error = msg.to_compile_error();
    quote! { #error #item }
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
    let options = Options::parse(args).unwrap_or_else(|e| {
        errors.push(e);
        Options::default()
    });
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
    let helpers: Vec<frontend::HelperDef> = entries.iter().map(chain::Entry::helper).collect();
    let instances: Vec<Instance> = concrete
        .iter()
        .map(|(ty, f)| {
            let (compiled, ok) = if !precheck_failed && helpers_ok && errors.is_empty() {
                let result = if options.target == Target::Cuda {
                    ptx_codegen::compile_with_helpers(f, &callees, &helpers, &options).map(Some)
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
    let signature = frontend::signature_types(&concrete[0].1.sig);
    let diagnostics: TokenStream = errors.iter().map(syn::Error::to_compile_error).collect();
    match signature {
        // The call API exists even when the body has errors, so that the rest of the crate
        // type-checks and reports its own problems.
        Ok((params, ret)) => {
            let slot = |t: ScalarType, written: &syn::Type| match generic {
                Some(g) if is_type_param(written, g) => Slot::Generic,
                _ => Slot::Concrete(t),
            };
            let written: Vec<&syn::Type> = func
                .sig
                .inputs
                .iter()
                .filter_map(|a| if let syn::FnArg::Typed(pt) = a { Some(&*pt.ty) } else { None })
                .collect();
            let params: Vec<Slot> = params.iter().zip(&written).map(|(t, w)| slot(*t, w)).collect();
            // The result: one scalar, or a tuple of them (one output array each).
            let (ret, tuple) = match (ret, &func.sig.output) {
                (RetType::Scalar(t), syn::ReturnType::Type(_, w)) => (vec![slot(t, w)], false),
                (RetType::Tuple(ts), syn::ReturnType::Type(_, w)) => {
                    let written: Vec<&syn::Type> = match strip_parens(w) {
                        syn::Type::Tuple(t) => t.elems.iter().collect(),
                        other => vec![other],
                    };
                    (ts.iter().zip(written).map(|(t, w)| slot(*t, w)).collect(), true)
                }
                (RetType::Scalar(t), syn::ReturnType::Default) => (vec![Slot::Concrete(t)], false),
                (RetType::Tuple(ts), syn::ReturnType::Default) => (ts.into_iter().map(Slot::Concrete).collect(), true),
            };
            let own = chain::Entry::new(func, callees, instances.iter().all(|i| i.ok));
            let closure: Vec<chain::Entry> = std::iter::once(own).chain(entries).collect();
            let reducible = !tuple && params.len() == 2 && params.iter().all(|t| *t == ret[0]);
            let mut identity = options.identity.as_ref();
            let mut identity_error = TokenStream::new();
            if let (Some(e), false) = (identity, reducible) {
                identity_error = syn::Error::new_spanned(
                    e,
                    "`identity` is for `name::reduce`, which exists for functions of the form `fn(T, T) -> T`",
                )
                .to_compile_error();
                identity = None;
            }
            let api = generate(
                func,
                generic,
                &params,
                Ret { slots: ret, tuple },
                &instances,
                &closure,
                identity,
                options.target,
            );
            quote! { #diagnostics #identity_error #api }
        }
        Err(_) => {
            let plain = stubbed(func);
            quote! { #diagnostics #plain }
        }
    }
}

fn strip_parens(ty: &syn::Type) -> &syn::Type {
    match ty {
        syn::Type::Paren(p) => strip_parens(&p.elem),
        syn::Type::Group(g) => strip_parens(&g.elem),
        other => other,
    }
}

/// Whether `ty` is the type parameter `g` itself.
fn is_type_param(ty: &syn::Type, g: &syn::Ident) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(g))
}

/// One concrete function to compile, and the type its type parameter stands for.
type Concrete = (Option<ScalarType>, syn::ItemFn);

/// The concrete functions to compile: the function itself, or, with `types(…)`, one copy
/// per listed type with the type parameter replaced. Returns the type parameter too.
fn instantiate<'a>(func: &'a syn::ItemFn, options: &Options) -> syn::Result<(Option<&'a syn::Ident>, Vec<Concrete>)> {
    let generics = &func.sig.generics;
    if options.types.is_empty() {
        return Ok((None, vec![(None, func.clone())]));
    }
    let params: Vec<&syn::GenericParam> = generics.params.iter().collect();
    let g = match params.as_slice() {
        [syn::GenericParam::Type(t)] => &t.ident,
        _ => {
            return Err(syn::Error::new_spanned(
                if generics.params.is_empty() { func.sig.ident.to_token_stream() } else { generics.to_token_stream() },
                "`types(…)` compiles a function with one type parameter for each listed type: write `fn f<T: Float>(x: T) -> T`",
            ));
        }
    };
    let instances = options
        .types
        .iter()
        .map(|t| {
            let mut plain = func.clone();
            plain.sig.generics = syn::Generics::default();
            let tokens = substitute(plain.to_token_stream(), g, t.rust_name());
            syn::parse2::<syn::ItemFn>(tokens).map(|f| (Some(*t), f))
        })
        .collect::<syn::Result<Vec<_>>>()?;
    Ok((Some(g), instances))
}

/// `tokens` with every identifier `from` replaced by `to` (spans kept).
fn substitute(tokens: TokenStream, from: &syn::Ident, to: &str) -> TokenStream {
    tokens
        .into_iter()
        .map(|tt| match tt {
            proc_macro2::TokenTree::Ident(i) if i == *from => {
                proc_macro2::TokenTree::Ident(proc_macro2::Ident::new(to, i.span()))
            }
            proc_macro2::TokenTree::Group(g) => {
                let mut n = proc_macro2::Group::new(g.delimiter(), substitute(g.stream(), from, to));
                n.set_span(g.span());
                proc_macro2::TokenTree::Group(n)
            }
            other => other,
        })
        .collect()
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
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => return not_a_function(e, item, "#[device]"),
    };
    let mut errors = TokenStream::new();
    if !args.is_empty() {
        errors.extend(syn::Error::new_spanned(&args, "`#[device]` takes no arguments").to_compile_error());
    }
    let (mut paths, mut keys) = chain::callees_of(&func);
    // A call of itself would make the chain wait for its own result: report it here.
    let own = func.sig.ident.to_string();
    let mut recursive = false;
    if let Some(i) = keys.iter().position(|k| *k == own) {
        recursive = true;
        errors.extend(
            syn::Error::new_spanned(&paths[i], format!(
                "recursion is not supported on the GPU: `{own}` calls itself (a kernel has no call stack to grow); rewrite it as a loop"
            ))
            .to_compile_error(),
        );
        paths.remove(i);
        keys.remove(i);
    }
    if paths.is_empty() {
        let definition = finish_device(&func, Vec::new(), Vec::new(), recursive);
        return quote! { #errors #definition };
    }
    if let Err(e) = frontend::precheck(&func, &keys) {
        let definition = finish_device(&func, Vec::new(), Vec::new(), true);
        let e = e.to_compile_error();
        return quote! { #errors #e #definition };
    }
    let fetch = chain::fetch(&paths, quote!(::gpu_runtime::__device_define), quote! { #recursive [#(#keys)*] #func });
    quote! { #errors #fetch }
}

/// The last step of `#[device]`'s chain.
pub fn device_define(input: TokenStream) -> TokenStream {
    resume(
        input,
        |p| Ok(p.parse::<syn::LitBool>()?.value),
        |failed, func, callees, entries| finish_device(func, callees, entries, failed),
    )
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
        let helpers: Vec<frontend::HelperDef> = entries.iter().map(chain::Entry::helper).collect();
        match frontend::check_program(func, &callees, &helpers) {
            Ok(_) => true,
            Err(e) => {
                errors = e.to_compile_error();
                false
            }
        }
    };
    let own = chain::Entry::new(func, callees, ok);
    let closure: Vec<chain::Entry> = std::iter::once(own).chain(entries).collect();
    let name = &func.sig.ident;
    let doc = format!("The definition of the device function `{name}`, for the functions that call it.");
    let module = chain::closure_macro(&closure);
    // With errors reported here, rustc need not report the same problems in the host copy.
    let host = if errors.is_empty() { func.clone() } else { stubbed(func) };
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

fn param_names(func: &syn::ItemFn) -> Vec<(syn::Ident, String)> {
    func.sig
        .inputs
        .iter()
        .enumerate()
        .map(|(i, arg)| match arg {
            syn::FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) => {
                    let name = pi.ident.unraw().to_string();
                    (format_ident!("{}", name, span = pi.ident.span()), name)
                }
                _ => (format_ident!("__arg{}", i), format!("argument {}", i + 1)),
            },
            syn::FnArg::Receiver(_) => (format_ident!("__arg{}", i), format!("argument {}", i + 1)),
        })
        .collect()
}

fn scalar_tokens(t: ScalarType) -> TokenStream {
    let ident = syn::Ident::new(t.rust_name(), Span::call_site());
    quote!(::core::primitive::#ident)
}

/// A parameter's or result's type in the generated API: a concrete scalar type, or the
/// type parameter `T` of a function compiled for several types.
#[derive(Clone, Copy, PartialEq)]
enum Slot {
    Concrete(ScalarType),
    Generic,
}

/// The result of each element: one scalar, or a tuple (an output array per field).
struct Ret {
    slots: Vec<Slot>,
    tuple: bool,
}

impl Ret {
    /// The result type, with `generic` for the type parameter's slots.
    fn tokens(&self, each: impl Fn(Slot) -> TokenStream) -> TokenStream {
        let each: Vec<TokenStream> = self.slots.iter().map(|s| each(*s)).collect();
        if self.tuple { quote!((#(#each,)*)) } else { quote!(#(#each)*) }
    }

    /// The type of the results on the host (`Vec<R>`, or a tuple of vectors) or on a
    /// device (`DeviceVec<R>`, …).
    fn arrays(&self, each: impl Fn(Slot) -> TokenStream, array: TokenStream) -> TokenStream {
        self.tokens(|s| {
            let t = each(s);
            quote!(#array<#t>)
        })
    }

    /// The `out` parameter's type (one `impl Out` per output) and the expression that
    /// turns it into the kernel's `Outs`.
    /// `out_trait` is the trait an output implements (`Out`), `method` the one that
    /// converts it.
    fn outs(
        &self,
        each: impl Fn(Slot) -> TokenStream,
        out: &syn::Ident,
        lifetime: TokenStream,
        out_trait: TokenStream,
        method: TokenStream,
    ) -> (TokenStream, TokenStream) {
        let ty = self.tokens(|s| {
            let t = each(s);
            quote!(impl #out_trait<#lifetime, #t>)
        });
        let conv = if self.tuple {
            let i = (0..self.slots.len()).map(syn::Index::from);
            quote!((#(#out_trait::#method(#out.#i),)*))
        } else {
            quote!(#out_trait::#method(#out))
        };
        (ty, conv)
    }
}

/// One compiled instance of the function: for a concrete function the only one, for a
/// generic one one per listed type.
struct Instance {
    ty: Option<ScalarType>,
    /// The kernel (CUDA target only).
    compiled: Option<CompiledKernel>,
    /// Whether the function passed the compiler's checks.
    ok: bool,
}

#[allow(clippy::too_many_arguments)]
fn generate(
    func: &syn::ItemFn,
    generic: Option<&syn::Ident>,
    params: &[Slot],
    ret: Ret,
    instances: &[Instance],
    closure: &[chain::Entry],
    identity: Option<&syn::Expr>,
    target: Target,
) -> TokenStream {
    let gpu = target == Target::Cuda;
    let vis = &func.vis;
    let name = &func.sig.ident;
    let name_str = name.unraw().to_string();
    let names = param_names(func);
    let idents: Vec<&syn::Ident> = names.iter().map(|(i, _)| i).collect();
    let name_strs: Vec<&str> = names.iter().map(|(_, s)| s.as_str()).collect();
    let slot_tokens = |s: Slot| match (s, generic) {
        (Slot::Concrete(t), _) => scalar_tokens(t),
        (Slot::Generic, Some(g)) => quote!(#g),
        (Slot::Generic, None) => quote!(()),
    };
    let tys: Vec<TokenStream> = params.iter().map(|t| slot_tokens(*t)).collect();
    let ret_ty = ret.tokens(slot_tokens);
    let host_ty = ret.arrays(slot_tokens, quote!(::std::vec::Vec));
    let device_ty = ret.arrays(slot_tokens, quote!(::gpu_runtime::DeviceVec));
    let all_compiled = instances.iter().all(|i| i.ok);

    // Attributes: docs and lints go on the call wrapper; `cfg`s on everything; the
    // original function keeps all of its own.
    let is = |a: &syn::Attribute, names: &[&str]| names.iter().any(|n| a.path().is_ident(n));
    let wrapper_attrs: Vec<&syn::Attribute> = func
        .attrs
        .iter()
        .filter(|a| is(a, &["doc", "cfg", "cfg_attr", "allow", "warn", "deny", "expect", "deprecated"]))
        .collect();
    let mod_attrs: Vec<&syn::Attribute> = func.attrs.iter().filter(|a| is(a, &["cfg", "cfg_attr"])).collect();
    let scalar_attrs = &func.attrs;

    let mut scalar_fn = func.clone();
    scalar_fn.attrs.clear();
    if !all_compiled {
        // The body did not compile for the GPU and its errors are reported: rustc need not
        // report the same problems again in the host copy.
        *scalar_fn.block = syn::parse_quote!({ ::core::unreachable!("this vectorized function did not compile") });
        scalar_fn.attrs.push(syn::parse_quote!(#[allow(unused_variables, unused_mut)]));
    }
    scalar_fn.vis = syn::parse_quote!(pub);
    scalar_fn.sig.ident = format_ident!("scalar", span = name.span());
    let arg_list = quote! { #(#idents: impl ::gpu_runtime::Arg<'__a, #tys>),* };
    let erased = quote! { [#(::gpu_runtime::Arg::into_arg(#idents).erase()),*] };
    // `device` and `out` unless a parameter already has that name.
    let device = if name_strs.contains(&"device") { format_ident!("__device") } else { format_ident!("device") };
    let out = if name_strs.contains(&"out") { format_ident!("__out") } else { format_ident!("out") };
    let stream = if name_strs.contains(&"stream") { format_ident!("__stream") } else { format_ident!("stream") };
    let mod_doc = format!("The generated API of the vectorized function `{name_str}`.");
    let reducible = !ret.tuple && params.len() == 2 && params.iter().all(|t| *t == ret.slots[0]);
    let spec = |k: Option<&CompiledKernel>, ptx: TokenStream| {
        let (entry, error_flag, reduce_entry, strided_entry) = match k {
            Some(k) => (
                k.abi.entry.clone(),
                k.abi.error_flag,
                k.abi.reduce_entry.clone().unwrap_or_default(),
                k.abi.strided_entry(),
            ),
            None => (String::new(), false, String::new(), String::new()),
        };
        quote! {
            ::gpu_runtime::__private::Kernel::new(::gpu_runtime::__private::KernelSpec {
                name: #name_str,
                ptx: #ptx,
                entry: #entry,
                params: &[#(#name_strs),*],
                error_flag: #error_flag,
                reduce_entry: #reduce_entry,
                strided_entry: #strided_entry,
            })
        }
    };
    let identity_tokens = match identity {
        Some(e) => quote!(::core::option::Option::Some(#e)),
        None => quote!(::core::option::Option::None),
    };

    // How the API reaches its kernel, calls the original, and what it is generic over.
    let (kernels, kernel, outer_kernel, scalar_call, generics, outer_generics, identity_expr, closure_macro);
    match generic {
        None => {
            let k = instances[0].compiled.as_ref();
            let (ptx, llvm_ir) = k.map_or(("", ""), |k| (k.ptx.as_str(), k.llvm_ir.as_str()));
            let kernel_spec = spec(k, quote!(PTX));
            kernels = if gpu {
                quote! {
                    /// The PTX generated for this function at build time.
                    pub const PTX: &str = #ptx;

                    /// The optimised LLVM IR the PTX was generated from.
                    pub const LLVM_IR: &str = #llvm_ir;

                    #[doc(hidden)]
                    pub static KERNEL: ::gpu_runtime::__private::Kernel = #kernel_spec;
                }
            } else {
                TokenStream::new()
            };
            kernel = quote!(KERNEL);
            outer_kernel = quote!(#name::KERNEL);
            scalar_call = quote!(scalar);
            generics = TokenStream::new();
            outer_generics = TokenStream::new();
            identity_expr = identity_tokens;
            closure_macro = chain::closure_macro(closure);
        }
        Some(g) => {
            let listed: Vec<&str> = instances.iter().filter_map(|i| i.ty.map(ScalarType::rust_name)).collect();
            let message = format!("`{name_str}` is compiled for {} only, not for `{{Self}}`", listed.join(", "));
            let note = format!("add the type to `#[vectorize(types(…))]` to compile `{name_str}` for it");
            let identity_ty = if reducible { quote!(Self) } else { quote!(()) };
            let mut impls = TokenStream::new();
            let mut first = None;
            for inst in instances {
                let t = inst.ty.expect("a generic function's instances have types");
                let ty = scalar_tokens(t);
                let upper = t.rust_name().to_uppercase();
                let (ptx_name, ir_name, kernel_name) = (
                    format_ident!("PTX_{}", upper),
                    format_ident!("LLVM_IR_{}", upper),
                    format_ident!("KERNEL_{}", upper),
                );
                let k = inst.compiled.as_ref();
                let (ptx, llvm_ir) = k.map_or(("", ""), |k| (k.ptx.as_str(), k.llvm_ir.as_str()));
                first.get_or_insert((ptx_name.clone(), ir_name.clone()));
                let kernel_spec = spec(k, quote!(#ptx_name));
                let ptx_doc = format!("The PTX generated for `{name_str}::<{}>`.", t.rust_name());
                let scalar_params: Vec<TokenStream> =
                    params.iter().map(|p| if *p == Slot::Generic { ty.clone() } else { slot_tokens(*p) }).collect();
                let scalar_ret = ret.tokens(|s| if s == Slot::Generic { ty.clone() } else { slot_tokens(s) });
                let gpu_items = if gpu {
                    quote! {
                        #[doc = #ptx_doc]
                        pub const #ptx_name: &str = #ptx;
                        #[doc(hidden)]
                        pub const #ir_name: &str = #llvm_ir;
                        #[doc(hidden)]
                        pub static #kernel_name: ::gpu_runtime::__private::Kernel = #kernel_spec;
                    }
                } else {
                    TokenStream::new()
                };
                let gpu_impl = if gpu {
                    quote! {
                        const PTX: &'static str = #ptx_name;
                        fn kernel() -> &'static ::gpu_runtime::__private::Kernel {
                            &#kernel_name
                        }
                    }
                } else {
                    TokenStream::new()
                };
                impls.extend(quote! {
                    #gpu_items
                    impl Element for #ty {
                        #gpu_impl
                        const IDENTITY: ::core::option::Option<#identity_ty> = #identity_tokens;
                        fn scalar(#(#idents: #scalar_params),*) -> #scalar_ret {
                            super::#name::scalar::<#ty>(#(#idents),*)
                        }
                    }
                });
            }
            let (first_ptx, first_ir) = first.expect("at least one type");
            let element_params: Vec<TokenStream> =
                params.iter().map(|p| if *p == Slot::Generic { quote!(Self) } else { slot_tokens(*p) }).collect();
            let element_ret = ret.tokens(|s| if s == Slot::Generic { quote!(Self) } else { slot_tokens(s) });
            let gpu_trait_items = if gpu {
                quote! {
                    /// The PTX of this type's kernel.
                    const PTX: &'static str;
                    #[doc(hidden)]
                    fn kernel() -> &'static ::gpu_runtime::__private::Kernel;
                }
            } else {
                TokenStream::new()
            };
            let gpu_consts = if gpu {
                quote! {
                    /// The PTX of the first listed type (each type's is `PTX_<TYPE>`, or `T::PTX`).
                    pub const PTX: &str = #first_ptx;

                    /// The optimised LLVM IR of the first listed type.
                    pub const LLVM_IR: &str = #first_ir;
                }
            } else {
                TokenStream::new()
            };
            kernels = quote! {
                /// The types this function is compiled for.
                #[diagnostic::on_unimplemented(message = #message, label = "not a type this function is compiled for", note = #note)]
                pub trait Element: ::gpu_runtime::Scalar {
                    #gpu_trait_items
                    #[doc(hidden)]
                    const IDENTITY: ::core::option::Option<#identity_ty>;
                    #[doc(hidden)]
                    fn scalar(#(#idents: #element_params),*) -> #element_ret;
                }

                #gpu_consts

                #impls
            };
            kernel = quote!(<#g as Element>::kernel());
            outer_kernel = quote!(<#g as #name::Element>::kernel());
            scalar_call = quote!(<#g as Element>::scalar);
            generics = quote!(#g: Element,);
            outer_generics = quote!(#g: #name::Element,);
            identity_expr = quote!(<#g as Element>::IDENTITY);
            // A generic function is not a device function (its callers are concrete).
            closure_macro = TokenStream::new();
        }
    }

    let reduce = if reducible && !gpu {
        let (iter, fold) = if target == Target::Parallel {
            (quote!(into_par_iter), quote!(reduce_with))
        } else {
            (quote!(into_iter), quote!(reduce))
        };
        quote! {
            /// Folds the elements of `values` with the function (on the CPU: this function's
            /// target). An empty array gives the `identity`, or `Error::EmptyReduce` without
            /// one.
            pub fn reduce<'__a, #generics>(values: impl ::gpu_runtime::Arg<'__a, #ret_ty>) -> ::gpu_runtime::Result<#ret_ty> {
                #[allow(unused_imports)]
                use ::gpu_runtime::__private::rayon::prelude::*;
                let values = ::gpu_runtime::Arg::into_arg(values).to_host()?;
                let __n = values.len().unwrap_or(1);
                (0..__n)
                    .#iter()
                    .map(|__i| values.get(__i))
                    .#fold(|a, b| #scalar_call(a, b))
                    .or(#identity_expr)
                    .ok_or(::gpu_runtime::Error::EmptyReduce { function: #name_str })
            }
        }
    } else if reducible {
        quote! {
            /// Folds the elements of `values` with the function, on the GPU: in one launch
            /// over the data and one small launch over the blocks' results. The folds do not
            /// run in sequence, so the function must be associative (`a + b`, `a * b`,
            /// `a.max(b)`, …); for floats the result may differ from a sequential fold by the
            /// rounding of a different order. An empty array gives the `identity`, or
            /// `Error::EmptyReduce` without one.
            pub fn reduce<'__a, #generics>(values: impl ::gpu_runtime::Arg<'__a, #ret_ty>) -> ::gpu_runtime::Result<#ret_ty> {
                // SAFETY: the argument has the kernel's element type.
                unsafe { #kernel.reduce::<#ret_ty>(::core::option::Option::None, ::gpu_runtime::Arg::into_arg(values).erase(), #identity_expr) }
            }
        }
    } else {
        TokenStream::new()
    };

    let args_only = quote!(#(#idents),*);
    let cpu_loop = host_loop(&idents, &scalar_call, false);
    let parallel_loop = host_loop(&idents, &scalar_call, true);
    let out_trait = quote!(::gpu_runtime::Out);
    let (out_ty, out_conv) = ret.outs(slot_tokens, &out, quote!('__o), out_trait.clone(), quote!(into_out));
    let (launch_out_ty, _) = ret.outs(slot_tokens, &out, quote!('__a), out_trait, quote!(into_out));
    let nd = nd_api(NdApi {
        name_str: &name_str,
        name_strs: &name_strs,
        idents: &idents,
        tys: &tys,
        ret: &ret,
        slot_tokens: &slot_tokens,
        out: &out,
        generics: &generics,
        kernel: &kernel,
        scalar_call: &scalar_call,
        target,
    });

    let wrapper_body = match target {
        Target::Cuda => quote! {
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            unsafe { #outer_kernel.call_host::<#ret_ty>(::core::option::Option::None, &#erased) }
        },
        Target::Cpu => quote!(#name::cpu(#args_only)),
        Target::Parallel => quote!(#name::parallel(#args_only)),
    };
    let gpu_api = if gpu {
        quote! {
            /// Runs the function on `device`.
            pub fn on<'__a, #generics>(#device: &::gpu_runtime::Device, #arg_list) -> ::gpu_runtime::Result<#host_ty> {
                // SAFETY: the arguments follow the kernel's inputs in order and type.
                unsafe { #kernel.call_host::<#ret_ty>(::core::option::Option::Some(#device), &#erased) }
            }

            /// Runs the function and leaves the results on the device (inputs already there
            /// are not copied).
            pub fn device<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#device_ty> {
                // SAFETY: the arguments follow the kernel's inputs in order and type.
                unsafe { #kernel.call_device::<#ret_ty>(::core::option::Option::None, &#erased) }
            }

            /// Runs the function and writes the results into `out` (host memory or a device
            /// array), whose length must be the call's; allocates nothing for the results.
            pub fn into<'__a, '__o, #generics>(#out: #out_ty, #arg_list) -> ::gpu_runtime::Result<()> {
                // SAFETY: the arguments follow the kernel's inputs in order and type.
                unsafe { #kernel.call_into::<#ret_ty>(::core::option::Option::None, &#erased, #out_conv) }
            }

            /// Queues the call on `stream` and returns at once; `wait()` on the handle gives
            /// the results. The arguments stay borrowed until then.
            pub fn launch<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, #host_ty>> {
                // SAFETY: the arguments follow the kernel's inputs in order and type.
                unsafe { #kernel.launch_host::<#ret_ty>(#stream, &#erased) }
            }

            /// Queues the call on `stream`; the results stay on the device.
            pub fn launch_device<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, #device_ty>> {
                // SAFETY: the arguments follow the kernel's inputs in order and type.
                unsafe { #kernel.launch_device::<#ret_ty>(#stream, &#erased) }
            }

            /// Queues the call on `stream`, writing into `out`, which stays borrowed until
            /// the handle is waited for or dropped.
            pub fn launch_into<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #out: #launch_out_ty, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, ()>> {
                // SAFETY: the arguments follow the kernel's inputs in order and type.
                unsafe { #kernel.launch_into::<#ret_ty>(#stream, &#erased, #out_conv) }
            }
        }
    } else {
        let parallel = target == Target::Parallel;
        quote! {
            /// Runs the function (on this function's CPU target) and writes the results into
            /// `out`, whose length must be the call's.
            pub fn into<'__a, '__o, #generics>(#out: #out_ty, #arg_list) -> ::gpu_runtime::Result<()> {
                #(let #idents = ::gpu_runtime::Arg::into_arg(#idents).to_host()?;)*
                ::gpu_runtime::__private::cpu_into::<#ret_ty>(
                    #name_str,
                    &[#(#name_strs),*],
                    &[#(#idents.len()),*],
                    #out_conv,
                    #parallel,
                    |__i| #scalar_call(#(#idents.get(__i)),*),
                )
            }
        }
    };

    quote! {
        #(#wrapper_attrs)*
        #[allow(clippy::too_many_arguments)]
        #vis fn #name<'__a, #outer_generics>(#arg_list) -> ::gpu_runtime::Result<#host_ty> {
            #wrapper_body
        }

        #(#mod_attrs)*
        #[doc = #mod_doc]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            #closure_macro

            /// The original scalar function, compiled for the host.
            #(#scalar_attrs)*
            #scalar_fn

            #kernels

            #gpu_api

            #reduce

            #nd

            /// Runs the same computation on the CPU, element by element (device arrays are
            /// copied to the host first).
            pub fn cpu<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#host_ty> {
                #(let #idents = ::gpu_runtime::Arg::into_arg(#idents).to_host()?;)*
                let __n = ::gpu_runtime::__private::broadcast_len(#name_str, &[#(#name_strs),*], &[#(#idents.len()),*])?;
                let __values: ::std::vec::Vec<#ret_ty> = #cpu_loop;
                ::core::result::Result::Ok(<#ret_ty as ::gpu_runtime::Results>::unzip(__values))
            }

            /// Runs the same computation on the CPU, split over threads with rayon.
            pub fn parallel<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#host_ty> {
                use ::gpu_runtime::__private::rayon::prelude::*;
                #(let #idents = ::gpu_runtime::Arg::into_arg(#idents).to_host()?;)*
                let __n = ::gpu_runtime::__private::broadcast_len(#name_str, &[#(#name_strs),*], &[#(#idents.len()),*])?;
                let __values: ::std::vec::Vec<#ret_ty> = #parallel_loop;
                ::core::result::Result::Ok(<#ret_ty as ::gpu_runtime::Results>::unzip(__values))
            }
        }
    }
}

/// What [`nd_api`] needs of [`generate`]'s state.
struct NdApi<'a> {
    name_str: &'a str,
    name_strs: &'a [&'a str],
    idents: &'a [&'a syn::Ident],
    tys: &'a [TokenStream],
    ret: &'a Ret,
    slot_tokens: &'a dyn Fn(Slot) -> TokenStream,
    out: &'a syn::Ident,
    generics: &'a TokenStream,
    kernel: &'a TokenStream,
    scalar_call: &'a TokenStream,
    target: Target,
}

/// `name::nd`, `name::nd_into` and `name::nd_cpu`: the function broadcast over `ndarray`
/// arrays. They exist when `gpu-runtime`'s `ndarray` feature is on (`__if_ndarray!`).
fn nd_api(a: NdApi<'_>) -> TokenStream {
    let NdApi { name_str, name_strs, idents, tys, ret, slot_tokens, out, generics, kernel, scalar_call, target } = a;
    let ret_ty = ret.tokens(slot_tokens);
    let nd_ty = ret.arrays(slot_tokens, quote!(::gpu_runtime::nd::ArrayD));
    let (out_ty, out_conv) =
        ret.outs(slot_tokens, out, quote!('__o), quote!(::gpu_runtime::nd::NdOut), quote!(into_nd_out));
    let arg_list = quote! { #(#idents: impl ::gpu_runtime::nd::NdArg<'__a, #tys>),* };
    let erased = quote! { [#(::gpu_runtime::nd::NdArg::into_nd(#idents).erase()),*] };
    let ks = 0..idents.len();
    // SAFETY (in the expansion): argument `k` has the parameter's type `tys[k]`.
    let element = quote! { |__at: &::gpu_runtime::nd::NdAt<'_>| #scalar_call(#(unsafe { __at.get::<#tys>(#ks) }),*) };
    let host = |parallel: bool| {
        (
            quote! { ::gpu_runtime::nd::host_nd::<#ret_ty>(#name_str, &[#(#name_strs),*], &#erased, #parallel, #element) },
            quote! { ::gpu_runtime::nd::host_nd_into::<#ret_ty>(#name_str, &[#(#name_strs),*], &#erased, #out_conv, #parallel, #element) },
        )
    };
    let (nd_body, into_body) = match target {
        Target::Cuda => (
            quote! {
                // SAFETY: the arguments follow the kernel's inputs in order and type.
                unsafe { #kernel.call_nd::<#ret_ty>(&#erased) }
            },
            quote! {
                // SAFETY: the arguments follow the kernel's inputs in order and type.
                unsafe { #kernel.call_nd_into::<#ret_ty>(&#erased, #out_conv) }
            },
        ),
        Target::Cpu => host(false),
        Target::Parallel => host(true),
    };
    let (cpu_body, _) = host(false);
    quote! {
        ::gpu_runtime::__if_ndarray! {
            /// Broadcasts the function over `ndarray` arrays of any dimension and strides
            /// (and scalars), by NumPy's rules, and returns arrays of the broadcast shape.
            /// Shapes that do not broadcast are an `Error::ShapeMismatch`.
            pub fn nd<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#nd_ty> {
                #nd_body
            }

            /// As [`nd`], writing into arrays of the broadcast shape (any strides).
            pub fn nd_into<'__a, '__o, #generics>(#out: #out_ty, #arg_list) -> ::gpu_runtime::Result<()> {
                #into_body
            }

            /// As [`nd`], on the CPU.
            pub fn nd_cpu<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#nd_ty> {
                #cpu_body
            }
        }
    }
}

/// The CPU targets' loop over `__n` elements. When every argument is a slice (the common
/// case) the slices are zipped, which rustc can vectorise; otherwise each argument is read
/// by index (a broadcast scalar has the same value everywhere).
fn host_loop(idents: &[&syn::Ident], scalar_call: &TokenStream, parallel: bool) -> TokenStream {
    let (range, iter) =
        if parallel { (quote!((0..__n).into_par_iter()), quote!(par_iter)) } else { (quote!((0..__n)), quote!(iter)) };
    let by_index = quote! { #range.map(|__i| #scalar_call(#(#idents.get(__i)),*)).collect() };
    let Some((first, rest)) = idents.split_first() else { return by_index };
    let mut zipped = quote!(#first.#iter());
    let mut pattern = quote!(&#first);
    for id in rest {
        zipped = quote!(#zipped.zip(#id.#iter()));
        pattern = quote!((#pattern, &#id));
    }
    quote! {
        match (#(&#idents,)*) {
            (#(::gpu_runtime::HostArg::Slice(#idents),)*) => #zipped.map(|#pattern| #scalar_call(#(#idents),*)).collect(),
            _ => #by_index,
        }
    }
}
