//! `__Function`: the type by which the runtime's generic calls reach one vectorized
//! function (`gpu_runtime::__private::VectorFn`, and `GpuFn` for the GPU target). What
//! depends on the function's types is generated here, once; the API's bodies are each one
//! call of the runtime (`gpu::api`, `cpu::api`), so rustc checks and borrow-checks little
//! per function.

use proc_macro2::TokenStream;
use quote::quote;

use ptx_codegen::Target;

use crate::runtime::private;
use crate::vectorized::Vectorized;

/// The type, its `VectorFn` impl and, for the GPU target, its `GpuFn` impl.
pub fn items(v: &Vectorized) -> TokenStream {
    let Vectorized { idents, tys, ret_ty, name_str, name_strs, function_ty, .. } = v;
    let p = private();
    let count = idents.len();
    // Visible where the function is (`pub(super)`, not `pub`): its `VectorFn` impl names
    // the parameter types, and a private user struct may not appear in the associated
    // types of a type more visible than itself.
    let (def, impl_generics) = match v.signature.generic {
        None => (
            quote!(
                pub(super) struct __Function;
            ),
            TokenStream::new(),
        ),
        Some(g) => (quote!(pub(super) struct __Function<#g>(::core::marker::PhantomData<#g>);), quote!(<#g: Element>)),
    };
    let fill = fill(v);
    let indices = 0..count;
    let kernel = if v.target == Target::Cuda {
        let kernel = &v.kernel;
        quote! {
            // SAFETY: the kernel was compiled from this function: its inputs are the
            // parameters, in order, and its results `Ret`.
            unsafe impl #impl_generics #p::GpuFn for #function_ty {
                #[inline]
                fn kernel() -> &'static #p::Kernel {
                    &#kernel
                }

                #[inline]
                fn erase<'__a>(__args: Self::Args<'__a>) -> [#p::ErasedArg<'__a>; #count] {
                    let (#(#idents,)*) = __args;
                    [#(#idents.erase()),*]
                }

                #[inline]
                #[allow(unused_unsafe)] // a function without parameters reads no view
                unsafe fn host_of<'__a>(__views: &[#p::HostView<'__a>]) -> Self::Host<'__a> {
                    // SAFETY: the caller's promise: views of `erase`'s arguments, which are
                    // the parameters in order.
                    unsafe { (#(__views[#indices].arg::<#tys>(),)*) }
                }
            }
        }
    } else {
        TokenStream::new()
    };
    quote! {
        #[doc(hidden)]
        #def

        // SAFETY: `fill` writes every element of `__out` (one loop over all of it).
        unsafe impl #impl_generics #p::VectorFn for #function_ty {
            const NAME: &'static str = #name_str;
            const PARAMS: &'static [&'static str] = &[#(#name_strs),*];
            type Ret = #ret_ty;
            type Args<'__a> = (#(::gpu_runtime::ArgRef<'__a, #tys>,)*);
            type Host<'__a> = (#(::gpu_runtime::HostArg<'__a, #tys>,)*);
            type Each<__X> = [__X; #count];

            fn host<'__a>(
                __args: Self::Args<'__a>,
                __on: ::core::option::Option<&::gpu_runtime::Device>,
            ) -> ::gpu_runtime::Result<Self::Host<'__a>> {
                let (#(#idents,)*) = __args;
                ::core::result::Result::Ok((#(#p::host_arg(#idents, #name_str, #name_strs, __on)?,)*))
            }

            fn lens(__h: &Self::Host<'_>) -> [::core::option::Option<usize>; #count] {
                let (#(#idents,)*) = __h;
                [#(#idents.len()),*]
            }

            #fill

        }

        #kernel
    }
}

/// `fill`: the function's loop over a range of elements. Where every argument is a slice
/// (the common case) the slices are zipped, which rustc can vectorise; otherwise each is
/// read by index (a broadcast scalar has the same value everywhere).
fn fill(v: &Vectorized) -> TokenStream {
    let Vectorized { idents, ret_ty, scalar_call, .. } = v;
    let by_index = quote! {
        for (__o, __i) in __out.iter_mut().zip(__r) {
            __o.write(#scalar_call(#(#idents.get(__i)),*));
        }
    };
    let body = match idents.split_first() {
        None => quote! {
            let () = __h;
            #by_index
        },
        Some((first, rest)) => {
            let mut zipped = quote!(#first[__r.clone()].iter());
            let mut pattern = quote!(&#first);
            for id in rest {
                zipped = quote!(#zipped.zip(#id[__r.clone()].iter()));
                pattern = quote!((#pattern, &#id));
            }
            quote! {
                match __h {
                    (#(::gpu_runtime::HostArg::Slice(#idents),)*) => {
                        for (__o, #pattern) in __out.iter_mut().zip(#zipped) {
                            __o.write(#scalar_call(#(#idents),*));
                        }
                    }
                    (#(#idents,)*) => {
                        #by_index
                    }
                }
            }
        }
    };
    quote! {
        fn fill(__h: &Self::Host<'_>, __start: usize, __out: &mut [::core::mem::MaybeUninit<#ret_ty>]) {
            let __r = __start..__start + __out.len();
            #body
        }
    }
}
