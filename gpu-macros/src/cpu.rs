//! The CPU API of the generated module: `cpu` and `parallel` (for every target), and the
//! CPU targets' `into` and `reduce`.

use proc_macro2::TokenStream;
use quote::quote;

use ptx_codegen::Target;

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
        match self {
            HostLoop::Sequential => quote!(::gpu_runtime::__private::HostLoop::Sequential),
            HostLoop::Parallel => quote!(::gpu_runtime::__private::HostLoop::Parallel),
        }
    }
}

/// `cpu` and `parallel`: the computation on the host, whatever the target.
pub fn api(v: &Vectorized) -> TokenStream {
    let Vectorized { name_str, name_strs, idents, generics, arg_list, ret_ty, host_ty, scalar_call, .. } = v;
    let cpu_loop = host_loop(v, HostLoop::Sequential);
    let parallel_loop = host_loop(v, HostLoop::Parallel);
    // Where the function panics, the first element that does is the `Err` a GPU call gives.
    let at = quote! { |__i| #scalar_call(#(#idents.get(__i)),*) };
    quote! {
        /// Runs the same computation on the CPU, element by element (device arrays are
        /// copied to the host first).
        pub fn cpu<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#host_ty> {
            #(let #idents = Param::into_arg(#idents).to_host()?;)*
            let __n = ::gpu_runtime::__private::broadcast_len(#name_str, &[#(#name_strs),*], &[#(#idents.len()),*])?;
            let __values: ::std::vec::Vec<#ret_ty> = ::gpu_runtime::__private::host_results(#name_str, __n, || #cpu_loop, #at)?;
            ::core::result::Result::Ok(<#ret_ty as ::gpu_runtime::Results>::unzip(__values))
        }

        /// Runs the same computation on the CPU, split over threads with rayon.
        pub fn parallel<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#host_ty> {
            use ::gpu_runtime::__private::rayon::prelude::*;
            #(let #idents = Param::into_arg(#idents).to_host()?;)*
            let __n = ::gpu_runtime::__private::broadcast_len(#name_str, &[#(#name_strs),*], &[#(#idents.len()),*])?;
            let __values: ::std::vec::Vec<#ret_ty> = ::gpu_runtime::__private::host_results(#name_str, __n, || #parallel_loop, #at)?;
            ::core::result::Result::Ok(<#ret_ty as ::gpu_runtime::Results>::unzip(__values))
        }
    }
}

/// `into` for the CPU targets, which loops as the target does.
pub fn into(v: &Vectorized) -> TokenStream {
    let Vectorized { name_str, name_strs, idents, generics, arg_list, ret_ty, scalar_call, out, .. } = v;
    let out_trait = quote!(Output);
    let (out_ty, out_conv) = (v.out_ty(quote!('__o), &out_trait), v.out_conv(&out_trait, quote!(into_out)));
    let order = HostLoop::of(v.target).runtime_tokens();
    quote! {
        /// Runs the function (on this function's CPU target) and writes the results into
        /// `out`, whose length must be the call's.
        pub fn into<'__a, '__o, #generics>(#out: #out_ty, #arg_list) -> ::gpu_runtime::Result<()> {
            #(let #idents = Param::into_arg(#idents).to_host()?;)*
            ::gpu_runtime::__private::cpu_into::<#ret_ty>(
                #name_str,
                &[#(#name_strs),*],
                &[#(#idents.len()),*],
                #out_conv,
                #order,
                |__i| #scalar_call(#(#idents.get(__i)),*),
            )
        }
    }
}

/// `reduce` for the CPU targets, for a reducible function (nothing otherwise).
pub fn reduce(v: &Vectorized) -> TokenStream {
    if !v.reducible {
        return TokenStream::new();
    }
    let Vectorized { name_str, generics, ret_ty, scalar_call, identity_expr, .. } = v;
    let order = HostLoop::of(v.target).runtime_tokens();
    quote! {
        /// Folds the elements of `values` with the function (on the CPU: this function's
        /// target). An empty array gives the `identity`, or `Error::EmptyReduce` without
        /// one; where the function panics, the first step that does is the error.
        pub fn reduce<'__a, #generics>(values: impl Param<'__a, #ret_ty>) -> ::gpu_runtime::Result<#ret_ty> {
            let __values = Param::into_arg(values).to_host()?;
            ::gpu_runtime::__private::host_reduce(#name_str, __values, #identity_expr, #order, |a, b| #scalar_call(a, b))
        }
    }
}

/// The loop over `__n` elements. When every argument is a slice (the common case) the
/// slices are zipped, which rustc can vectorise; otherwise each argument is read by index
/// (a broadcast scalar has the same value everywhere).
fn host_loop(v: &Vectorized, how: HostLoop) -> TokenStream {
    let Vectorized { idents, scalar_call, .. } = v;
    let (range, iter) = match how {
        HostLoop::Parallel => (quote!((0..__n).into_par_iter()), quote!(par_iter)),
        HostLoop::Sequential => (quote!((0..__n)), quote!(iter)),
    };
    // A parallel loop's jobs are quiet: a panic is caught and reported as a fault.
    let quiet = match how {
        HostLoop::Parallel => quote!(.map_init(::gpu_runtime::__private::Quiet::new, |_, __x| __x)),
        HostLoop::Sequential => TokenStream::new(),
    };
    let by_index = quote! { #range #quiet.map(|__i| #scalar_call(#(#idents.get(__i)),*)).collect() };
    let Some((first, rest)) = idents.split_first() else { return by_index };
    let mut zipped = quote!(#first.#iter());
    let mut pattern = quote!(&#first);
    for id in rest {
        zipped = quote!(#zipped.zip(#id.#iter()));
        pattern = quote!((#pattern, &#id));
    }
    quote! {
        match (#(&#idents,)*) {
            (#(::gpu_runtime::HostArg::Slice(#idents),)*) => #zipped #quiet.map(|#pattern| #scalar_call(#(#idents),*)).collect(),
            _ => #by_index,
        }
    }
}
