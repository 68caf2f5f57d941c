//! Diagnostics: where an error goes, how errors combine, and the wording shared by several checks
//! (type messages, conversion and operand hints).

use quote::ToTokens;

use super::context::{FnChecker, ProgramCx, SpanRange};
use super::syntax;
use crate::ir::BinaryOp;
use crate::ty::ScalarType;

impl ProgramCx {
    /// What the program's entry is, as messages name it.
    pub(super) fn entry_kind(&self) -> &'static str {
        match (self.kernel_entry, self.kernel) {
            (true, _) => "kernel",
            (false, true) => "device function",
            (false, false) => "vectorized function",
        }
    }

    pub(super) fn error(&mut self, tokens: impl ToTokens, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new_spanned(tokens, msg));
    }

    pub(super) fn error_at(&mut self, span: impl Into<SpanRange>, msg: impl std::fmt::Display) {
        let SpanRange(first, last) = span.into();
        let ends: proc_macro2::TokenStream = [first, last]
            .into_iter()
            .map(|s| {
                proc_macro2::TokenTree::Punct({
                    let mut p = proc_macro2::Punct::new('.', proc_macro2::Spacing::Alone);
                    p.set_span(s);
                    p
                })
            })
            .collect();
        self.errors.push(syn::Error::new_spanned(ends, msg));
    }

    pub(super) fn combined_errors(&mut self) -> Option<syn::Error> {
        let mut it = std::mem::take(&mut self.errors).into_iter();
        let mut first = it.next()?;
        for e in it {
            first.combine(e);
        }
        Some(first)
    }
}

/// A function's checks report into the program's diagnostics.
impl FnChecker<'_> {
    pub(super) fn error(&mut self, tokens: impl ToTokens, msg: impl std::fmt::Display) {
        self.prog.error(tokens, msg);
    }

    pub(super) fn error_at(&mut self, span: impl Into<SpanRange>, msg: impl std::fmt::Display) {
        self.prog.error_at(span, msg);
    }
}

const SCALAR_TYPES_HINT: &str = "code on the GPU computes with the scalar types f32, f64, i8, i16, i32, i64, isize, u8, \
     u16, u32, u64, usize, bool, half's f16 and bf16, and num-complex's Complex<f32> and Complex<f64> (a kernel also \
     with `gpu::Dim3`, slices and arrays)";

/// Where a type appears, for the wording of its diagnostic.
#[derive(Copy, Clone)]
pub(super) enum TypeUse {
    Param,
    Return,
    TupleElement,
    Let,
    Cast,
}

impl TypeUse {
    pub(super) fn message(self, ty: &syn::Type, problem: syntax::TypeProblem) -> String {
        let shown = render_type(ty);
        match (self, problem) {
            (TypeUse::Param, syntax::TypeProblem::Reference | syntax::TypeProblem::Sequence) => format!(
                "`{shown}` cannot be a parameter of a vectorized function: its parameters are scalars (e.g. `x: f32`), and the call broadcasts the function over slices, so pass the slice at the call site"
            ),
            (TypeUse::Return, syntax::TypeProblem::Reference | syntax::TypeProblem::Sequence) => format!(
                "`{shown}` cannot be returned from a vectorized function: it returns one scalar per element (e.g. `-> f32`); the call collects them into a `Vec`"
            ),
            (TypeUse::Param, syntax::TypeProblem::Tuple) => format!(
                "`{shown}` cannot be a parameter of a vectorized function: its parameters are scalars; pass each field as a parameter of its own (tuples are for results, e.g. `-> (f32, f32)`)"
            ),
            (TypeUse::TupleElement, _) => format!(
                "`{shown}` cannot be part of a result: a vectorized function returns a scalar or a tuple of scalars (e.g. `-> (f32, f32)`)"
            ),
            (_, syntax::TypeProblem::Unit) => format!("`{shown}` is not a scalar type: {SCALAR_TYPES_HINT}"),
            (_, syntax::TypeProblem::Named(name)) => {
                let last = name.rsplit("::").next().unwrap_or(&name);
                // A user struct's name, by Rust's convention: say where structs work.
                let structs = if syntax::may_name_struct(last) {
                    "; a struct works once it is marked `#[derive(GpuType)]`"
                } else {
                    ""
                };
                format!("`{name}` is not a scalar type: {SCALAR_TYPES_HINT}{structs}")
            }
            (_, syntax::TypeProblem::ComplexPart(part)) => format!(
                "`{shown}` is not supported: a complex number's parts are `f32` or `f64` (`Complex<f32>`, `Complex<f64>`), not `{part}`"
            ),
            _ => format!("`{shown}` is not supported here: {SCALAR_TYPES_HINT}"),
        }
    }
}

/// `` `callee` takes 2 arguments, but 3 were given `` (rustc's wording).
pub(super) fn arity(callee: &str, want: usize, got: usize) -> String {
    let plural = if want == 1 { "" } else { "s" };
    format!("`{callee}` takes {want} argument{plural}, but {got} were given")
}

pub(super) fn render(e: &syn::Expr) -> String {
    syntax::render_tokens(e.to_token_stream())
}

fn render_type(t: &syn::Type) -> String {
    // In a type, `<` and `>` are brackets: `Vec<f32>`, not `Vec < f32 >`.
    syntax::render_tokens(t.to_token_stream())
        .replace(" < ", "<")
        .replace(" <", "<")
        .replace("< ", "<")
        .replace(" >", ">")
}

/// `x` stays `x`; anything with operators gets parentheses before `as`.
fn castable(e: &syn::Expr) -> String {
    match e {
        syn::Expr::Path(_)
        | syn::Expr::Lit(_)
        | syn::Expr::Paren(_)
        | syn::Expr::MethodCall(_)
        | syn::Expr::Call(_) => render(e),
        _ => format!("({})", render(e)),
    }
}

fn is_unsuffixed_int(e: &syn::Expr) -> Option<String> {
    match e {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.suffix().is_empty() => {
            Some(i.base10_digits().to_string())
        }
        syn::Expr::Paren(p) => is_unsuffixed_int(&p.expr),
        _ => None,
    }
}

/// Advice for a value of type `found` where `want` was expected.
pub(super) fn conversion_hint(e: &syn::Expr, found: &str, want: &str) -> String {
    if let (Some(digits), true) = (is_unsuffixed_int(e), matches!(want, "f32" | "f64" | "{float}")) {
        return format!(": write the literal as a float, `{digits}.0`");
    }
    if ScalarType::from_name(want).is_some() && ScalarType::from_name(found).is_some() {
        return format!(": convert it with `{} as {want}`", castable(e));
    }
    String::new()
}

pub(super) fn operand_mismatch_hint(l: &syn::Expr, r: &syn::Expr, lt: &str, rt: &str, op: BinaryOp) -> String {
    // The half types take no literal and no `as`: they convert through functions.
    if let Some(h) = [lt, rt].into_iter().find(|t| matches!(*t, "f16" | "bf16")) {
        let other = if lt == h { rt } else { lt };
        let article = if h == "f16" { "an" } else { "a" };
        return if other.starts_with('{') {
            format!(
                ": no literal is {article} `{h}` (the `half` crate's type): write `{h}::from_f32(1.5)`, or a constant such as `{h}::ONE`"
            )
        } else {
            format!(": both operands must have the same type; convert with `{h}::from_f32(y)` or `x.to_f32()`")
        };
    }
    let float = |t: &str| matches!(t, "f32" | "f64" | "{float}");
    if let Some(d) = is_unsuffixed_int(r).filter(|_| float(lt)) {
        return format!(": write the literal as a float, `{d}.0`");
    }
    if let Some(d) = is_unsuffixed_int(l).filter(|_| float(rt)) {
        return format!(": write the literal as a float, `{d}.0`");
    }
    let (Some(a), Some(b)) = (ScalarType::from_name(lt), ScalarType::from_name(rt)) else {
        return ": both operands must have the same type".into();
    };
    if op == BinaryOp::Shl || op == BinaryOp::Shr {
        return String::new();
    }
    // Suggest converting the narrower side to the wider type, the way one widens by hand.
    let (narrow_is_left, wide) =
        if a.bits() < b.bits() || (a.is_int() && b.is_float()) { (true, b) } else { (false, a) };
    let sym = op.symbol();
    if narrow_is_left {
        format!(
            ": both operands must have the same type; convert one, e.g. `{} as {wide} {sym} {}`",
            castable(l),
            render(r)
        )
    } else {
        format!(
            ": both operands must have the same type; convert one, e.g. `{} {sym} {} as {wide}`",
            render(l),
            castable(r)
        )
    }
}
