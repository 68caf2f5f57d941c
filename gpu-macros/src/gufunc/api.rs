//! What `#[guvectorize]` writes into the user's crate: the wrapper function, and a module
//! with the layout, the original function (`scalar`), the kernel, the type `__Gufunc`
//! implementing the runtime's `GuFn` (what depends on the function's types) and the calls,
//! each one line into the runtime's generic `gu`/`gu_device`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::kernel::gpu_items;
use super::layout::Kind;
use super::{Gufunc, Surface, is_reduction};
use crate::runtime::private;

pub(super) fn generate(g: &Gufunc<'_>, target: ptx_codegen::Target, surface: Surface) -> TokenStream {
    let p = private();
    let Gufunc { func, layout, inputs, outputs, rets, .. } = g;
    let vis = &func.vis;
    let name = &func.sig.ident;
    let name_str = name.to_string();
    let text = &layout.text;
    let in_idents: Vec<&syn::Ident> = inputs.iter().map(|p| &p.ident).collect();
    let in_elems: Vec<&syn::Type> = inputs.iter().map(|p| &p.elem).collect();

    // The layout, with the outputs' names (a returned output is `out`, or `result` where a
    // parameter is `out`; several are `out.0`, `out.1`, …).
    let ret_name = if inputs.iter().chain(outputs).any(|p| p.ident == "out") { "result" } else { "out" };
    let strs = |v: &[String]| quote!(&[#(#v),*]);
    let layout_inputs = inputs.iter().zip(&layout.inputs).map(|(p, d)| {
        let (n, d) = (p.ident.to_string(), strs(d));
        quote!((#n, #d))
    });
    let ret_names: Vec<String> = match rets.len() {
        1 => vec![ret_name.to_string()],
        n => (0..n).map(|k| format!("{ret_name}.{k}")).collect(),
    };
    let out_names: Vec<String> = outputs.iter().map(|p| p.ident.to_string()).chain(ret_names).collect();
    let layout_outputs = out_names.iter().zip(&layout.outputs).map(|(n, d)| {
        let d = strs(d);
        quote!((#n, #d))
    });

    let out_elems = g.out_elems();
    let arrays: Vec<TokenStream> = out_elems.iter().map(|t| quote!(::gpu_runtime::nd::ArrayD<#t>)).collect();
    let out_ty = if arrays.len() == 1 { arrays[0].clone() } else { quote!((#(#arrays),*)) };
    let dev_arrays: Vec<TokenStream> = out_elems.iter().map(|t| quote!(::gpu_runtime::DeviceArray<#t>)).collect();
    let dev_out_ty = if dev_arrays.len() == 1 { dev_arrays[0].clone() } else { quote!((#(#dev_arrays),*)) };
    let arg_list = quote! { #(#in_idents: impl ::gpu_runtime::nd::GuArg<'__a, #in_elems>),* };
    // The arguments as the runtime takes them: one `GuRef` each, in a tuple.
    let args = quote! { (#(::gpu_runtime::nd::GuArg::into_gu(#in_idents),)*) };
    // The call of `gu`/`gu_device` with these tokens for its `Call`.
    let gu = |call: TokenStream| quote!(#p::gu::<__Gufunc>(#call, #args));
    let call_of = |how: TokenStream| quote!(::gpu_runtime::Call::from(::gpu_runtime::Where::#how));
    let default_call = call_of(quote!(Default));

    let scalar_fn = {
        let mut f = (*func).clone();
        f.sig.ident = format_ident!("scalar", span = name.span());
        f.vis = syn::parse_quote!(pub);
        f.attrs.retain(|a| !a.path().is_ident("doc"));
        // The same body is the GPU's, whose language indexes and has no iterators.
        f.attrs.push(syn::parse_quote!(#[allow(clippy::needless_range_loop)]));
        f
    };
    let docs: Vec<&syn::Attribute> = func.attrs.iter().filter(|a| a.path().is_ident("doc")).collect();
    let (kernel_items, kernel_methods) = match target {
        ptx_codegen::Target::Cuda => gpu_items(g),
        _ => (TokenStream::new(), TokenStream::new()),
    };
    let default_where = match target {
        ptx_codegen::Target::Cuda => TokenStream::new(),
        ptx_codegen::Target::Cpu => quote!(
            const DEFAULT: ::gpu_runtime::Where<'static> = ::gpu_runtime::Where::Cpu;
        ),
        ptx_codegen::Target::Parallel => {
            quote!(
                const DEFAULT: ::gpu_runtime::Where<'static> = ::gpu_runtime::Where::Parallel;
            )
        }
    };
    let gufunc_impl = gufunc_impl(g, default_where, kernel_methods);

    let with = quote! {
        /// As the plain call, run as `call` says: where (`Where::On(&device)`,
        /// `Where::Cpu`, `Where::Parallel`, `Where::Simulate`), with the sizes of output
        /// core dimensions no input fixes (`.sized(&[("m", 4)])`), along an axis
        /// (`.along(axis)`, for a reduction's layout): `f::with(Where::Cpu.along(1), a, b)`.
        pub fn with<'__a, '__c>(call: impl ::core::convert::Into<::gpu_runtime::Call<'__c>>, #arg_list) -> ::gpu_runtime::Result<#out_ty> {
            #p::gu::<__Gufunc>(::core::convert::Into::into(call), #args)
        }
    };
    let into = {
        let arg = |t: &syn::Type| quote!(impl ::gpu_runtime::nd::GuOutArg<'__o, #t>);
        let conv = |e: TokenStream| quote!(::gpu_runtime::nd::GuOutArg::into_gu_out(#e));
        let (param, refs) = match out_elems.as_slice() {
            [t] => {
                let (a, c) = (arg(t), conv(quote!(out)));
                (quote!(out: #a), quote!((#c,)))
            }
            ts => {
                let outs = ts.iter().map(|t| arg(t));
                let convs = (0..ts.len()).map(|k| {
                    let k = syn::Index::from(k);
                    conv(quote!(outs.#k))
                });
                (quote!(outs: (#(#outs),*)), quote!((#(#convs,)*)))
            }
        };
        quote! {
            /// As the plain call, with the results written into `out` (Numba's `out=`; a
            /// tuple for several outputs): `ndarray` arrays or views of any strides, or
            /// device arrays, shaped as the results (the loop shape, then the core; a core
            /// dimension no input fixes takes its size from the output). Allocates no
            /// result arrays; host outputs are written only if the call succeeds, device
            /// arrays in place on their GPU.
            pub fn into<'__a, '__o>(#param, #arg_list) -> ::gpu_runtime::Result<()> {
                #p::gu_into::<__Gufunc>(#default_call, #refs, #args)
            }
        }
    };
    let launch = (target == ptx_codegen::Target::Cuda).then(|| {
        quote! {
            /// Queues the call on `stream` (a GPU's; the CPU device's runs it at once)
            /// and returns at once; `wait()` on the handle gives the results, in host
            /// memory. The arguments stay borrowed until then.
            pub fn launch<'__a>(stream: &'__a ::gpu_runtime::Stream, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, #out_ty>> {
                #p::gu_launch::<__Gufunc>(stream, #args)
            }
        }
    });
    let along = is_reduction(layout).then(|| {
        let call = gu(quote!(::gpu_runtime::Where::Default.along(axis)));
        quote! {
            /// As the plain call, with the core of every input with one core dimension
            /// taken along `axis` (NumPy's `axis=`) instead of the last: the results have
            /// that axis removed. An axis past an input's last is `Error::BadAxis`.
            pub fn along<'__a>(axis: usize, #arg_list) -> ::gpu_runtime::Result<#out_ty> {
                #call
            }
        }
    });
    let simulate = (target == ptx_codegen::Target::Cuda).then(|| {
        let call = gu(call_of(quote!(Simulate)));
        quote! {
            /// Runs the generated kernel in the simulator, on the host (as the GPU would
            /// run it: the same windows and bounds checks).
            pub fn simulate<'__a>(#arg_list) -> ::gpu_runtime::Result<#out_ty> {
                #call
            }
        }
    });
    let wrapper = quote! {
        #(#docs)*
        #[allow(clippy::too_many_arguments)]
        #vis fn #name<'__a>(#arg_list) -> ::gpu_runtime::Result<#out_ty> {
            #p::gu::<#name::__Gufunc>(#default_call, #args)
        }
    };
    let (on, sized, cpu, parallel) = (
        gu(quote!(::gpu_runtime::Where::On(device).into())),
        gu(quote!(::gpu_runtime::Where::Default.sized(sizes))),
        gu(call_of(quote!(Cpu))),
        gu(call_of(quote!(Parallel))),
    );
    let api = quote! {
        /// Runs the function on `device` (a GPU, or `Device::cpu()`).
        pub fn on<'__a>(device: &::gpu_runtime::Device, #arg_list) -> ::gpu_runtime::Result<#out_ty> {
            #on
        }

        /// As the plain call, with the sizes of output core dimensions that no input
        /// fixes: `&[("m", 4)]`.
        pub fn sized<'__a>(sizes: &[(&str, usize)], #arg_list) -> ::gpu_runtime::Result<#out_ty> {
            #sized
        }

        /// Runs the function on the CPU, one loop index after another.
        pub fn cpu<'__a>(#arg_list) -> ::gpu_runtime::Result<#out_ty> {
            #cpu
        }

        /// Runs the function on the CPU, the loop indices split over threads with rayon.
        pub fn parallel<'__a>(#arg_list) -> ::gpu_runtime::Result<#out_ty> {
            #parallel
        }

        /// As the plain call, with the results left where they were computed, as
        /// `DeviceArray`s: on the GPU that ran the call, or in the CPU device's memory
        /// for a call on the host. A chain of calls over device arrays keeps its data
        /// on the device.
        pub fn device<'__a>(#arg_list) -> ::gpu_runtime::Result<#dev_out_ty> {
            #p::gu_device::<__Gufunc>(#default_call, #args)
        }

        #with

        #into

        #launch

        #simulate

        #along
    };
    let (wrapper, api) = match surface {
        Surface::Full => (wrapper, api),
        Surface::AlongOnly => (TokenStream::new(), with),
    };
    let mod_doc = format!("The generated API of the generalized function `{name_str}` (layout `{text}`).");
    quote! {
        #wrapper

        #[doc = #mod_doc]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            /// The layout, as written.
            pub const LAYOUT: &str = #text;

            #[doc(hidden)]
            pub static __LAYOUT: #p::GuLayout = #p::GuLayout {
                function: #name_str,
                text: #text,
                inputs: &[#(#layout_inputs),*],
                outputs: &[#(#layout_outputs),*],
            };

            /// The original function, on the host: one loop index.
            #scalar_fn

            #kernel_items

            #gufunc_impl

            #api
        }
    }
}

/// `__Gufunc` and its `GuFn` impl: the types of the inputs and the outputs, the function
/// at one loop index on the host (each output in a buffer of its own), the gathering of
/// those buffers, and `kernel_methods` (the kernel's launch, for the GPU target).
fn gufunc_impl(g: &Gufunc<'_>, default_where: TokenStream, kernel_methods: TokenStream) -> TokenStream {
    let p = private();
    let Gufunc { layout, inputs, outputs, params, rets, .. } = g;
    let in_idents: Vec<&syn::Ident> = inputs.iter().map(|p| &p.ident).collect();
    let in_elems: Vec<&syn::Type> = inputs.iter().map(|p| &p.elem).collect();
    let out_elems = g.out_elems();
    let size = |d: &String| quote!(__plan.size(#d));
    // The function's arguments at loop index `__t`: each input's core, each output's buffer.
    let host_args: Vec<TokenStream> = params
        .iter()
        .map(|p| {
            let id = &p.ident;
            let k_out = outputs.iter().position(|o| o.ident == p.ident);
            let dims = match k_out {
                Some(k) => &layout.outputs[k],
                None => &layout.inputs[inputs.iter().position(|i| i.ident == p.ident).unwrap_or(0)],
            };
            let buf = format_ident!("__o{}", k_out.unwrap_or(0));
            match (p.kind, p.written) {
                (Kind::Scalar, _) => quote!(#id.value(__t)),
                (Kind::Slice, false) => quote!(#id.at(__t)),
                (Kind::Slice, true) => quote!(&mut #buf),
                (Kind::Mat, false) => {
                    let (r, c) = (size(&dims[0]), size(&dims[1]));
                    quote!(::gpu_runtime::Mat::new(#id.at(__t), #r, #c))
                }
                (Kind::Mat, true) => {
                    let (r, c) = (size(&dims[0]), size(&dims[1]));
                    quote!(::gpu_runtime::MatMut::new(&mut #buf, #r, #c))
                }
            }
        })
        .collect();
    let bufs: Vec<syn::Ident> = (0..outputs.len()).map(|k| format_ident!("__o{}", k)).collect();
    let buf_elems: Vec<&syn::Type> = outputs.iter().map(|p| &p.elem).collect();
    let buf_lens: Vec<TokenStream> = (0..outputs.len())
        .map(|k| {
            let d = &layout.outputs[k];
            quote!(__plan.core(&[#(#d),*]).iter().product::<usize>())
        })
        .collect();
    let ret_ty = match rets {
        [r] => quote!(#r),
        rs => quote!((#(#rs),*)),
    };
    // The outputs from every loop index's value: the buffers in loop order, then the returns.
    let gather: Vec<TokenStream> = (0..outputs.len())
        .map(|k| {
            let i = syn::Index::from(k + 1);
            quote!(__values.iter().flat_map(|v| v.#i.iter().copied()).collect())
        })
        .chain(match rets.len() {
            1 => vec![quote!(__values.iter().map(|v| v.0).collect())],
            n => (0..n)
                .map(|k| {
                    let k = syn::Index::from(k);
                    quote!(__values.iter().map(|v| v.0.#k).collect())
                })
                .collect(),
        })
        .collect();
    quote! {
        // Visible where the function is: a private user struct may appear in its impl.
        #[doc(hidden)]
        pub(super) struct __Gufunc;

        impl #p::GuFn for __Gufunc {
            const LAYOUT: &'static #p::GuLayout = &__LAYOUT;
            #default_where
            type Args<'__a> = (#(::gpu_runtime::nd::GuRef<'__a, #in_elems>,)*);
            type Outs = (#(#out_elems,)*);
            type Value = (#ret_ty, #(::std::vec::Vec<#buf_elems>),*);

            #[allow(unused_variables)]
            fn at<'__h, '__a: '__h>(__plan: &#p::GuPlan, __inputs: &#p::Hosts<'__h, '__a, Self>, __t: usize) -> Self::Value {
                let (#(#in_idents,)*) = __inputs;
                #(let mut #bufs = ::std::vec![#p::zeroed::<#buf_elems>(); #buf_lens];)*
                let __r = scalar(#(#host_args),*);
                (__r, #(#bufs),*)
            }

            fn gather(__values: ::std::vec::Vec<Self::Value>) -> (#(::std::vec::Vec<#out_elems>,)*) {
                (#(#gather,)*)
            }

            #kernel_methods
        }
    }
}
