//! `#[guvectorize("(n),(n)->()")]`: a generalized function (Numba's `@guvectorize`,
//! NumPy's gufuncs). The layout names each parameter's core dimensions; the function
//! takes views of its cores (`&[T]` for one dimension, `gpu_runtime::Mat<T>` for two, `T`
//! for none), writes outputs through `&mut [T]` / `MatMut<T>` parameters or returns its
//! `()` outputs, and runs once per loop index.
//!
//! Here the attribute and the layout are read and checked against the parameters
//! (`layout`); `api` writes the function's module, whose calls go to the runtime's generic
//! `gu` through a generated `GuFn` type, and `kernel` the function's kernel for the GPU.

mod api;
mod kernel;
mod layout;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;

use ptx_codegen::{GUFUNC_MAX_INPUTS, GUFUNC_MAX_OUTPUTS};

use layout::{Layout, Param, match_layout, params_of, parse_layout, scalar_ident};
use quote::format_ident;

pub fn guvectorize(args: TokenStream, item: TokenStream) -> TokenStream {
    crate::entry::with_function("#[guvectorize]", "fn dot(a: &[f32], b: &[f32]) -> f32 { … }", item, |func, _| {
        match expand(args, &func) {
            Ok(t) => t,
            Err(e) => {
                let error = e.to_compile_error();
                quote! { #error #func }
            }
        }
    })
}

/// What a `#[guvectorize]` generates: the whole API, or (the hidden `__along_only` flag,
/// for a vectorized function's `reduce_axis`) only the kernel and `with`.
#[derive(Copy, Clone, PartialEq)]
enum Surface {
    Full,
    AlongOnly,
}

fn parse_args(args: TokenStream) -> syn::Result<(syn::LitStr, ptx_codegen::Target, Surface)> {
    use syn::parse::Parser;
    let exprs = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated.parse2(args.clone())?;
    let mut it = exprs.iter();
    let layout = match it.next() {
        Some(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })) => s.clone(),
        _ => {
            return Err(syn::Error::new(
                if args.is_empty() { Span::call_site() } else { args.span() },
                "`#[guvectorize]` takes its layout first, as a string: `#[guvectorize(\"(n),(n)->()\")]`",
            ));
        }
    };
    let mut target = ptx_codegen::Target::Cuda;
    let mut surface = Surface::Full;
    for e in it {
        if let syn::Expr::Path(p) = e
            && p.path.is_ident("__along_only")
        {
            surface = Surface::AlongOnly;
            continue;
        }
        let bad = || {
            syn::Error::new(
                e.span(),
                "after the layout, `#[guvectorize]` takes `target = \"cuda\" | \"cpu\" | \"parallel\"`",
            )
        };
        let syn::Expr::Assign(a) = e else { return Err(bad()) };
        let (syn::Expr::Path(p), syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(v), .. })) = (&*a.left, &*a.right)
        else {
            return Err(bad());
        };
        if !p.path.is_ident("target") {
            return Err(bad());
        }
        target = match v.value().as_str() {
            "cuda" => ptx_codegen::Target::Cuda,
            "cpu" => ptx_codegen::Target::Cpu,
            "parallel" => ptx_codegen::Target::Parallel,
            _ => return Err(bad()),
        };
    }
    Ok((layout, target, surface))
}

fn expand(args: TokenStream, func: &syn::ItemFn) -> syn::Result<TokenStream> {
    let (lit, target, surface) = parse_args(args)?;
    let layout = parse_layout(&lit)?;
    if !func.sig.generics.params.is_empty() {
        return Err(syn::Error::new(func.sig.generics.span(), "a `#[guvectorize]` function is not generic"));
    }
    let params = params_of(func)?;
    let rets = returned(func)?;
    match_layout(func, &layout, &params, &rets)?;
    if surface == Surface::AlongOnly && !is_reduction(&layout) {
        return Err(syn::Error::new(lit.span(), "`__along_only` is for a reduction's layout"));
    }
    if layout.inputs.len() > GUFUNC_MAX_INPUTS || layout.outputs.len() > GUFUNC_MAX_OUTPUTS {
        return Err(syn::Error::new(
            lit.span(),
            format!(
                "a `#[guvectorize]` function has at most {GUFUNC_MAX_INPUTS} inputs and {GUFUNC_MAX_OUTPUTS} outputs; this layout has {} and {}",
                layout.inputs.len(),
                layout.outputs.len()
            ),
        ));
    }
    let g = Gufunc {
        func,
        layout: &layout,
        inputs: params.iter().filter(|p| !p.written).collect(),
        outputs: params.iter().filter(|p| p.written).collect(),
        params: &params,
        rets: &rets,
    };
    Ok(api::generate(&g, target, surface))
}

/// The scalars a function returns, its last `()` outputs: none, one (`-> T`) or several
/// (`-> (T, U)`).
fn returned(func: &syn::ItemFn) -> syn::Result<Vec<syn::Type>> {
    let bad = |ty: &syn::Type| {
        syn::Error::new(
            ty.span(),
            "a `#[guvectorize]` function returns its `()` outputs: a scalar, a tuple of scalars, or nothing",
        )
    };
    match &func.sig.output {
        syn::ReturnType::Default => Ok(Vec::new()),
        syn::ReturnType::Type(_, ty) => match &**ty {
            syn::Type::Tuple(t) if t.elems.len() == 1 => {
                Err(syn::Error::new(t.span(), "one returned output is a scalar: write `-> T`, not `-> (T,)`"))
            }
            syn::Type::Tuple(t) => t.elems.iter().map(|e| scalar_ident(e).ok_or_else(|| bad(e))).collect(),
            ty => Ok(vec![scalar_ident(ty).ok_or_else(|| bad(ty))?]),
        },
    }
}

/// The function's parts the generated items share.
struct Gufunc<'a> {
    func: &'a syn::ItemFn,
    layout: &'a Layout,
    inputs: Vec<&'a Param>,
    outputs: Vec<&'a Param>,
    /// Every parameter, in order.
    params: &'a [Param],
    /// The types of the returned `()` outputs.
    rets: &'a [syn::Type],
}

impl Gufunc<'_> {
    /// Each output's element type: the written ones, then the returned ones.
    fn out_elems(&self) -> Vec<&syn::Type> {
        self.outputs.iter().map(|p| &p.elem).chain(self.rets).collect()
    }

    /// The names the buffers of the outputs have in the generated code: `__o0`, … for the
    /// written ones, `__ret0`, … for the returned ones.
    fn out_bufs(&self) -> Vec<syn::Ident> {
        (0..self.outputs.len())
            .map(|k| format_ident!("__o{}", k))
            .chain((0..self.rets.len()).map(|k| format_ident!("__ret{}", k)))
            .collect()
    }
}

/// Whether a layout is a reduction's (every input with at most one core dimension, every
/// output `()`), whose cores can be taken along any axis, as NumPy's `axis=`.
fn is_reduction(layout: &Layout) -> bool {
    layout.inputs.iter().all(|d| d.len() <= 1) && layout.outputs.iter().all(Vec::is_empty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_along_only_surface_leaves_out_the_public_calls_and_needs_a_reduction() {
        let func: syn::ItemFn = syn::parse_quote! {
            fn total(x: &[f32]) -> f32 {
                let mut s = 0.0;
                for i in 0..x.len() {
                    s += x[i];
                }
                s
            }
        };
        let full = expand(quote!("(n)->()", target = "cpu"), &func).unwrap().to_string();
        let along = expand(quote!("(n)->()", target = "cpu", __along_only), &func).unwrap().to_string();
        for call in
            ["pub fn on <", "pub fn sized <", "pub fn parallel <", "pub fn device <", "pub fn into <", "pub fn along <"]
        {
            assert!(full.contains(call) && !along.contains(call), "{call}");
        }
        assert!(
            along.contains("pub fn with <") && along.contains("impl :: gpu_runtime :: __private :: GuFn for __Gufunc")
        );
        let copy: syn::ItemFn = syn::parse_quote! {
            fn copy(x: &[f32], out: &mut [f32]) {
                for i in 0..x.len() {
                    out[i] = x[i];
                }
            }
        };
        assert!(expand(quote!("(n)->(n)"), &copy).is_ok());
        let e = expand(quote!("(n)->(n)", __along_only), &copy).unwrap_err();
        assert!(e.to_string().contains("reduction"), "{e}");
    }
}
