//! num-complex's `Complex<f32>` and `Complex<f64>`: constructors, the `re`/`im` fields,
//! operators and methods.
//!
//! A complex value is one scalar of the IR ([`ScalarType::C32`], [`ScalarType::C64`]): a
//! parameter, a result, an array element, a local. What computes with it is written out
//! here over its parts, in the kernel language itself: each operator and method is a
//! template, checked in place with its operands bound to fresh variables, that computes
//! what num-complex 0.4 computes, operation for operation (the same formulas, the same
//! order, the same special cases), so that `+ - *`, `conj` and `norm_sqr` round exactly as
//! on the host and the rest differ only where the parts' math functions do.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use super::context::{FnChecker, SpanRange, Write};
use super::diagnostics::arity;
use super::syntax;
use crate::ir::{BinaryOp, Block, Expr, ExprKind, Stmt, Type};
use crate::ty::ScalarType;

/// The names the operands of a template are bound to (no user code sees them: a template
/// is checked as a block of its own).
const OPERANDS: [&str; 2] = ["__z", "__w"];

/// `Complex<T> op Complex<T>`.
fn complex_complex(op: BinaryOp) -> Option<&'static str> {
    Some(match op {
        BinaryOp::Add => "Complex::new(__z.re + __w.re, __z.im + __w.im)",
        BinaryOp::Sub => "Complex::new(__z.re - __w.re, __z.im - __w.im)",
        BinaryOp::Mul => "Complex::new(__z.re * __w.re - __z.im * __w.im, __z.re * __w.im + __z.im * __w.re)",
        BinaryOp::Div => {
            "{ let n = __w.re * __w.re + __w.im * __w.im; \
               Complex::new((__z.re * __w.re + __z.im * __w.im) / n, (__z.im * __w.re - __z.re * __w.im) / n) }"
        }
        BinaryOp::Eq => "__z.re == __w.re && __z.im == __w.im",
        BinaryOp::Ne => "__z.re != __w.re || __z.im != __w.im",
        _ => return None,
    })
}

/// `Complex<T> op T`.
fn complex_real(op: BinaryOp) -> Option<&'static str> {
    Some(match op {
        BinaryOp::Add => "Complex::new(__z.re + __w, __z.im)",
        BinaryOp::Sub => "Complex::new(__z.re - __w, __z.im)",
        BinaryOp::Mul => "Complex::new(__z.re * __w, __z.im * __w)",
        BinaryOp::Div => "Complex::new(__z.re / __w, __z.im / __w)",
        _ => return None,
    })
}

/// `T op Complex<T>` (num-complex has these for `f32` and `f64`).
fn real_complex(op: BinaryOp) -> Option<&'static str> {
    Some(match op {
        BinaryOp::Add => "Complex::new(__z + __w.re, __w.im)",
        BinaryOp::Sub => "Complex::new(__z - __w.re, 0.0 - __w.im)",
        BinaryOp::Mul => "Complex::new(__z * __w.re, __z * __w.im)",
        BinaryOp::Div => {
            "{ let n = __w.re * __w.re + __w.im * __w.im; Complex::new(__z * __w.re / n, 0.0 - __z * __w.im / n) }"
        }
        _ => return None,
    })
}

/// The polar form of `__z`, as `to_polar` computes it: `(norm, arg)`.
const POLAR: &str = "(__z.re.hypot(__z.im), __z.im.atan2(__z.re))";

/// The methods: name, argument kinds after the receiver, result, template. `FLT` stands
/// for the parts' type.
struct Method {
    name: &'static str,
    args: &'static [Arg],
    template: &'static str,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Arg {
    /// A value of the parts' type.
    Part,
    /// A complex value of the receiver's type.
    Same,
    I32,
    U32,
}

const METHODS: &[Method] = &[
    Method { name: "conj", args: &[], template: "Complex::new(__z.re, -__z.im)" },
    Method { name: "norm_sqr", args: &[], template: "__z.re * __z.re + __z.im * __z.im" },
    Method { name: "norm", args: &[], template: "__z.re.hypot(__z.im)" },
    Method { name: "arg", args: &[], template: "__z.im.atan2(__z.re)" },
    Method { name: "l1_norm", args: &[], template: "__z.re.abs() + __z.im.abs()" },
    Method { name: "to_polar", args: &[], template: POLAR },
    Method { name: "scale", args: &[Arg::Part], template: "Complex::new(__z.re * __w, __z.im * __w)" },
    Method { name: "unscale", args: &[Arg::Part], template: "Complex::new(__z.re / __w, __z.im / __w)" },
    Method {
        name: "inv",
        args: &[],
        template: "{ let n = __z.re * __z.re + __z.im * __z.im; Complex::new(__z.re / n, -__z.im / n) }",
    },
    Method { name: "finv", args: &[], template: "{ let n = __z.re.hypot(__z.im); __z.conj() / n / n }" },
    Method { name: "fdiv", args: &[Arg::Same], template: "__z * __w.finv()" },
    Method {
        name: "exp",
        args: &[],
        template: "{ let re = __z.re; let im = __z.im;
            if re.is_infinite() && re < 0.0 && !im.is_finite() {
                Complex::new(0.0, 0.0)
            } else if re.is_infinite() && !(re < 0.0) && (im == 0.0 || !im.is_finite()) {
                Complex::new(re, if im.is_infinite() { FLT::NAN } else { im })
            } else if re.is_nan() && im == 0.0 {
                __z
            } else {
                let r = re.exp();
                Complex::new(r * im.cos(), r * im.sin())
            } }",
    },
    Method { name: "ln", args: &[], template: "{ let (r, theta) = __z.to_polar(); Complex::new(r.ln(), theta) }" },
    Method {
        name: "log",
        args: &[Arg::Part],
        template: "{ let (r, theta) = __z.to_polar(); Complex::new(r.log(__w), theta / __w.ln()) }",
    },
    Method { name: "log2", args: &[], template: "__z.ln() / std::FLT::consts::LN_2" },
    Method { name: "log10", args: &[], template: "__z.ln() / std::FLT::consts::LN_10" },
    Method { name: "exp2", args: &[], template: "Complex::from_polar(__z.re.exp2(), __z.im * std::FLT::consts::LN_2)" },
    Method { name: "expf", args: &[Arg::Part], template: "Complex::from_polar(__w.powf(__z.re), __z.im * __w.ln())" },
    Method {
        name: "sqrt",
        args: &[],
        template: "if __z.im == 0.0 {
                if __z.re.is_sign_positive() {
                    Complex::new(__z.re.sqrt(), __z.im)
                } else {
                    let im = (-__z.re).sqrt();
                    if __z.im.is_sign_positive() { Complex::new(0.0, im) } else { Complex::new(0.0, -im) }
                }
            } else if __z.re == 0.0 {
                let x = (__z.im.abs() / 2.0).sqrt();
                if __z.im.is_sign_positive() { Complex::new(x, x) } else { Complex::new(x, -x) }
            } else {
                let (r, theta) = __z.to_polar();
                Complex::from_polar(r.sqrt(), theta / 2.0)
            }",
    },
    Method {
        name: "cbrt",
        args: &[],
        template: "if __z.im == 0.0 {
                if __z.re.is_sign_positive() {
                    Complex::new(__z.re.cbrt(), __z.im)
                } else {
                    let re = (-__z.re).cbrt() / 2.0;
                    let im = 3.0_FLT.sqrt() * re;
                    if __z.im.is_sign_positive() { Complex::new(re, im) } else { Complex::new(re, -im) }
                }
            } else if __z.re == 0.0 {
                let im = __z.im.abs().cbrt() / 2.0;
                let re = 3.0_FLT.sqrt() * im;
                if __z.im.is_sign_positive() { Complex::new(re, im) } else { Complex::new(re, -im) }
            } else {
                let (r, theta) = __z.to_polar();
                Complex::from_polar(r.cbrt(), theta / 3.0)
            }",
    },
    Method {
        name: "powf",
        args: &[Arg::Part],
        template: "if __w == 0.0 {
                Complex::new(1.0, 0.0)
            } else {
                let (r, theta) = __z.to_polar();
                Complex::from_polar(r.powf(__w), theta * __w)
            }",
    },
    Method {
        name: "powc",
        args: &[Arg::Same],
        template: "if __w.re == 0.0 && __w.im == 0.0 { Complex::new(1.0, 0.0) } else { (__w * __z.ln()).exp() }",
    },
    Method {
        name: "powi",
        args: &[Arg::I32],
        template: "{ let base = if __w < 0 { __z.inv() } else { __z };
            let e = if __w < 0 { __w.wrapping_neg() as u32 } else { __w as u32 };
            base.powu(e) }",
    },
    Method {
        name: "powu",
        args: &[Arg::U32],
        template: "{ let mut base = __z; let mut e = __w;
            if e == 0 {
                Complex::new(1.0, 0.0)
            } else {
                while e & 1 == 0 { base = base * base; e >>= 1; }
                if e == 1 {
                    base
                } else {
                    let mut acc = base;
                    while e > 1 {
                        e >>= 1;
                        base = base * base;
                        if e & 1 == 1 { acc = acc * base; }
                    }
                    acc
                }
            } }",
    },
    Method {
        name: "sin",
        args: &[],
        template: "Complex::new(__z.re.sin() * __z.im.cosh(), __z.re.cos() * __z.im.sinh())",
    },
    Method {
        name: "cos",
        args: &[],
        template: "Complex::new(__z.re.cos() * __z.im.cosh(), -__z.re.sin() * __z.im.sinh())",
    },
    Method {
        name: "tan",
        args: &[],
        template: "{ let (a, b) = (__z.re + __z.re, __z.im + __z.im); Complex::new(a.sin(), b.sinh()).unscale(a.cos() + b.cosh()) }",
    },
    Method {
        name: "sinh",
        args: &[],
        template: "Complex::new(__z.re.sinh() * __z.im.cos(), __z.re.cosh() * __z.im.sin())",
    },
    Method {
        name: "cosh",
        args: &[],
        template: "Complex::new(__z.re.cosh() * __z.im.cos(), __z.re.sinh() * __z.im.sin())",
    },
    Method {
        name: "tanh",
        args: &[],
        template: "{ let (a, b) = (__z.re + __z.re, __z.im + __z.im); Complex::new(a.sinh(), b.sin()).unscale(a.cosh() + b.cos()) }",
    },
    Method {
        name: "asin",
        args: &[],
        template: "{ let i = Complex::new(0.0, 1.0); -i * ((Complex::new(1.0, 0.0) - __z * __z).sqrt() + i * __z).ln() }",
    },
    Method {
        name: "acos",
        args: &[],
        template: "{ let i = Complex::new(0.0, 1.0); -i * (i * (Complex::new(1.0, 0.0) - __z * __z).sqrt() + __z).ln() }",
    },
    Method {
        name: "atan",
        args: &[],
        template: "{ let i = Complex::new(0.0, 1.0); let one = Complex::new(1.0, 0.0); let two = one + one;
            if __z == i {
                Complex::new(0.0, FLT::INFINITY)
            } else if __z == -i {
                Complex::new(0.0, -FLT::INFINITY)
            } else {
                ((one + i * __z).ln() - (one - i * __z).ln()) / (two * i)
            } }",
    },
    Method { name: "asinh", args: &[], template: "(__z + (Complex::new(1.0, 0.0) + __z * __z).sqrt()).ln()" },
    Method {
        name: "acosh",
        args: &[],
        template: "{ let one = Complex::new(1.0, 0.0); let two = one + one;
            two * (((__z + one) / two).sqrt() + ((__z - one) / two).sqrt()).ln() }",
    },
    Method {
        name: "atanh",
        args: &[],
        template: "{ let one = Complex::new(1.0, 0.0); let two = one + one;
            if __z == one {
                Complex::new(FLT::INFINITY, 0.0)
            } else if __z == -one {
                Complex::new(-FLT::INFINITY, 0.0)
            } else {
                ((one + __z).ln() - (one - __z).ln()) / two
            } }",
    },
    Method { name: "is_nan", args: &[], template: "__z.re.is_nan() || __z.im.is_nan()" },
    Method {
        name: "is_infinite",
        args: &[],
        template: "!(__z.re.is_nan() || __z.im.is_nan()) && (__z.re.is_infinite() || __z.im.is_infinite())",
    },
    Method { name: "is_finite", args: &[], template: "__z.re.is_finite() && __z.im.is_finite()" },
    Method {
        name: "is_normal",
        args: &[],
        template: "__z.re.is_finite() && __z.re.abs() >= FLT::MIN_POSITIVE \
                   && __z.im.is_finite() && __z.im.abs() >= FLT::MIN_POSITIVE",
    },
];

/// The associated functions and constants of `Complex` (after the type's path).
const FUNCTIONS: &[(&str, &[Arg], &str)] = &[
    ("new", &[Arg::Part, Arg::Part], ""),
    ("from_polar", &[Arg::Part, Arg::Part], "Complex::new(__z * __w.cos(), __z * __w.sin())"),
    ("cis", &[Arg::Part], "Complex::new(__z.cos(), __z.sin())"),
    ("from", &[Arg::Part], "Complex::new(__z, 0.0)"),
    ("i", &[], "Complex::new(0.0, 1.0)"),
];

const CONSTANTS: &[(&str, &str)] =
    &[("ZERO", "Complex::new(0.0, 0.0)"), ("ONE", "Complex::new(1.0, 0.0)"), ("I", "Complex::new(0.0, 1.0)")];

/// The method names, for messages.
pub(super) fn method_names() -> String {
    METHODS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")
}

/// A template, parsed with `FLT` replaced by the parts' type. Parsed anew each time: its
/// spans belong to the macro invocation that checks it, so nothing parsed may outlive one.
fn parsed(template: &'static str, part: Option<ScalarType>) -> syn::Expr {
    let text = match part {
        Some(t) => template.replace("FLT", t.rust_name()),
        None => template.to_string(),
    };
    syn::parse_str(&text).expect("a complex template parses")
}

/// The complex type a path before an associated item names: `Some(None)` for `Complex`
/// (its parts from the arguments), `Some(Some(t))` for `Complex32`, `Complex::<f32>`.
fn complex_type_prefix(path: &syn::Path) -> Option<Option<ScalarType>> {
    if path.segments.len() < 2 {
        return None;
    }
    let mut prefix = path.clone();
    prefix.segments.pop();
    prefix.segments.pop_punct();
    let last = prefix.segments.last()?;
    if let (true, syn::PathArguments::None) = (last.ident == "Complex", &last.arguments) {
        let krate_ok = match prefix.segments.len() {
            1 => prefix.leading_colon.is_none(),
            2 => matches!(syntax::name(&prefix.segments[0].ident).as_str(), "num_complex" | "gpu_runtime"),
            _ => false,
        };
        return krate_ok.then_some(None);
    }
    // `Complex::<f32>` is `Complex<f32>` in expression position.
    syntax::complex_type(&prefix).and_then(Result::ok).map(Some)
}

/// `c32(re, im)` / `c64(re, im)` (`num_complex::` or `gpu_runtime::` allowed before).
pub(super) fn shorthand(path: &syn::Path) -> Option<ScalarType> {
    let segs: Vec<String> = path.segments.iter().map(|s| syntax::name(&s.ident)).collect();
    let (last, prefix) = segs.split_last()?;
    let ok = match prefix {
        [] => path.leading_colon.is_none(),
        [k] => matches!(k.as_str(), "num_complex" | "gpu_runtime"),
        _ => false,
    };
    match (ok, last.as_str()) {
        (true, "c32") => Some(ScalarType::C32),
        (true, "c64") => Some(ScalarType::C64),
        _ => None,
    }
}

impl FnChecker<'_> {
    /// The template `template` with its operands bound to `operands` (in order `__z`,
    /// `__w`): a block that evaluates each operand once, then the template.
    fn template(&mut self, template: &'static str, part: Option<ScalarType>, operands: Vec<Expr>, span: Span) -> Expr {
        let parsed = parsed(template, part);
        self.scopes.push(Vec::new());
        let mut stmts = Vec::with_capacity(operands.len());
        for (name, e) in OPERANDS.iter().zip(operands) {
            let local = self.declare((*name).to_string(), e.ty, false, span);
            stmts.push(Stmt::Let { local, init: Some(e) });
        }
        let mut body = self.expr(&parsed);
        self.scopes.pop();
        body.span = span;
        let ty = body.ty;
        self.mk(ExprKind::Block(Block { stmts, tail: Some(Box::new(body)) }), ty, span)
    }

    /// The parts' type of a complex value written with the type `fixed` (`Complex32::…`), or
    /// with `Complex` alone: a float variable, which its parts decide.
    fn parts_type(&mut self, fixed: Option<ScalarType>) -> Type {
        match fixed {
            Some(t) => Type::Scalar(t.complex_part().expect("a complex type")),
            None => self.prog.infer.fresh(super::infer::VarKind::Float),
        }
    }

    /// The parts' type of a complex-typed expression, `None` when it is not complex.
    pub(super) fn complex_part(&self, e: &Expr) -> Option<Type> {
        self.prog.infer.complex_part(e.ty)
    }

    /// The parts' concrete type, or an error like rustc's for a method on `Complex<{float}>`.
    fn known_part(&mut self, recv: &Expr, name: &str, at: &dyn ToTokens) -> Option<ScalarType> {
        match self.complex_part(recv).map(|p| self.prog.infer.shallow(p)) {
            Some(Type::Scalar(p)) => Some(p),
            _ => {
                let shown = self.prog.infer.describe(recv.ty);
                self.error(at, format!("can't call method `{name}` on ambiguous numeric type `{shown}`: give the parts a type, e.g. `Complex::new(0.0f32, 0.0)` or `let z: Complex<f32> = …;`"));
                None
            }
        }
    }

    /// `a op b` where an operand is complex.
    pub(super) fn complex_binary(&mut self, op: BinaryOp, lhs: Expr, rhs: Expr, range: SpanRange) -> Expr {
        let (lp, rp) = (self.complex_part(&lhs), self.complex_part(&rhs));
        let span = range.0;
        let (template, checks) = match (lp, rp) {
            (None, None) => unreachable!("an operand is complex"),
            (Some(_), Some(_)) => (complex_complex(op), self.prog.infer.unify(lhs.ty, rhs.ty).is_ok()),
            (Some(p), None) => (complex_real(op), self.prog.infer.unify(rhs.ty, p).is_ok()),
            (None, Some(p)) => (real_complex(op), self.prog.infer.unify(lhs.ty, p).is_ok()),
        };
        let (lt, rt) = (self.prog.infer.describe(lhs.ty), self.prog.infer.describe(rhs.ty));
        let sym = op.symbol();
        let Some(template) = template else {
            let what = match op {
                BinaryOp::Rem => "num-complex's Gaussian remainder is not in the kernel language",
                _ if op.is_comparison() && lp.is_some() && rp.is_some() => {
                    "complex numbers are not ordered; compare `norm()`, `re` or `im`"
                }
                _ if op.is_comparison() => "a complex number compares only with another (`z == Complex::new(x, 0.0)`)",
                _ => {
                    "complex numbers take `+ - * /` (with each other and with their parts' type), `==`, `!=` and unary `-`"
                }
            };
            self.error_at(range, format!("cannot apply `{sym}` to `{lt}` and `{rt}`: {what}"));
            return self.error_expr(span);
        };
        if !checks {
            let part = lp.or(rp).map(|p| self.prog.infer.describe(p)).unwrap_or_default();
            self.error_at(
                range,
                format!("mismatched types: cannot apply `{sym}` to `{lt}` and `{rt}`: a complex number computes with another of its type or with its parts' type `{part}`"),
            );
            return self.error_expr(span);
        }
        self.template(template, None, vec![lhs, rhs], span)
    }

    /// `-z`.
    pub(super) fn complex_neg(&mut self, z: Expr, span: Span) -> Expr {
        self.template("Complex::new(-__z.re, -__z.im)", None, vec![z], span)
    }

    /// `z.name(args)` on a complex `z`.
    pub(super) fn complex_method(
        &mut self,
        name: &str,
        recv: Expr,
        args: Vec<(Expr, &syn::Expr)>,
        range: SpanRange,
        at: &dyn ToTokens,
    ) -> Expr {
        let span = range.0;
        let Some(m) = METHODS.iter().find(|m| m.name == name) else {
            let shown = self.prog.infer.describe(recv.ty);
            self.error(at, format!("unknown method `{name}` on `{shown}`: the methods of a complex number the kernel language has are {}", method_names()));
            return self.error_expr(span);
        };
        let Some(part) = self.known_part(&recv, name, at) else { return self.error_expr(span) };
        let Some(args) = self.complex_args(name, m.args, part, args, range) else { return self.error_expr(span) };
        let mut operands = vec![recv];
        operands.extend(args);
        self.template(m.template, Some(part), operands, span)
    }

    /// Checks `args` against `kinds`.
    fn complex_args(
        &mut self,
        name: &str,
        kinds: &[Arg],
        part: ScalarType,
        args: Vec<(Expr, &syn::Expr)>,
        range: SpanRange,
    ) -> Option<Vec<Expr>> {
        if args.len() != kinds.len() {
            self.error_at(range, arity(name, kinds.len(), args.len()));
            return None;
        }
        let mut out = Vec::with_capacity(args.len());
        let mut ok = true;
        for ((a, src), kind) in args.into_iter().zip(kinds) {
            let want = match kind {
                Arg::Part => Type::Scalar(part),
                Arg::Same => Type::Scalar(ScalarType::complex_of(part).expect("parts are f32 or f64")),
                Arg::I32 => Type::Scalar(ScalarType::I32),
                Arg::U32 => Type::Scalar(ScalarType::U32),
            };
            if self.prog.infer.unify(a.ty, want).is_err() {
                let found = self.prog.infer.describe(a.ty);
                let want = self.prog.infer.describe(want);
                self.error(src, format!("mismatched types: `{name}` takes a `{want}` here, found `{found}`"));
                ok = false;
            }
            out.push(a);
        }
        ok.then_some(out)
    }

    /// `Complex::new(re, im)`, `Complex32::from_polar(r, theta)`, `c64(re, im)`, … `None`
    /// when `path` is not one of them.
    pub(super) fn complex_call(&mut self, c: &syn::ExprCall, path: &syn::Path) -> Option<Expr> {
        let span = c.span();
        let range = SpanRange::of(c);
        let (fixed, name) = match (shorthand(path), complex_type_prefix(path)) {
            (Some(t), _) => (Some(t), "new".to_string()),
            (None, Some(fixed)) => (fixed, syntax::name(&path.segments.last()?.ident)),
            (None, None) => return None,
        };
        let mut args: Vec<(Expr, &syn::Expr)> = c.args.iter().map(|a| (self.expr(a), a)).collect();
        // `Complex::norm(z)`: a method called through its type.
        if METHODS.iter().any(|m| m.name == name) && !args.is_empty() {
            let (recv, src) = args.remove(0);
            if let Some(t) = fixed {
                if self.prog.infer.unify(recv.ty, Type::Scalar(t)).is_err() {
                    let found = self.prog.infer.describe(recv.ty);
                    self.error(src, format!("mismatched types: `{t}::{name}` takes a `{t}`, found `{found}`"));
                    return Some(self.error_expr(span));
                }
            }
            if self.complex_part(&recv).is_none() {
                let found = self.prog.infer.describe(recv.ty);
                self.error(src, format!("mismatched types: `Complex::{name}` takes a complex number, found `{found}`"));
                return Some(self.error_expr(span));
            }
            let at = path.segments.last().map(|s| s.ident.clone());
            return Some(self.complex_method(&name, recv, args, range, &at));
        }
        let Some(&(_, kinds, template)) = FUNCTIONS.iter().find(|f| f.0 == name) else {
            let names: Vec<&str> = FUNCTIONS.iter().map(|f| f.0).collect();
            self.error(&c.func, format!("`Complex::{name}` is not in the kernel language: it has `Complex::{}`, the constants `ZERO`, `ONE`, `I`, and the methods {}", names.join("`, `Complex::"), method_names()));
            return Some(self.error_expr(span));
        };
        // The parts' type: the path's, else the first argument's (a float variable when
        // it is an unsuffixed literal), as rustc infers `T` of `Complex::<T>::new`.
        let part = self.parts_type(fixed);
        if args.len() != kinds.len() {
            self.error_at(range, arity(&format!("Complex::{name}"), kinds.len(), args.len()));
            return Some(self.error_expr(span));
        }
        let mut operands = Vec::with_capacity(args.len());
        for (a, src) in args {
            if self.prog.infer.unify(a.ty, part).is_err() {
                let found = self.prog.infer.describe(a.ty);
                let want = self.prog.infer.describe(part);
                let hint = if self.prog.infer.shallow(a.ty) == Type::Scalar(ScalarType::Bool) {
                    String::new()
                } else {
                    format!(
                        ": the parts of a complex number are `f32` or `f64` (`{} as {want}`)",
                        syntax::render_tokens(src.to_token_stream())
                    )
                };
                self.error(
                    src,
                    format!("mismatched types: `Complex::{name}` takes a `{want}` here, found `{found}`{hint}"),
                );
                return Some(self.error_expr(span));
            }
            operands.push(a);
        }
        let ty = self.prog.infer.complex(part);
        if name == "new" {
            return Some(self.mk(ExprKind::Tuple(operands), ty, span));
        }
        let known = match self.prog.infer.shallow(part) {
            Type::Scalar(p) => Some(p),
            _ => None,
        };
        let mut e = self.template(template, known, operands, span);
        // `Complex::i()` has no argument to take the parts' type from.
        if self.prog.infer.unify(e.ty, ty).is_err() {
            e = self.error_expr(span);
        }
        Some(e)
    }

    /// `Complex::ONE`, `Complex32::I`, … `None` when `p` is not one of them.
    pub(super) fn complex_constant(&mut self, p: &syn::ExprPath) -> Option<Expr> {
        if p.qself.is_some() {
            return None;
        }
        let fixed = complex_type_prefix(&p.path)?;
        let name = syntax::name(&p.path.segments.last()?.ident);
        let span = p.span();
        let Some(&(_, template)) = CONSTANTS.iter().find(|c| c.0 == name) else {
            self.error(
                p,
                format!("`Complex::{name}` is not in the kernel language: its constants are `ZERO`, `ONE` and `I`"),
            );
            return Some(self.error_expr(span));
        };
        let part = self.parts_type(fixed);
        let ty = self.prog.infer.complex(part);
        let e = self.template(template, None, Vec::new(), span);
        if self.prog.infer.unify(e.ty, ty).is_err() {
            return Some(self.error_expr(span));
        }
        Some(e)
    }

    /// `Complex { re, im }` (num-complex's fields are public); `None` for another struct.
    pub(super) fn complex_struct(&mut self, s: &syn::ExprStruct) -> Option<Expr> {
        let fixed = match syntax::complex_type(&s.path) {
            Some(Ok(t)) => Some(t),
            Some(Err(_)) => return None,
            None if s.path.is_ident("Complex") => None,
            None => return None,
        };
        let span = s.span();
        let mut re = None;
        let mut im = None;
        for f in &s.fields {
            let name = match &f.member {
                syn::Member::Named(n) => syntax::name(n),
                syn::Member::Unnamed(_) => String::new(),
            };
            let slot = match name.as_str() {
                "re" => &mut re,
                "im" => &mut im,
                _ => {
                    self.error(&f.member, "a complex number has the fields `re` and `im`");
                    return Some(self.error_expr(span));
                }
            };
            *slot = Some(&f.expr);
        }
        if let Some(rest) = &s.rest {
            self.error(rest, "`..` is not supported in a complex literal: give `re` and `im`");
            return Some(self.error_expr(span));
        }
        let (Some(re), Some(im)) = (re, im) else {
            self.error(s, "a complex literal gives both fields: `Complex { re: …, im: … }`");
            return Some(self.error_expr(span));
        };
        let part = self.parts_type(fixed);
        let mut parts = Vec::with_capacity(2);
        for src in [re, im] {
            let e = self.expr(src);
            if self.prog.infer.unify(e.ty, part).is_err() {
                let found = self.prog.infer.describe(e.ty);
                let want = self.prog.infer.describe(part);
                self.error(
                    src,
                    format!("mismatched types: a part of `Complex<{want}>` is a `{want}`, found `{found}`"),
                );
                return Some(self.error_expr(span));
            }
            parts.push(e);
        }
        let ty = self.prog.infer.complex(part);
        Some(self.mk(ExprKind::Tuple(parts), ty, span))
    }

    /// `z.re` / `z.im`; `None` when the base is not complex (after checking it).
    pub(super) fn complex_field(&mut self, f: &syn::ExprField) -> Result<Expr, Expr> {
        let base = self.expr(&f.base);
        let syn::Member::Named(name) = &f.member else { return Err(base) };
        let Some(part) = self.complex_part(&base) else { return Err(base) };
        let index = match syntax::name(name).as_str() {
            "re" => 0,
            "im" => 1,
            other => {
                let shown = self.prog.infer.describe(base.ty);
                self.error(
                    name,
                    format!("no field `{other}` on `{shown}`: a complex number has the fields `re` and `im`"),
                );
                return Ok(self.error_expr(f.span()));
            }
        };
        Ok(self.mk(ExprKind::Field(Box::new(base), index), part, f.span()))
    }

    /// `z.re = v` and `z.im op= v` on a complex variable `z`: `z` takes a new value with
    /// that part replaced. `None` when `target` is not a part of a complex variable.
    pub(super) fn complex_part_assign(
        &mut self,
        target: &syn::Expr,
        op: Option<BinaryOp>,
        value: &syn::Expr,
        span: Span,
    ) -> Option<Expr> {
        let syn::Expr::Field(f) = syntax::bare(target) else { return None };
        let syn::Member::Named(member) = &f.member else { return None };
        let index = match syntax::name(member).as_str() {
            "re" => 0,
            "im" => 1,
            _ => return None,
        };
        let syn::Expr::Path(p) = syntax::bare(&f.base) else {
            // `a[i].re = v` and the like: only a variable's part is a place here.
            let base = self.expr(&f.base);
            self.complex_part(&base)?;
            self.error(
                target,
                "only a variable's part can be assigned: write the whole value, e.g. `a[i] = Complex::new(v, a[i].im)`",
            );
            return Some(self.error_expr(span));
        };
        let name = p.path.get_ident().map(syntax::name)?;
        let id = self.lookup(&name)?;
        let ty = self.locals[id.0 as usize].ty;
        let part = self.prog.infer.complex_part(ty)?;
        let write = if op.is_some() { Write::Update } else { Write::Assign };
        let local = self.place(&f.base, write)?;
        let whole = |me: &Self| me.mk(ExprKind::Local(local), ty, span);
        let old = |me: &Self, i: usize| me.mk(ExprKind::Field(Box::new(whole(me)), i), part, span);
        let rhs = self.expr(value);
        let new_part = match op {
            None => {
                if self.prog.infer.unify(rhs.ty, part).is_err() {
                    let found = self.prog.infer.describe(rhs.ty);
                    let want = self.prog.infer.describe(part);
                    self.error(
                        value,
                        format!(
                            "mismatched types: `{}` is a `{want}`, found `{found}`",
                            syntax::render_tokens(target.to_token_stream())
                        ),
                    );
                    return Some(self.error_expr(span));
                }
                rhs
            }
            Some(op) => {
                let cur = old(self, index);
                let t = self.check_operands(op, &cur, &rhs, target, value, SpanRange(span, span));
                self.mk(ExprKind::Binary(op, Box::new(cur), Box::new(rhs)), t, span)
            }
        };
        let parts = if index == 0 { vec![new_part, old(self, 1)] } else { vec![old(self, 0), new_part] };
        let value = self.mk(ExprKind::Tuple(parts), ty, span);
        Some(self.mk(ExprKind::Assign(local, Box::new(value)), Type::Unit, span))
    }

    /// `z op= w` on a complex variable: `z = z op w` (num-complex's compound assignments
    /// compute the same values as its operators).
    pub(super) fn complex_compound(&mut self, op: BinaryOp, b: &syn::ExprBinary) -> Option<Expr> {
        let syn::Expr::Path(p) = syntax::bare(&b.left) else { return None };
        let name = p.path.get_ident().map(syntax::name)?;
        let id = self.lookup(&name)?;
        let ty = self.locals[id.0 as usize].ty;
        self.prog.infer.complex_part(ty)?;
        let span = b.span();
        let rhs = self.expr(&b.right);
        let local = self.place(&b.left, Write::Update)?;
        let cur = self.mk(ExprKind::Local(local), ty, b.left.span());
        let value = self.complex_binary(op, cur, rhs, SpanRange::of(b));
        if self.prog.infer.unify(value.ty, ty).is_err() {
            return Some(self.error_expr(span));
        }
        Some(self.mk(ExprKind::Assign(local, Box::new(value)), Type::Unit, span))
    }
}
