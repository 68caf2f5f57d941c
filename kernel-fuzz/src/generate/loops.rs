//! Loops (`for`, `while`, `loop`, and `loop` as a value) and what bounds their trip counts.

use super::literals::int_path_const;
use super::{BlockEnd, Gen, LoopCtx, RARE_FAULT_ODDS, WORK_LIMIT};
use crate::ast::*;
use crate::methods::Method;
use crate::ty::{Ty, Value};

impl Gen<'_> {
    fn label(&mut self) -> Option<String> {
        self.rng.chance(1, 3).then(|| self.fresh("l"))
    }

    /// Enters a loop body that runs at most `trips` times per run of the code around it.
    fn enter_loop(&mut self, trips: u64, label: Option<String>, value: Option<Ty>) -> (u64, u64) {
        let saved = (self.weight, self.work);
        self.work += self.weight * trips;
        self.weight *= trips.max(1);
        self.loops.push(LoopCtx { label, value });
        self.vars.push(Vec::new());
        saved
    }

    fn leave_loop(&mut self, saved: (u64, u64)) {
        self.vars.pop();
        self.loops.pop();
        self.weight = saved.0;
        // The body's own loops and calls count too.
    }

    fn room_for(&self, trips: u64) -> bool {
        self.work + self.weight * trips.max(1) <= WORK_LIMIT
    }

    pub(super) fn for_loop(&mut self, depth: u32, out: &mut Vec<Stmt>) {
        let saved_jumps = std::mem::replace(&mut self.no_jumps, true);
        let range = self.range(depth);
        self.no_jumps = saved_jumps;
        let Some((range, trips)) = range else { return };
        if !self.room_for(trips) {
            return;
        }
        let label = self.label();
        let var = self.fresh("i");
        let mutable = self.rng.chance(1, 8);
        let saved = self.enter_loop(trips, label.clone(), None);
        self.declare(var.clone(), range.ty, mutable, false);
        let body = self.block(depth, BlockEnd::Unit);
        self.leave_loop(saved);
        out.push(Stmt::For { label, var, range: Box::new(range), body });
    }

    /// A counter for `while` and `loop`: `let mut w: T = 0;` (the body cannot assign it).
    fn counter(&mut self, out: &mut Vec<Stmt>) -> (String, Ty) {
        let ty = self.int_type();
        let name = self.fresh("w");
        let zero = Expr::lit(Value::int(ty, 0));
        out.push(Stmt::Let {
            name: name.clone(),
            mutable: true,
            annotated: self.rng.chance(1, 2),
            ty,
            init: Some(zero),
        });
        self.declare(name.clone(), ty, true, true);
        (name, ty)
    }

    fn count_up(name: &str, ty: Ty) -> Stmt {
        Stmt::Assign { name: name.to_string(), op: Some(BinOp::Add), value: Expr::lit(Value::int(ty, 1)) }
    }

    pub(super) fn while_loop(&mut self, depth: u32, out: &mut Vec<Stmt>) {
        let trips = self.rng.range(1, 8) as u64;
        if !self.room_for(trips) {
            return;
        }
        let (w, wt) = self.counter(out);
        let saved_jumps = std::mem::replace(&mut self.no_jumps, true);
        let extra = self.expr(Ty::Bool, depth + 1);
        self.no_jumps = saved_jumps;
        let bound = Expr::new(
            Ty::Bool,
            ExprKind::Binary(
                BinOp::Lt,
                Box::new(Self::var(&w, wt)),
                Box::new(Self::bare(Value::int(wt, trips as i128))),
            ),
        );
        let (a, b) = if self.rng.chance(1, 2) { (bound, extra) } else { (extra, bound) };
        let cond = Expr::new(Ty::Bool, ExprKind::Binary(BinOp::LogicAnd, Box::new(a), Box::new(b)));
        let label = self.label();
        let saved = self.enter_loop(trips, label.clone(), None);
        let mut body = self.block(depth, BlockEnd::Unit);
        self.leave_loop(saved);
        body.stmts.insert(0, Self::count_up(&w, wt));
        out.push(Stmt::While { label, cond, body });
    }

    /// `loop { w += 1; if w > K { break …; } … }`: the exit that bounds the loop.
    fn bounded_loop_body(&mut self, depth: u32, w: &str, wt: Ty, trips: u64, value: Option<Ty>) -> Block {
        let mut body = self.block(depth, BlockEnd::Unit);
        // The exit's value must not `continue`: the loop would never end.
        let saved = std::mem::replace(&mut self.no_jumps, true);
        let exit_value = value.map(|t| self.expr(t, depth + 1));
        self.no_jumps = saved;
        let label = self.loops.last().and_then(|l| l.label.clone()).filter(|_| self.rng.chance(1, 2));
        let exit = Stmt::If {
            cond: Expr::new(
                Ty::Bool,
                ExprKind::Binary(
                    BinOp::Gt,
                    Box::new(Self::var(w, wt)),
                    Box::new(Self::bare(Value::int(wt, trips as i128))),
                ),
            ),
            then: Block { stmts: vec![Stmt::Break { label, value: exit_value }], tail: None },
            els: None,
        };
        body.stmts.insert(0, exit);
        body.stmts.insert(0, Self::count_up(w, wt));
        body
    }

    pub(super) fn loop_stmt(&mut self, depth: u32, out: &mut Vec<Stmt>) {
        let trips = self.rng.range(1, 8) as u64;
        if !self.room_for(trips + 1) {
            return;
        }
        let (w, wt) = self.counter(out);
        let label = self.label();
        let saved = self.enter_loop(trips + 1, label.clone(), None);
        let body = self.bounded_loop_body(depth, &w, wt, trips, None);
        self.leave_loop(saved);
        out.push(Stmt::Loop { label, body });
    }

    /// A `loop` that produces a value, in a block with its counter.
    pub(super) fn loop_expr(&mut self, ty: Ty, depth: u32) -> Option<Expr> {
        let trips = self.rng.range(1, 6) as u64;
        if !self.room_for(trips + 1) || depth == 0 {
            return None;
        }
        self.vars.push(Vec::new());
        let mut stmts = Vec::new();
        let (w, wt) = self.counter(&mut stmts);
        let label = self.label();
        let saved = self.enter_loop(trips + 1, label.clone(), Some(ty));
        let body = self.bounded_loop_body(depth - 1, &w, wt, trips, Some(ty));
        self.leave_loop(saved);
        self.vars.pop();
        let lp = Expr::new(ty, ExprKind::Loop { label, body });
        Some(Expr::new(ty, ExprKind::Block(Block { stmts, tail: Some(Tail::Scalar(Box::new(lp))) })))
    }

    /// A range to iterate over, and at most how many values it yields.
    fn range(&mut self, depth: u32) -> Option<(RangeLoop, u64)> {
        let ty = self.int_type();
        let (min, max) = ty.int_range();
        let anchor = match self.rng.weighted(&[5, 2, 2, 2]) {
            0 => 0,
            1 => min,
            2 => max,
            _ => self.rng.range(min.max(-1000), max.min(1000)),
        };
        let (start, s_lo, _) = self.bound(ty, anchor, depth);
        let (end, _, e_hi) = self.bound(ty, anchor, depth);
        let inclusive = self.rng.chance(1, 2);
        let span = e_hi - s_lo + i128::from(inclusive);
        let trips = span.clamp(0, i128::MAX) as u64;
        if trips > 24 {
            return None;
        }
        let rev = self.rng.chance(2, 5);
        let step = self.rng.chance(2, 5).then(|| self.step(depth));
        Some((RangeLoop { ty, start, end, inclusive, rev, step }, trips))
    }

    /// A range bound near `anchor`, with the least and greatest value it can have.
    fn bound(&mut self, ty: Ty, anchor: i128, depth: u32) -> (Expr, i128, i128) {
        let (min, max) = ty.int_range();
        let near = |g: &mut Self, d: i128| g.rng.range((anchor - d).max(min), (anchor + d).min(max));
        let small = (-8..=8).contains(&anchor);
        match self.rng.weighted(&[4, 2, if small { 3 } else { 0 }, if small { 2 } else { 0 }, 2, 2]) {
            1 if anchor == max || anchor == min => {
                let (path, v) = int_path_const(ty, anchor == max);
                (Expr::new(ty, ExprKind::PathConst(path, v)), anchor, anchor)
            }
            2 => {
                let k = self.rng.range(2, 6);
                let e = self.expr(ty, depth + 1);
                let rem =
                    Expr::new(ty, ExprKind::Binary(BinOp::Rem, Box::new(e), Box::new(self.lit_of(Value::int(ty, k)))));
                (rem, if ty.is_signed() { 1 - k } else { 0 }, k - 1)
            }
            3 => {
                let m = *self.rng.pick(&[1, 3, 7]);
                let e = self.expr(ty, depth + 1);
                (
                    Expr::new(ty, ExprKind::Binary(BinOp::And, Box::new(e), Box::new(self.lit_of(Value::int(ty, m))))),
                    0,
                    m,
                )
            }
            4 => {
                let a = near(self, 4);
                let b = near(self, 4);
                let (lo, hi) = (a.min(b), a.max(b));
                let e = self.expr(ty, depth + 1);
                let args = vec![self.lit_of(Value::int(ty, lo)), self.lit_of(Value::int(ty, hi))];
                (
                    Expr::new(
                        ty,
                        ExprKind::Method {
                            method: Method::IClamp,
                            recv: Box::new(e),
                            args,
                            path: self.rng.chance(1, 4),
                        },
                    ),
                    lo,
                    hi,
                )
            }
            5 => {
                let c = self.rng.range((anchor - 3).max(min), (anchor + 3).min(max - 3));
                let e = self.expr(ty, depth + 1);
                let masked =
                    Expr::new(ty, ExprKind::Binary(BinOp::And, Box::new(e), Box::new(self.lit_of(Value::int(ty, 3)))));
                (
                    Expr::new(
                        ty,
                        ExprKind::Binary(BinOp::Add, Box::new(self.lit_of(Value::int(ty, c))), Box::new(masked)),
                    ),
                    c,
                    c + 3,
                )
            }
            _ => {
                let v = near(self, 3);
                (self.lit_of(Value::int(ty, v)), v, v)
            }
        }
    }

    /// The argument of `step_by` (a `usize`; zero faults).
    fn step(&mut self, depth: u32) -> Expr {
        let usize_of = |_: &mut Self, e: Expr| Expr::new(Ty::Usize, ExprKind::Cast(Box::new(e)));
        // A literal step needs no fault check; the others may be zero.
        let safe = self.cfg.rare_faults && !self.rng.chance(1, RARE_FAULT_ODDS);
        match self.rng.weighted(if safe { &[3, 0, 0, 3] } else { &[3, 2, 2, 3] }) {
            // A small literal of another type, cast: `(2u8 as usize)`.
            0 => {
                let t = self.int_type();
                let v = self.rng.range(i128::from(safe), 4);
                let l = self.lit_of(Value::int(t, v));
                usize_of(self, l)
            }
            // Zero one time in four.
            1 => {
                let t = self.int_type();
                let e = self.expr(t, depth + 1);
                let e = usize_of(self, e);
                Expr::new(Ty::Usize, ExprKind::Binary(BinOp::Rem, Box::new(e), Box::new(self.lit_of(Value::Usize(4)))))
            }
            // Anything: a large step yields the first value only.
            2 => {
                let t = self.int_type();
                let e = self.expr(t, depth + 1);
                usize_of(self, e)
            }
            // A literal: `(0..n).step_by(3)`.
            _ => {
                let v = self.rng.range(1, 4);
                self.lit_of(Value::Usize(v as usize))
            }
        }
    }
}
