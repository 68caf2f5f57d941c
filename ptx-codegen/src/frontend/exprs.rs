//! Expressions: literals, paths, tuple fields, assignment and `if`, and the dispatch to the other checks.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use super::context::Require;
use super::context::SpanRange;
use super::context::{FnChecker, LocalKind, Write};
use super::diagnostics::conversion_hint;
use super::infer::VarKind;
use super::syntax::element_place;
use super::{consts, syntax};
use crate::ir::{Block, Expr, ExprKind, Literal, LocalId, Type};
use crate::ty::ScalarType;

impl FnChecker<'_> {
    pub(super) fn mk(&self, kind: ExprKind, ty: Type, span: Span) -> Expr {
        Expr { kind, ty, span }
    }

    pub(super) fn error_expr(&self, span: Span) -> Expr {
        self.mk(ExprKind::Block(Block::default()), Type::Error, span)
    }

    pub(super) fn unsupported(&mut self, e: &syn::Expr, msg: impl std::fmt::Display) -> Expr {
        self.error(e, msg);
        self.error_expr(e.span())
    }

    pub(super) fn expr(&mut self, e: &syn::Expr) -> Expr {
        let span = e.span();
        match e {
            syn::Expr::Lit(l) => self.lit(&l.lit, false, SpanRange::of(l)),
            syn::Expr::Path(p) => self.path_expr(p),
            syn::Expr::Paren(p) => {
                let mut inner = self.expr(&p.expr);
                inner.span = span;
                inner
            }
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Binary(b) => self.binary(b),
            syn::Expr::Unary(u) => self.unary(u),
            syn::Expr::Cast(c) => self.cast(c),
            syn::Expr::Assign(a) => self.assign(a),
            syn::Expr::Block(b) => {
                if let Some(l) = &b.label {
                    self.error(l, "labeled blocks are not supported: use a labeled `loop` with `break 'label value`");
                }
                let (block, ty) = self.block(&b.block);
                self.mk(ExprKind::Block(block), ty, span)
            }
            syn::Expr::If(i) => self.if_expr(i),
            syn::Expr::While(w) => self.while_expr(w),
            syn::Expr::Loop(l) => self.loop_expr(l),
            syn::Expr::ForLoop(f) => self.for_expr(f),
            syn::Expr::Break(b) => self.break_expr(b),
            syn::Expr::Continue(c) => self.continue_expr(c),
            syn::Expr::Return(r) => self.return_expr(r),
            syn::Expr::Tuple(t) if t.elems.is_empty() => {
                self.mk(ExprKind::Block(Block::default()), Type::Unit, span)
            }
            syn::Expr::Tuple(t) => {
                let elems: Vec<Expr> = t.elems.iter().map(|e| self.expr(e)).collect();
                for (e, src) in elems.iter().zip(&t.elems) {
                    let ty = self.prog.infer.shallow(e.ty);
                    if matches!(ty, Type::Dim3 | Type::Fragment(_) | Type::Array(_) | Type::Unit) {
                        let found = self.prog.infer.describe(ty);
                        self.error(src, format!("a tuple holds scalars, not `{found}`"));
                    }
                }
                let ty = self.prog.infer.tuple(elems.iter().map(|e| e.ty).collect());
                self.mk(ExprKind::Tuple(elems), ty, span)
            }
            syn::Expr::Field(f) if matches!(f.member, syn::Member::Unnamed(_)) => self.tuple_field(f),
            syn::Expr::Macro(m) if self.host_only_print(&m.mac) => {
                self.mk(ExprKind::Block(Block::default()), Type::Unit, span)
            }
            syn::Expr::Macro(m) => {
                self.macro_error(&m.mac);
                self.error_expr(span)
            }
            syn::Expr::MethodCall(m) => self.method_call(m),
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::Unsafe(u) if self.prog.kernel => {
                self.unsafe_depth += 1;
                let (block, ty) = self.block(&u.block);
                self.unsafe_depth -= 1;
                self.mk(ExprKind::Block(block), ty, span)
            }
            // A vectorized function indexes only a struct's array field (`p.pos[k]`).
            syn::Expr::Index(ix) if self.prog.kernel || syntax::named_field(&ix.expr).is_some() => self.index_expr(ix),
            syn::Expr::Field(f) if matches!(f.member, syn::Member::Named(_)) => match self.complex_field(f).or_else(|base| self.struct_field(f, base)) {
                Ok(e) => e,
                Err(base) if self.prog.kernel => self.dim3_field(f, base),
                // A value whose type is already an error (a call of a function the precheck
                // does not see): no second message.
                Err(base) if self.prog.infer.shallow(base.ty) == Type::Error => self.error_expr(span),
                Err(_) => self.unsupported(e, format!("field access is not supported here: {} works on scalars (f32, f64, integers, bool), the parts of complex numbers (`z.re`, `z.im`) and tuples of scalars (`t.0`), not structs", self.subject())),
            },
            syn::Expr::Array(_) | syn::Expr::Repeat(_) if self.prog.kernel => self.unsupported(e, "a local array is declared by a `let`: `let mut a = [0.0f32; 8];` or `let a = [x, y, z];`, then used by name"),
            syn::Expr::Unsafe(_) => self.unsupported(e, "`unsafe` blocks cannot appear in a vectorized function: the kernel language has no unsafe operations"),
            syn::Expr::Async(_) | syn::Expr::Await(_) => self.unsupported(e, format!("`async`/`.await` cannot run in {}: it computes synchronously", self.subject())),
            syn::Expr::Closure(_) if self.prog.kernel => self.unsupported(e, "closures are not supported in a kernel: write a `#[device]` function, or the computation inline"),
            syn::Expr::Closure(_) => self.unsupported(e, "closures are not supported in a vectorized function: write a `#[device]` function, or the computation inline"),
            syn::Expr::Index(_) => self.unsupported(e, "indexing is not supported: a vectorized function sees one element of each argument at a time, as a scalar"),
            syn::Expr::Array(_) | syn::Expr::Repeat(_) => self.unsupported(e, "arrays are not supported in a vectorized function: it computes with scalars; the call broadcasts it over slices"),
            syn::Expr::Reference(_) => self.unsupported(e, format!("references are not supported in {}: it computes with scalar values", self.subject())),
            syn::Expr::Struct(st) => match self.struct_lit(st).or_else(|| self.complex_struct(st)) {
                Some(c) => c,
                None => self.unsupported(e, format!("structs are not supported in {}: it computes with scalars (f32, f64, integers, bool)", self.subject())),
            },
            syn::Expr::Range(_) => self.unsupported(e, "a range is only supported as the iterator of a `for` loop (`for i in 0..n`)"),
            syn::Expr::Try(_) => self.unsupported(e, format!("the `?` operator is not supported: {} has no `Result` or `Option`", self.subject())),
            syn::Expr::Let(_) => self.unsupported(e, format!("`let` patterns in conditions are not supported: {} has no enums to match on", self.subject())),
            syn::Expr::Match(m) => self.match_expr(m),
            _ => {
                let msg = format!("this expression is not supported in a {}", self.prog.entry_kind());
                self.unsupported(e, &msg)
            }
        }
    }

    /// A literal; `negated` folds a leading `-` into it (so `-128i8` fits), `span` covers both.
    pub(super) fn lit(&mut self, lit: &syn::Lit, negated: bool, range: SpanRange) -> Expr {
        let span = range.0;
        match lit {
            syn::Lit::Bool(b) => self.mk(ExprKind::Lit(Literal::Bool(b.value)), Type::Scalar(ScalarType::Bool), span),
            syn::Lit::Int(i) => {
                // In patterns syn reads `-1` as one literal with digits "-1".
                let (digits, negated) = match i.base10_digits().strip_prefix('-') {
                    Some(d) => (d, !negated),
                    None => (i.base10_digits(), negated),
                };
                if matches!(i.suffix(), "f32" | "f64") {
                    return self.float_lit(digits, i.suffix(), negated, span);
                }
                let ty = match i.suffix() {
                    "" => self.prog.infer.fresh(VarKind::Int),
                    s => match ScalarType::from_name(s) {
                        Some(t) if t.is_int() => Type::Scalar(t),
                        _ => {
                            self.error(i, format!("invalid suffix `{s}` for an integer literal"));
                            return self.error_expr(span);
                        }
                    },
                };
                let Ok(v) = digits.parse::<u128>() else {
                    self.error(i, "integer literal is too large for any integer type");
                    return self.error_expr(span);
                };
                let v = if negated { -(v as i128) } else { v as i128 };
                self.prog.require(ty, Require::Fits(v), range);
                self.mk(ExprKind::Lit(Literal::Int(v)), ty, span)
            }
            syn::Lit::Float(f) => match f.base10_digits().strip_prefix('-') {
                Some(d) => self.float_lit(d, f.suffix(), !negated, span),
                None => self.float_lit(f.base10_digits(), f.suffix(), negated, span),
            },
            _ => {
                self.error(lit, format!("only numeric and `bool` literals are supported in {}", self.subject()));
                self.error_expr(span)
            }
        }
    }

    fn float_lit(&mut self, digits: &str, suffix: &str, negated: bool, span: Span) -> Expr {
        let ty = match suffix {
            "" => self.prog.infer.fresh(VarKind::Float),
            "f32" => Type::Scalar(ScalarType::F32),
            "f64" => Type::Scalar(ScalarType::F64),
            s => {
                self.error_at(span, format!("invalid suffix `{s}` for a float literal"));
                return self.error_expr(span);
            }
        };
        // Parse once per width: rounding the f64 value to f32 could round twice.
        let (Ok(as_f64), Ok(as_f32)) = (digits.parse::<f64>(), digits.parse::<f32>()) else {
            self.error_at(span, "invalid float literal");
            return self.error_expr(span);
        };
        let (as_f64, as_f32) = if negated { (-as_f64, -as_f32) } else { (as_f64, as_f32) };
        self.mk(ExprKind::Lit(Literal::Float { as_f64, as_f32 }), ty, span)
    }

    pub(super) fn path_expr(&mut self, p: &syn::ExprPath) -> Expr {
        let span = p.span();
        if p.qself.is_none() {
            if let Some(ident) = p.path.get_ident() {
                let name = syntax::name(ident);
                if let Some(id) = self.lookup(&name) {
                    let ty = self.locals[id.0 as usize].ty;
                    if let Type::Array(_) = ty {
                        self.error(ident, format!("`{name}` is a slice or array: a kernel indexes it (`{name}[i]`), takes its length (`{name}.len()`) or passes it to `gpu::atomic::*`; it cannot be copied into a variable, compared or passed to a function"));
                        return self.error_expr(span);
                    }
                    return self.mk(ExprKind::Local(id), ty, span);
                }
                if let Some(c) = self.lookup_const(&name) {
                    return match &self.prog.consts[c].value {
                        Some(v) => {
                            let mut v = v.clone();
                            v.span = span;
                            v
                        }
                        // Its declaration reported the problem.
                        None => self.error_expr(span),
                    };
                }
                let here = self.prog.entry_kind();
                let ty = if self.prog.kernel { "usize" } else { "f32" };
                let msg = if self.outer_locals.contains(&name) {
                    format!(
                        "`{name}` is a variable of the function around this one: as in Rust, a nested function cannot use it; pass it as an argument"
                    )
                } else if consts::math(ScalarType::F64, &name).is_some() {
                    format!(
                        "cannot find `{name}` in this {here}: write the constant's full path, `std::f32::consts::{name}` or `std::f64::consts::{name}`"
                    )
                } else if name.len() > 1
                    && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                {
                    format!(
                        "cannot find `{name}` in this {here}: outside the function it sees only the scalar constants of its own module in the same file (not imported, generated or `#[cfg]`-dependent ones); define the constant inside the function (`const {name}: {ty} = …;`), beside it in this module, or pass the value as an argument"
                    )
                } else {
                    format!(
                        "cannot find `{name}` in this {here}: it can use its parameters, the variables it declares and the constants of the scalar types (`f32::MAX`, `std::f64::consts::PI`)"
                    )
                };
                self.error(ident, msg);
                return self.error_expr(span);
            }
        }
        let segments: Vec<String> = p.path.segments.iter().map(|s| syntax::name(&s.ident)).collect();
        let has_args = p.path.segments.iter().any(|s| !s.arguments.is_none());
        if p.qself.is_none() && !has_args && self.prog.kernel {
            if let Some(rest) = super::builtins::gpu_path(&p.path) {
                if rest == ["WARP_SIZE"] {
                    return self.mk(ExprKind::Lit(Literal::Int(32)), Type::Scalar(ScalarType::U32), span);
                }
            }
        }
        if let Some(e) = self.complex_constant(p) {
            return e;
        }
        if p.qself.is_none() && !has_args {
            if let Some((t, lit)) = consts::by_path(&segments) {
                return self.mk(ExprKind::Lit(lit), Type::Scalar(t), span);
            }
        }
        let text = syntax::render_tokens(p.to_token_stream());
        self.error(p, format!("unknown path `{text}`: {subject} can use its parameters, its variables and the constants of the scalar types (`f32::EPSILON`, `i32::MAX`, `std::f64::consts::PI`)", subject = self.subject()));
        self.error_expr(span)
    }

    /// `t.0`.
    fn tuple_field(&mut self, f: &syn::ExprField) -> Expr {
        let span = f.span();
        let base = self.expr(&f.base);
        let syn::Member::Unnamed(index) = &f.member else { return self.error_expr(span) };
        let i = index.index as usize;
        match self.prog.infer.tuple_elems(base.ty) {
            Some(elems) if i < elems.len() => {
                let ty = elems[i];
                self.mk(ExprKind::Field(Box::new(base), i), ty, span)
            }
            Some(elems) => {
                self.error(&f.member, format!("no field `{i}`: the tuple has {} elements", elems.len()));
                self.error_expr(span)
            }
            None if self.prog.infer.shallow(base.ty) == Type::Error => self.error_expr(span),
            None => {
                let found = self.prog.infer.describe(base.ty);
                self.error(f, format!("`.{i}` takes an element of a tuple, but this is `{found}`"));
                self.error_expr(span)
            }
        }
    }

    /// The local variable an assignment writes, checked to be mutable.
    pub(super) fn place(&mut self, e: &syn::Expr, write: Write) -> Option<LocalId> {
        match e {
            syn::Expr::Paren(p) => self.place(&p.expr, write),
            syn::Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let ident = p.path.get_ident().unwrap();
                let name = syntax::name(ident);
                let Some(id) = self.lookup(&name) else {
                    let here = self.prog.entry_kind();
                    self.error(ident, format!("cannot find `{name}` in this {here}"));
                    return None;
                };
                let info = &self.locals[id.0 as usize];
                let first_value = info.kind == LocalKind::Deferred && write == Write::Assign;
                if !info.mutable && !first_value {
                    let hint = if info.kind == LocalKind::Param {
                        format!("make the parameter mutable: `mut {name}`")
                    } else {
                        format!("declare it with `let mut {name}`")
                    };
                    self.error(ident, format!("cannot assign to `{name}`, which is not mutable: {hint}"));
                }
                Some(id)
            }
            _ => {
                self.error(e, format!("only local variables can be assigned in {}", self.subject()));
                None
            }
        }
    }

    fn assign(&mut self, a: &syn::ExprAssign) -> Expr {
        let span = a.span();
        if let Some(e) = self.struct_assign(&a.left, None, &a.right, span) {
            return e;
        }
        if let (Some((base, index, checked)), true) = (element_place(&a.left), self.prog.kernel) {
            return self.assign_element(base, index, checked, &a.left, None, &a.right, &syn::Expr::Assign(a.clone()));
        }
        if let Some(e) = self.complex_part_assign(&a.left, None, &a.right, span) {
            return e;
        }
        let value = self.expr(&a.right);
        let Some(local) = self.place(&a.left, Write::Assign) else {
            return self.error_expr(span);
        };
        let lty = self.locals[local.0 as usize].ty;
        if self.prog.infer.unify(lty, value.ty).is_err() {
            let (want, found) = (self.prog.infer.describe(lty), self.prog.infer.describe(value.ty));
            let hint = conversion_hint(&a.right, &found, &want);
            self.error(&a.right, format!("mismatched types: expected `{want}`, found `{found}`{hint}"));
        }
        self.mk(ExprKind::Assign(local, Box::new(value)), Type::Unit, span)
    }

    fn if_expr(&mut self, i: &syn::ExprIf) -> Expr {
        let span = i.span();
        let cond = match &*i.cond {
            syn::Expr::Let(l) => {
                self.error(
                    l,
                    format!(
                        "`if let` is not supported in {}: it has no enums or `Option`s to match; use a plain `if`",
                        self.subject()
                    ),
                );
                self.error_expr(l.span())
            }
            c => {
                let e = self.expr(c);
                self.expect_bool(&e, c, "the condition of `if`");
                e
            }
        };
        let (then, then_ty) = self.block(&i.then_branch);
        let (els, ty) = match &i.else_branch {
            None => {
                if self.prog.infer.unify(then_ty, Type::Unit).is_err() {
                    let found = self.prog.infer.describe(then_ty);
                    self.error(&i.then_branch, format!("`if` without `else` cannot produce a value (found `{found}`): add an `else` branch, or end the statement with `;`"));
                }
                (None, Type::Unit)
            }
            Some((_, e)) => {
                let els = self.expr(e);
                let ty = match self.prog.infer.unify(then_ty, els.ty) {
                    Ok(t) => t,
                    Err(()) => {
                        let (a, b) = (self.prog.infer.describe(then_ty), self.prog.infer.describe(els.ty));
                        self.error(e, format!("`if` and `else` have different types: `{a}` and `{b}`; both branches must produce the same type (convert one with `as`)"));
                        Type::Error
                    }
                };
                (Some(Box::new(els)), ty)
            }
        };
        self.mk(ExprKind::If { cond: Box::new(cond), then, els }, ty, span)
    }
}
