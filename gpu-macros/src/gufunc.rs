//! `#[guvectorize("(n),(n)->()")]`: a generalized function (Numba's `@guvectorize`,
//! NumPy's gufuncs). The layout names each parameter's core dimensions; the function
//! takes views of its cores (`&[T]` for one dimension, `gpu_runtime::Mat<T>` for two, `T`
//! for none), writes outputs through `&mut [T]` / `MatMut<T>` parameters or returns one
//! scalar output, and runs once per loop index.
//!
//! For the GPU the function becomes an explicit kernel (`#[kernel]`, written out here and
//! expanded by rustc): one loop index per thread of a grid-stride loop, each view a window
//! of its argument's data at the loop index's offset, every index checked against the
//! core's size with `gpu::check_index` (a miss is the fault Rust gives, never a read of
//! the neighbouring core), `return` a `break` out of the body. The call API
//! (`name(..)`, `on`, `sized`, `cpu`, `parallel`, `simulate`) plans the call in the
//! runtime (`gpu_runtime::__private::GuPlan`) and runs the kernel or the original function.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;

const SCALARS: &[&str] =
    &["f32", "f64", "i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize", "bool"];

/// The parsed layout: each input's and output's core dimension names.
struct Layout {
    text: String,
    inputs: Vec<Vec<String>>,
    outputs: Vec<Vec<String>>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Scalar,
    Slice,
    Mat,
}

impl Kind {
    fn rank(self) -> usize {
        match self {
            Kind::Scalar => 0,
            Kind::Slice => 1,
            Kind::Mat => 2,
        }
    }
}

struct Param {
    ident: syn::Ident,
    mutable_binding: bool,
    elem: syn::Ident,
    kind: Kind,
    written: bool,
    ty: syn::Type,
}

pub fn guvectorize(args: TokenStream, item: TokenStream) -> TokenStream {
    let func: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let msg = syn::Error::new(
                e.span(),
                "`#[guvectorize]` applies to a function: `fn dot(a: &[f32], b: &[f32]) -> f32 { … }`",
            );
            let error = msg.to_compile_error();
            return quote! { #error #item };
        }
    };
    match expand(args, &func) {
        Ok(t) => t,
        Err(e) => {
            let error = e.to_compile_error();
            quote! { #error #func }
        }
    }
}

/// What a `#[guvectorize]` generates: the whole API, or (the hidden `__along_only` flag,
/// for a vectorized function's `reduce_axis`) only the kernel, `along` and `simulate`.
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

/// `"(m,n),(n)->(m)"`: groups of comma-separated names, inputs `->` outputs.
fn parse_layout(lit: &syn::LitStr) -> syn::Result<Layout> {
    let text = lit.value();
    let err = |m: &str| syn::Error::new(lit.span(), format!("layout `{text}`: {m}"));
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let Some((ins, outs)) = compact.split_once("->") else {
        return Err(err("inputs and outputs are separated by `->`, as in `(n),(n)->()`"));
    };
    let groups = |side: &str| -> syn::Result<Vec<Vec<String>>> {
        let mut out = Vec::new();
        let mut rest = side;
        while !rest.is_empty() {
            let Some(inner) = rest.strip_prefix('(') else {
                return Err(err("each parameter's core dimensions are in parentheses: `(n)`, `(m,n)`, `()`"));
            };
            let Some(end) = inner.find(')') else { return Err(err("a `(` without its `)`")) };
            let names: Vec<String> = if inner[..end].is_empty() {
                Vec::new()
            } else {
                inner[..end].split(',').map(str::to_string).collect()
            };
            for n in &names {
                let ok = n.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !ok {
                    return Err(err(&format!("`{n}` is not a dimension name (a name such as `n` or `rows`)")));
                }
            }
            if names.len() > 2 {
                return Err(err("a parameter has 0, 1 or 2 core dimensions (`()`, `(n)`, `(m,n)`)"));
            }
            out.push(names);
            rest = &inner[end + 1..];
            if let Some(r) = rest.strip_prefix(',') {
                rest = r;
                if rest.is_empty() {
                    return Err(err("a trailing `,`"));
                }
            } else if !rest.is_empty() {
                return Err(err("parameters are separated by `,`"));
            }
        }
        Ok(out)
    };
    let (inputs, outputs) = (groups(ins)?, groups(outs)?);
    if outputs.is_empty() {
        return Err(err("the function has no output: give at least one after `->`, e.g. `->()`"));
    }
    Ok(Layout { text, inputs, outputs })
}

fn scalar_ident(ty: &syn::Type) -> Option<syn::Ident> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            // `f32`, or `core::primitive::f32` / `std::primitive::f32` (with or without `::`).
            let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            let plain = p.path.segments.iter().all(|s| s.arguments.is_none());
            let prefix_ok = match segs.as_slice() {
                [_] => p.path.leading_colon.is_none(),
                [root, prim, _] => (root == "core" || root == "std") && prim == "primitive",
                _ => false,
            };
            let id = &p.path.segments.last()?.ident;
            (plain && prefix_ok && SCALARS.contains(&id.to_string().as_str())).then(|| id.clone())
        }
        syn::Type::Paren(p) => scalar_ident(&p.elem),
        syn::Type::Group(g) => scalar_ident(&g.elem),
        _ => None,
    }
}

/// What a parameter's type makes it: `T`, `&[T]`, `&mut [T]`, `Mat<T>`, `MatMut<T>`.
fn param_kind(ty: &syn::Type) -> Option<(syn::Ident, Kind, bool)> {
    if let Some(t) = scalar_ident(ty) {
        return Some((t, Kind::Scalar, false));
    }
    match ty {
        syn::Type::Reference(r) => match &*r.elem {
            syn::Type::Slice(s) => Some((scalar_ident(&s.elem)?, Kind::Slice, r.mutability.is_some())),
            _ => None,
        },
        syn::Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last()?;
            let written = match last.ident.to_string().as_str() {
                "Mat" => false,
                "MatMut" => true,
                _ => return None,
            };
            let syn::PathArguments::AngleBracketed(a) = &last.arguments else { return None };
            let elem = a.args.iter().find_map(|g| match g {
                syn::GenericArgument::Type(t) => scalar_ident(t),
                _ => None,
            })?;
            Some((elem, Kind::Mat, written))
        }
        _ => None,
    }
}

fn params_of(func: &syn::ItemFn) -> syn::Result<Vec<Param>> {
    let mut out = Vec::new();
    for input in &func.sig.inputs {
        let syn::FnArg::Typed(pt) = input else {
            return Err(syn::Error::new(input.span(), "a `#[guvectorize]` function cannot take `self`"));
        };
        let syn::Pat::Ident(pi) = &*pt.pat else {
            return Err(syn::Error::new(pt.pat.span(), "a `#[guvectorize]` parameter is a plain name (`a: &[f32]`)"));
        };
        if pi.ident.to_string().starts_with("__") {
            return Err(syn::Error::new(pi.ident.span(), "names starting with `__` are the generated code's"));
        }
        let Some((elem, kind, written)) = param_kind(&pt.ty) else {
            return Err(syn::Error::new(
                pt.ty.span(),
                "a `#[guvectorize]` parameter is a scalar `T` (a `()` core), a slice `&[T]` or a `Mat<T>` read, or a `&mut [T]` or a `MatMut<T>` written (T one of f32, f64, i8…i64, isize, u8…u64, usize, bool)",
            ));
        };
        out.push(Param {
            ident: pi.ident.clone(),
            mutable_binding: pi.mutability.is_some(),
            elem,
            kind,
            written,
            ty: (*pt.ty).clone(),
        });
    }
    Ok(out)
}

fn describe(dims: &[String]) -> String {
    format!("({})", dims.join(","))
}

/// Checks the parameters and the return type against the layout: inputs first, in order,
/// then the written outputs; a return value is the last output, with no core dimension.
fn match_layout(func: &syn::ItemFn, layout: &Layout, params: &[Param], rets: &[syn::Ident]) -> syn::Result<()> {
    let name = &func.sig.ident;
    if let Some(p) = params.windows(2).find(|w| w[0].written && !w[1].written) {
        return Err(syn::Error::new(
            p[1].ident.span(),
            format!(
                "`{}` is an input after the output `{}`: inputs come first, as in the layout",
                p[1].ident, p[0].ident
            ),
        ));
    }
    let inputs: Vec<&Param> = params.iter().filter(|p| !p.written).collect();
    let outputs: Vec<&Param> = params.iter().filter(|p| p.written).collect();
    if inputs.len() != layout.inputs.len() {
        return Err(syn::Error::new(
            func.sig.inputs.span(),
            format!(
                "the layout `{}` has {} input(s), but `{name}` reads {} parameter(s) (an output is written: `&mut [T]`, `MatMut<T>`, or the return value for `()`)",
                layout.text,
                layout.inputs.len(),
                inputs.len()
            ),
        ));
    }
    let want_outs = outputs.len() + rets.len();
    if want_outs != layout.outputs.len() {
        return Err(syn::Error::new(
            func.sig.span(),
            format!(
                "the layout `{}` has {} output(s), but `{name}` writes {} (`&mut [T]` or `MatMut<T>` parameters{})",
                layout.text,
                layout.outputs.len(),
                want_outs,
                match rets.len() {
                    0 => "",
                    1 => ", and its return value",
                    _ => ", and the values it returns",
                }
            ),
        ));
    }
    let returned_outs = &layout.outputs[layout.outputs.len().saturating_sub(rets.len())..];
    if let Some((r, dims)) = rets.iter().zip(returned_outs).find(|(_, dims)| !dims.is_empty()) {
        return Err(syn::Error::new(
            r.span(),
            match rets.len() {
                1 => format!(
                    "`{name}` returns one value, so its last output is `()`, not `{}`: write an output with core dimensions through a `&mut [T]` parameter",
                    describe(dims)
                ),
                n => format!(
                    "`{name}` returns {n} values, so its last {n} outputs are `()`, but one is `{}`: write an output with core dimensions through a `&mut [T]` parameter",
                    describe(dims)
                ),
            },
        ));
    }
    let pairs = inputs.iter().zip(&layout.inputs).chain(outputs.iter().zip(&layout.outputs));
    for (p, dims) in pairs {
        if p.kind.rank() != dims.len() {
            let has = match p.kind {
                Kind::Scalar => "a scalar: no core dimension",
                Kind::Slice => "a slice: one core dimension",
                Kind::Mat => "a matrix: two core dimensions",
            };
            let want = match dims.len() {
                0 => "a scalar `T`",
                1 => {
                    if p.written {
                        "`&mut [T]`"
                    } else {
                        "`&[T]`"
                    }
                }
                _ => {
                    if p.written {
                        "`MatMut<T>`"
                    } else {
                        "`Mat<T>`"
                    }
                }
            };
            return Err(syn::Error::new(
                p.ty.span(),
                format!("`{}` is {has}, but the layout gives it `{}`: make it {want}", p.ident, describe(dims)),
            ));
        }
        if p.written && p.kind == Kind::Scalar {
            return Err(syn::Error::new(p.ty.span(), "a `()` output is the return value"));
        }
    }
    Ok(())
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
    Ok(generate(func, &layout, &params, &rets, target, surface))
}

/// The scalars a function returns, its last `()` outputs: none, one (`-> T`) or several
/// (`-> (T, U)`).
fn returned(func: &syn::ItemFn) -> syn::Result<Vec<syn::Ident>> {
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

/// How the kernel and the host name one parameter's pieces.
struct Names {
    /// The kernel parameter with the data (the user's name for a view, `__gu_x` for a
    /// scalar input, whose user name is the value at the loop index).
    data: syn::Ident,
    base: syn::Ident,
    step: syn::Ident,
}

fn names_of(p: &Param) -> Names {
    let id = &p.ident;
    let data = if p.kind == Kind::Scalar { format_ident!("__gu_{}", id) } else { id.clone() };
    Names { data, base: format_ident!("__gu_{}_base", id), step: format_ident!("__gu_{}_step", id) }
}

fn generate(
    func: &syn::ItemFn,
    layout: &Layout,
    params: &[Param],
    rets: &[syn::Ident],
    target: ptx_codegen::Target,
    surface: Surface,
) -> TokenStream {
    let vis = &func.vis;
    let name = &func.sig.ident;
    let name_str = name.to_string();
    let text = &layout.text;
    let inputs: Vec<&Param> = params.iter().filter(|p| !p.written).collect();
    let outputs: Vec<&Param> = params.iter().filter(|p| p.written).collect();
    let in_idents: Vec<&syn::Ident> = inputs.iter().map(|p| &p.ident).collect();
    let in_elems: Vec<&syn::Ident> = inputs.iter().map(|p| &p.elem).collect();
    let ret_name = if params.iter().any(|p| p.ident == "out") { "result" } else { "out" };
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
    // Output k's element type, and the result type of a call.
    let out_elems: Vec<&syn::Ident> = outputs.iter().map(|p| &p.elem).chain(rets).collect();
    let arrays: Vec<TokenStream> = out_elems.iter().map(|t| quote!(::gpu_runtime::nd::ArrayD<#t>)).collect();
    let out_ty = if arrays.len() == 1 { arrays[0].clone() } else { quote!((#(#arrays),*)) };
    let arg_list = quote! { #(#in_idents: impl ::gpu_runtime::nd::GuArg<'__a, #in_elems>),* };
    let p = quote!(::gpu_runtime::__private);

    // The function on the host at loop index `__t`: each input's core, each output in a
    // buffer of its own; it gives `(return value or (), buffers…)`.
    let size = |d: &String| quote!(__plan.size(#d));
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
    let buf_lens: Vec<TokenStream> = (0..outputs.len())
        .map(|k| {
            let d = strs(&layout.outputs[k]);
            quote!(__plan.core(#d).iter().product::<usize>())
        })
        .collect();
    let buf_elems: Vec<&syn::Ident> = outputs.iter().map(|p| &p.elem).collect();
    // The function at one loop index, on the host: for the CPU, and to find the loop
    // index of a kernel's fault.
    let ret_ty = match rets {
        [r] => quote!(#r),
        rs => quote!((#(#rs),*)),
    };
    let host_fn = quote! {
        #[allow(clippy::too_many_arguments)]
        fn __host_at(
            __plan: &#p::GuPlan,
            __t: usize,
            #(#in_idents: &#p::GuHost<'_, #in_elems>),*
        ) -> (#ret_ty, #(::std::vec::Vec<#buf_elems>),*) {
            #(let mut #bufs = ::std::vec![<#buf_elems as ::gpu_runtime::Scalar>::from_bits(0); #buf_lens];)*
            let __r = scalar(#(#host_args),*);
            (__r, #(#bufs),*)
        }
    };
    // The outputs from the host's values: the buffers in loop order, then the returns.
    let n_out = outputs.len();
    let gather: Vec<TokenStream> = (0..n_out)
        .map(|k| {
            let i = syn::Index::from(k + 1);
            let b = &bufs[k];
            quote! { let #b: ::std::vec::Vec<_> = __values.iter().flat_map(|v| v.#i.iter().copied()).collect(); }
        })
        .collect();
    let ret_bufs: Vec<syn::Ident> = (0..rets.len()).map(|k| format_ident!("__ret{}", k)).collect();
    let gather_ret: Vec<TokenStream> = match rets.len() {
        1 => vec![quote! { let __ret0: ::std::vec::Vec<_> = __values.iter().map(|v| v.0).collect(); }],
        _ => ret_bufs
            .iter()
            .enumerate()
            .map(|(k, b)| {
                let k = syn::Index::from(k);
                quote! { let #b: ::std::vec::Vec<_> = __values.iter().map(|v| v.0.#k).collect(); }
            })
            .collect(),
    };
    let all_bufs: Vec<TokenStream> =
        bufs.iter().map(|b| quote!(#b)).chain(ret_bufs.iter().map(|b| quote!(#b))).collect();
    let ks: Vec<syn::Index> = (0..all_bufs.len()).map(syn::Index::from).collect();
    let arrays_of = |f: TokenStream| {
        quote! {
            let (__plan, __o) = __r?;
            ::core::result::Result::Ok((#(#p::#f(&__LAYOUT, &__plan, #ks, __o.#ks)?),*))
        }
    };
    let to_host = arrays_of(quote!(gu_array));
    let to_device = arrays_of(quote!(gu_device_array));
    let out_tuple = quote!((#(#p::GuOut<#out_elems>,)*));
    let dev_arrays: Vec<TokenStream> = out_elems.iter().map(|t| quote!(::gpu_runtime::DeviceArray<#t>)).collect();
    let dev_out_ty = if dev_arrays.len() == 1 { dev_arrays[0].clone() } else { quote!((#(#dev_arrays),*)) };

    let scalar_fn = {
        let mut f = func.clone();
        f.sig.ident = format_ident!("scalar", span = name.span());
        f.vis = syn::parse_quote!(pub);
        f.attrs.retain(|a| !a.path().is_ident("doc"));
        // The same body is the GPU's, whose language indexes and has no iterators.
        f.attrs.push(syn::parse_quote!(#[allow(clippy::needless_range_loop)]));
        f
    };
    let docs: Vec<&syn::Attribute> = func.attrs.iter().filter(|a| a.path().is_ident("doc")).collect();
    let default_where = match target {
        ptx_codegen::Target::Cuda => quote!(#p::GuWhere::Default),
        ptx_codegen::Target::Cpu => quote!(#p::GuWhere::Cpu),
        ptx_codegen::Target::Parallel => quote!(#p::GuWhere::Parallel),
    };
    let gpu = (target == ptx_codegen::Target::Cuda).then(|| gpu_items(func, layout, rets, &inputs, &outputs));
    let (kernel_items, gpu_run) = match gpu {
        Some((items, run)) => (items, run),
        None => (
            TokenStream::new(),
            quote! {
                #p::GuRun::Gpu(_) | #p::GuRun::Simulate => ::core::result::Result::Err(::gpu_runtime::Error::Internal {
                    message: ::std::string::String::from("a CPU-target gufunc was sent to a GPU"),
                }),
            },
        ),
    };
    let ks_in: Vec<usize> = (0..inputs.len()).collect();
    let in_strs: Vec<String> = in_idents.iter().map(|i| i.to_string()).collect();
    let along = is_reduction(layout).then(|| {
        quote! {
            /// As the plain call, with the core of every input with one core dimension
            /// taken along `axis` (NumPy's `axis=`) instead of the last: the results have
            /// that axis removed. An axis past an input's last is `Error::BadAxis`.
            pub fn along<'__a>(axis: usize, #arg_list) -> ::gpu_runtime::Result<#out_ty> {
                let __r = __call(#default_where, &[], ::core::option::Option::Some(axis), #(#in_idents),*);
                #to_host
            }
        }
    });
    let mod_doc = format!("The generated API of the generalized function `{name_str}` (layout `{text}`).");
    let simulate = (target == ptx_codegen::Target::Cuda).then(|| {
        quote! {
            /// Runs the generated kernel in the simulator, on the host (as the GPU would
            /// run it: the same windows and bounds checks).
            pub fn simulate<'__a>(#arg_list) -> ::gpu_runtime::Result<#out_ty> {
                let __r = __call(#p::GuWhere::Simulate, &[], ::core::option::Option::None, #(#in_idents),*);
                #to_host
            }
        }
    });
    let wrapper = quote! {
        #(#docs)*
        #[allow(clippy::too_many_arguments)]
        #vis fn #name<'__a>(#arg_list) -> ::gpu_runtime::Result<#out_ty> {
            #name::__host(#name::__call(#default_where, &[], ::core::option::Option::None, #(#in_idents),*))
        }
    };
    let api = quote! {
        /// Runs the function on `device` (a GPU, or `Device::cpu()`).
        pub fn on<'__a>(device: &::gpu_runtime::Device, #arg_list) -> ::gpu_runtime::Result<#out_ty> {
            __host(__call(#p::GuWhere::On(device), &[], ::core::option::Option::None, #(#in_idents),*))
        }

        /// As the plain call, with the sizes of output core dimensions that no input
        /// fixes: `&[("m", 4)]`.
        pub fn sized<'__a>(sizes: &[(&str, usize)], #arg_list) -> ::gpu_runtime::Result<#out_ty> {
            __host(__call(#default_where, sizes, ::core::option::Option::None, #(#in_idents),*))
        }

        /// Runs the function on the CPU, one loop index after another.
        pub fn cpu<'__a>(#arg_list) -> ::gpu_runtime::Result<#out_ty> {
            __host(__call(#p::GuWhere::Cpu, &[], ::core::option::Option::None, #(#in_idents),*))
        }

        /// Runs the function on the CPU, the loop indices split over threads with rayon.
        pub fn parallel<'__a>(#arg_list) -> ::gpu_runtime::Result<#out_ty> {
            __host(__call(#p::GuWhere::Parallel, &[], ::core::option::Option::None, #(#in_idents),*))
        }

        /// As the plain call, with the results left where they were computed, as
        /// `DeviceArray`s: on the GPU that ran the call, or in the CPU device's memory
        /// for a call on the host. A chain of calls over device arrays keeps its data
        /// on the device.
        pub fn device<'__a>(#arg_list) -> ::gpu_runtime::Result<#dev_out_ty> {
            let __r = __call(#default_where, &[], ::core::option::Option::None, #(#in_idents),*);
            #to_device
        }

        #[doc(hidden)]
        pub(super) fn __host(__r: ::gpu_runtime::Result<(#p::GuPlan, #out_tuple)>) -> ::gpu_runtime::Result<#out_ty> {
            #to_host
        }
    };
    let (wrapper, api) = match surface {
        Surface::Full => (wrapper, api),
        Surface::AlongOnly => (TokenStream::new(), TokenStream::new()),
    };
    quote! {
        #wrapper

        #[doc = #mod_doc]
        #[allow(non_snake_case, clippy::too_many_arguments, clippy::needless_question_mark)]
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

            #api

            #simulate

            #along

            #[doc(hidden)]
            pub(super) fn __call<'__a>(
                __where: #p::GuWhere<'_>,
                __sizes: &[(&str, usize)],
                __axis: ::core::option::Option<usize>,
                #arg_list
            ) -> ::gpu_runtime::Result<(#p::GuPlan, #out_tuple)> {
                #(let #in_idents = #p::gu_along(&__LAYOUT, #ks_in, __axis, ::gpu_runtime::nd::GuArg::into_gu(#in_idents))?;)*
                let __plan = #p::GuPlan::new(&__LAYOUT, &[#(#in_idents.shape()),*], __sizes)?;
                #(let #in_idents = #p::GuIn::new(&__LAYOUT, &__plan, #ks_in, #in_idents)?;)*
                let __loops = __plan.loops;
                #host_fn
                match #p::gu_run(__where, #name_str, &[#((#in_strs, #in_idents.device())),*])? {
                    #p::GuRun::Host(__order) => {
                        #(let #in_idents = #in_idents.on_host()?;)*
                        let __values = #p::host_map(#name_str, __loops, __order, &|__t| __host_at(&__plan, __t, #(&#in_idents),*))?;
                        #(#gather)*
                        #(#gather_ret)*
                        ::core::result::Result::Ok((__plan, (#(#p::GuOut::Host(#all_bufs),)*)))
                    }
                    #gpu_run
                }
            }
        }
    }
}

/// Whether a layout is a reduction's (every input with at most one core dimension, every
/// output `()`), whose cores can be taken along any axis, as NumPy's `axis=`.
fn is_reduction(layout: &Layout) -> bool {
    layout.inputs.iter().all(|d| d.len() <= 1) && layout.outputs.iter().all(Vec::is_empty)
}

/// The kernel (`#[kernel] fn gpu_kernel`) and the `GuRun::Gpu`/`Simulate` arms of the call.
fn gpu_items(
    func: &syn::ItemFn,
    layout: &Layout,
    rets: &[syn::Ident],
    inputs: &[&Param],
    outputs: &[&Param],
) -> (TokenStream, TokenStream) {
    let p = quote!(::gpu_runtime::__private);
    let name_str = func.sig.ident.to_string();
    let mut kparams: Vec<TokenStream> = vec![quote!(__gu_loops: usize)];
    let mut kargs: Vec<TokenStream> = vec![quote!(__loops)];
    let mut prologue: Vec<TokenStream> = Vec::new();
    // Once per thread: every loop index's core lies inside its data (the views' elements
    // are then read and written unchecked against the data, checked against the core).
    let mut guards: Vec<TokenStream> = Vec::new();
    let mut views: Vec<View> = Vec::new();
    // One kernel parameter per core dimension, shared by every view that has it: an index
    // checked against `n` in one view is then known to be inside the others of size `n`.
    let mut seen: Vec<String> = Vec::new();
    let mut core_dims = |names: &'_ [String], kparams: &mut Vec<TokenStream>, kargs: &mut Vec<TokenStream>| {
        names
            .iter()
            .map(|name| {
                let d = format_ident!("__gu_dim_{}", name);
                if !seen.contains(name) {
                    seen.push(name.clone());
                    kparams.push(quote!(#d: usize));
                    kargs.push(quote!(__plan.size(#name)));
                }
                d
            })
            .collect::<Vec<syn::Ident>>()
    };
    for (k, q) in inputs.iter().enumerate() {
        let Names { data, base, step } = names_of(q);
        let (id, elem) = (&q.ident, &q.elem);
        kparams.push(quote!(#data: &[#elem]));
        kargs.push(quote!(#id.kernel_in()));
        let dims = core_dims(&layout.inputs[k], &mut kparams, &mut kargs);
        kparams.push(quote!(#step: usize));
        kargs.push(quote!(#id.step()));
        let len = dims.iter().fold(quote!(1usize), |acc, d| quote!(#acc * #d));
        guards.push(window_guard(&data, &quote!(#step), &len));
        if q.kind == Kind::Scalar {
            let m = q.mutable_binding.then(|| quote!(mut));
            prologue.push(quote! {
                // SAFETY: inside the data (the window guard on entry).
                let #m #id: #elem = unsafe { *#data.get_unchecked(__gu_t * #step) };
            });
        } else {
            prologue.push(quote!(let #base = __gu_t * #step;));
            views.push(View { name: id.to_string(), base, dims });
        }
    }
    let mut out_bufs = Vec::new();
    for (k, q) in outputs.iter().enumerate() {
        let Names { data, base, .. } = names_of(q);
        let elem = &q.elem;
        let buf = format_ident!("__o{}", k);
        kparams.push(quote!(#data: &mut [#elem]));
        kargs.push(quote!(&mut #buf));
        let dims = core_dims(&layout.outputs[k], &mut kparams, &mut kargs);
        let len = dims.iter().fold(quote!(1usize), |acc, d| quote!(#acc * #d));
        guards.push(window_guard(&data, &quote!((#len)), &len));
        prologue.push(quote!(let #base = __gu_t * (#len);));
        views.push(View { name: q.ident.to_string(), base, dims });
        out_bufs.push((buf, elem.clone(), k));
    }
    let ret_params: Vec<syn::Ident> = (0..rets.len()).map(|k| format_ident!("__gu_ret{}", k)).collect();
    let ret_values: Vec<syn::Ident> = (0..rets.len()).map(|k| format_ident!("__gu_r{}", k)).collect();
    for (k, (r, param)) in rets.iter().zip(&ret_params).enumerate() {
        guards.push(quote! {
            if __gu_loops > #param.len() {
                return;
            }
        });
        kparams.push(quote!(#param: &mut [#r]));
        let buf = format_ident!("__ret{}", k);
        kargs.push(quote!(&mut #buf));
        out_bufs.push((buf, r.clone(), outputs.len() + k));
    }
    let mut body = (*func.block).clone();
    let mut rw = Rewrite { views: &views, errors: Vec::new() };
    rw.visit_block_mut(&mut body);
    let errors: Vec<TokenStream> = rw.errors.iter().map(syn::Error::to_compile_error).collect();
    let run_body = match rets {
        [r] => quote! {
            let __gu_r0: #r = '__gu: loop { break '__gu #body; };
            // SAFETY: `__gu_t < __gu_loops <= __gu_ret0.len()` (the guard on entry).
            unsafe { *__gu_ret0.get_unchecked_mut(__gu_t) = __gu_r0; }
        },
        [_, ..] => quote! {
            let (#(#ret_values),*) = '__gu: loop { break '__gu #body; };
            // SAFETY: `__gu_t < __gu_loops`, at most each output's length (the guards on entry).
            #(unsafe { *#ret_params.get_unchecked_mut(__gu_t) = #ret_values; })*
        },
        [] => quote! {
            '__gu: loop {
                #body
                break '__gu;
            }
        },
    };
    let kernel = quote! {
        #[allow(unused_variables, unused_mut, unused_labels, unused_parens, unused_unsafe, clippy::never_loop, clippy::needless_return)]
        #[::gpu_runtime::kernel]
        fn gpu_kernel(#(#kparams),*) {
            #(#guards)*
            let mut __gu_t = gpu::grid1();
            while __gu_t < __gu_loops {
                #(#prologue)*
                #run_body
                __gu_t += gpu::gridsize1();
            }
        }
    };
    if !errors.is_empty() {
        // Reported once, here: the kernel is not written out (its checker would say the
        // same again), and the call has no GPU to go to.
        let run = quote! {
            #p::GuRun::Gpu(_) | #p::GuRun::Simulate => ::core::result::Result::Err(::gpu_runtime::Error::Internal {
                message: ::std::string::String::from("this gufunc did not compile for the GPU"),
            }),
        };
        return (quote!(#(#errors)*), run);
    }
    let items = quote! {
        #[allow(unused_imports)]
        use ::gpu_runtime::gpu;

        #kernel
    };
    let all: Vec<&syn::Ident> = out_bufs.iter().map(|(b, _, _)| b).collect();
    let ks: Vec<usize> = out_bufs.iter().map(|(_, _, k)| *k).collect();
    let elems: Vec<&syn::Ident> = out_bufs.iter().map(|(_, t, _)| t).collect();
    let in_idents: Vec<&syn::Ident> = inputs.iter().map(|q| &q.ident).collect();
    // A thread fault of the kernel is reported at the first loop index where the function
    // fails on the host (its inputs brought there), else as the kernel's.
    let first_fault = quote! {
        ::core::result::Result::Ok(#p::first_panic(#name_str, __loops, |__t| __host_at(&__plan, __t, #(&#in_idents),*)))
    };
    let fault = quote! {
        #p::gu_fault(__e, || {
            #(let #in_idents = #in_idents.on_host()?;)*
            #first_fault
        })
    };
    let run = quote! {
        #p::GuRun::Gpu(__device) => {
            #(let mut #all: ::gpu_runtime::DeviceVec<#elems> = #p::gu_device_output(&__LAYOUT, &__plan, #ks, &__device)?;)*
            if __loops > 0 {
                #(let #in_idents = #in_idents.upload(&__device)?;)*
                let __config = #p::gu_launch_config(__loops, ::core::option::Option::Some(&__device));
                if let ::core::result::Result::Err(__e) = gpu_kernel::launch_with(&__config, #(#kargs),*).and_then(|__p| __p.wait()) {
                    return ::core::result::Result::Err(#fault);
                }
            }
            ::core::result::Result::Ok((__plan, (#(#p::GuOut::Device(#all),)*)))
        }
        #p::GuRun::Simulate => {
            #(let #in_idents = #in_idents.on_host()?;)*
            #(let mut #all: ::std::vec::Vec<#elems> = #p::gu_output(&__LAYOUT, &__plan, #ks);)*
            if __loops > 0 {
                let __config = #p::gu_launch_config(__loops, ::core::option::Option::None);
                if let ::core::result::Result::Err(__e) = gpu_kernel::simulate_with(&__config, #(#kargs),*) {
                    return ::core::result::Result::Err(#p::gu_fault(__e, || #first_fault));
                }
            }
            ::core::result::Result::Ok((__plan, (#(#p::GuOut::Host(#all),)*)))
        }
    };
    (items, run)
}

/// The kernel's check on entry that every loop index's window (`len` elements from
/// `t * step`, for `t < __gu_loops`) lies inside `data`, written without a product that
/// could overflow. The call sizes every argument so that it holds (and checks it on the
/// host); were it ever false, the kernel would touch nothing and return. A `return`, not a
/// fault: a fault path on entry measured 1.8 times slower on the H200 (`bench/gufunc_shapes.rs`),
/// and every element access after it is unchecked against the data.
fn window_guard(data: &syn::Ident, step: &TokenStream, len: &TokenStream) -> TokenStream {
    quote! {
        if __gu_loops > 0
            && #len > 0
            && (#len > #data.len() || (#step > 0 && __gu_loops - 1 > (#data.len() - #len) / #step))
        {
            return;
        }
    }
}

/// A core view in the kernel: its data parameter, the offset of the loop index's core, and
/// the core's sizes.
struct View {
    name: String,
    base: syn::Ident,
    dims: Vec<syn::Ident>,
}

/// Rewrites the body for the kernel: each view's index becomes `base + check_index(i, n)`
/// (rows and columns for a matrix), `len()`/`shape()` the core's sizes, and `return` a
/// `break` out of the loop around the body. A view used any other way is an error.
struct Rewrite<'a> {
    views: &'a [View],
    errors: Vec<syn::Error>,
}

impl Rewrite<'_> {
    fn view(&self, e: &syn::Expr) -> Option<&View> {
        let syn::Expr::Path(p) = e else { return None };
        let id = p.path.get_ident()?.to_string();
        self.views.iter().find(|v| v.name == id)
    }
}

impl Rewrite<'_> {
    /// The view an index expression `view[..]` indexes.
    fn view_index(&self, e: &syn::Expr) -> Option<&View> {
        match syn_bare(e) {
            syn::Expr::Index(ix) => self.view(&ix.expr),
            _ => None,
        }
    }

    /// `view[i]` as the element of the view's data it names, `*data.method(base + k)`,
    /// where `k` is the index checked against the core's size (`base + check_index(i, n)`,
    /// rows and columns for a matrix). Unchecked against the data is sound: the kernel
    /// checks once, on entry, that every loop index's core lies inside its data.
    fn place(&mut self, e: &mut syn::Expr, method: &str) -> Option<syn::Expr> {
        let syn::Expr::Index(ix) = syn_bare_mut(e) else { return None };
        self.visit_expr_mut(&mut ix.index);
        let v = self.view(&ix.expr)?;
        let (data, base, index) = (&ix.expr, &v.base, &ix.index);
        let method = syn::Ident::new(method, ix.span());
        let at: syn::Expr = match v.dims.as_slice() {
            [n] => syn::parse_quote_spanned!(index.span()=> #base + gpu::check_index(#index, #n)),
            [r, c] => match syn_bare(index) {
                syn::Expr::Tuple(t) if t.elems.len() == 2 => {
                    let (i, j) = (&t.elems[0], &t.elems[1]);
                    syn::parse_quote_spanned!(index.span()=>
                        #base + gpu::check_index(#i, #r) * #c + gpu::check_index(#j, #c))
                }
                _ => {
                    self.errors.push(syn::Error::new(
                        index.span(),
                        format!("`{}` is a matrix: index it with a pair, `{}[(row, column)]`", v.name, v.name),
                    ));
                    return None;
                }
            },
            _ => return None,
        };
        Some(syn::parse_quote_spanned!(ix.span()=> *#data.#method(#at)))
    }
}

/// `+=`, `-=`, … (an assignment through an operator).
fn is_compound(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

impl VisitMut for Rewrite<'_> {
    fn visit_item_fn_mut(&mut self, _: &mut syn::ItemFn) {
        // A nested function has its own returns and cannot see the views.
    }

    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        match e {
            syn::Expr::Return(r) => {
                if let Some(v) = &mut r.expr {
                    self.visit_expr_mut(v);
                }
                let value = r.expr.take();
                *e = syn::parse_quote_spanned!(r.span()=> break '__gu #value);
            }
            // `view[i] = v` and `view[i] op= v`: the write, unchecked once the index is.
            syn::Expr::Assign(a) if self.view_index(&a.left).is_some() => {
                self.visit_expr_mut(&mut a.right);
                let Some(place) = self.place(&mut a.left, "get_unchecked_mut") else { return };
                let right = &a.right;
                *e = syn::parse_quote_spanned!(a.span()=> unsafe { #place = #right });
            }
            syn::Expr::Binary(b) if is_compound(&b.op) && self.view_index(&b.left).is_some() => {
                self.visit_expr_mut(&mut b.right);
                let Some(place) = self.place(&mut b.left, "get_unchecked_mut") else { return };
                let (op, right) = (&b.op, &b.right);
                *e = syn::parse_quote_spanned!(b.span()=> unsafe { #place #op #right });
            }
            syn::Expr::Index(ix) if self.view(&ix.expr).is_some() => {
                let span = ix.span();
                if let Some(place) = self.place(e, "get_unchecked") {
                    *e = syn::parse_quote_spanned!(span=> (unsafe { #place }));
                }
            }
            syn::Expr::MethodCall(m) if self.view(&m.receiver).is_some() => {
                for a in &mut m.args {
                    self.visit_expr_mut(a);
                }
                let Some(v) = self.view(&m.receiver) else { return };
                let method = m.method.to_string();
                let (base, dims) = (&v.base, &v.dims);
                let span = m.span();
                match (method.as_str(), dims.as_slice(), m.args.len()) {
                    ("len", [n], 0) => *e = syn::parse_quote_spanned!(span=> #n),
                    ("len", [r, c], 0) => *e = syn::parse_quote_spanned!(span=> (#r * #c)),
                    ("is_empty", [n], 0) => *e = syn::parse_quote_spanned!(span=> (#n == 0)),
                    ("is_empty", [r, c], 0) => *e = syn::parse_quote_spanned!(span=> (#r * #c == 0)),
                    ("shape", [r, c], 0) => *e = syn::parse_quote_spanned!(span=> (#r, #c)),
                    ("get_unchecked" | "get_unchecked_mut", [_], 1) => {
                        let i = &m.args[0];
                        m.args[0] = syn::parse_quote_spanned!(span=> #base + (#i));
                    }
                    _ => self.errors.push(syn::Error::new(
                        m.method.span(),
                        format!(
                            "on the GPU, `{}` is a view of its core: index it (`{}`), or ask its size ({})",
                            v.name,
                            if dims.len() == 2 { "[(i, j)]" } else { "[i]" },
                            if dims.len() == 2 { "`shape()`, `len()`" } else { "`len()`" }
                        ),
                    )),
                }
            }
            syn::Expr::Path(_) if self.view(e).is_some() => {
                let name = self.view(e).map(|v| v.name.clone()).unwrap_or_default();
                self.errors.push(syn::Error::new(
                    e.span(),
                    format!("on the GPU, `{name}` is a view of its core: index it or ask its size, but it is not a value to pass or bind"),
                ));
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}

fn syn_bare_mut(e: &mut syn::Expr) -> &mut syn::Expr {
    match e {
        syn::Expr::Paren(p) => syn_bare_mut(&mut p.expr),
        syn::Expr::Group(g) => syn_bare_mut(&mut g.expr),
        e => e,
    }
}

fn syn_bare(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => syn_bare(&p.expr),
        syn::Expr::Group(g) => syn_bare(&g.expr),
        e => e,
    }
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
        for call in ["pub fn on <", "pub fn sized <", "pub fn parallel <", "pub fn device <"] {
            assert!(full.contains(call) && !along.contains(call), "{call}");
        }
        assert!(along.contains("pub fn along <") && along.contains("fn __call <"));
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
