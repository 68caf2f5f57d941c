//! The layout and the parameters of a `#[guvectorize]` function, and their agreement.

use syn::spanned::Spanned;

/// The parsed layout: each input's and output's core dimension names.
pub(super) struct Layout {
    pub(super) text: String,
    pub(super) inputs: Vec<Vec<String>>,
    pub(super) outputs: Vec<Vec<String>>,
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    Scalar,
    Slice,
    Mat,
}

impl Kind {
    pub(super) fn rank(self) -> usize {
        match self {
            Kind::Scalar => 0,
            Kind::Slice => 1,
            Kind::Mat => 2,
        }
    }
}

pub(super) struct Param {
    pub(super) ident: syn::Ident,
    pub(super) mutable_binding: bool,
    pub(super) elem: syn::Type,
    pub(super) kind: Kind,
    pub(super) written: bool,
    pub(super) ty: syn::Type,
}

/// `"(m,n),(n)->(m)"`: groups of comma-separated names, inputs `->` outputs.
pub(super) fn parse_layout(lit: &syn::LitStr) -> syn::Result<Layout> {
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

/// A scalar type (`f32`, `core::primitive::u8`, `half::f16`), as the frontend reads one, or a
/// user struct's path;
/// the type the generated code names it by (`f32`, `::gpu_runtime::f16`: a bare `f16`
/// would be Rust's own unstable type where the caller's module does not import `half`'s).
pub(super) fn scalar_ident(ty: &syn::Type) -> Option<syn::Type> {
    let Ok(t) = ptx_codegen::frontend::scalar_type(ty) else {
        // A user struct, as written (its kernel fetches the definition).
        return ptx_codegen::frontend::struct_type_path(ty).map(|_| ty.clone());
    };
    if t.is_complex() {
        let tokens = crate::signature::scalar_tokens(t);
        return Some(syn::parse_quote_spanned!(ty.span()=> #tokens));
    }
    if t.is_half() {
        let ident = syn::Ident::new(t.rust_name(), ty.span());
        return Some(syn::parse_quote_spanned!(ty.span()=> ::gpu_runtime::#ident));
    }
    let ident = syn::Ident::new(t.rust_name(), ty.span());
    Some(syn::parse_quote!(#ident))
}

/// What a parameter's type makes it: `T`, `&[T]`, `&mut [T]`, `Mat<T>`, `MatMut<T>`.
pub(super) fn param_kind(ty: &syn::Type) -> Option<(syn::Type, Kind, bool)> {
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

pub(super) fn params_of(func: &syn::ItemFn) -> syn::Result<Vec<Param>> {
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
                "a `#[guvectorize]` parameter is a scalar `T` (a `()` core), a slice `&[T]` or a `Mat<T>` read, or a `&mut [T]` or a `MatMut<T>` written (T one of f32, f64, i8…i64, isize, u8…u64, usize, bool, f16, bf16, Complex<f32>, Complex<f64>)",
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

pub(super) fn describe(dims: &[String]) -> String {
    format!("({})", dims.join(","))
}

/// Checks the parameters and the return type against the layout: inputs first, in order,
/// then the written outputs; a return value is the last output, with no core dimension.
pub(super) fn match_layout(
    func: &syn::ItemFn,
    layout: &Layout,
    params: &[Param],
    rets: &[syn::Type],
) -> syn::Result<()> {
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
