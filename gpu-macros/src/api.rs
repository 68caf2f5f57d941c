//! The items a vectorized function expands to: the call wrapper `name(…)`, and beside it
//! the module `name` holding the original function and the items of every other generator.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use ptx_codegen::Target;

use crate::runtime::private;
use crate::signature::Slot;
use crate::vectorized::Vectorized;
use crate::{chain, cpu, function, gpu, host, kernel, nd};

pub fn generate(v: &Vectorized) -> TokenStream {
    let p = private();
    let Vectorized {
        func, name, idents, outer_arg_list, host_ty, outer_generics, outer_function_ty, outer_bound, ..
    } = v;
    let vis = &func.vis;

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
    let scalar_fn = scalar_fn(v);
    let mod_doc = format!("The generated API of the vectorized function `{}`.", v.name_str);
    // A generic function is not a device function (its callers are concrete).
    let closure_macro =
        if v.signature.generic.is_none() { chain::closure_macro(&v.closure) } else { TokenStream::new() };
    let kernels = kernel::items(v);
    let (target_api, reduce) = match v.target {
        Target::Cuda => (gpu::api(v), gpu::reduce(v)),
        Target::Cpu | Target::Parallel => (cpu::into(v), cpu::reduce(v)),
    };
    let nd = nd::api(v);
    let reduce_axis = nd::reduce_axis(v);
    let param_trait = param_trait(v);
    let columnar = columnar(v);
    let host_api = cpu::api(v);
    let function = function::items(v);

    let wrapper_body = match v.target {
        Target::Cuda => quote!(#p::call::<#outer_function_ty>(#outer_bound)),
        Target::Cpu => quote!(#name::cpu(#(#idents),*)),
        Target::Parallel => quote!(#name::parallel(#(#idents),*)),
    };

    quote! {
        #(#wrapper_attrs)*
        #[allow(clippy::too_many_arguments)]
        #vis fn #name<'__a, #outer_generics>(#outer_arg_list) -> ::gpu_runtime::Result<#host_ty> {
            #wrapper_body
        }

        #(#mod_attrs)*
        #[doc = #mod_doc]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            #closure_macro

            #param_trait

            #columnar

            /// The original scalar function, compiled for the host.
            #(#scalar_attrs)*
            #scalar_fn

            #kernels

            #function

            #target_api

            #reduce

            #nd

            #reduce_axis

            #host_api
        }
    }
}

/// `Param`: what each parameter takes, any `gpu_runtime::Arg` of its type, and `Output`:
/// what `into` writes into, any `gpu_runtime::Out`. The API takes its arguments and
/// outputs through these traits of the function's own so that a wrong one gets one error,
/// at the argument, naming the function and the type it takes (the runtime's traits would
/// list their implementations and point into the runtime's source).
fn param_trait(v: &Vectorized) -> TokenStream {
    let name = &v.name_str;
    let message = format!("`{name}` takes `{{T}}` here, not `{{Self}}`");
    let label = "expected `{T}`, or a slice, `Vec`, array or device array of `{T}`";
    let float = v.signature.params.iter().any(|p| match p {
        Slot::Concrete(t) => t.is_float(),
        Slot::Generic => true,
    });
    let note = float.then(|| quote!(note = "a literal for a float parameter needs a decimal point: `2.0`, not `2`"));
    let doc = format!(
        "What a parameter of type `T` of `{name}` takes: any [`gpu_runtime::Arg`] of `T` (a `T`, broadcast, or a \
         slice, `Vec`, array or device array of `T`)."
    );
    let out_message = format!("`{name}` writes results of type `{{T}}`, which `{{Self}}` cannot hold");
    let out_label =
        "expected `&mut [{T}]`, `&mut Vec<{T}>`, `&mut [{T}; N]`, `&mut DeviceVec<{T}>` or a `DeviceSliceMut<{T}>`";
    let out_doc = format!("Where `{name}::into` writes results of type `T`: any [`gpu_runtime::Out`] of `T`.");
    quote! {
        #[doc = #doc]
        #[diagnostic::on_unimplemented(message = #message, label = #label, #note)]
        pub trait Param<'a, T: ::gpu_runtime::GpuType> {
            #[doc(hidden)]
            fn into_arg(self) -> ::gpu_runtime::ArgRef<'a, T>;
        }

        // Not recommended: a wrong argument is reported as not a `Param`, with the
        // message above, rather than as not an `Arg`.
        #[diagnostic::do_not_recommend]
        impl<'a, T: ::gpu_runtime::GpuType, A: ::gpu_runtime::Arg<'a, T>> Param<'a, T> for A {
            #[inline]
            fn into_arg(self) -> ::gpu_runtime::ArgRef<'a, T> {
                ::gpu_runtime::Arg::into_arg(self)
            }
        }

        #[doc = #out_doc]
        #[diagnostic::on_unimplemented(message = #out_message, label = #out_label)]
        pub trait Output<'a, T: ::gpu_runtime::GpuType> {
            #[doc(hidden)]
            fn into_out(self) -> ::gpu_runtime::OutRef<'a, T>;
        }

        #[diagnostic::do_not_recommend]
        impl<'a, T: ::gpu_runtime::GpuType, O: ::gpu_runtime::Out<'a, T>> Output<'a, T> for O {
            #[inline]
            fn into_out(self) -> ::gpu_runtime::OutRef<'a, T> {
                ::gpu_runtime::Out::into_out(self)
            }
        }
    }
}

/// The original function as `name::scalar`, with its body only where it compiled.
fn scalar_fn(v: &Vectorized) -> syn::ItemFn {
    let mut scalar_fn = v.func.clone();
    scalar_fn.attrs.clear();
    if !v.instances.iter().all(|i| i.ok) {
        // The body did not compile for the GPU and its errors are reported: rustc need not
        // report the same problems again in the host copy.
        *scalar_fn.block = syn::parse_quote!({ ::core::unreachable!("this vectorized function did not compile") });
        scalar_fn.attrs.push(syn::parse_quote!(#[allow(unused_variables, unused_mut)]));
    } else {
        host::special_math_hint(&mut scalar_fn.block);
    }
    scalar_fn.vis = syn::parse_quote!(pub);
    scalar_fn.sig.ident = format_ident!("scalar", span = v.name.span());
    scalar_fn
}

/// `COLUMNAR`, the function over run-time typed columns (`gpu_runtime::columnar`), for a
/// GPU-target function whose parameters and results are all column types in every
/// instance; nothing otherwise. A constant: nothing is compiled where it is not used.
fn columnar(v: &Vectorized) -> TokenStream {
    use ptx_codegen::ScalarType as S;
    let column_type = |t: S| {
        matches!(
            t,
            S::Bool | S::I8 | S::I16 | S::I32 | S::I64 | S::U8 | S::U16 | S::U32 | S::U64 | S::F16 | S::F32 | S::F64
        )
    };
    let slots = || v.signature.params.iter().chain(&v.signature.ret.slots);
    let instance_ok = |ty: Option<S>| {
        slots().all(|s| match s {
            Slot::Concrete(t) => column_type(*t),
            Slot::Generic => ty.is_some_and(column_type),
        })
    };
    if v.target != Target::Cuda || v.instances.is_empty() || !v.instances.iter().all(|i| instance_ok(i.ty)) {
        return TokenStream::new();
    }
    // Each instance: its `__Function` type, and its result type where it is a reduction
    // (whose `reduce_on` the constant calls).
    let instances: Vec<(TokenStream, TokenStream)> = match v.signature.generic {
        None => vec![(quote!(__Function), v.ret_ty.clone())],
        Some(_) => v
            .instances
            .iter()
            .filter_map(|i| i.ty)
            .map(|t| {
                let t = crate::signature::scalar_tokens(t);
                (quote!(__Function<#t>), quote!(#t))
            })
            .collect(),
    };
    let name = &v.name_str;
    let functions: Vec<TokenStream> = instances
        .iter()
        .map(|(f, t)| {
            if v.reducible {
                let call = if v.signature.generic.is_some() { quote!(reduce_on::<#t>) } else { quote!(reduce_on) };
                quote!(::gpu_runtime::columnar::Columns::<#f>::reducing(|__d, __v| {
                    ::gpu_runtime::columnar::reduce_with::<#t>(__d, __v, #name, |__d, __x| #call(__d, __x))
                }))
            } else {
                quote!(::gpu_runtime::columnar::Columns::<#f>::NEW)
            }
        })
        .collect();
    let doc = format!(
        "`{}` over columns whose types are known at run time (`gpu_runtime::columnar`): what a query engine calls.",
        v.name_str
    );
    quote! {
        #[doc = #doc]
        pub const COLUMNAR: ::gpu_runtime::columnar::Columnar = ::gpu_runtime::columnar::Columnar::new(&[
            #(&#functions,)*
        ]);
    }
}
