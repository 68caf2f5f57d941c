//! The N-d API of the generated module: `nd`, `nd_into` and `nd_cpu`, the function
//! broadcast over `ndarray` arrays.

use proc_macro2::TokenStream;
use quote::quote;

use ptx_codegen::Target;

use crate::cpu::HostLoop;
use crate::runtime::private;
use crate::vectorized::Vectorized;

/// `name::nd`, `name::nd_into` and `name::nd_cpu`. They exist when `gpu-runtime`'s
/// `ndarray` feature is on (`__if_ndarray!`).
pub fn api(v: &Vectorized) -> TokenStream {
    let p = private();
    let Vectorized { generics, out, ret_ty, .. } = v;
    let nd_ty = v.signature.ret.arrays(|s| v.slot_tokens(s), quote!(::gpu_runtime::nd::ArrayD));
    let out_ty = v.out_ty(quote!('__o), &quote!(::gpu_runtime::nd::NdOut));
    let arg_list = nd_arg_list(v);
    let (nd_body, into_body) = match v.target {
        Target::Cuda => {
            let (kernel, erased, out_conv) = (&v.kernel, nd_erased(v), nd_out_conv(v));
            let Vectorized { name_str, name_strs, .. } = v;
            let element = element(v);
            // A fault gets Rust's message at its element, from the original on the host.
            let message_at = quote! {
                |__i: u64| #p::nd_message_at(#name_str, &[#(#name_strs),*], &__erased, __i, #element)
            };
            let erased_ref = quote!(__erased);
            let (cpu_nd, cpu_nd_into) =
                (host_nd_of(v, HostLoop::Parallel, &erased_ref), host_nd_into_of(v, HostLoop::Parallel, &erased_ref));
            // Device arrays run where they are; host arrays where the default device is.
            let is_cpu = quote!(#p::nd_on_cpu(#name_str, &[#(#name_strs),*], &__erased)?);
            (
                quote! {
                    let __erased = #erased;
                    if #is_cpu {
                        return #cpu_nd;
                    }
                    // SAFETY: the arguments follow the kernel's inputs in order and type.
                    let __r = unsafe { #kernel.call_nd::<#ret_ty>(&__erased) };
                    #p::with_host_message(__r, #message_at)
                },
                quote! {
                    let __erased = #erased;
                    if #is_cpu {
                        return #cpu_nd_into;
                    }
                    // SAFETY: the arguments follow the kernel's inputs in order and type.
                    let __r = unsafe { #kernel.call_nd_into::<#ret_ty>(&__erased, #out_conv) };
                    #p::with_host_message(__r, #message_at)
                },
            )
        }
        Target::Cpu | Target::Parallel => {
            let how = HostLoop::of(v.target);
            (host_nd(v, how), host_nd_into(v, how))
        }
    };
    let cpu_body = host_nd(v, HostLoop::Sequential);
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

/// The N-d API's argument list: each parameter an `NdArg` of its type.
fn nd_arg_list(v: &Vectorized) -> TokenStream {
    let Vectorized { idents, tys, .. } = v;
    quote! { #(#idents: impl ::gpu_runtime::nd::NdArg<'__a, #tys>),* }
}

/// The arguments as the kernel and the runtime's N-d loop take them.
fn nd_erased(v: &Vectorized) -> TokenStream {
    let idents = &v.idents;
    quote! { [#(::gpu_runtime::nd::NdArg::into_nd(#idents).erase()),*] }
}

fn nd_out_conv(v: &Vectorized) -> TokenStream {
    v.out_conv(&quote!(::gpu_runtime::nd::NdOut), quote!(into_nd_out))
}

/// The function at one broadcast position, for the runtime's N-d loop.
fn element(v: &Vectorized) -> TokenStream {
    let p = private();
    let Vectorized { tys, scalar_call, .. } = v;
    let ks = 0..v.idents.len();
    // SAFETY (in the expansion): argument `k` has the parameter's type `tys[k]`.
    quote! { |__at: &#p::NdAt<'_>| #scalar_call(#(unsafe { __at.get::<#tys>(#ks) }),*) }
}

/// `nd`'s body on the host.
fn host_nd(v: &Vectorized, how: HostLoop) -> TokenStream {
    host_nd_of(v, how, &nd_erased(v))
}

/// `nd`'s body on the host, over the erased arguments `erased`.
fn host_nd_of(v: &Vectorized, how: HostLoop, erased: &TokenStream) -> TokenStream {
    let p = private();
    let Vectorized { name_str, name_strs, ret_ty, .. } = v;
    let (element, order) = (element(v), how.runtime_tokens());
    quote! { #p::host_nd::<#ret_ty>(#name_str, &[#(#name_strs),*], &#erased, #order, #element) }
}

/// `nd_into`'s body on the host.
fn host_nd_into(v: &Vectorized, how: HostLoop) -> TokenStream {
    host_nd_into_of(v, how, &nd_erased(v))
}

/// `nd_into`'s body on the host, over the erased arguments `erased`.
fn host_nd_into_of(v: &Vectorized, how: HostLoop, erased: &TokenStream) -> TokenStream {
    let p = private();
    let Vectorized { name_str, name_strs, ret_ty, .. } = v;
    let (out_conv, element, order) = (nd_out_conv(v), element(v), how.runtime_tokens());
    quote! { #p::host_nd_into::<#ret_ty>(#name_str, &[#(#name_strs),*], &#erased, #out_conv, #order, #element) }
}

/// `name::reduce_axis` and `name::reduce_axes` for a reducible function that is not
/// generic: a fold along an axis, as the generated gufunc `__fold` (`(n)->()`, the
/// function applied left to right along its core) taken `along` that axis. They exist with
/// `gpu-runtime`'s `ndarray` feature, like the rest of the N-d API.
pub fn reduce_axis(v: &Vectorized) -> TokenStream {
    // Not for a function whose errors are reported (its body would be checked again).
    if !v.reducible || v.signature.generic.is_some() || !v.instances.iter().all(|i| i.ok) {
        return TokenStream::new();
    }
    let Vectorized { name_str, ret_ty, identity_expr, .. } = v;
    let mut f = v.func.clone();
    f.attrs.clear();
    f.vis = syn::Visibility::Inherited;
    f.sig.ident = quote::format_ident!("__f");
    let target = match v.target {
        Target::Cuda => "cuda",
        Target::Cpu => "cpu",
        Target::Parallel => "parallel",
    };
    let p = private();
    quote! {
        ::gpu_runtime::__if_ndarray! {
            #[doc(hidden)]
            #[::gpu_runtime::guvectorize("(n)->()", target = #target, __along_only)]
            pub fn __fold(x: &[#ret_ty]) -> #ret_ty {
                #f
                let mut acc = x[0];
                for i in 1..x.len() {
                    acc = __f(acc, x[i]);
                }
                acc
            }

            /// Folds `values` along `axis` with the function (NumPy's `reduce(axis=…)`):
            /// the result has that axis removed. Along an empty axis every result is the
            /// `identity` (`Error::EmptyReduce` without one); an axis past the last is
            /// `Error::BadAxis`. One thread per result on the GPU, each folding its line
            /// left to right; a few long lines (at most 32 results, each of 65 536
            /// elements or more) are each reduced as a whole array, as `reduce` does.
            pub fn reduce_axis<'__a>(
                values: impl ::gpu_runtime::nd::NdArg<'__a, #ret_ty>,
                axis: usize,
            ) -> ::gpu_runtime::Result<::gpu_runtime::nd::ArrayD<#ret_ty>> {
                reduce_axes_with(::gpu_runtime::Where::Default, values, &[axis])
            }

            /// Folds `values` along every axis in `axes` (each once; the result has them
            /// removed), as [`reduce_axis`] does along one.
            pub fn reduce_axes<'__a>(
                values: impl ::gpu_runtime::nd::NdArg<'__a, #ret_ty>,
                axes: &[usize],
            ) -> ::gpu_runtime::Result<::gpu_runtime::nd::ArrayD<#ret_ty>> {
                reduce_axes_with(::gpu_runtime::Where::Default, values, axes)
            }

            /// As [`reduce_axis`], run where `how` says: `Where::On(&device)`,
            /// `Where::Cpu`, `Where::Parallel`, `Where::Simulate` (the fold's kernel in the
            /// simulator).
            pub fn reduce_axis_with<'__a>(
                how: ::gpu_runtime::Where<'_>,
                values: impl ::gpu_runtime::nd::NdArg<'__a, #ret_ty>,
                axis: usize,
            ) -> ::gpu_runtime::Result<::gpu_runtime::nd::ArrayD<#ret_ty>> {
                reduce_axes_with(how, values, &[axis])
            }

            /// As [`reduce_axes`], run where `how` says (see [`reduce_axis_with`]).
            pub fn reduce_axes_with<'__a>(
                how: ::gpu_runtime::Where<'_>,
                values: impl ::gpu_runtime::nd::NdArg<'__a, #ret_ty>,
                axes: &[usize],
            ) -> ::gpu_runtime::Result<::gpu_runtime::nd::ArrayD<#ret_ty>> {
                #p::reduce_axes(#name_str, how, ::gpu_runtime::nd::NdArg::into_nd(values), axes, #identity_expr, |__call, __v| __fold::with(__call, __v), |__d, __line: &[#ret_ty]| #p::folded(__reduce(::gpu_runtime::ArgRef::Host(__line), #p::Fold { device: __d, ..#p::Fold::plain() })))
            }
        }
    }
}
