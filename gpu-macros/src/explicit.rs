//! `#[kernel]`: an explicit kernel (Numba's `@cuda.jit`). The function is compiled for the
//! GPU by `ptx-codegen` (with the `#[device]` functions it calls, fetched as for
//! `#[vectorize]`, see `chain`), and replaced by a module of the same name:
//!
//! - `name::launch(grid, block, args…)`: runs it on the GPU and waits;
//! - `name::launch_with(&LaunchConfig, args…)`: with dynamic shared memory, a stream or a
//!   device; returns a `Pending`;
//! - `name::simulate(grid, block, args…)` and `name::simulate_with`: runs it on the host,
//!   the threads of a block concurrently (the simulator copy, see `simcopy`);
//! - `name::PTX`: what was compiled.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use ptx_codegen::{ExplicitParam, ExplicitParamKind, KernelVariants, Options, PtxCache, Target, frontend};

use crate::chain;
use crate::entry;
use crate::runtime::private;
use crate::signature::scalar_tokens;
use crate::simcopy;
use crate::source::Surroundings;

pub fn kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    entry::with_function("#[kernel]", "fn k(x: &[f32], y: &mut [f32]) { … }", item, |func, surroundings| {
        kernel_in_surroundings(args, func, surroundings)
    })
}

/// [`kernel`] once the function has the constants of its module it uses.
fn kernel_in_surroundings(args: TokenStream, func: syn::ItemFn, surroundings: Option<Surroundings>) -> TokenStream {
    let (paths, mut keys) = chain::callees_of(&func);
    let (structs, struct_keys) = chain::struct_callees(&func);
    if paths.is_empty() && structs.is_empty() {
        return finish_kernel(args, &func, Vec::new(), Vec::new(), None);
    }
    // As for `#[vectorize]`: report the kernel's own problems before fetching what it
    // calls (a call of a closure or of itself would wait for a module that never comes).
    // A kernel that names structs is checked once their definitions have arrived.
    let precheck = if structs.is_empty() { frontend::precheck_kernel(&func, &keys).err() } else { None };
    let errors = [
        precheck,
        entry::recursion_error(&func.sig.ident, &paths, &keys, &[""]),
        surroundings.and_then(|s| s.call_errors(&paths, "kernel")),
    ];
    if let Some(e) = entry::combined(errors) {
        return finish_kernel(args, &func, Vec::new(), Vec::new(), Some(e));
    }
    keys.extend(struct_keys);
    let payload = quote! { (#args) [#(#keys)*] #func };
    chain::fetch(&paths, &structs, quote!(::gpu_runtime::__kernel_resume), payload)
}

/// The last step of `#[kernel]`'s chain: every callee's closure has arrived.
pub fn kernel_resume(input: TokenStream) -> TokenStream {
    crate::entry::resume(
        input,
        |p| {
            let args;
            syn::parenthesized!(args in p);
            args.parse::<TokenStream>()
        },
        finish_kernel,
    )
}

/// Compiles the kernel (unless `failed` holds its errors already) and generates its module.
fn finish_kernel(
    args: TokenStream,
    func: &syn::ItemFn,
    callees: Vec<(String, String)>,
    entries: Vec<chain::Entry>,
    failed: Option<syn::Error>,
) -> TokenStream {
    let mut errors: Vec<syn::Error> = failed.into_iter().collect();
    let options = match Options::parse(args.clone()) {
        Ok(o) if o.target != Target::Cuda => {
            errors.push(syn::Error::new_spanned(
                &args,
                "a `#[kernel]` is compiled for the GPU (`target` is for `#[vectorize]`); \
                 `name::simulate(…)` runs it on the host",
            ));
            o
        }
        Ok(o) if o.identity.is_some() || !o.types.is_empty() => {
            errors.push(syn::Error::new_spanned(
                &args,
                "`identity` and `types` are `#[vectorize]` options; a `#[kernel]` takes `arch`, `fastmath` and `launch_bounds`",
            ));
            o
        }
        Ok(o) => o,
        Err(e) => {
            errors.push(e);
            Options::default()
        }
    };
    if !func.sig.generics.params.is_empty() {
        errors.push(syn::Error::new_spanned(&func.sig.generics, "a `#[kernel]` cannot be generic"));
    }
    let helpers = chain::definitions(&entries).unwrap_or_else(|e| {
        errors.push(e);
        Vec::new()
    });
    let params = frontend::kernel_signature(&func.sig, &callees);
    let helpers_ok = entries.iter().all(|e| e.ok);
    let compiled: Option<KernelVariants> = if errors.is_empty() && helpers_ok && params.is_ok() {
        // Through the PTX cache: a kernel unchanged since the last build is not compiled again.
        match ptx_codegen::compile_kernel_variants(func, &callees, &helpers, &options, PtxCache::for_build()) {
            Ok(k) => Some(k),
            Err(e) => {
                errors.push(e);
                None
            }
        }
    } else {
        None
    };
    let params = match params {
        Ok(p) => p,
        Err(e) => {
            errors.push(e);
            let diagnostics: TokenStream = errors.iter().map(syn::Error::to_compile_error).collect();
            return diagnostics;
        }
    };
    let diagnostics: TokenStream = errors.iter().map(syn::Error::to_compile_error).collect();
    let max_threads = options.launch_bounds.map(|b| b.max_threads);
    let module =
        crate::signature::with_struct_paths(&callees, || generate(func, &params, compiled.as_ref(), max_threads));
    quote! { #diagnostics #module }
}

/// The identifiers the generated functions use for their own parameters.
const OWN: [&str; 3] = ["grid", "block", "config"];

/// `max_threads`: the most threads a block may have (the kernel's `launch_bounds`; `None`:
/// CUDA's limit), which the simulator checks as the GPU does.
fn generate(
    func: &syn::ItemFn,
    params: &[ExplicitParam],
    compiled: Option<&KernelVariants>,
    max_threads: Option<u32>,
) -> TokenStream {
    let p = private();
    let name = &func.sig.ident;
    let name_str = name.to_string();
    let max_threads = match max_threads {
        Some(m) => quote!(::core::option::Option::Some(#m)),
        None => quote!(::core::option::Option::None),
    };
    let vis = &func.vis;
    let is = |a: &syn::Attribute, names: &[&str]| names.iter().any(|n| a.path().is_ident(n));
    let mod_attrs: Vec<&syn::Attribute> = func
        .attrs
        .iter()
        .filter(|a| is(a, &["doc", "cfg", "cfg_attr", "allow", "warn", "deny", "deprecated"]))
        .collect();
    // The parameters as written, renamed where they would shadow the wrappers' own.
    let idents: Vec<syn::Ident> = func
        .sig
        .inputs
        .iter()
        .enumerate()
        .map(|(i, arg)| match arg {
            syn::FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) if OWN.contains(&pi.ident.to_string().as_str()) => format_ident!("{}_", pi.ident),
                syn::Pat::Ident(pi) => pi.ident.clone(),
                _ => format_ident!("__arg{}", i),
            },
            syn::FnArg::Receiver(_) => format_ident!("__arg{}", i),
        })
        .collect();
    let launch_params = typed(&idents, params, |kind| match kind {
        ExplicitParamKind::Scalar(t) => scalar_tokens(*t),
        ExplicitParamKind::Slice { elem, mutable: false } => {
            let t = scalar_tokens(*elem);
            quote!(impl #p::KernelIn<'__a, #t>)
        }
        ExplicitParamKind::Slice { elem, mutable: true } => {
            let t = scalar_tokens(*elem);
            quote!(impl #p::KernelInOut<'__a, #t>)
        }
    });
    let kargs: Vec<TokenStream> = idents
        .iter()
        .zip(params)
        .map(|(id, param)| {
            let pname = &param.name;
            match &param.kind {
                ExplicitParamKind::Scalar(_) => quote!(#p::KArg::scalar(#id)),
                ExplicitParamKind::Slice { mutable: false, .. } => {
                    quote!(#p::KArg::input(#pname, #id))
                }
                ExplicitParamKind::Slice { mutable: true, .. } => {
                    quote!(#p::KArg::output(#pname, #id))
                }
            }
        })
        .collect();
    // `launch_with` binds each argument to its typed form first, to ask where it lives.
    let typed_bind: Vec<TokenStream> = idents
        .iter()
        .zip(params)
        .map(|(id, param)| match &param.kind {
            ExplicitParamKind::Scalar(_) => TokenStream::new(),
            ExplicitParamKind::Slice { mutable: false, .. } => {
                quote!(let #id = #p::KernelIn::into_kernel_in(#id);)
            }
            ExplicitParamKind::Slice { mutable: true, .. } => {
                quote!(let #id = #p::KernelInOut::into_kernel_in_out(#id);)
            }
        })
        .collect();
    // Each slice argument's device (which decides whether the launch goes to the CPU),
    // and its host slice there.
    let (array_devices, host_bind): (Vec<TokenStream>, Vec<TokenStream>) = idents
        .iter()
        .zip(params)
        .filter(|(_, param)| matches!(param.kind, ExplicitParamKind::Slice { .. }))
        .map(|(id, param)| {
            let pname = &param.name;
            (quote!((#pname, #id.device_id())), quote!(let #id = #id.host_on(#name_str, #pname, __cpu)?;))
        })
        .unzip();
    let sim_params = typed(&idents, params, |kind| match kind {
        ExplicitParamKind::Scalar(t) => scalar_tokens(*t),
        ExplicitParamKind::Slice { elem, mutable } => {
            let t = scalar_tokens(*elem);
            if *mutable { quote!(&mut [#t]) } else { quote!(&[#t]) }
        }
    });
    // Each `&mut` slice is staged: the simulated kernel writes a copy, which goes back
    // into the caller's slice only if the kernel succeeds (as a launch on the GPU does).
    let (mut stage, mut cells, mut finish) = (Vec::new(), Vec::new(), Vec::new());
    for (id, _) in idents
        .iter()
        .zip(params)
        .filter(|(_, param)| matches!(param.kind, ExplicitParamKind::Slice { mutable: true, .. }))
    {
        let staged = quote::format_ident!("__staged_{}", id);
        let name = id.to_string();
        stage.push(quote!(let mut #staged = #p::sim::Staged::new(#id, #name);));
        cells.push(quote!(let #id = #staged.cells();));
        finish.push(quote!(#staged.finish(&__result);));
    }
    let spec_params: Vec<TokenStream> = params
        .iter()
        .map(|param| {
            let pname = &param.name;
            match param.kind {
                ExplicitParamKind::Scalar(_) => quote!((#pname, #p::KernelParam::Scalar)),
                ExplicitParamKind::Slice { .. } => quote!((#pname, #p::KernelParam::Slice)),
            }
        })
        .collect();
    let (ptx, symbol) = match compiled {
        Some(k) => {
            let w = &k.wrapping;
            let ptx = match &k.checked {
                Some(c) if c.ptx != w.ptx => {
                    let (cp, wp) = (&c.ptx, &w.ptx);
                    quote!(if ::core::cfg!(debug_assertions) { #cp } else { #wp })
                }
                _ => {
                    let wp = &w.ptx;
                    quote!(#wp)
                }
            };
            (ptx, w.abi.symbol.clone())
        }
        None => (quote!(""), String::new()),
    };
    let simulated = simulated_fn(func, params, &idents, compiled.is_some());
    let mod_doc = format!(
        "The explicit kernel `{name_str}`: `{name_str}::launch(grid, block, …)` runs it on the GPU, \
         `{name_str}::simulate(grid, block, …)` on the host."
    );
    quote! {
        #[doc = #mod_doc]
        #(#mod_attrs)*
        #[allow(non_snake_case, clippy::too_many_arguments)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            /// The PTX generated for this kernel at build time.
            pub const PTX: &str = #ptx;

            #[doc(hidden)]
            pub static KERNEL: #p::ExplicitKernel =
                #p::ExplicitKernel::new(#p::ExplicitSpec {
                    name: #name_str,
                    symbol: #symbol,
                    ptx: PTX,
                    params: &[#(#spec_params),*],
                });

            /// Runs the kernel on the GPU over `grid` blocks of `block` threads and waits.
            /// A `&mut` host slice is copied in and, when the kernel succeeds, back; device
            /// arrays are used in place. A thread that panics (an index out of bounds, a
            /// division by zero, …) makes it `Err(Error::ThreadFault)`.
            pub fn launch<'__a>(
                grid: impl ::core::convert::Into<::gpu_runtime::gpu::Dim3>,
                block: impl ::core::convert::Into<::gpu_runtime::gpu::Dim3>,
                #(#launch_params),*
            ) -> ::gpu_runtime::Result<()> {
                launch_with(&::gpu_runtime::LaunchConfig::new(grid, block), #(#idents),*)?.wait()
            }

            /// Launches the kernel as `config` says (dynamic shared memory, stream, device)
            /// and returns at once; the arguments stay borrowed until the `Pending` is waited
            /// for.
            pub fn launch_with<'__a>(
                config: &::gpu_runtime::LaunchConfig,
                #(#launch_params),*
            ) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, ()>> {
                #(#typed_bind)*
                // On the CPU device the kernel runs in the simulator, on the host's data.
                if let ::core::option::Option::Some(__cpu) =
                    &#p::explicit_on_cpu(#name_str, config, &[#(#array_devices),*])?
                {
                    #(#host_bind)*
                    return #p::cpu_pending(simulate_with(&config.for_cpu_device(), #(#idents),*));
                }
                KERNEL.launch_async(config, ::std::vec![#(#kargs),*])
            }

            /// Runs the kernel on the host, as the GPU would: blocks one after another, the
            /// threads of a block concurrently (barriers, shared memory and atomics work).
            /// A `&mut` slice is written back only if the kernel succeeds, as on the GPU.
            /// It also reports what a GPU run would not: a data race
            /// (`Error::DataRace`) and threads waiting at different barriers
            /// (`Error::BarrierDivergence`). `simulate_with` and
            /// `LaunchConfig::check_races(false)` turn the race check off.
            pub fn simulate(
                grid: impl ::core::convert::Into<::gpu_runtime::gpu::Dim3>,
                block: impl ::core::convert::Into<::gpu_runtime::gpu::Dim3>,
                #(#sim_params),*
            ) -> ::gpu_runtime::Result<()> {
                simulate_with(&::gpu_runtime::LaunchConfig::new(grid, block), #(#idents),*)
            }

            /// [`simulate`] as `config` says (its dynamic shared memory).
            pub fn simulate_with(config: &::gpu_runtime::LaunchConfig, #(#sim_params),*) -> ::gpu_runtime::Result<()> {
                #(#stage)*
                let __result = {
                    #(#cells)*
                    #p::sim::run(#name_str, config, #max_threads, &|| __simulated(#(#idents),*))
                };
                #(#finish)*
                __result
            }

            #simulated
        }
    }
}

/// `ident: type` for each parameter, its type as `ty` gives it for the parameter's kind.
fn typed(
    idents: &[syn::Ident],
    params: &[ExplicitParam],
    ty: impl Fn(&ExplicitParamKind) -> TokenStream,
) -> Vec<TokenStream> {
    idents
        .iter()
        .zip(params)
        .map(|(id, p)| {
            let t = ty(&p.kind);
            quote!(#id: #t)
        })
        .collect()
}

/// The body as the simulator runs it: `&mut [T]` parameters as `SliceMut`, indexing
/// through the simulator's traits. A body with errors is not repeated (they are reported).
fn simulated_fn(func: &syn::ItemFn, params: &[ExplicitParam], idents: &[syn::Ident], ok: bool) -> TokenStream {
    let p = private();
    let mutable: Vec<bool> = func
        .sig
        .inputs
        .iter()
        .map(|arg| matches!(arg, syn::FnArg::Typed(pt) if matches!(&*pt.pat, syn::Pat::Ident(pi) if pi.mutability.is_some())))
        .collect();
    let mut inputs = typed(idents, params, |kind| match kind {
        ExplicitParamKind::Scalar(t) => scalar_tokens(*t),
        ExplicitParamKind::Slice { elem, mutable: false } => {
            let t = scalar_tokens(*elem);
            quote!(&[#t])
        }
        ExplicitParamKind::Slice { elem, mutable: true } => {
            let t = scalar_tokens(*elem);
            quote!(#p::sim::SliceMut<'_, #t>)
        }
    });
    // A parameter declared `mut` stays assignable in the body.
    for (input, m) in inputs.iter_mut().zip(&mutable) {
        if *m {
            *input = quote!(mut #input);
        }
    }
    let body = if ok {
        let mut block = (*func.block).clone();
        // Numba's xoroshiro calls, written out as the GPU's compile writes them.
        ptx_codegen::frontend::expand_xoroshiro_calls(&mut block);
        let _ = simcopy::rewrite_indexing(&mut block);
        let traits = simcopy::sim_traits();
        // The parameters were renamed where they clash with the wrappers' own.
        let renames: Vec<TokenStream> = func
            .sig
            .inputs
            .iter()
            .zip(idents)
            .filter_map(|(arg, id)| match arg {
                syn::FnArg::Typed(pt) => match &*pt.pat {
                    syn::Pat::Ident(pi) if pi.ident != *id => {
                        let (orig, m) = (&pi.ident, &pi.mutability);
                        Some(quote!(let #m #orig = #id;))
                    }
                    _ => None,
                },
                syn::FnArg::Receiver(_) => None,
            })
            .collect();
        quote!({
            #traits
            #(#renames)*
            #block
        })
    } else {
        quote!({ ::core::unreachable!("this kernel did not compile") })
    };
    quote! {
        #[allow(unused_variables, unused_mut, unused_braces, unused_unsafe, clippy::all)]
        fn __simulated(#(#inputs),*) #body
    }
}
