//! Fetching the definitions of the functions a vectorized function calls.
//!
//! A proc macro sees only its own item, so the definitions travel through macros. Every
//! `#[device]` function `h` (and every vectorized function) gets a hidden module `h` (in the
//! type namespace, beside the function) holding a `macro_rules!` named `__gpu_device`
//! whose tokens are `h`'s *closure*: `h` itself and every function it calls, directly or
//! not. A path that reaches the function `h` from some module (`h`, `utils::h`, an
//! imported `h`) reaches its module too, so `utils::h::__gpu_device!` resolves wherever
//! the call `utils::h(x)` does.
//!
//! To compile `f`, which calls `a` and `b`, `#[vectorize]` expands to
//!
//! ```text
//! a::__gpu_device! { [] (b::__gpu_device) (::gpu_runtime::__vectorize_resume) { payload } }
//! ```
//!
//! Each step appends its closure as one bracketed group and calls the next step, and the
//! last step (a function-like proc macro) receives every closure, one group per callee in
//! the order of the callees: `[ [a's closure] [b's closure] ] { payload }`. A `#[device]`
//! function with callees assembles its own closure the same way, in its own module, where
//! its callees' paths resolve.
//!
//! A closure is a list of entries `{ "id" ok vectorized [("path" "id")…] fn … }`: the
//! function's id (its name and a hash of its definition), whether it compiled, whether it is
//! a vectorized function (called as `g::scalar(x)`, since `g(x)` is its call API), its
//! callees as written in its body with their ids, and its definition.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::parse::{Parse, ParseStream};

use ptx_codegen::frontend::{HelperDef, StructEntry, define_structs, external_callees, path_key};

/// One function (or user struct) of a closure.
#[derive(Clone)]
pub struct Entry {
    pub id: String,
    /// Whether the function passed the compiler's checks (its errors are reported where it
    /// is defined; its callers then stay quiet about it).
    pub ok: bool,
    /// The paths it writes (callees, structs) with their ids.
    pub callees: Vec<(String, String)>,
    pub def: Def,
}

/// What an entry defines.
#[derive(Clone)]
pub enum Def {
    /// A device function, or a vectorized one (`vectorized`: called as `g::scalar(x)`).
    Fn { item: syn::ItemFn, vectorized: bool },
    /// A `#[derive(GpuType)]` struct.
    Struct(syn::ItemStruct),
}

impl Entry {
    pub fn new(item: &syn::ItemFn, callees: Vec<(String, String)>, ok: bool, vectorized: bool) -> Entry {
        let mut item = item.clone();
        item.attrs.clear();
        let id = format!("{}_{:016x}", item.sig.ident, fingerprint(&item, &callees));
        Entry { id, ok, callees, def: Def::Fn { item, vectorized } }
    }

    /// A user struct's entry (`fields`: the struct paths its fields write, with ids).
    pub fn structure(item: &syn::ItemStruct, fields: Vec<(String, String)>) -> Entry {
        let mut item = item.clone();
        item.attrs.retain(|a| a.path().is_ident("repr"));
        let id = format!("{}_{:016x}", item.ident, fingerprint(&item, &fields));
        Entry { id, ok: true, callees: fields, def: Def::Struct(item) }
    }

    /// Whether it is a vectorized function.
    pub fn vectorized(&self) -> bool {
        matches!(self.def, Def::Fn { vectorized: true, .. })
    }

    /// A function's definition for the compiler (`None` for a struct).
    pub fn helper(&self) -> Option<HelperDef> {
        match &self.def {
            Def::Fn { item, .. } => {
                Some(HelperDef { id: self.id.clone(), item: item.clone(), callees: self.callees.clone() })
            }
            Def::Struct(_) => None,
        }
    }

    /// A struct's definition for the compiler (`None` for a function).
    pub fn struct_entry(&self) -> Option<StructEntry> {
        match &self.def {
            Def::Struct(item) => {
                Some(StructEntry { id: self.id.clone(), item: item.clone(), fields: self.callees.clone() })
            }
            Def::Fn { .. } => None,
        }
    }
}

/// The functions and the structs among `entries`, for the compiler (the structs entered in
/// its struct table).
pub fn definitions(entries: &[Entry]) -> Result<Vec<HelperDef>, syn::Error> {
    let structs: Vec<StructEntry> = entries.iter().filter_map(Entry::struct_entry).collect();
    define_structs(&structs)?;
    Ok(entries.iter().filter_map(Entry::helper).collect())
}

fn fingerprint(item: &impl ToTokens, callees: &[(String, String)]) -> u64 {
    use std::hash::{Hash, Hasher};
    // SipHash with fixed keys: the same definition gives the same id in every expansion.
    let mut h = std::collections::hash_map::DefaultHasher::new();
    item.to_token_stream().to_string().hash(&mut h);
    callees.hash(&mut h);
    h.finish()
}

impl ToTokens for Entry {
    fn to_tokens(&self, out: &mut TokenStream) {
        let (id, ok) = (&self.id, self.ok);
        let callees = self.callees.iter().map(|(p, i)| quote!((#p #i)));
        let (kind, item) = match &self.def {
            Def::Fn { item, vectorized: false } => ("fn", item.to_token_stream()),
            Def::Fn { item, vectorized: true } => ("vfn", item.to_token_stream()),
            Def::Struct(item) => ("struct", item.to_token_stream()),
        };
        out.extend(quote!({ #id #ok #kind [#(#callees)*] #item }));
    }
}

impl Parse for Entry {
    fn parse(input: ParseStream) -> syn::Result<Entry> {
        let content;
        syn::braced!(content in input);
        let id: syn::LitStr = content.parse()?;
        let ok: syn::LitBool = content.parse()?;
        let kind: syn::LitStr = content.parse()?;
        let list;
        syn::bracketed!(list in content);
        let mut callees = Vec::new();
        while !list.is_empty() {
            let pair;
            syn::parenthesized!(pair in list);
            let path: syn::LitStr = pair.parse()?;
            let cid: syn::LitStr = pair.parse()?;
            callees.push((path.value(), cid.value()));
        }
        let def = match kind.value().as_str() {
            "struct" => Def::Struct(content.parse()?),
            k => Def::Fn { item: content.parse()?, vectorized: k == "vfn" },
        };
        Ok(Entry { id: id.value(), ok: ok.value, callees, def })
    }
}

/// What the last step of a chain receives: one closure per callee, then the payload.
pub struct ChainInput {
    pub closures: Vec<Vec<Entry>>,
    pub payload: TokenStream,
}

impl Parse for ChainInput {
    fn parse(input: ParseStream) -> syn::Result<ChainInput> {
        let groups;
        syn::bracketed!(groups in input);
        let mut closures = Vec::new();
        while !groups.is_empty() {
            let group;
            syn::bracketed!(group in groups);
            let mut entries = Vec::new();
            while !group.is_empty() {
                entries.push(group.parse()?);
            }
            closures.push(entries);
        }
        let payload;
        syn::braced!(payload in input);
        Ok(ChainInput { closures, payload: payload.parse()? })
    }
}

/// A function's callees resolved against the closures fetched for them: its callee map
/// (path as written → id) and every entry reachable from it, each once.
pub fn resolve(callees: &[String], closures: &[Vec<Entry>]) -> (Vec<(String, String)>, Vec<Entry>) {
    let mut map = Vec::new();
    let mut all: Vec<Entry> = Vec::new();
    for (path, closure) in callees.iter().zip(closures) {
        if let Some(root) = closure.first() {
            map.push((path.clone(), root.id.clone()));
        }
        for e in closure {
            if !all.iter().any(|a| a.id == e.id) {
                all.push(e.clone());
            }
        }
    }
    (map, all)
}

/// The calls, among `func`'s, of a vectorized function by its own name: `g(x)` is the call
/// API on the host (arrays in, a `Result` out), not the function; one error per such call.
pub fn vectorized_called_by_name(
    func: &syn::ItemFn,
    callees: &[String],
    closures: &[Vec<Entry>],
) -> Option<syn::Error> {
    let paths = external_callees(func);
    let mut errors = callees.iter().zip(closures).filter_map(|(key, closure)| {
        // Only a closure whose root is a vectorized function.
        closure.first().filter(|root| root.vectorized())?;
        if key.ends_with("::scalar") {
            return None;
        }
        let message = format!(
            "`{key}` is a vectorized function: `{key}(…)` runs it over arrays on the host and returns a `Result`; \
             to call the function itself here, write `{key}::scalar(…)`"
        );
        // The path as written (a generic function's keys are its first instance's).
        let path = paths.iter().find(|p| path_key(p) == *key);
        Some(match path {
            Some(p) => syn::Error::new_spanned(p, message),
            None => syn::Error::new_spanned(&func.sig.ident, message),
        })
    });
    let mut first = errors.next()?;
    errors.for_each(|e| first.combine(e));
    Some(first)
}

/// The chain that fetches the closures of `callees` and hands them to `last` (a path such
/// as `::gpu_runtime::__vectorize_resume`) with `payload`.
/// `structs`: the user structs whose definitions come after the callees' closures (each
/// struct's is the macro of its name, beside it: see [`closure_macro`]).
pub fn fetch(callees: &[syn::Path], structs: &[syn::Path], last: TokenStream, payload: TokenStream) -> TokenStream {
    let steps: Vec<TokenStream> = callees.iter().map(step_path).chain(structs.iter().map(|p| quote!(#p))).collect();
    let (first, rest) = steps.split_first().expect("a chain fetches at least one closure");
    quote! { #first! { [] #((#rest))* (#last) { #payload } } }
}

/// `path::__gpu_device`, with the macro name at the call's span, so that a call of a
/// function that is not a device function is reported where it is written. A vectorized
/// function `g` is called through its original, `g::scalar(x)`: its closure is `g`'s.
fn step_path(path: &syn::Path) -> TokenStream {
    let span = path.segments.last().map_or_else(Span::call_site, |s| s.ident.span());
    let name = syn::Ident::new("__gpu_device", span);
    let mut path = path.clone();
    if path.segments.len() > 1 && path.segments.last().is_some_and(|s| s.ident == "scalar") {
        path.segments.pop();
        // `pop` leaves the trailing `::`; the path must end in a segment.
        let last = path.segments.pop().expect("more than one segment").into_value();
        path.segments.push(last);
    }
    quote!(#path::#name)
}

/// The paths a function calls (for the chain) and their keys (for the payload).
pub fn callees_of(item: &syn::ItemFn) -> (Vec<syn::Path>, Vec<String>) {
    let paths = external_callees(item);
    let keys = paths.iter().map(path_key).collect();
    (paths, keys)
}

/// The paths of the user structs `item` names, and their keys (see
/// `frontend::struct_paths`).
pub fn struct_callees(item: &syn::ItemFn) -> (Vec<syn::Path>, Vec<String>) {
    let paths = ptx_codegen::frontend::struct_paths(item);
    let keys = paths.iter().map(path_key).collect();
    (paths, keys)
}

/// The hidden module beside a function that hands its closure to whoever asks.
pub fn closure_macro(closure: &[Entry]) -> TokenStream {
    let name = syn::Ident::new("__gpu_device_closure", Span::call_site());
    let as_name = syn::Ident::new("__gpu_device", Span::call_site());
    let rules = closure_rules(closure, &name);
    quote! {
        #[doc(hidden)]
        #rules
        #[doc(hidden)]
        #[allow(unused_imports)]
        pub(crate) use #name as #as_name;
    }
}

/// The macro that hands a struct's closure to whoever asks, beside the struct and under the
/// struct's own name (macros have a namespace of their own, so `geom::Particle!` names it
/// wherever the path `geom::Particle` names the struct), as visible as the struct: a
/// `pub` struct's reaches other crates (`other::geom::Particle` in their kernels). So the
/// macro is exported (at the crate's root, as every exported `macro_rules!` is) under
/// `unique`, a name no other struct of the crate has, and imported here as the struct.
pub fn struct_macro(
    closure: &[Entry],
    unique: &syn::Ident,
    as_name: &syn::Ident,
    vis: &syn::Visibility,
) -> TokenStream {
    let rules = closure_rules(closure, unique);
    let vis = match vis {
        syn::Visibility::Public(_) => quote!(pub),
        _ => quote!(pub(crate)),
    };
    quote! {
        #[doc(hidden)]
        // A struct may be defined inside a function (its macro is then exported all the
        // same, harmlessly).
        #[allow(non_local_definitions)]
        #[macro_export]
        #rules
        #[doc(hidden)]
        #[allow(unused_imports)]
        #vis use #unique as #as_name;
    }
}

/// `macro_rules! name`, which hands `closure` to the next step of a chain.
fn closure_rules(closure: &[Entry], name: &syn::Ident) -> TokenStream {
    quote! {
        macro_rules! #name {
            ([$($acc:tt)*] ($($next:tt)*) $($rest:tt)*) => {
                $($next)*! { [$($acc)* [#(#closure)*]] $($rest)* }
            };
        }
    }
}
