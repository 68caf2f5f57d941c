//! Loops and the jumps out of them: `while`, `loop`, `for` over a range, `break`, `continue`, `return`.

use quote::ToTokens;
use syn::spanned::Spanned;

use super::context::Require;
use super::context::SpanRange;
use super::context::{FnChecker, LoopFrame, LoopKind};
use super::diagnostics::conversion_hint;
use super::infer::VarKind;
use crate::ir::{Block, Expr, ExprKind, ForRange, LoopId, Type};
use crate::ty::ScalarType;

impl FnChecker<'_> {
    fn push_loop(&mut self, label: Option<&syn::Label>, kind: LoopKind) -> LoopId {
        let id = LoopId(self.prog.next_loop);
        self.prog.next_loop += 1;
        let value_ty = if kind == LoopKind::Loop { self.prog.infer.fresh(VarKind::Any) } else { Type::Unit };
        self.loops.push(LoopFrame {
            id,
            label: label.map(|l| l.name.ident.to_string()),
            kind,
            value_ty,
            has_break: false,
        });
        id
    }

    fn loop_body(&mut self, body: &syn::Block) -> Block {
        let (b, ty) = self.block(body);
        if self.prog.infer.unify(ty, Type::Unit).is_err() {
            let found = self.prog.infer.describe(ty);
            self.error(body, format!("a loop body cannot produce a value (found `{found}`): end it with `;`, or use `break value` in a `loop`"));
        }
        b
    }

    pub(super) fn while_expr(&mut self, w: &syn::ExprWhile) -> Expr {
        let span = w.span();
        let cond = match &*w.cond {
            syn::Expr::Let(l) => {
                self.error(
                    l,
                    format!("`while let` is not supported in {}: use `while` with a `bool` condition", self.subject()),
                );
                self.error_expr(l.span())
            }
            c => {
                let e = self.expr(c);
                self.expect_bool(&e, c, "the condition of `while`");
                e
            }
        };
        let id = self.push_loop(w.label.as_ref(), LoopKind::While);
        let body = self.loop_body(&w.body);
        self.loops.pop();
        self.mk(ExprKind::While { id, cond: Box::new(cond), body }, Type::Unit, span)
    }

    pub(super) fn loop_expr(&mut self, l: &syn::ExprLoop) -> Expr {
        let span = l.span();
        let id = self.push_loop(l.label.as_ref(), LoopKind::Loop);
        let body = self.loop_body(&l.body);
        let frame = self.loops.pop().expect("pushed above");
        let ty = if frame.has_break { frame.value_ty } else { Type::Never };
        self.mk(ExprKind::Loop { id, body }, ty, span)
    }

    pub(super) fn for_expr(&mut self, f: &syn::ExprForLoop) -> Expr {
        let span = f.span();
        let Some(iter) = self.range_iter(&f.expr) else {
            return self.error_expr(span);
        };
        let (start, end, inclusive, reverse, step) = iter;
        let elem_ty = match self.prog.infer.unify(start.ty, end.ty) {
            Ok(t) => t,
            Err(()) => {
                let (a, b) = (self.prog.infer.describe(start.ty), self.prog.infer.describe(end.ty));
                self.error(&f.expr, format!("mismatched types: the range runs from `{a}` to `{b}`; both ends must have the same integer type"));
                Type::Error
            }
        };
        self.prog.require(elem_ty, Require::Int("a `for` range"), SpanRange::of(&f.expr));
        self.scopes.push(Vec::new());
        let var = match self.binding(&f.pat, "`for` loop variable") {
            Some((name, mutable, vspan)) => self.declare(name, elem_ty, mutable, vspan),
            None => self.declare("_".into(), elem_ty, false, f.pat.span()),
        };
        let id = self.push_loop(f.label.as_ref(), LoopKind::For);
        let body = self.loop_body(&f.body);
        self.loops.pop();
        self.scopes.pop();
        let range =
            ForRange { var, start: Box::new(start), end: Box::new(end), inclusive, reverse, step: step.map(Box::new) };
        self.mk(ExprKind::For { id, range, body }, Type::Unit, span)
    }

    /// `a..b`, `a..=b`, optionally followed by `.rev()` and then `.step_by(k)`.
    #[allow(clippy::type_complexity)]
    fn range_iter(&mut self, e: &syn::Expr) -> Option<(Expr, Expr, bool, bool, Option<Expr>)> {
        let supported = format!(
            "a `for` loop in {} iterates over an integer range: `a..b`, `a..=b`, optionally with `.rev()` and then `.step_by(k)`",
            self.subject()
        );
        match e {
            syn::Expr::Paren(p) => self.range_iter(&p.expr),
            syn::Expr::Group(g) => self.range_iter(&g.expr),
            syn::Expr::Range(r) => {
                let (Some(a), Some(b)) = (&r.start, &r.end) else {
                    self.error(r, format!("an open range cannot be iterated here: {supported}"));
                    return None;
                };
                let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
                let (start, end) = (self.expr(a), self.expr(b));
                Some((start, end, inclusive, false, None))
            }
            syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => {
                let (s, e2, inc, rev, step) = self.range_iter(&m.receiver)?;
                if step.is_some() || rev {
                    self.error(&m.method, format!("`.rev()` must come right after the range: {supported}"));
                    return None;
                }
                Some((s, e2, inc, true, None))
            }
            syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                let (s, e2, inc, rev, step) = self.range_iter(&m.receiver)?;
                if step.is_some() {
                    self.error(&m.method, format!("`.step_by` can be applied once: {supported}"));
                    return None;
                }
                let k = self.expr(&m.args[0]);
                if self.prog.infer.unify(k.ty, Type::Scalar(ScalarType::Usize)).is_err() {
                    let found = self.prog.infer.describe(k.ty);
                    self.error(
                        &m.args[0],
                        format!("mismatched types: `step_by` takes a `usize`, found `{found}` (write `k as usize`)"),
                    );
                }
                Some((s, e2, inc, rev, Some(k)))
            }
            _ => {
                self.error(e, supported);
                None
            }
        }
    }

    fn loop_target(&mut self, label: Option<&syn::Lifetime>, what: &str, at: &dyn ToTokens) -> Option<usize> {
        match label {
            Some(l) => {
                let name = l.ident.to_string();
                let found = self.loops.iter().rposition(|f| f.label.as_deref() == Some(&name));
                if found.is_none() {
                    self.error(l, format!("use of undeclared label `'{name}`"));
                }
                found
            }
            None => {
                if self.loops.is_empty() {
                    self.error(at, format!("`{what}` outside of a loop"));
                }
                self.loops.len().checked_sub(1)
            }
        }
    }

    pub(super) fn break_expr(&mut self, b: &syn::ExprBreak) -> Expr {
        let span = b.span();
        let value = b.expr.as_ref().map(|v| self.expr(v));
        let Some(idx) = self.loop_target(b.label.as_ref(), "break", b) else {
            return self.mk(ExprKind::Block(Block::default()), Type::Never, span);
        };
        let (id, kind, vt) = {
            let f = &mut self.loops[idx];
            f.has_break = true;
            (f.id, f.kind, f.value_ty)
        };
        match (&value, kind) {
            (Some(v), LoopKind::Loop) => {
                if self.prog.infer.unify(vt, v.ty).is_err() {
                    let (want, found) = (self.prog.infer.describe(vt), self.prog.infer.describe(v.ty));
                    self.error(
                        b.expr.as_ref().unwrap(),
                        format!("mismatched types: this `loop` breaks with `{want}` elsewhere, found `{found}`"),
                    );
                }
            }
            (Some(_), _) => {
                self.error(b, "`break` with a value is only allowed in a `loop`, not in `while` or `for`");
            }
            (None, LoopKind::Loop) => {
                if self.prog.infer.unify(vt, Type::Unit).is_err() {
                    let want = self.prog.infer.describe(vt);
                    self.error(b, format!("this `loop` produces `{want}`: write `break <value>`"));
                }
            }
            (None, _) => {}
        }
        self.mk(ExprKind::Break { target: id, value: value.map(Box::new) }, Type::Never, span)
    }

    pub(super) fn continue_expr(&mut self, c: &syn::ExprContinue) -> Expr {
        let span = c.span();
        let Some(idx) = self.loop_target(c.label.as_ref(), "continue", c) else {
            return self.mk(ExprKind::Block(Block::default()), Type::Never, span);
        };
        let target = self.loops[idx].id;
        self.mk(ExprKind::Continue { target }, Type::Never, span)
    }

    pub(super) fn return_expr(&mut self, r: &syn::ExprReturn) -> Expr {
        let span = r.span();
        let value = r.expr.as_ref().map(|v| self.expr(v));
        if let Some(ret) = self.ret {
            let vt = value.as_ref().map_or(Type::Unit, |v| v.ty);
            if self.prog.infer.unify(vt, ret).is_err() {
                let found = self.prog.infer.describe(vt);
                let want = self.prog.infer.describe(ret);
                let msg = if value.is_none() {
                    format!("`return` needs a value: this function returns `{want}`")
                } else {
                    let hint = conversion_hint(r.expr.as_ref().unwrap(), &found, &want);
                    format!("mismatched types: this function returns `{want}`, found `{found}`{hint}")
                };
                self.error(r, msg);
            }
        }
        self.mk(ExprKind::Return(value.map(Box::new)), Type::Never, span)
    }
}
