//! Small readers of `syn` syntax: scalar types, operators, and token rendering for messages.

use proc_macro2::{Delimiter, Spacing, TokenStream, TokenTree};
use syn::ext::IdentExt;

use crate::ir::{BinaryOp, LogicalOp};
use crate::ty::ScalarType;

/// Why a type is not a scalar type of the kernel language.
pub enum TypeProblem {
    Reference,
    /// A slice, array or `Vec`-like sequence.
    Sequence,
    Tuple,
    Unit,
    Named(String),
    /// `Complex<T>` with parts other than `f32`/`f64` (the parts as written).
    ComplexPart(String),
    Other,
}

/// `f32`, `u8`, `std::primitive::f64`, … (parentheses allowed).
pub fn scalar_type(ty: &syn::Type) -> Result<ScalarType, TypeProblem> {
    match ty {
        syn::Type::Paren(p) => scalar_type(&p.elem),
        syn::Type::Group(g) => scalar_type(&g.elem),
        syn::Type::Reference(_) | syn::Type::Ptr(_) => Err(TypeProblem::Reference),
        syn::Type::Slice(_) | syn::Type::Array(_) => Err(TypeProblem::Sequence),
        syn::Type::Tuple(t) if t.elems.is_empty() => Err(TypeProblem::Unit),
        syn::Type::Tuple(_) => Err(TypeProblem::Tuple),
        syn::Type::Path(p) if p.qself.is_none() && complex_type(&p.path).is_some() => {
            complex_type(&p.path).expect("matched above")
        }
        syn::Type::Path(p) if p.qself.is_none() => {
            let segs: Vec<String> = p.path.segments.iter().map(|s| name(&s.ident)).collect();
            let has_args = p.path.segments.iter().any(|s| !s.arguments.is_none());
            let name = segs.last().cloned().unwrap_or_default();
            let half = matches!(name.as_str(), "f16" | "bf16");
            let prefix_ok = match segs.len() {
                1 => p.path.leading_colon.is_none(),
                // The half types are the `half` crate's (Rust's own `f16` is unstable), also
                // as `gpu_runtime` re-exports them.
                2 => half && matches!(segs[0].as_str(), "half" | "gpu_runtime"),
                3 => !half && matches!(segs[0].as_str(), "std" | "core") && segs[1] == "primitive",
                _ => false,
            };
            match ScalarType::from_name(&name) {
                Some(t) if prefix_ok && !has_args => Ok(t),
                _ if matches!(name.as_str(), "Vec" | "VecDeque" | "Box" | "Rc" | "Arc") => Err(TypeProblem::Sequence),
                _ => Err(TypeProblem::Named(render_tokens(quote::ToTokens::to_token_stream(&p.path)))),
            }
        }
        _ => Err(TypeProblem::Other),
    }
}

/// Whether `path` names num-complex's complex type, as the crate or `gpu_runtime` spells
/// it: `Complex<f32>`, `Complex32`, `num_complex::Complex64`, `gpu_runtime::Complex<f64>`.
/// `Some(Err)` for `Complex<T>` of another `T` (num-complex has it; the kernel language
/// does not).
pub fn complex_type(path: &syn::Path) -> Option<Result<ScalarType, TypeProblem>> {
    let segs: Vec<String> = path.segments.iter().map(|s| name(&s.ident)).collect();
    let (last, prefix) = segs.split_last()?;
    let prefix_ok = match prefix {
        [] => path.leading_colon.is_none(),
        [krate] => matches!(krate.as_str(), "num_complex" | "gpu_runtime"),
        _ => false,
    };
    if !prefix_ok || path.segments.iter().rev().skip(1).any(|s| !s.arguments.is_none()) {
        return None;
    }
    let args = &path.segments.last().expect("a path has a segment").arguments;
    match (last.as_str(), args) {
        ("Complex32", syn::PathArguments::None) => Some(Ok(ScalarType::C32)),
        ("Complex64", syn::PathArguments::None) => Some(Ok(ScalarType::C64)),
        ("Complex", syn::PathArguments::AngleBracketed(a)) if a.args.len() == 1 => {
            let syn::GenericArgument::Type(part) = &a.args[0] else { return None };
            Some(match scalar_type(part) {
                Ok(p) => ScalarType::complex_of(p).ok_or_else(|| TypeProblem::ComplexPart(p.rust_name().to_string())),
                Err(_) => Err(TypeProblem::ComplexPart(render_tokens(quote::ToTokens::to_token_stream(part)))),
            })
        }
        _ => None,
    }
}

/// The name an identifier stands for: `r#x` and `x` are one name (`r#type` is `type`).
/// `e` without parentheses or invisible groups.
pub fn bare(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => bare(&p.expr),
        syn::Expr::Group(g) => bare(&g.expr),
        e => e,
    }
}

/// `e` as an access of a named field (`p.pos`, not `t.0`), without parentheses.
pub fn named_field(e: &syn::Expr) -> Option<&syn::ExprField> {
    match bare(e) {
        syn::Expr::Field(f) if matches!(f.member, syn::Member::Named(_)) => Some(f),
        _ => None,
    }
}

/// `t` without parentheses or invisible groups.
pub fn bare_type(t: &syn::Type) -> &syn::Type {
    match t {
        syn::Type::Paren(p) => bare_type(&p.elem),
        syn::Type::Group(g) => bare_type(&g.elem),
        t => t,
    }
}

/// `s.get_unchecked(i)` or `s.get_unchecked_mut(i)` (any arguments), also in parentheses
/// or as the one expression of an `unsafe` block: what a kernel may dereference. The
/// simulator's copy recognises the same calls.
pub fn unchecked_call(e: &syn::Expr) -> Option<&syn::ExprMethodCall> {
    match bare(e) {
        syn::Expr::MethodCall(m) if m.method == "get_unchecked" || m.method == "get_unchecked_mut" => Some(m),
        syn::Expr::Unsafe(u) => match u.block.stmts.as_slice() {
            [syn::Stmt::Expr(inner, None)] => unchecked_call(inner),
            _ => None,
        },
        _ => None,
    }
}

pub fn name(ident: &syn::Ident) -> String {
    ident.unraw().to_string()
}

/// Every name a pattern binds, with its span.
pub fn pattern_names(pat: &syn::Pat) -> Vec<(String, proc_macro2::Span)> {
    let mut out = Vec::new();
    collect_names(pat, &mut out);
    out
}

fn collect_names(pat: &syn::Pat, out: &mut Vec<(String, proc_macro2::Span)>) {
    match pat {
        syn::Pat::Ident(pi) => out.push((name(&pi.ident), pi.ident.span())),
        syn::Pat::Paren(p) => collect_names(&p.pat, out),
        syn::Pat::Reference(r) => collect_names(&r.pat, out),
        syn::Pat::Type(t) => collect_names(&t.pat, out),
        syn::Pat::Tuple(t) => t.elems.iter().for_each(|p| collect_names(p, out)),
        syn::Pat::TupleStruct(t) => t.elems.iter().for_each(|p| collect_names(p, out)),
        syn::Pat::Slice(s) => s.elems.iter().for_each(|p| collect_names(p, out)),
        syn::Pat::Struct(s) => s.fields.iter().for_each(|f| collect_names(&f.pat, out)),
        syn::Pat::Or(o) => o.cases.iter().take(1).for_each(|p| collect_names(p, out)),
        _ => {}
    }
}

pub enum BinOp {
    Plain(BinaryOp),
    Compound(BinaryOp),
    Logical(LogicalOp),
}

pub fn binary_op(op: &syn::BinOp) -> Option<BinOp> {
    use BinOp::{Compound, Logical, Plain};
    use syn::BinOp as B;
    Some(match op {
        B::Add(_) => Plain(BinaryOp::Add),
        B::Sub(_) => Plain(BinaryOp::Sub),
        B::Mul(_) => Plain(BinaryOp::Mul),
        B::Div(_) => Plain(BinaryOp::Div),
        B::Rem(_) => Plain(BinaryOp::Rem),
        B::And(_) => Logical(LogicalOp::And),
        B::Or(_) => Logical(LogicalOp::Or),
        B::BitXor(_) => Plain(BinaryOp::BitXor),
        B::BitAnd(_) => Plain(BinaryOp::BitAnd),
        B::BitOr(_) => Plain(BinaryOp::BitOr),
        B::Shl(_) => Plain(BinaryOp::Shl),
        B::Shr(_) => Plain(BinaryOp::Shr),
        B::Eq(_) => Plain(BinaryOp::Eq),
        B::Lt(_) => Plain(BinaryOp::Lt),
        B::Le(_) => Plain(BinaryOp::Le),
        B::Ne(_) => Plain(BinaryOp::Ne),
        B::Ge(_) => Plain(BinaryOp::Ge),
        B::Gt(_) => Plain(BinaryOp::Gt),
        B::AddAssign(_) => Compound(BinaryOp::Add),
        B::SubAssign(_) => Compound(BinaryOp::Sub),
        B::MulAssign(_) => Compound(BinaryOp::Mul),
        B::DivAssign(_) => Compound(BinaryOp::Div),
        B::RemAssign(_) => Compound(BinaryOp::Rem),
        B::BitXorAssign(_) => Compound(BinaryOp::BitXor),
        B::BitAndAssign(_) => Compound(BinaryOp::BitAnd),
        B::BitOrAssign(_) => Compound(BinaryOp::BitOr),
        B::ShlAssign(_) => Compound(BinaryOp::Shl),
        B::ShrAssign(_) => Compound(BinaryOp::Shr),
        _ => return None,
    })
}

/// Tokens as a person would write them: `x as f64`, `a.sqrt()`, `std::f32::consts::PI`.
pub fn render_tokens(ts: TokenStream) -> String {
    let mut out = String::new();
    // Whether the previous token glues to the next one (`.`, `::`, `&`, a joint `<` of `<<=`).
    let mut glue_next = true;
    for tt in ts {
        let (piece, glue_before) = match &tt {
            TokenTree::Group(g) => {
                let inner = render_tokens(g.stream());
                let called = out.ends_with(|c: char| c.is_alphanumeric() || matches!(c, '_' | ')' | '!' | ']'));
                match g.delimiter() {
                    Delimiter::Parenthesis => (format!("({inner})"), called),
                    Delimiter::Bracket => (format!("[{inner}]"), called),
                    Delimiter::Brace => (format!("{{ {inner} }}"), false),
                    Delimiter::None => (inner, false),
                }
            }
            TokenTree::Punct(p) => {
                let after_ident = out.ends_with(|c: char| c.is_alphanumeric() || c == '_');
                let glue = match p.as_char() {
                    '.' | ',' | ';' | ':' | '?' => true,
                    '!' => after_ident, // `println!`, but `a && !b`
                    _ => false,
                };
                (p.as_char().to_string(), glue)
            }
            other => (other.to_string(), false),
        };
        if !(glue_next || glue_before) {
            out.push(' ');
        }
        out.push_str(&piece);
        glue_next = match &tt {
            TokenTree::Punct(p) => {
                p.spacing() == Spacing::Joint
                    || matches!(p.as_char(), '.' | '\'')
                    || out.ends_with("::")
                    // a leading unary operator: `-x`, `&[f32]`, `!b`
                    || (matches!(p.as_char(), '-' | '&' | '!' | '*') && out.len() == 1)
            }
            _ => false,
        };
    }
    out
}

/// Whether a type's last name may be a user struct's: capitalised, and not one of Rust's
/// own types (`String`, `Vec`, `Self`, …), num-complex's or the GPU built-ins'.
pub(super) fn may_name_struct(name: &str) -> bool {
    let capitalised = name.chars().next().is_some_and(char::is_uppercase);
    let known = matches!(
        name,
        "Self"
            | "String"
            | "Vec"
            | "VecDeque"
            | "Box"
            | "Rc"
            | "Arc"
            | "Option"
            | "Result"
            | "Complex"
            | "Complex32"
            | "Complex64"
            | "HashMap"
            | "Cell"
            | "RefCell"
            | "PhantomData"
            | "Dim3"
    );
    capitalised && !known
}

/// The element an assignment writes in a kernel: `s[i]` (checked), or
/// `*s.get_unchecked_mut(i)` (unchecked): the array, the index and whether it is checked.
/// Unlike a read, the call is not looked for inside an `unsafe` block of its own: the
/// assignment is checked for being in `unsafe` as a whole.
pub(super) fn element_place(e: &syn::Expr) -> Option<(&syn::Expr, &syn::Expr, bool)> {
    match bare(e) {
        syn::Expr::Index(ix) => Some((&ix.expr, &ix.index, true)),
        syn::Expr::Unary(syn::ExprUnary { op: syn::UnOp::Deref(_), expr, .. }) => match bare(expr) {
            syn::Expr::MethodCall(m) if m.method == "get_unchecked_mut" && m.args.len() == 1 => {
                Some((&m.receiver, &m.args[0], false))
            }
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(s: &str) -> String {
        render_tokens(s.parse().unwrap())
    }

    #[test]
    fn renders_like_source() {
        assert_eq!(show("x as f64"), "x as f64");
        assert_eq!(show("a . sqrt ( )"), "a.sqrt()");
        assert_eq!(show("std :: f32 :: consts :: PI"), "std::f32::consts::PI");
        assert_eq!(show("& [f32]"), "&[f32]");
        assert_eq!(show("a + b * 2.0"), "a + b * 2.0");
        assert_eq!(show("x <<= 2"), "x <<= 2");
        assert_eq!(show("println ! (\"hi\")"), "println!(\"hi\")");
        assert_eq!(show("f (x , y)"), "f(x, y)");
        assert_eq!(show("a && ! b"), "a && ! b");
        assert_eq!(show("- x"), "-x");
        assert_eq!(show("x : f32"), "x: f32");
    }

    #[test]
    fn scalar_types() {
        let t = |s: &str| scalar_type(&syn::parse_str(s).unwrap());
        assert!(matches!(t("f32"), Ok(ScalarType::F32)));
        assert!(matches!(t("std::primitive::u8"), Ok(ScalarType::U8)));
        assert!(matches!(t("half::f16"), Ok(ScalarType::F16)));
        assert!(matches!(t("bf16"), Ok(ScalarType::BF16)));
        assert!(matches!(t("::gpu_runtime::bf16"), Ok(ScalarType::BF16)));
        assert!(t("std::primitive::f16").is_err());
        assert!(matches!(t("(i64)"), Ok(ScalarType::I64)));
        assert!(matches!(t("&[f32]"), Err(TypeProblem::Reference)));
        assert!(matches!(t("[f32; 4]"), Err(TypeProblem::Sequence)));
        assert!(matches!(t("Vec<f32>"), Err(TypeProblem::Sequence)));
        assert!(matches!(t("(f32, f32)"), Err(TypeProblem::Tuple)));
        assert!(matches!(t("String"), Err(TypeProblem::Named(n)) if n == "String"));
        assert!(matches!(t("foo::f32"), Err(TypeProblem::Named(_))));
    }
}
