//! The CPU API of the generated module: `cpu` and `parallel` (for every target), and the
//! CPU targets' `into` and `reduce`.

use proc_macro2::TokenStream;
use quote::quote;

use ptx_codegen::Target;

use crate::runtime::private;
use crate::vectorized::Vectorized;

/// How a loop over the elements runs on the host.
#[derive(Clone, Copy, PartialEq)]
pub enum HostLoop {
    /// On the calling thread.
    Sequential,
    /// Split over threads with rayon.
    Parallel,
}

impl HostLoop {
    /// The loop of a function's target (a GPU function's host calls run sequentially).
    pub fn of(target: Target) -> HostLoop {
        if target == Target::Parallel { HostLoop::Parallel } else { HostLoop::Sequential }
    }

    /// The runtime's name for the same choice (`gpu_runtime::__private::HostLoop`).
    pub fn runtime_tokens(self) -> TokenStream {
        let p = private();
        match self {
            HostLoop::Sequential => quote!(#p::HostLoop::Sequential),
            HostLoop::Parallel => quote!(#p::HostLoop::Parallel),
        }
    }
}

/// `cpu` and `parallel`: the computation on the host, whatever the target.
pub fn api(v: &Vectorized) -> TokenStream {
    let p = private();
    let Vectorized { generics, arg_list, host_ty, function_ty: f, bound, .. } = v;
    let (sequential, parallel) = (HostLoop::Sequential.runtime_tokens(), HostLoop::Parallel.runtime_tokens());
    quote! {
        /// Runs the same computation on the CPU, element by element (device arrays are
        /// copied to the host first).
        pub fn cpu<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#host_ty> {
            #p::host::<#f>(#sequential, #bound)
        }

        /// Runs the same computation on the CPU, split over threads with rayon.
        pub fn parallel<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#host_ty> {
            #p::host::<#f>(#parallel, #bound)
        }
    }
}

/// `into` for the CPU targets, which loops as the target does.
pub fn into(v: &Vectorized) -> TokenStream {
    let p = private();
    let Vectorized { generics, arg_list, out, function_ty: f, bound, .. } = v;
    let out_trait = quote!(Output);
    let (out_ty, out_conv) = (v.out_ty(quote!('__o), &out_trait), v.out_conv(&out_trait, quote!(into_out)));
    let order = HostLoop::of(v.target).runtime_tokens();
    quote! {
        /// Runs the function (on this function's CPU target) and writes the results into
        /// `out`, whose length must be the call's.
        pub fn into<'__a, '__o, #generics>(#out: #out_ty, #arg_list) -> ::gpu_runtime::Result<()> {
            #p::host_into::<#f>(#order, #out_conv, #bound)
        }
    }
}

/// `reduce` and its forms for the CPU targets, for a reducible function (nothing
/// otherwise).
pub fn reduce(v: &Vectorized) -> TokenStream {
    let p = private();
    if !v.reducible {
        return TokenStream::new();
    }
    let Vectorized { name_str, generics, ret_ty, scalar_call, identity_expr, .. } = v;
    let order = HostLoop::of(v.target).runtime_tokens();
    let common = crate::gpu::reduce_forms(v);
    quote! {
        #[doc(hidden)]
        pub fn __reduce<'__a, #generics>(__values: ::gpu_runtime::ArgRef<'__a, #ret_ty>, __fold: #p::Fold<'_, '_, #ret_ty>) -> ::gpu_runtime::Result<::core::option::Option<#ret_ty>> {
            let __values = __values.to_host()?;
            #p::host_fold_into(#name_str, __values, __fold.init, __fold.res, #identity_expr, #order, |a, b| #scalar_call(a, b))
        }

        #common
    }
}
