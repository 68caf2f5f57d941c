//! The signature of the generated API: each parameter's and result's type as a slot
//! (a scalar type or the type parameter), the parameters' names, and the concrete
//! instances of a generic function.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use syn::ext::IdentExt;

use ptx_codegen::ir::RetType;
use ptx_codegen::{Options, ScalarType};

/// A parameter's or result's type in the generated API: a concrete scalar type, or the
/// type parameter `T` of a function compiled for several types.
#[derive(Clone, Copy, PartialEq)]
pub enum Slot {
    Concrete(ScalarType),
    Generic,
}

/// The result of each element: one scalar, or a tuple (an output array per field).
pub struct Ret {
    pub slots: Vec<Slot>,
    pub tuple: bool,
}

impl Ret {
    /// The result type, with `each` giving each slot's type.
    pub fn tokens(&self, each: impl Fn(Slot) -> TokenStream) -> TokenStream {
        let each: Vec<TokenStream> = self.slots.iter().map(|s| each(*s)).collect();
        if self.tuple { quote!((#(#each,)*)) } else { quote!(#(#each)*) }
    }

    /// The type of the results on the host (`Vec<R>`, or a tuple of vectors) or on a
    /// device (`DeviceVec<R>`, …).
    pub fn arrays(&self, each: impl Fn(Slot) -> TokenStream, array: TokenStream) -> TokenStream {
        self.tokens(|s| {
            let t = each(s);
            quote!(#array<#t>)
        })
    }
}

/// The parameters and result of a vectorized function, as the generated API types them.
pub struct Signature<'a> {
    /// The type parameter of a function compiled for several types (`types(…)`).
    pub generic: Option<&'a syn::Ident>,
    pub params: Vec<Slot>,
    pub ret: Ret,
}

impl<'a> Signature<'a> {
    /// The slots of `func`, whose first instance has the parameter types `params` and the
    /// result `ret`: a type written as the type parameter `generic` is its slot.
    pub fn new(func: &syn::ItemFn, generic: Option<&'a syn::Ident>, params: &[ScalarType], ret: RetType) -> Self {
        let slot = |t: ScalarType, written: &syn::Type| match generic {
            Some(g) if is_type_param(written, g) => Slot::Generic,
            _ => Slot::Concrete(t),
        };
        let written: Vec<&syn::Type> = func
            .sig
            .inputs
            .iter()
            .filter_map(|a| if let syn::FnArg::Typed(pt) = a { Some(&*pt.ty) } else { None })
            .collect();
        let params: Vec<Slot> = params.iter().zip(&written).map(|(t, w)| slot(*t, w)).collect();
        // The result: one scalar, or a tuple of them (one output array each).
        let (slots, tuple) = match (ret, &func.sig.output) {
            (RetType::Scalar(t), syn::ReturnType::Type(_, w)) => (vec![slot(t, w)], false),
            (RetType::Tuple(ts), syn::ReturnType::Type(_, w)) => {
                let written: Vec<&syn::Type> = match strip_parens(w) {
                    syn::Type::Tuple(t) => t.elems.iter().collect(),
                    other => vec![other],
                };
                (ts.iter().zip(written).map(|(t, w)| slot(*t, w)).collect(), true)
            }
            (RetType::Scalar(t), syn::ReturnType::Default) => (vec![Slot::Concrete(t)], false),
            (RetType::Tuple(ts), syn::ReturnType::Default) => (ts.into_iter().map(Slot::Concrete).collect(), true),
        };
        Signature { generic, params, ret: Ret { slots, tuple } }
    }

    /// Whether the function has the form `fn(T, T) -> T` of a type small enough to fold,
    /// which folds an array: it gets a `reduce` and may have an `identity` (the rule is
    /// `ptx_codegen::abi::folds`, which the compiler follows too).
    pub fn reducible(&self) -> bool {
        let result = if self.ret.tuple { None } else { self.ret.slots.first() };
        // (Each type of `types(…)` is a scalar, which fits.)
        let fits = |s: &Slot| match s {
            Slot::Concrete(t) => ptx_codegen::abi::fits_a_fold(*t),
            Slot::Generic => true,
        };
        ptx_codegen::abi::reducible(&self.params, result) && result.is_some_and(fits)
    }

    /// A slot's type in the generated API.
    pub fn slot_tokens(&self, s: Slot) -> TokenStream {
        match (s, self.generic) {
            (Slot::Concrete(t), _) => scalar_tokens(t),
            (Slot::Generic, Some(g)) => quote!(#g),
            (Slot::Generic, None) => quote!(()),
        }
    }
}

fn strip_parens(ty: &syn::Type) -> &syn::Type {
    match ty {
        syn::Type::Paren(p) => strip_parens(&p.elem),
        syn::Type::Group(g) => strip_parens(&g.elem),
        other => other,
    }
}

/// Whether `ty` is the type parameter `g` itself.
fn is_type_param(ty: &syn::Type, g: &syn::Ident) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident(g))
}

thread_local! {
    /// The paths the item being expanded names its user structs by.
    static STRUCT_PATHS: std::cell::RefCell<Vec<(ScalarType, syn::Path)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with the user structs among `callees` (path → id) known to [`scalar_tokens`]
/// by the paths the item writes.
pub fn with_struct_paths<R>(callees: &[(String, String)], f: impl FnOnce() -> R) -> R {
    let paths: Vec<(ScalarType, syn::Path)> = callees
        .iter()
        .filter_map(|(p, id)| {
            Some((ptx_codegen::frontend::struct_type(id)?, from_inner_module(syn::parse_str(p).ok()?)))
        })
        .collect();
    let saved = STRUCT_PATHS.with(|s| std::mem::replace(&mut *s.borrow_mut(), paths));
    let out = f();
    STRUCT_PATHS.with(|s| *s.borrow_mut() = saved);
    out
}

/// A path written beside an item, as the item's generated module (one level down) names
/// it: `self::P` is `super::P`, `super::m::P` is `super::super::m::P`.
fn from_inner_module(mut path: syn::Path) -> syn::Path {
    match path.segments.first().map(|s| s.ident.to_string()).as_deref() {
        Some("self") => path.segments[0].ident = syn::Ident::new("super", Span::call_site()),
        Some("super") => path.segments.insert(0, syn::PathSegment::from(syn::Ident::new("super", Span::call_site()))),
        _ => {}
    }
    path
}

pub fn scalar_tokens(t: ScalarType) -> TokenStream {
    if t.is_struct() {
        // The path the item writes (its module sees the item's through `use super::*`).
        let path = STRUCT_PATHS.with(|s| s.borrow().iter().find(|(s, _)| *s == t).map(|(_, p)| p.clone()));
        return match path {
            Some(p) => quote!(#p),
            None => {
                let name = t.rust_name();
                quote!(::core::compile_error!(::core::concat!("internal error: no path for the struct `", #name, "`")))
            }
        };
    }
    if let Some(part) = t.complex_part() {
        // num-complex's type, as the runtime re-exports it.
        let part = scalar_tokens(part);
        return quote!(::gpu_runtime::Complex<#part>);
    }
    let ident = syn::Ident::new(t.rust_name(), Span::call_site());
    if t.is_half() {
        // The `half` crate's types, as the runtime re-exports them.
        return quote!(::gpu_runtime::#ident);
    }
    quote!(::core::primitive::#ident)
}

/// Each parameter's identifier in the generated API and its name in the runtime's
/// messages (a pattern gets `__argN`, "argument N").
pub fn param_names(func: &syn::ItemFn) -> Vec<(syn::Ident, String)> {
    func.sig
        .inputs
        .iter()
        .enumerate()
        .map(|(i, arg)| match arg {
            syn::FnArg::Typed(pt) => match &*pt.pat {
                // The identifier as written (`r#type` stays raw: `type` is a keyword); the
                // name in messages without `r#`.
                syn::Pat::Ident(pi) => (pi.ident.clone(), pi.ident.unraw().to_string()),
                _ => (format_ident!("__arg{}", i), format!("argument {}", i + 1)),
            },
            syn::FnArg::Receiver(_) => (format_ident!("__arg{}", i), format!("argument {}", i + 1)),
        })
        .collect()
}

/// One concrete function to compile, and the type its type parameter stands for.
pub type Concrete = (Option<ScalarType>, syn::ItemFn);

/// The concrete functions to compile: the function itself, or, with `types(…)`, one copy
/// per listed type with the type parameter replaced. Returns the type parameter too.
pub fn instantiate<'a>(
    func: &'a syn::ItemFn,
    options: &Options,
) -> syn::Result<(Option<&'a syn::Ident>, Vec<Concrete>)> {
    let generics = &func.sig.generics;
    if options.types.is_empty() {
        return Ok((None, vec![(None, func.clone())]));
    }
    let params: Vec<&syn::GenericParam> = generics.params.iter().collect();
    let g = match params.as_slice() {
        [syn::GenericParam::Type(t)] => &t.ident,
        _ => {
            return Err(syn::Error::new_spanned(
                if generics.params.is_empty() { func.sig.ident.to_token_stream() } else { generics.to_token_stream() },
                "`types(…)` compiles a function with one type parameter for each listed type: write `fn f<T: Float>(x: T) -> T`",
            ));
        }
    };
    let instances = options
        .types
        .iter()
        .map(|t| {
            let mut plain = func.clone();
            plain.sig.generics = syn::Generics::default();
            let tokens = substitute(plain.to_token_stream(), g, t.rust_name());
            syn::parse2::<syn::ItemFn>(tokens).map(|f| (Some(*t), f))
        })
        .collect::<syn::Result<Vec<_>>>()?;
    Ok((Some(g), instances))
}

/// `tokens` with every identifier `from` replaced by `to` (spans kept).
fn substitute(tokens: TokenStream, from: &syn::Ident, to: &str) -> TokenStream {
    tokens
        .into_iter()
        .map(|tt| match tt {
            proc_macro2::TokenTree::Ident(i) if i == *from => {
                proc_macro2::TokenTree::Ident(proc_macro2::Ident::new(to, i.span()))
            }
            proc_macro2::TokenTree::Group(g) => {
                let mut n = proc_macro2::Group::new(g.delimiter(), substitute(g.stream(), from, to));
                n.set_span(g.span());
                proc_macro2::TokenTree::Group(n)
            }
            other => other,
        })
        .collect()
}
