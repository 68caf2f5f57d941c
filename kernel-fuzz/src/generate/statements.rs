//! Statements: `let` in its forms, assignments, `if`, and the jumps (`break`,
//! `continue`, `return`).

use super::{BlockEnd, COMPLEX_OPS, FLOAT_OPS, FnSig, Gen, INT_OPS};
use crate::ast::*;
use crate::ty::Ty;

impl Gen<'_> {
    pub(super) fn stmt(&mut self, depth: u32, out: &mut Vec<Stmt>) {
        self.budget -= 1;
        let assignable = self.visible().iter().any(|v| v.mutable && !v.reserved);
        let in_loop = !self.loops.is_empty() && !self.no_jumps;
        let tuple_fns = self.callable().iter().any(|f| matches!(f.ret, Ret::Tuple(_)));
        let loops_ok = depth > 0 && self.budget > 0;
        let weights = [
            6,                                                        // let
            if assignable { 5 } else { 0 },                           // assignment
            if depth > 0 { 3 } else { 1 },                            // if
            if loops_ok { 3 } else { 0 },                             // for
            if loops_ok { 1 } else { 0 },                             // while
            if loops_ok { 1 } else { 0 },                             // loop
            1,                                                        // expression statement
            if tuple_fns { 2 } else { 0 },                            // let (a, b) = h(..)
            1,                                                        // let y; if c { y = ..} else { y = ..}
            if in_loop { 2 } else { 0 },                              // break / continue
            u32::from(self.returns),                                  // return
            1,                                                        // let x = 5; let y: u8 = x;
            if self.structs.is_empty() { 0 } else { 3 },              // let s = S { … };
            if self.assignable_structs().is_empty() { 0 } else { 4 }, // s = t;
        ];
        match self.rng.weighted(&weights) {
            0 => {
                let s = self.let_stmt(depth);
                out.push(s);
            }
            1 => {
                let s = self.assign(depth);
                out.push(s);
            }
            2 => {
                let cond = self.expr(Ty::Bool, depth + 1);
                let then = self.block(depth, BlockEnd::Unit);
                let els = if self.rng.chance(1, 2) { Some(self.block(depth, BlockEnd::Unit)) } else { None };
                out.push(Stmt::If { cond, then, els });
            }
            3 => self.for_loop(depth, out),
            4 => self.while_loop(depth, out),
            5 => self.loop_stmt(depth, out),
            6 => {
                let ty = self.value_type();
                let e = self.expr(ty, depth + 1);
                out.push(Stmt::Expr(e, self.rng.chance(1, 2)));
            }
            7 => {
                let fns: Vec<FnSig> = self.callable().into_iter().filter(|f| matches!(f.ret, Ret::Tuple(_))).collect();
                let f = self.rng.pick(&fns).clone();
                let call = self.call(&f, depth + 1);
                let Ret::Tuple(ts) = &f.ret else { unreachable!() };
                let mut names = Vec::new();
                let mut declared = Vec::new();
                for t in ts {
                    if self.rng.chance(1, 5) {
                        names.push(None);
                    } else {
                        let name = self.fresh("v");
                        let mutable = self.rng.chance(1, 4);
                        names.push(Some((name.clone(), mutable)));
                        declared.push((name, *t, mutable));
                    }
                }
                for (name, t, mutable) in declared {
                    self.declare(name, t, mutable, false);
                }
                out.push(Stmt::LetTuple { names, call });
            }
            8 => self.deferred_let(depth, out),
            11 => self.let_typed_later(out),
            12 => out.push(self.let_struct(depth)),
            13 => out.push(self.assign_struct(depth)),
            9 => {
                let jump = self.jump(depth);
                if self.rng.chance(3, 4) {
                    let cond = self.expr(Ty::Bool, depth + 1);
                    out.push(Stmt::If { cond, then: Block { stmts: vec![jump], tail: None }, els: None });
                } else {
                    out.push(jump);
                }
            }
            _ => {
                let t = self.result_tail(depth + 1);
                let cond = self.expr(Ty::Bool, depth + 1);
                out.push(Stmt::If { cond, then: Block { stmts: vec![Stmt::Return(t)], tail: None }, els: None });
            }
        }
    }

    /// `let x = 5; let y: u8 = x;`: rustc types the literal from the later use.
    fn let_typed_later(&mut self, out: &mut Vec<Stmt>) {
        // Types with literals (the half and complex types have none).
        let ty = loop {
            let t = self.value_type();
            if t != Ty::Bool && !t.is_half() && !t.is_complex() {
                break t;
            }
        };
        let x = self.fresh("v");
        let mut init = self.literal(ty);
        if let ExprKind::Lit(l) = &mut init.kind {
            l.bare = true;
        }
        let mutable = self.rng.chance(1, 3);
        out.push(Stmt::Let { name: x.clone(), mutable, annotated: false, ty, init: Some(init) });
        self.declare(x.clone(), ty, mutable, false);
        let y = self.fresh("v");
        out.push(Stmt::Let { name: y.clone(), mutable: false, annotated: true, ty, init: Some(Self::var(&x, ty)) });
        self.declare(y, ty, false, false);
    }

    fn let_stmt(&mut self, depth: u32) -> Stmt {
        let ty = self.any_type();
        let init = self.expr(ty, depth + 1);
        // Not a struct's scalar (`s.f0`), which is no name a `let` can bind.
        let shadowable: Vec<String> =
            self.visible().iter().filter(|v| !v.reserved && !v.name.contains('.')).map(|v| v.name.clone()).collect();
        let name = if !shadowable.is_empty() && self.rng.chance(1, 5) {
            self.rng.pick(&shadowable).clone()
        } else {
            self.fresh("v")
        };
        let mutable = self.rng.chance(2, 5);
        let annotated = self.rng.chance(1, 2);
        // Declared after the initialiser, which still sees a shadowed variable.
        self.declare(name.clone(), ty, mutable, false);
        Stmt::Let { name, mutable, annotated, ty, init: Some(init) }
    }

    fn deferred_let(&mut self, depth: u32, out: &mut Vec<Stmt>) {
        let ty = self.any_type();
        let name = self.fresh("v");
        let cond = self.expr(Ty::Bool, depth + 1);
        let a = self.expr(ty, depth + 1);
        let b = self.expr(ty, depth + 1);
        let assign = |value| Block { stmts: vec![Stmt::Assign { name: name.clone(), op: None, value }], tail: None };
        out.push(Stmt::Let { name: name.clone(), mutable: false, annotated: self.rng.chance(1, 2), ty, init: None });
        out.push(Stmt::If { cond, then: assign(a), els: Some(assign(b)) });
        self.declare(name, ty, false, true);
    }

    fn assign(&mut self, depth: u32) -> Stmt {
        let targets: Vec<(String, Ty)> =
            self.visible().iter().filter(|v| v.mutable && !v.reserved).map(|v| (v.name.clone(), v.ty)).collect();
        let (name, ty) = self.rng.pick(&targets).clone();
        if self.rng.chance(1, 2) {
            let value = self.expr(ty, depth + 1);
            return Stmt::Assign { name, op: None, value };
        }
        // A half or complex `x op= v` calls `OpAssign::op_assign(&mut x, v)`: the borrow
        // checker refuses a `v` that assigns `x` (or the struct holding it), so those are
        // not assigned in it. (A primitive's `op=` evaluates `v` first and has no borrow.)
        if ty.is_half() || ty.is_complex() {
            let held = holders(&name);
            let saved = self.reserve(&held);
            let s = self.compound(name, ty, depth);
            self.unreserve(&held, saved);
            return s;
        }
        self.compound(name, ty, depth)
    }

    /// Marks the latest binding of each of `names` reserved; what each was before.
    fn reserve(&mut self, names: &[String]) -> Vec<bool> {
        names.iter().map(|n| self.binding(n).is_some_and(|v| std::mem::replace(&mut v.reserved, true))).collect()
    }

    fn unreserve(&mut self, names: &[String], saved: Vec<bool>) {
        for (n, was) in names.iter().zip(saved) {
            if let Some(v) = self.binding(n) {
                v.reserved = was;
            }
        }
    }

    fn binding(&mut self, name: &str) -> Option<&mut super::Var> {
        self.vars.iter_mut().rev().flat_map(|s| s.iter_mut().rev()).find(|v| v.name == name)
    }

    /// `x op= v` for the assignable `x` of type `ty`.
    fn compound(&mut self, name: String, ty: Ty, depth: u32) -> Stmt {
        let (op, value) = match ty {
            Ty::Bool => {
                let op = *self.rng.pick(&[BinOp::And, BinOp::Or, BinOp::Xor]);
                (op, self.expr(ty, depth + 1))
            }
            t if t.is_float() || t.is_half() => {
                let op = FLOAT_OPS[self.rng.weighted(&FLOAT_OPS.iter().map(|o| o.1).collect::<Vec<_>>())].0;
                (op, self.expr(ty, depth + 1))
            }
            t if t.is_complex() => {
                // `z op= w`, or `z op= x` of a part.
                let op = COMPLEX_OPS[self.rng.weighted(&COMPLEX_OPS.iter().map(|o| o.1).collect::<Vec<_>>())].0;
                let vt = if self.rng.chance(1, 3) { t.part().expect("a complex type") } else { t };
                (op, self.expr(vt, depth + 1))
            }
            _ => {
                let op = INT_OPS[self.rng.weighted(&INT_OPS.iter().map(|o| o.1).collect::<Vec<_>>())].0;
                let value = match op {
                    BinOp::Shl | BinOp::Shr => self.shift_amount(ty, depth),
                    BinOp::Div | BinOp::Rem => self.divisor(ty, depth),
                    _ => self.expr(ty, depth + 1),
                };
                (op, value)
            }
        };
        Stmt::Assign { name, op: Some(op), value }
    }

    /// `break`, `continue` (to the innermost loop or a labelled one) or `return`.
    pub(super) fn jump_or_return(&mut self, depth: u32) -> Stmt {
        if !self.loops.is_empty() && !self.no_jumps && (!self.returns || self.rng.chance(2, 3)) {
            self.jump(depth)
        } else {
            Stmt::Return(self.result_tail(depth + 1))
        }
    }

    fn jump(&mut self, depth: u32) -> Stmt {
        let n = self.loops.len();
        let mut k = n - 1;
        if self.rng.chance(1, 3) {
            let labelled: Vec<usize> = (0..n).filter(|&i| self.loops[i].label.is_some()).collect();
            if !labelled.is_empty() {
                k = *self.rng.pick(&labelled);
            }
        }
        // An unlabelled jump goes to the innermost loop.
        let label = if k + 1 < n || self.rng.chance(1, 2) { self.loops[k].label.clone() } else { None };
        if self.rng.chance(1, 3) {
            return Stmt::Continue { label };
        }
        let value = self.loops[k].value.map(|t| self.expr(t, depth + 1));
        Stmt::Break { label, value }
    }
}

/// A variable and the struct variables holding it: `s.f2.f0` is held by `s.f2` and `s`,
/// `s.f1[2]` by `s` (an array field is no variable).
fn holders(name: &str) -> Vec<String> {
    let mut out = vec![name.to_string()];
    out.extend(name.char_indices().filter(|(_, c)| *c == '.' || *c == '[').map(|(i, _)| name[..i].to_string()));
    out
}
