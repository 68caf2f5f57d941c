//! The items a vectorized function expands to: the call wrapper `name(…)`, and beside it
//! the module `name` holding the original function and the items of every other generator.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use ptx_codegen::Target;

use crate::vectorized::Vectorized;
use crate::{chain, cpu, gpu, kernel, nd};

pub fn generate(v: &Vectorized) -> TokenStream {
    let Vectorized { func, name, idents, arg_list, host_ty, ret_ty, outer_kernel, outer_generics, .. } = v;
    let Vectorized { bind_args, erased_bound, outer_message_at, .. } = v;
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
    let host_api = cpu::api(v);

    let wrapper_body = match v.target {
        Target::Cuda => quote! {
            #bind_args
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __r = unsafe { #outer_kernel.call_host::<#ret_ty>(::core::option::Option::None, &#erased_bound) };
            ::gpu_runtime::__private::with_host_message(__r, #outer_message_at)
        },
        Target::Cpu => quote!(#name::cpu(#(#idents),*)),
        Target::Parallel => quote!(#name::parallel(#(#idents),*)),
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

            #target_api

            #reduce

            #nd

            #host_api
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
    }
    scalar_fn.vis = syn::parse_quote!(pub);
    scalar_fn.sig.ident = format_ident!("scalar", span = v.name.span());
    scalar_fn
}
