//! Functions, blocks, and the items (`const`, nested `fn`) declared in blocks.

use super::{BlockEnd, FnSig, Gen, ItemScope, Var};
use crate::ast::*;
use crate::ty::{Ty, Value};

impl Gen<'_> {
    /// A function with these parameters and result; `depth` bounds its nesting.
    pub(super) fn function(
        &mut self,
        name: String,
        params: Vec<Param>,
        struct_params: Vec<StructParam>,
        ret: Ret,
        depth: u32,
    ) -> (FnItem, u64) {
        let saved_vars = std::mem::take(&mut self.vars);
        let saved_loops = std::mem::take(&mut self.loops);
        let saved_ret = std::mem::replace(&mut self.ret, ret.clone());
        let saved_returns = std::mem::replace(&mut self.returns, true);
        let (saved_weight, saved_work) = (self.weight, self.work);
        self.weight = 1;
        self.work = 0;
        self.vars.push(
            params
                .iter()
                .map(|p| Var { name: p.name.clone(), ty: p.ty, mutable: p.mutable, reserved: false, strukt: None })
                .collect(),
        );
        for p in &struct_params {
            let d = self.struct_index(&p.ty);
            self.declare_struct(p.name.clone(), d, p.mutable);
        }
        let body = self.block(depth, BlockEnd::FnResult);
        let work = self.work;
        self.vars = saved_vars;
        self.loops = saved_loops;
        self.ret = saved_ret;
        self.returns = saved_returns;
        self.weight = saved_weight;
        self.work = saved_work;
        (FnItem { name, params, struct_params, ret, body }, work)
    }

    /// A block: its items, statements, and what it ends with.
    pub(super) fn block(&mut self, depth: u32, end: BlockEnd) -> Block {
        self.vars.push(Vec::new());
        self.items.push(ItemScope::default());
        let mut items = Vec::new();
        if depth > 0 && self.budget > 20 {
            for _ in 0..self.rng.weighted(&[12, 3, 1]) {
                let c = self.const_item();
                items.push(Stmt::Const(c));
            }
            for _ in 0..self.rng.weighted(&[14, 3, 1]) {
                let name = self.fresh("h");
                let f = self.fn_item(name, depth - 1);
                items.push(Stmt::Fn(f));
            }
        }
        let mut stmts = Vec::new();
        let n = if self.budget <= 0 { 0 } else { self.rng.below(2 + depth as u64 * 2) as usize };
        for _ in 0..n {
            self.stmt(depth.saturating_sub(1), &mut stmts);
        }
        let tail = match end {
            BlockEnd::Unit => None,
            BlockEnd::Branch(_)
                if !self.no_jumps && (self.returns || !self.loops.is_empty()) && self.rng.chance(1, 10) =>
            {
                let t = self.jump_or_return(depth.saturating_sub(1));
                stmts.push(t);
                None
            }
            BlockEnd::Value(ty) | BlockEnd::Branch(ty) => Some(Tail::Scalar(Box::new(self.expr(ty, depth + 1)))),
            BlockEnd::FnResult => {
                let t = self.result_tail(depth + 1);
                if self.rng.chance(1, 10) {
                    stmts.push(Stmt::Return(t));
                    None
                } else {
                    Some(t)
                }
            }
        };
        // Items go anywhere in their block: they are visible in all of it.
        for item in items {
            let at = self.rng.below(stmts.len() as u64 + 1) as usize;
            stmts.insert(at, item);
        }
        self.items.pop();
        self.vars.pop();
        Block { stmts, tail }
    }

    /// The current function's result.
    pub(super) fn result_tail(&mut self, depth: u32) -> Tail {
        match self.ret.clone() {
            Ret::Scalar(t) => Tail::Scalar(Box::new(self.expr(t, depth))),
            Ret::Tuple(ts) => Tail::Tuple(ts.iter().map(|t| self.expr(*t, depth)).collect()),
            Ret::Struct(name) => {
                let d = self.struct_index(&name);
                Tail::Struct(self.struct_value(d, depth))
            }
        }
    }

    pub(super) fn const_item(&mut self) -> ConstItem {
        let ty = self.any_type();
        let name = self.fresh("K");
        let (value, v) = self.const_expr(ty);
        self.items.last_mut().expect("a scope").consts.push((name.clone(), ty, v));
        ConstItem { name, ty, value }
    }

    /// A constant's value and what it evaluates to. rustc refuses a constant whose
    /// evaluation overflows, so arithmetic on other constants is checked here. (A block's
    /// items land anywhere in it, so a constant often names one written after it.)
    fn const_expr(&mut self, ty: Ty) -> (Expr, Value) {
        let earlier = self.consts_of(ty);
        if !earlier.is_empty() && ty.is_int() && self.rng.chance(1, 3) {
            let (name, v) = self.rng.pick(&earlier).clone();
            let lit = self.literal(ty);
            let ExprKind::Lit(l) = &lit.kind else { unreachable!() };
            let (a, b) = (v.as_i128().unwrap(), l.value.as_i128().unwrap());
            let (lo, hi) = ty.int_range();
            let op = *self.rng.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Xor, BinOp::And]);
            let r = match op {
                BinOp::Add => a + b,
                BinOp::Sub => a - b,
                BinOp::Mul => a.saturating_mul(b),
                BinOp::Xor => a ^ b,
                _ => a & b,
            };
            if (lo..=hi).contains(&r) {
                let e =
                    Expr::new(ty, ExprKind::Binary(op, Box::new(Expr::new(ty, ExprKind::Const(name))), Box::new(lit)));
                return (e, Value::int(ty, r));
            }
        }
        if ty.is_float() && !earlier.is_empty() && self.rng.chance(1, 3) {
            let (name, v) = self.rng.pick(&earlier).clone();
            let lit = self.literal(ty);
            let ExprKind::Lit(l) = &lit.kind else { unreachable!() };
            let r = match (v, l.value) {
                (Value::F32(a), Value::F32(b)) => Value::F32(a * b),
                (Value::F64(a), Value::F64(b)) => Value::F64(a * b),
                _ => unreachable!("same type"),
            };
            let e = Expr::new(
                ty,
                ExprKind::Binary(BinOp::Mul, Box::new(Expr::new(ty, ExprKind::Const(name))), Box::new(lit)),
            );
            return (e, r);
        }
        if self.rng.chance(1, 5) {
            if let Some((path, v)) = self.path_const(ty) {
                return (Expr::new(ty, ExprKind::PathConst(path, v)), v);
            }
        }
        if ty.is_half() || ty.is_complex() {
            return self.new_type_literal(ty, true);
        }
        let e = self.literal(ty);
        let ExprKind::Lit(l) = &e.kind else { unreachable!() };
        let v = l.value;
        (e, v)
    }

    pub(super) fn fn_item(&mut self, name: String, depth: u32) -> FnItem {
        let n = self.rng.weighted(&[1, 4, 3, 2]);
        let params: Vec<Param> = (0..n)
            .map(|i| Param {
                name: format!("a{i}"),
                ty: self.any_type(),
                mutable: self.rng.chance(1, 6),
                raw: self.rng.chance(1, 16),
            })
            .collect();
        let mut ret = self.ret_type(3);
        // Struct parameters and results: drawn only where the program has structs.
        let struct_params = self.struct_params();
        if !self.structs.is_empty() && self.rng.chance(1, 3) {
            let d = self.rng.below(self.structs.len() as u64) as usize;
            ret = Ret::Struct(self.structs[d].name.clone());
        }
        let (f, work) = self.function(name.clone(), params, struct_params, ret, depth);
        let sig = FnSig {
            name,
            params: f.params.iter().map(|p| p.ty).collect(),
            struct_params: f.struct_params.iter().map(|p| self.struct_index(&p.ty)).collect(),
            ret: f.ret.clone(),
            work: work.max(1),
        };
        self.items.last_mut().expect("a scope").fns.push(sig);
        f
    }
}
