//! The tokens `#[vectorize]` expands to.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::ext::IdentExt;

use ptx_codegen::{frontend, CompiledKernel, Options, ScalarType};

pub fn vectorize(args: TokenStream, item: TokenStream) -> TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let msg = syn::Error::new(e.span(), "`#[vectorize]` applies to a function: `fn f(x: f32) -> f32 { … }`");
            let error = msg.to_compile_error();
            return quote! { #error #item };
        }
    };
    let mut errors: Vec<syn::Error> = Vec::new();
    let options = Options::parse(args).unwrap_or_else(|e| {
        errors.push(e);
        Options::default()
    });
    let signature = frontend::signature_types(&func.sig);
    let compiled = match ptx_codegen::compile(&func, &options) {
        Ok(k) => Some(k),
        Err(e) => {
            errors.push(e);
            None
        }
    };
    let diagnostics: TokenStream = errors.iter().map(syn::Error::to_compile_error).collect();
    match signature {
        // The call API exists even when the body has errors, so that the rest of the crate
        // type-checks and reports its own problems.
        Ok((params, ret)) => {
            let api = generate(&func, &params, ret, compiled.as_ref());
            quote! { #diagnostics #api }
        }
        Err(_) => {
            // Keep the item (without its body, whose problems are reported above) so that
            // uses of its name elsewhere do not add errors of their own.
            let mut plain = func.clone();
            plain.block = Box::new(syn::parse_quote!({
                ::core::unreachable!("this vectorized function did not compile")
            }));
            plain.attrs.push(syn::parse_quote!(#[allow(unused_variables, unused_mut, dead_code)]));
            quote! { #diagnostics #plain }
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

fn generate(func: &syn::ItemFn, params: &[ScalarType], ret: ScalarType, compiled: Option<&CompiledKernel>) -> TokenStream {
    let vis = &func.vis;
    let name = &func.sig.ident;
    let name_str = name.unraw().to_string();
    let names = param_names(func);
    let idents: Vec<&syn::Ident> = names.iter().map(|(i, _)| i).collect();
    let name_strs: Vec<&str> = names.iter().map(|(_, s)| s.as_str()).collect();
    let tys: Vec<TokenStream> = params.iter().map(|t| scalar_tokens(*t)).collect();
    let ret_ty = scalar_tokens(ret);
    let (ptx, llvm_ir, entry, error_flag) = match compiled {
        Some(k) => (k.ptx.as_str(), k.llvm_ir.as_str(), k.abi.entry.as_str(), k.abi.error_flag),
        None => ("", "", "", false),
    };

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
    if compiled.is_none() {
        // The body did not compile for the GPU and its errors are reported: rustc need not
        // report the same problems again in the host copy.
        scalar_fn.block = Box::new(syn::parse_quote!({
            ::core::unreachable!("this vectorized function did not compile")
        }));
        scalar_fn.attrs.push(syn::parse_quote!(#[allow(unused_variables, unused_mut)]));
    }
    scalar_fn.vis = syn::parse_quote!(pub);
    scalar_fn.sig.ident = format_ident!("scalar", span = name.span());
    let arg_list = quote! { #(#idents: impl ::gpu_runtime::Arg<'__a, #tys>),* };
    let erased = quote! { [#(::gpu_runtime::Arg::into_arg(#idents).erase()),*] };
    // `device` unless a parameter already has that name.
    let device = if name_strs.contains(&"device") { format_ident!("__device") } else { format_ident!("device") };
    let mod_doc = format!("The generated API of the vectorized function `{name_str}`.");

    quote! {
        #(#wrapper_attrs)*
        #[allow(clippy::too_many_arguments)]
        #vis fn #name<'__a>(#arg_list) -> ::gpu_runtime::Result<::std::vec::Vec<#ret_ty>> {
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            unsafe { #name::KERNEL.call_host::<#ret_ty>(::core::option::Option::None, &#erased) }
        }

        #(#mod_attrs)*
        #[doc = #mod_doc]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            /// The original scalar function, compiled for the host.
            #(#scalar_attrs)*
            #scalar_fn

            /// The PTX generated for this function at build time.
            pub const PTX: &str = #ptx;

            /// The optimised LLVM IR the PTX was generated from.
            pub const LLVM_IR: &str = #llvm_ir;

            #[doc(hidden)]
            pub static KERNEL: ::gpu_runtime::__private::Kernel =
                ::gpu_runtime::__private::Kernel::new(::gpu_runtime::__private::KernelSpec {
                    name: #name_str,
                    ptx: PTX,
                    entry: #entry,
                    params: &[#(#name_strs),*],
                    error_flag: #error_flag,
                });

            /// Runs the function on `device`.
            pub fn on<'__a>(#device: &::gpu_runtime::Device, #arg_list) -> ::gpu_runtime::Result<::std::vec::Vec<#ret_ty>> {
                // SAFETY: the arguments follow the kernel's inputs in order and type.
                unsafe { KERNEL.call_host::<#ret_ty>(::core::option::Option::Some(#device), &#erased) }
            }

            /// Runs the same computation on the CPU, element by element.
            pub fn cpu<'__a>(#arg_list) -> ::gpu_runtime::Result<::std::vec::Vec<#ret_ty>> {
                #(let #idents = ::gpu_runtime::Arg::into_arg(#idents);)*
                let __n = ::gpu_runtime::__private::broadcast_len(#name_str, &[#(#name_strs),*], &[#(#idents.len()),*])?;
                ::core::result::Result::Ok((0..__n).map(|__i| scalar(#(#idents.get(__i)),*)).collect())
            }
        }
    }
}
