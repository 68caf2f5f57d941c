//! One vectorized function as the generators see it: its names, types, target and the
//! tokens by which the generated API reaches its kernel and scalar function, computed once
//! and borrowed by each generator.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;

use ptx_codegen::{Options, ScalarType, Target, Variants};

use crate::chain;
use crate::signature::{Signature, Slot, param_names};

/// One compiled instance of the function: for a concrete function the only one, for a
/// generic one one per listed type.
pub struct Instance {
    pub ty: Option<ScalarType>,
    /// The kernel, in both overflow variants (CUDA target only).
    pub compiled: Option<Variants>,
    /// Whether the function passed the compiler's checks.
    pub ok: bool,
}

/// What compiling the function gave: its instances, and its closure (itself and every
/// device function it calls) for the functions that call it.
pub struct Compiled {
    pub instances: Vec<Instance>,
    pub closure: Vec<chain::Entry>,
}

/// A vectorized function and everything its generated API is written with.
pub struct Vectorized<'a> {
    /// The function as written.
    pub func: &'a syn::ItemFn,
    pub name: &'a syn::Ident,
    /// The name in the runtime's messages (without `r#`).
    pub name_str: String,
    /// The parameters' identifiers in the generated API.
    pub idents: Vec<syn::Ident>,
    /// The parameters' names in the runtime's messages.
    pub name_strs: Vec<String>,
    pub signature: Signature<'a>,
    /// The parameters' types.
    pub tys: Vec<TokenStream>,
    /// The type of one element's result.
    pub ret_ty: TokenStream,
    /// The type of the results on the host.
    pub host_ty: TokenStream,
    pub target: Target,
    pub instances: Vec<Instance>,
    pub closure: Vec<chain::Entry>,
    /// Whether the function gets a `reduce` (see [`Signature::reducible`]).
    pub reducible: bool,
    /// The `identity` option, kept only for a reducible function (otherwise it is an error).
    pub identity: Option<&'a syn::Expr>,
    /// The kernel, from inside the generated module (`KERNEL`, `<T as Element>::kernel()`).
    pub kernel: TokenStream,
    /// The original function, called per element by the CPU API.
    pub scalar_call: TokenStream,
    /// What the module's functions are generic over (`T: Element,` or nothing).
    pub generics: TokenStream,
    /// What the wrapper is generic over.
    pub outer_generics: TokenStream,
    /// What `reduce` gives for an empty array: an `Option` of the result type.
    pub identity_expr: TokenStream,
    /// The API's argument list (`a: impl Param<'__a, f32>, …`), in the generated module.
    pub arg_list: TokenStream,
    /// The wrapper's argument list (`a: impl name::Param<'__a, f32>, …`).
    pub outer_arg_list: TokenStream,
    /// The function's `__Function` type (see `function.rs`), from inside the module.
    pub function_ty: TokenStream,
    /// The same from the wrapper beside the module.
    pub outer_function_ty: TokenStream,
    /// The arguments bound, as `VectorFn::Args` takes them: a tuple of one `ArgRef` each.
    pub bound: TokenStream,
    /// The same in the wrapper.
    pub outer_bound: TokenStream,
    // The API's own parameters: `out`, `device`, `devices` and `stream`, or `__out`, … where the
    // function has a parameter of that name.
    pub out: syn::Ident,
    pub device: syn::Ident,
    pub devices: syn::Ident,
    pub stream: syn::Ident,
}

impl<'a> Vectorized<'a> {
    pub fn new(func: &'a syn::ItemFn, signature: Signature<'a>, options: &'a Options, compiled: Compiled) -> Self {
        let name = &func.sig.ident;
        let name_str = name.unraw().to_string();
        let (idents, name_strs): (Vec<syn::Ident>, Vec<String>) = param_names(func).into_iter().unzip();
        let tys: Vec<TokenStream> = signature.params.iter().map(|t| signature.slot_tokens(*t)).collect();
        let ret_ty = signature.ret.tokens(|s| signature.slot_tokens(s));
        let host_ty = signature.ret.arrays(|s| signature.slot_tokens(s), quote!(::std::vec::Vec));
        let reducible = signature.reducible();
        let identity = options.identity.as_ref().filter(|_| reducible);
        // How the API reaches its kernel, calls the original, and what it is generic over.
        let (kernel, scalar_call, generics, outer_generics, identity_expr) = match signature.generic {
            None => (quote!(KERNEL), quote!(scalar), TokenStream::new(), TokenStream::new(), identity_option(identity)),
            Some(g) => (
                quote!(<#g as Element>::kernel()),
                quote!(<#g as Element>::scalar),
                quote!(#g: Element,),
                quote!(#g: #name::Element,),
                quote!(<#g as Element>::IDENTITY),
            ),
        };
        // Arguments go through the module's `Param` trait (see `api::param_trait`).
        let arg_list = quote! { #(#idents: impl Param<'__a, #tys>),* };
        let outer_arg_list = quote! { #(#idents: impl #name::Param<'__a, #tys>),* };
        let bound = quote! { (#(Param::into_arg(#idents),)*) };
        let outer_bound = quote! { (#(#name::Param::into_arg(#idents),)*) };
        let (function_ty, outer_function_ty) = match signature.generic {
            None => (quote!(__Function), quote!(#name::__Function)),
            Some(g) => (quote!(__Function<#g>), quote!(#name::__Function<#g>)),
        };
        let unused = |n: &str| {
            if name_strs.iter().any(|p| p == n) { format_ident!("__{}", n) } else { format_ident!("{}", n) }
        };
        let (out, device, devices, stream) = (unused("out"), unused("device"), unused("devices"), unused("stream"));
        Vectorized {
            func,
            name,
            name_str,
            idents,
            name_strs,
            signature,
            tys,
            ret_ty,
            host_ty,
            target: options.target,
            instances: compiled.instances,
            closure: compiled.closure,
            reducible,
            identity,
            kernel,
            scalar_call,
            generics,
            outer_generics,
            identity_expr,
            arg_list,
            outer_arg_list,
            function_ty,
            outer_function_ty,
            bound,
            outer_bound,
            out,
            device,
            devices,
            stream,
        }
    }

    /// A slot's type in the generated API.
    pub fn slot_tokens(&self, s: Slot) -> TokenStream {
        self.signature.slot_tokens(s)
    }

    /// The `out` parameter's type: one `impl out_trait<lifetime, R>` per output.
    pub fn out_ty(&self, lifetime: TokenStream, out_trait: &TokenStream) -> TokenStream {
        self.signature.ret.tokens(|s| {
            let t = self.slot_tokens(s);
            quote!(impl #out_trait<#lifetime, #t>)
        })
    }

    /// The expression that turns `out` into the kernel's outputs, through `out_trait`'s
    /// `method`.
    pub fn out_conv(&self, out_trait: &TokenStream, method: TokenStream) -> TokenStream {
        let out = &self.out;
        if self.signature.ret.tuple {
            let i = (0..self.signature.ret.slots.len()).map(syn::Index::from);
            quote!((#(#out_trait::#method(#out.#i),)*))
        } else {
            quote!(#out_trait::#method(#out))
        }
    }

    /// The identity as the `Option` a concrete function's `reduce` (or a generic one's
    /// `Element` impl) gives for an empty array.
    pub fn identity_option(&self) -> TokenStream {
        identity_option(self.identity)
    }
}

fn identity_option(identity: Option<&syn::Expr>) -> TokenStream {
    match identity {
        Some(e) => quote!(::core::option::Option::Some(#e)),
        None => quote!(::core::option::Option::None),
    }
}
