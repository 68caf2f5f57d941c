//! Operators and casts: binary, unary and `as`, and the types of their operands.

use syn::spanned::Spanned;

use super::context::FnChecker;
use super::context::Require;
use super::context::SpanRange;
use super::context::Write;
use super::diagnostics::{TypeUse, operand_mismatch_hint, render};
use super::infer::VarKind;
use super::syntax::{self, element_place};
use crate::ir::{BinaryOp, Expr, ExprKind, Type, UnaryOp};
use crate::ty::ScalarType;

impl FnChecker<'_> {
    /// `a op b` where `a` and `b` must have the same type (arithmetic, bitwise, comparison).
    fn same_type_operands(
        &mut self,
        op: BinaryOp,
        lhs: &Expr,
        rhs: &Expr,
        l: &syn::Expr,
        r: &syn::Expr,
        span: SpanRange,
    ) -> Type {
        match self.prog.infer.unify(lhs.ty, rhs.ty) {
            Ok(t) => t,
            Err(()) => {
                let (lt, rt) = (self.prog.infer.describe(lhs.ty), self.prog.infer.describe(rhs.ty));
                let hint = operand_mismatch_hint(l, r, &lt, &rt, op);
                self.error_at(
                    span,
                    format!("mismatched types: cannot apply `{}` to `{lt}` and `{rt}`{hint}", op.symbol()),
                );
                Type::Error
            }
        }
    }

    pub(super) fn binary(&mut self, b: &syn::ExprBinary) -> Expr {
        let span = b.span();
        let range = SpanRange::of(b);
        let Some(op) = syntax::binary_op(&b.op) else {
            self.error(b.op, "this operator is not supported");
            return self.error_expr(span);
        };
        match op {
            syntax::BinOp::Logical(lop) => {
                let lhs = self.expr(&b.left);
                let rhs = self.expr(&b.right);
                for (e, src) in [(&lhs, &b.left), (&rhs, &b.right)] {
                    self.expect_bool(e, src, "an operand of `&&`/`||`");
                }
                self.mk(ExprKind::Logical(lop, Box::new(lhs), Box::new(rhs)), Type::Scalar(ScalarType::Bool), span)
            }
            syntax::BinOp::Compound(bop) if self.is_struct_place(&b.left) => {
                self.struct_assign(&b.left, Some(bop), &b.right, span).expect("a struct part")
            }
            syntax::BinOp::Compound(bop) if self.prog.kernel && element_place(&b.left).is_some() => {
                let (base, index, checked) = element_place(&b.left).expect("matched above");
                self.assign_element(base, index, checked, &b.left, Some(bop), &b.right, &syn::Expr::Binary(b.clone()))
            }
            syntax::BinOp::Compound(bop) => {
                if let Some(e) = self.complex_part_assign(&b.left, Some(bop), &b.right, span) {
                    return e;
                }
                if let Some(e) = self.complex_compound(bop, b) {
                    return e;
                }
                let rhs = self.expr(&b.right);
                let Some(local) = self.place(&b.left, Write::Update) else {
                    return self.error_expr(span);
                };
                let target = self.mk(ExprKind::Local(local), self.locals[local.0 as usize].ty, b.left.span());
                self.check_operands(bop, &target, &rhs, &b.left, &b.right, range);
                self.mk(ExprKind::CompoundAssign(bop, local, Box::new(rhs)), Type::Unit, span)
            }
            syntax::BinOp::Plain(bop) => {
                let lhs = self.expr(&b.left);
                let rhs = self.expr(&b.right);
                if self.complex_part(&lhs).is_some() || self.complex_part(&rhs).is_some() {
                    return self.complex_binary(bop, lhs, rhs, range);
                }
                let ty = self.check_operands(bop, &lhs, &rhs, &b.left, &b.right, range);
                self.mk(ExprKind::Binary(bop, Box::new(lhs), Box::new(rhs)), ty, span)
            }
        }
    }

    /// Types `lhs op rhs` and returns the result type.
    pub(super) fn check_operands(
        &mut self,
        op: BinaryOp,
        lhs: &Expr,
        rhs: &Expr,
        l: &syn::Expr,
        r: &syn::Expr,
        span: SpanRange,
    ) -> Type {
        let sym = op.symbol();
        match op {
            BinaryOp::Shl | BinaryOp::Shr => {
                self.prog.require(lhs.ty, Require::Int(sym), SpanRange::of(l));
                self.prog.require(rhs.ty, Require::Int(sym), SpanRange::of(r));
                lhs.ty
            }
            BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => {
                let t = self.same_type_operands(op, lhs, rhs, l, r, span);
                self.prog.require(t, Require::IntOrBool(sym), span);
                t
            }
            _ if op.is_comparison() => {
                let t = self.same_type_operands(op, lhs, rhs, l, r, span);
                self.prog.require(t, Require::Comparable, span);
                Type::Scalar(ScalarType::Bool)
            }
            _ => {
                let t = self.same_type_operands(op, lhs, rhs, l, r, span);
                self.prog.require(t, Require::Numeric(sym), span);
                t
            }
        }
    }

    pub(super) fn expect_bool(&mut self, e: &Expr, src: &syn::Expr, what: &str) {
        if self.prog.infer.unify(e.ty, Type::Scalar(ScalarType::Bool)).is_err() {
            let found = self.prog.infer.describe(e.ty);
            let hint = if found == "()" {
                String::new()
            } else {
                format!(
                    ": Rust does not treat numbers as conditions, so compare explicitly, e.g. `{} != 0`",
                    render(src)
                )
            };
            self.error(src, format!("mismatched types: {what} must be `bool`, found `{found}`{hint}"));
        }
    }

    pub(super) fn unary(&mut self, u: &syn::ExprUnary) -> Expr {
        let span = u.span();
        let range = SpanRange::of(u);
        match u.op {
            syn::UnOp::Neg(_) => {
                // `-5` and `-1.5` are literals of their own (so `-128i8` fits).
                if let syn::Expr::Lit(syn::ExprLit { lit: lit @ (syn::Lit::Int(_) | syn::Lit::Float(_)), .. }) =
                    &*u.expr
                {
                    let e = self.lit(lit, true, range);
                    self.prog.require(e.ty, Require::Negatable, range);
                    return e;
                }
                let inner = self.expr(&u.expr);
                if self.complex_part(&inner).is_some() {
                    return self.complex_neg(inner, span);
                }
                let ty = inner.ty;
                self.prog.require(ty, Require::Negatable, range);
                self.mk(ExprKind::Unary(UnaryOp::Neg, Box::new(inner)), ty, span)
            }
            syn::UnOp::Not(_) => {
                let inner = self.expr(&u.expr);
                let ty = inner.ty;
                self.prog.require(ty, Require::IntOrBool("!"), range);
                self.mk(ExprKind::Unary(UnaryOp::Not, Box::new(inner)), ty, span)
            }
            // `*s.get_unchecked(i)`: the element itself.
            syn::UnOp::Deref(_) if self.prog.kernel && syntax::unchecked_call(&u.expr).is_some() => {
                self.under_deref = true;
                let mut inner = self.expr(&u.expr);
                self.under_deref = false;
                inner.span = span;
                inner
            }
            syn::UnOp::Deref(_) if self.prog.kernel => {
                self.error(u, "dereferencing (`*`) is not supported here: a kernel dereferences only `*s.get_unchecked(i)` and `*s.get_unchecked_mut(i)` (in `unsafe`)");
                self.error_expr(span)
            }
            syn::UnOp::Deref(_) => {
                self.error(u, format!("dereferencing (`*`) is not supported: {} has no references", self.subject()));
                self.error_expr(span)
            }
            _ => {
                self.error(u, "this unary operator is not supported");
                self.error_expr(span)
            }
        }
    }

    pub(super) fn cast(&mut self, c: &syn::ExprCast) -> Expr {
        let span = c.span();
        let range = SpanRange::of(c);
        let inner = self.expr(&c.expr);
        let Some(target) = self.scalar_type(&c.ty, TypeUse::Cast) else {
            return self.error_expr(span);
        };
        // rustc checks the operand expecting the cast's type, and that expectation types a
        // literal it reaches: `300 as u8` types the literal as `u8` (and rejects it).
        let literal = hint_reaches_literal(&c.expr).then(|| self.prog.infer.kind(inner.ty)).flatten();
        if let Some(kind) = literal {
            let fits = match kind {
                VarKind::Int => target.is_int(),
                VarKind::Float => target.is_float(),
                VarKind::Complex => false,
                VarKind::Any => true,
            };
            if fits {
                let _ = self.prog.infer.unify(inner.ty, Type::Scalar(target));
            }
        }
        self.prog.require(inner.ty, Require::CastTo(target), range);
        self.mk(ExprKind::Cast(Box::new(inner)), Type::Scalar(target), span)
    }
}

/// Whether a cast's expected type reaches a literal of its operand. rustc passes it
/// through parentheses, `-`, `!` and a block's value only: in `((255 + 1) / 2) as u8`,
/// `(if c { 300 } else { 1 }) as u8` or `x as u8` (`let x = 300;`) the literals stay `i32`.
fn hint_reaches_literal(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Lit(_) => true,
        syn::Expr::Paren(p) => hint_reaches_literal(&p.expr),
        syn::Expr::Group(g) => hint_reaches_literal(&g.expr),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_) | syn::UnOp::Not(_)) => hint_reaches_literal(&u.expr),
        syn::Expr::Block(b) if b.label.is_none() => {
            matches!(b.block.stmts.last(), Some(syn::Stmt::Expr(tail, None)) if hint_reaches_literal(tail))
        }
        _ => false,
    }
}
