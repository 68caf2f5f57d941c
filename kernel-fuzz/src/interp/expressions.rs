//! Expressions, and `match` with its patterns.

use super::operations::{binary, call_method, compare, func, unary};
use super::{Fault, Flow, Interp, R, fault, invalid, targets};
use crate::ast::*;
use crate::ty::Value;

impl<'p> Interp<'p> {
    pub(super) fn expr(&mut self, e: &'p Expr) -> R<'p, Value> {
        let v = match &e.kind {
            ExprKind::Lit(l) => l.value,
            ExprKind::Var(n) => self.lookup(n)?,
            ExprKind::Const(n) => self.const_value(n)?,
            ExprKind::PathConst(_, v) => *v,
            ExprKind::Unary(op, a) => {
                let a = self.expr(a)?;
                unary(*op, a, self.overflow).or_else(fault)?
            }
            ExprKind::Binary(BinOp::LogicAnd, a, b) => Value::Bool(self.expr(a)?.truthy() && self.expr(b)?.truthy()),
            ExprKind::Binary(BinOp::LogicOr, a, b) => Value::Bool(self.expr(a)?.truthy() || self.expr(b)?.truthy()),
            ExprKind::Binary(op, a, b) => {
                let a = self.expr(a)?;
                let b = self.expr(b)?;
                binary(*op, a, b, self.overflow).or_else(fault)?
            }
            ExprKind::Cast(a) => self.expr(a)?.cast(e.ty),
            ExprKind::Method { method, recv, args, .. } => {
                let r = self.expr(recv)?;
                let args = args.iter().map(|a| self.expr(a)).collect::<R<'p, Vec<Value>>>()?;
                call_method(*method, r, &args, self.overflow).or_else(|f| {
                    if matches!(f, Fault::IntClampBounds | Fault::FloatClampBounds) {
                        self.clamp_bounds = Some((args[0], args[1]));
                    }
                    fault(f)
                })?
            }
            ExprKind::Call(c) => self.call(c)?[0],
            ExprKind::Field(c, k) => self.call(c)?[*k],
            ExprKind::If { cond, then, els } => {
                if self.expr(cond)?.truthy() {
                    self.scalar_block(then)?
                } else {
                    self.scalar_block(els)?
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                let v = self.expr(scrutinee)?;
                return self.match_arms(v, arms);
            }
            ExprKind::Block(b) => self.scalar_block(b)?,
            ExprKind::Func { func: f, args, .. } => {
                let args = args.iter().map(|a| self.expr(a)).collect::<R<'p, Vec<Value>>>()?;
                func(*f, e.ty, &args)
            }
            ExprKind::Loop { label, body } => loop {
                self.step()?;
                match self.block(body) {
                    Ok(_) => {}
                    Err(Flow::Break(l, Some(v))) if targets(l, label) => break v,
                    Err(Flow::Continue(l)) if targets(l, label) => {}
                    Err(e) => return Err(e),
                }
            },
        };
        if v.ty() != e.ty {
            return invalid(format!("a `{}` where a `{}` was expected", v.ty().name(), e.ty.name()));
        }
        Ok(v)
    }

    fn match_arms(&mut self, v: Value, arms: &'p [Arm]) -> R<'p, Value> {
        for arm in arms {
            let mark = self.env.len();
            let hit = self.bind(&arm.pat, v) && {
                match &arm.guard {
                    Some(g) => match self.expr(g) {
                        Ok(b) => b.truthy(),
                        Err(e) => {
                            self.env.truncate(mark);
                            return Err(e);
                        }
                    },
                    None => true,
                }
            };
            if hit {
                let r = self.expr(&arm.body);
                self.env.truncate(mark);
                return r;
            }
            self.env.truncate(mark);
        }
        invalid("no arm of a `match` matched".into())
    }

    /// Whether `p` matches `v`, binding its names.
    fn bind(&mut self, p: &'p Pat, v: Value) -> bool {
        let cmp = |a: Value| compare(v, a);
        match p {
            Pat::Wild => true,
            Pat::Lit(x, _) | Pat::PathConst(_, x) => cmp(*x) == Some(std::cmp::Ordering::Equal),
            Pat::Range { lo, hi, inclusive } => {
                let above = lo.as_ref().is_none_or(|l| cmp(l.value).is_some_and(|o| o.is_ge()));
                let below = hi
                    .as_ref()
                    .is_none_or(|h| cmp(h.value).is_some_and(|o| if *inclusive { o.is_le() } else { o.is_lt() }));
                above && below
            }
            Pat::Or(ps) => ps.iter().any(|q| self.bind(q, v)),
            Pat::Bind(name, sub) => {
                self.env.push((name, v));
                sub.as_ref().is_none_or(|s| self.bind(s, v))
            }
        }
    }
}
