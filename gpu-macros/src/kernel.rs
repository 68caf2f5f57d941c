//! The kernel items of the generated module: `PTX`, `LLVM_IR` and the `KERNEL` static
//! (its `KernelSpec`), or, for a generic function, the `Element` trait with one impl (and
//! kernel) per listed type.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};

use ptx_codegen::{ScalarType, Target, Variants};

use crate::runtime::private;
use crate::signature::{Slot, scalar_tokens};
use crate::vectorized::{Instance, Vectorized};

/// The kernel items: for a concrete function its kernel (GPU target only); for a generic
/// one the `Element` trait, by which the API reaches each type's kernel and original.
pub fn items(v: &Vectorized) -> TokenStream {
    match v.signature.generic {
        None => concrete(v),
        Some(_) => element(v),
    }
}

fn concrete(v: &Vectorized) -> TokenStream {
    let p = private();
    if v.target != Target::Cuda {
        return TokenStream::new();
    }
    let k = v.instances[0].compiled.as_ref();
    let (ptx, llvm_ir) = (by_profile(k, |k| &k.ptx), by_profile(k, |k| &k.llvm_ir));
    let kernel_spec = spec(v, k, quote!(PTX));
    quote! {
        /// The PTX generated for this function at build time.
        pub const PTX: &str = #ptx;

        /// The optimised LLVM IR the PTX was generated from.
        pub const LLVM_IR: &str = #llvm_ir;

        #[doc(hidden)]
        pub static KERNEL: #p::Kernel = #kernel_spec;
    }
}

/// The `Element` trait of a generic function, its implementations and their kernels.
fn element(v: &Vectorized) -> TokenStream {
    let p = private();
    let gpu = v.target == Target::Cuda;
    let (name_str, idents) = (&v.name_str, &v.idents);
    let listed: Vec<&str> = v.instances.iter().filter_map(|i| i.ty.map(ScalarType::rust_name)).collect();
    let message = format!("`{name_str}` is compiled for {} only, not for `{{Self}}`", listed.join(", "));
    let note = format!("add the type to `#[vectorize(types(…))]` to compile `{name_str}` for it");
    let identity_ty = identity_ty(v);
    let impls: TokenStream = v.instances.iter().map(|inst| element_impl(v, inst)).collect();
    let first = v.instances[0].ty.expect("a generic function's instances have types").rust_name().to_uppercase();
    let (first_ptx, first_ir) = (format_ident!("PTX_{}", first), format_ident!("LLVM_IR_{}", first));
    let element_params: Vec<TokenStream> =
        v.signature.params.iter().map(|p| if *p == Slot::Generic { quote!(Self) } else { v.slot_tokens(*p) }).collect();
    let element_ret = v.signature.ret.tokens(|s| if s == Slot::Generic { quote!(Self) } else { v.slot_tokens(s) });
    let gpu_trait_items = if gpu {
        quote! {
            /// The PTX of this type's kernel.
            const PTX: &'static str;
            #[doc(hidden)]
            fn kernel() -> &'static #p::Kernel;
        }
    } else {
        TokenStream::new()
    };
    let gpu_consts = if gpu {
        quote! {
            /// The PTX of the first listed type (each type's is `PTX_<TYPE>`, or `T::PTX`).
            pub const PTX: &str = #first_ptx;

            /// The optimised LLVM IR of the first listed type.
            pub const LLVM_IR: &str = #first_ir;
        }
    } else {
        TokenStream::new()
    };
    quote! {
        /// The types this function is compiled for.
        #[diagnostic::on_unimplemented(message = #message, label = "not a type this function is compiled for", note = #note)]
        pub trait Element: ::gpu_runtime::Scalar {
            #gpu_trait_items
            #[doc(hidden)]
            const IDENTITY: ::core::option::Option<#identity_ty>;
            #[doc(hidden)]
            fn scalar(#(#idents: #element_params),*) -> #element_ret;
        }

        #gpu_consts

        #impls
    }
}

/// One listed type's kernel items (GPU target only) and `Element` impl.
fn element_impl(v: &Vectorized, inst: &Instance) -> TokenStream {
    let p = private();
    let gpu = v.target == Target::Cuda;
    let (name, name_str, idents) = (v.name, &v.name_str, &v.idents);
    let t = inst.ty.expect("a generic function's instances have types");
    let ty = scalar_tokens(t);
    let upper = t.rust_name().to_uppercase();
    let (ptx_name, ir_name, kernel_name) =
        (format_ident!("PTX_{}", upper), format_ident!("LLVM_IR_{}", upper), format_ident!("KERNEL_{}", upper));
    let k = inst.compiled.as_ref();
    let (ptx, llvm_ir) = (by_profile(k, |k| &k.ptx), by_profile(k, |k| &k.llvm_ir));
    let kernel_spec = spec(v, k, quote!(#ptx_name));
    let ptx_doc = format!("The PTX generated for `{name_str}::<{}>`.", t.rust_name());
    let scalar_params: Vec<TokenStream> =
        v.signature.params.iter().map(|p| if *p == Slot::Generic { ty.clone() } else { v.slot_tokens(*p) }).collect();
    let scalar_ret = v.signature.ret.tokens(|s| if s == Slot::Generic { ty.clone() } else { v.slot_tokens(s) });
    let identity_ty = identity_ty(v);
    let identity = v.identity_option();
    let gpu_items = if gpu {
        quote! {
            #[doc = #ptx_doc]
            pub const #ptx_name: &str = #ptx;
            #[doc(hidden)]
            pub const #ir_name: &str = #llvm_ir;
            #[doc(hidden)]
            pub static #kernel_name: #p::Kernel = #kernel_spec;
        }
    } else {
        TokenStream::new()
    };
    let gpu_impl = if gpu {
        quote! {
            const PTX: &'static str = #ptx_name;
            fn kernel() -> &'static #p::Kernel {
                &#kernel_name
            }
        }
    } else {
        TokenStream::new()
    };
    quote! {
        #gpu_items
        impl Element for #ty {
            #gpu_impl
            const IDENTITY: ::core::option::Option<#identity_ty> = #identity;
            fn scalar(#(#idents: #scalar_params),*) -> #scalar_ret {
                super::#name::scalar::<#ty>(#(#idents),*)
            }
        }
    }
}

/// The type of `Element::IDENTITY`: `Self` for a function with a `reduce`, `()` for one
/// without.
fn identity_ty(v: &Vectorized) -> TokenStream {
    if v.reducible { quote!(Self) } else { quote!(()) }
}

/// An expression for one property of the kernel: the checked variant's in a build with
/// `debug_assertions` (integer overflow panics there, as in the host code), the wrapping
/// one's otherwise. One value when the variants agree; `""` where nothing compiled (the
/// errors are reported, and no kernel runs).
fn by_profile<T: ToTokens + PartialEq>(
    k: Option<&Variants>,
    of: impl Fn(&ptx_codegen::CompiledKernel) -> &T,
) -> TokenStream {
    let Some(k) = k else { return quote!("") };
    let wrapping = of(&k.wrapping);
    match k.checked.as_ref().map(&of) {
        Some(checked) if checked != wrapping => {
            quote!(if ::core::cfg!(debug_assertions) { #checked } else { #wrapping })
        }
        _ => quote!(#wrapping),
    }
}

/// The runtime's `Kernel` for one compiled instance, whose PTX is the constant `ptx`.
fn spec(v: &Vectorized, k: Option<&Variants>, ptx: TokenStream) -> TokenStream {
    let p = private();
    let (name_str, name_strs) = (&v.name_str, &v.name_strs);
    // The other entries' names follow from `entry` (`kernel_abi`); both variants share them.
    let (entry, reducible) = match k {
        Some(k) => (k.wrapping.abi.entry.clone(), k.wrapping.abi.reduce_entry.is_some()),
        None => (String::new(), false),
    };
    let error_flag = match k {
        Some(_) => by_profile(k, |k| &k.abi.error_flag),
        None => quote!(false),
    };
    quote! {
        #p::Kernel::new(#p::KernelSpec {
            name: #name_str,
            ptx: #ptx,
            entry: #entry,
            params: &[#(#name_strs),*],
            error_flag: #error_flag,
            reducible: #reducible,
        })
    }
}
