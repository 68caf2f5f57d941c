//! The generator: a seed in, a well-typed program of the kernel language out.
//!
//! Everything it builds is Rust that rustc accepts (no type errors, no constant-evaluation
//! errors, exhaustive `match`es, every loop bounded) and that means one thing: results that
//! depend on what Rust leaves unspecified (the sign of a NaN, the sign of a zero that `min`
//! or `max` picks between `+0` and `-0`) are kept out by construction.
//!
//! Loops terminate: a `for` runs over a range whose bounds the generator knows within a
//! few values (literals near an anchor, `e % K`, `e & M`, `e.clamp(lo, hi)`), and `while`
//! and `loop` count their iterations in a counter the body cannot assign. The product of
//! the trip counts of nested loops (and of the loops of the functions they call) is kept
//! under [`WORK_LIMIT`].
//!
//! A program is one function, with `fn` items nested in its blocks and, for one seed in
//! four ([`HELPER_ODDS`]), one to three top-level helpers (`#[device]` functions on the
//! GPU) that it calls by name; a helper calls only earlier ones, so nothing recurses.

use crate::ast::*;
use crate::methods::{Accuracy, METHODS, Method, MethodInfo};
use crate::rng::Rng;
use crate::ty::{Ty, Value};

/// What the generator may produce.
#[derive(Clone, Debug)]
pub struct Config {
    /// Only operations the GPU computes bit for bit like an optimised build for the CPU (no
    /// libdevice functions, no `powi`; see [`Accuracy`]): for the corpus compared on the
    /// GPU, where libdevice is within ulps of the CPU only and the CPU's functions are built
    /// with optimisation.
    pub exact_only: bool,
}

impl Config {
    /// The host differential tests: everything, libdevice functions included (the host JIT
    /// runs the CPU's own functions in their place).
    pub const HOST: Config = Config { exact_only: false };
    /// The GPU corpus: what the GPU computes bit for bit like the CPU.
    pub const GPU: Config = Config { exact_only: true };
}

/// The most loop iterations (nested products, calls included) one call of a generated
/// function runs.
pub const WORK_LIMIT: u64 = 256;

/// The program of `seed`.
pub fn program(seed: u64, cfg: &Config) -> Program {
    let mut g = Gen {
        rng: Rng::new(seed),
        cfg,
        next_name: 0,
        vars: Vec::new(),
        items: Vec::new(),
        loops: Vec::new(),
        ret: Ret::Scalar(Ty::Bool),
        weight: 1,
        work: 0,
        budget: 0,
        no_jumps: false,
    };
    g.budget = g.rng.range(30, 220) as i64;
    let n_params = g.rng.weighted(&[1, 6, 8, 6, 3]);
    let params: Vec<Param> = (0..n_params)
        .map(|i| Param {
            name: format!("p{i}"),
            ty: g.any_type(),
            mutable: g.rng.chance(1, 8),
            raw: g.rng.chance(1, 16),
        })
        .collect();
    // As many results as the kernel ABI allows (`kernel_abi::MAX_OUTPUTS`).
    let ret = g.ret_type(6);
    let helpers = g.helpers(seed);
    let (func, _) = g.function(format!("fz{seed}"), params, ret, 3);
    Program { seed, func, helpers }
}

/// One program in [`HELPER_ODDS`] has top-level helper functions.
pub const HELPER_ODDS: (u64, u64) = (1, 4);

impl Gen<'_> {
    /// The program's top-level helpers (none for most seeds), their signatures left in the
    /// outermost item scope for the function (and its nested functions) to call. They are
    /// drawn from a generator of their own with a budget of their own, so that a program
    /// without helpers is the one the seed gave before helpers existed.
    fn helpers(&mut self, seed: u64) -> Vec<FnItem> {
        let mut rng = Rng::new(seed ^ 0x4845_4C50_4552_5321);
        if !rng.chance(HELPER_ODDS.0, HELPER_ODDS.1) {
            return Vec::new();
        }
        let n = rng.range(1, 3) as usize;
        let main_rng = std::mem::replace(&mut self.rng, rng);
        let main_budget = self.budget;
        self.items.push(ItemScope::default());
        let mut helpers = Vec::new();
        for i in 0..n {
            self.budget = self.rng.range(15, 80) as i64;
            let depth = self.rng.range(1, 2) as u32;
            let f = self.fn_item(format!("fz{seed}_h{i}"), depth);
            helpers.push(f);
        }
        self.rng = main_rng;
        self.budget = main_budget;
        helpers
    }
}

struct Var {
    name: String,
    ty: Ty,
    mutable: bool,
    /// A loop counter or a deferred-initialised variable: never assigned by generated code.
    reserved: bool,
}

#[derive(Clone)]
struct FnSig {
    name: String,
    params: Vec<Ty>,
    ret: Ret,
    /// Loop iterations one call may run.
    work: u64,
}

#[derive(Default)]
struct ItemScope {
    consts: Vec<(String, Ty, Value)>,
    fns: Vec<FnSig>,
}

struct LoopCtx {
    label: Option<String>,
    /// The type of a `loop` that produces a value (its `break`s carry one).
    value: Option<Ty>,
}

struct Gen<'c> {
    rng: Rng,
    cfg: &'c Config,
    next_name: u32,
    /// The current function's variable scopes, innermost last.
    vars: Vec<Vec<Var>>,
    /// The constants and functions visible, innermost last.
    items: Vec<ItemScope>,
    /// The current function's enclosing loops, innermost last.
    loops: Vec<LoopCtx>,
    /// The current function's result.
    ret: Ret,
    /// How many times the code being generated may run per call of the current function.
    weight: u64,
    /// Loop iterations the current function runs at most so far.
    work: u64,
    /// Nodes left to generate in the whole program.
    budget: i64,
    /// Inside a loop header or a guard: no `break`/`continue` (rustc refuses some, and
    /// the kernel language has no use for them).
    no_jumps: bool,
}

const INT_OPS: &[(BinOp, u32)] = &[
    (BinOp::Add, 5),
    (BinOp::Sub, 4),
    (BinOp::Mul, 4),
    (BinOp::Div, 2),
    (BinOp::Rem, 2),
    (BinOp::And, 2),
    (BinOp::Or, 2),
    (BinOp::Xor, 2),
    (BinOp::Shl, 2),
    (BinOp::Shr, 2),
];
const FLOAT_OPS: &[(BinOp, u32)] =
    &[(BinOp::Add, 5), (BinOp::Sub, 4), (BinOp::Mul, 4), (BinOp::Div, 3), (BinOp::Rem, 1)];
const COMPARISONS: &[BinOp] = &[BinOp::Eq, BinOp::Ne, BinOp::Lt, BinOp::Le, BinOp::Gt, BinOp::Ge];

impl Gen<'_> {
    fn fresh(&mut self, prefix: &str) -> String {
        self.next_name += 1;
        format!("{prefix}{}", self.next_name)
    }

    fn any_type(&mut self) -> Ty {
        *self.rng.pick(&Ty::ALL)
    }

    fn int_type(&mut self) -> Ty {
        let ints: Vec<Ty> = Ty::ALL.into_iter().filter(|t| t.is_int()).collect();
        *self.rng.pick(&ints)
    }

    /// A scalar type, `bool` less often (it has fewer operations).
    fn value_type(&mut self) -> Ty {
        loop {
            let t = self.any_type();
            if t != Ty::Bool || self.rng.chance(1, 3) {
                return t;
            }
        }
    }

    /// A scalar, or a tuple of one to three scalars, or rarely up to `max_tuple`.
    fn ret_type(&mut self, max_tuple: usize) -> Ret {
        if self.rng.chance(3, 4) {
            Ret::Scalar(self.value_type())
        } else {
            let most = if self.rng.chance(1, 8) { max_tuple } else { max_tuple.min(3) };
            let n = self.rng.range(1, most as i128) as usize;
            Ret::Tuple((0..n).map(|_| self.value_type()).collect())
        }
    }

    // ----- scopes -------------------------------------------------------------------------

    /// The visible variables (the latest binding of each name).
    fn visible(&self) -> Vec<&Var> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for scope in self.vars.iter().rev() {
            for v in scope.iter().rev() {
                if !seen.contains(&v.name.as_str()) {
                    seen.push(&v.name);
                    out.push(v);
                }
            }
        }
        out
    }

    fn declare(&mut self, name: String, ty: Ty, mutable: bool, reserved: bool) {
        self.vars.last_mut().expect("a scope").push(Var { name, ty, mutable, reserved });
    }

    fn consts_of(&self, ty: Ty) -> Vec<(String, Value)> {
        self.items.iter().flat_map(|s| &s.consts).filter(|c| c.1 == ty).map(|c| (c.0.clone(), c.2)).collect()
    }

    /// Functions callable here whose calls the remaining work allows.
    fn callable(&self) -> Vec<FnSig> {
        self.items
            .iter()
            .flat_map(|s| &s.fns)
            .filter(|f| self.work + self.weight * f.work <= WORK_LIMIT)
            .cloned()
            .collect()
    }

    // ----- functions and blocks -----------------------------------------------------------

    /// A function with these parameters and result; `depth` bounds its nesting.
    fn function(&mut self, name: String, params: Vec<Param>, ret: Ret, depth: u32) -> (FnItem, u64) {
        let saved_vars = std::mem::take(&mut self.vars);
        let saved_loops = std::mem::take(&mut self.loops);
        let saved_ret = std::mem::replace(&mut self.ret, ret.clone());
        let (saved_weight, saved_work) = (self.weight, self.work);
        self.weight = 1;
        self.work = 0;
        self.vars.push(
            params
                .iter()
                .map(|p| Var { name: p.name.clone(), ty: p.ty, mutable: p.mutable, reserved: false })
                .collect(),
        );
        let body = self.block(depth, BlockEnd::FnResult);
        let work = self.work;
        self.vars = saved_vars;
        self.loops = saved_loops;
        self.ret = saved_ret;
        self.weight = saved_weight;
        self.work = saved_work;
        (FnItem { name, params, ret, body }, work)
    }

    /// A block: its items, statements, and what it ends with.
    fn block(&mut self, depth: u32, end: BlockEnd) -> Block {
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
            BlockEnd::Branch(_) if !self.no_jumps && self.rng.chance(1, 10) => {
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
    fn result_tail(&mut self, depth: u32) -> Tail {
        match self.ret.clone() {
            Ret::Scalar(t) => Tail::Scalar(Box::new(self.expr(t, depth))),
            Ret::Tuple(ts) => Tail::Tuple(ts.iter().map(|t| self.expr(*t, depth)).collect()),
        }
    }

    fn const_item(&mut self) -> ConstItem {
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
        let e = self.literal(ty);
        let ExprKind::Lit(l) = &e.kind else { unreachable!() };
        let v = l.value;
        (e, v)
    }

    fn fn_item(&mut self, name: String, depth: u32) -> FnItem {
        let n = self.rng.weighted(&[1, 4, 3, 2]);
        let params: Vec<Param> = (0..n)
            .map(|i| Param {
                name: format!("a{i}"),
                ty: self.any_type(),
                mutable: self.rng.chance(1, 6),
                raw: self.rng.chance(1, 16),
            })
            .collect();
        let ret = self.ret_type(3);
        let (f, work) = self.function(name.clone(), params, ret, depth);
        let sig =
            FnSig { name, params: f.params.iter().map(|p| p.ty).collect(), ret: f.ret.clone(), work: work.max(1) };
        self.items.last_mut().expect("a scope").fns.push(sig);
        f
    }

    // ----- statements ---------------------------------------------------------------------

    fn stmt(&mut self, depth: u32, out: &mut Vec<Stmt>) {
        self.budget -= 1;
        let assignable = self.visible().iter().any(|v| v.mutable && !v.reserved);
        let in_loop = !self.loops.is_empty() && !self.no_jumps;
        let tuple_fns = self.callable().iter().any(|f| matches!(f.ret, Ret::Tuple(_)));
        let loops_ok = depth > 0 && self.budget > 0;
        let weights = [
            6,                              // let
            if assignable { 5 } else { 0 }, // assignment
            if depth > 0 { 3 } else { 1 },  // if
            if loops_ok { 3 } else { 0 },   // for
            if loops_ok { 1 } else { 0 },   // while
            if loops_ok { 1 } else { 0 },   // loop
            1,                              // expression statement
            if tuple_fns { 2 } else { 0 },  // let (a, b) = h(..)
            1,                              // let y; if c { y = ..} else { y = ..}
            if in_loop { 2 } else { 0 },    // break / continue
            1,                              // return
            1,                              // let x = 5; let y: u8 = x;
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
        let ty = loop {
            let t = self.value_type();
            if t != Ty::Bool {
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
        let shadowable: Vec<String> = self.visible().iter().filter(|v| !v.reserved).map(|v| v.name.clone()).collect();
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
        let (op, value) = match ty {
            Ty::Bool => {
                let op = *self.rng.pick(&[BinOp::And, BinOp::Or, BinOp::Xor]);
                (op, self.expr(ty, depth + 1))
            }
            t if t.is_float() => {
                let op = FLOAT_OPS[self.rng.weighted(&FLOAT_OPS.iter().map(|o| o.1).collect::<Vec<_>>())].0;
                (op, self.expr(ty, depth + 1))
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
    fn jump_or_return(&mut self, depth: u32) -> Stmt {
        if !self.loops.is_empty() && !self.no_jumps && self.rng.chance(2, 3) {
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

    // ----- loops --------------------------------------------------------------------------

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

    fn for_loop(&mut self, depth: u32, out: &mut Vec<Stmt>) {
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

    fn var(name: &str, ty: Ty) -> Expr {
        Expr::new(ty, ExprKind::Var(name.to_string()))
    }

    fn bare(v: Value) -> Expr {
        Expr::new(v.ty(), ExprKind::Lit(Lit { value: v, bare: true, style: 0 }))
    }

    fn while_loop(&mut self, depth: u32, out: &mut Vec<Stmt>) {
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

    fn loop_stmt(&mut self, depth: u32, out: &mut Vec<Stmt>) {
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
    fn loop_expr(&mut self, ty: Ty, depth: u32) -> Option<Expr> {
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
        match self.rng.weighted(&[3, 2, 2, 3]) {
            // A small literal of another type, cast: `(2u8 as usize)`.
            0 => {
                let t = self.int_type();
                let v = self.rng.range(0, 4);
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

    // ----- expressions --------------------------------------------------------------------

    /// An expression of type `ty`; `depth` bounds its nesting.
    fn expr(&mut self, ty: Ty, depth: u32) -> Expr {
        self.budget -= 1;
        if depth == 0 || self.budget <= 0 {
            return self.leaf(ty);
        }
        let d = depth - 1;
        let fns = self.callable();
        let calls = fns.iter().any(|f| f.ret == Ret::Scalar(ty));
        let fields = fns.iter().any(|f| matches!(&f.ret, Ret::Tuple(ts) if ts.contains(&ty)));
        let control = if depth >= 2 { 2 } else { 0 };
        let (ops, unary) = match ty {
            Ty::Bool => (0, 1),
            t if t.is_float() => (6, 1),
            t if t.is_signed() => (8, 2),
            _ => (8, 1),
        };
        let weights = [
            4,                                  // leaf
            unary,                              // unary
            ops,                                // arithmetic
            if ty == Ty::Bool { 7 } else { 0 }, // comparison, logic
            if ty == Ty::Bool { 0 } else { 3 }, // cast
            5,                                  // method
            control,                            // if
            control,                            // match
            control / 2,                        // block
            control / 2,                        // loop with a value
            if calls { 2 } else { 0 },          // call
            if fields { 2 } else { 0 },         // tuple field
        ];
        match self.rng.weighted(&weights) {
            0 => self.leaf(ty),
            1 => self.unary(ty, d),
            2 => self.arith(ty, d),
            3 => self.boolean(d),
            4 => {
                let from = loop {
                    let t = self.any_type();
                    if !(t == Ty::Bool && ty.is_float()) {
                        break t;
                    }
                };
                let e = self.expr(from, d);
                Expr::new(ty, ExprKind::Cast(Box::new(e)))
            }
            5 => self.method(ty, d).unwrap_or_else(|| self.leaf(ty)),
            6 => {
                let cond = self.expr(Ty::Bool, d);
                let then = self.block(d, BlockEnd::Branch(ty));
                let els = if self.rng.chance(1, 4) {
                    // `else if`
                    let inner = self.expr_if(ty, d);
                    Block { stmts: Vec::new(), tail: Some(Tail::Scalar(Box::new(inner))) }
                } else {
                    self.block(d, BlockEnd::Value(ty))
                };
                Expr::new(ty, ExprKind::If { cond: Box::new(cond), then, els })
            }
            7 => self.match_expr(ty, d),
            8 => {
                let b = self.block(d, BlockEnd::Value(ty));
                Expr::new(ty, ExprKind::Block(b))
            }
            9 => self.loop_expr(ty, d).unwrap_or_else(|| self.leaf(ty)),
            10 => {
                let cands: Vec<FnSig> = fns.into_iter().filter(|f| f.ret == Ret::Scalar(ty)).collect();
                let f = self.rng.pick(&cands).clone();
                let c = self.call(&f, d);
                Expr::new(ty, ExprKind::Call(c))
            }
            _ => {
                let cands: Vec<FnSig> =
                    fns.into_iter().filter(|f| matches!(&f.ret, Ret::Tuple(ts) if ts.contains(&ty))).collect();
                let f = self.rng.pick(&cands).clone();
                let Ret::Tuple(ts) = &f.ret else { unreachable!() };
                let idx: Vec<usize> = (0..ts.len()).filter(|&i| ts[i] == ty).collect();
                let k = *self.rng.pick(&idx);
                let c = self.call(&f, d);
                Expr::new(ty, ExprKind::Field(c, k))
            }
        }
    }

    fn expr_if(&mut self, ty: Ty, d: u32) -> Expr {
        let cond = self.expr(Ty::Bool, d);
        let then = self.block(d, BlockEnd::Branch(ty));
        let els = self.block(d, BlockEnd::Value(ty));
        Expr::new(ty, ExprKind::If { cond: Box::new(cond), then, els })
    }

    fn call(&mut self, f: &FnSig, depth: u32) -> Call {
        self.work += self.weight * f.work;
        let args = f.params.iter().map(|t| self.expr(*t, depth)).collect();
        Call { func: f.name.clone(), args }
    }

    /// A variable, a literal or a constant.
    fn leaf(&mut self, ty: Ty) -> Expr {
        let vars: Vec<String> = self.visible().iter().filter(|v| v.ty == ty).map(|v| v.name.clone()).collect();
        let consts = self.consts_of(ty);
        match self.rng.weighted(&[if vars.is_empty() { 0 } else { 8 }, 4, 1, if consts.is_empty() { 0 } else { 2 }]) {
            0 => Expr::new(ty, ExprKind::Var(self.rng.pick(&vars).clone())),
            2 => match self.path_const(ty) {
                Some((p, v)) => Expr::new(ty, ExprKind::PathConst(p, v)),
                None => self.literal(ty),
            },
            3 => Expr::new(ty, ExprKind::Const(self.rng.pick(&consts).0.clone())),
            _ => self.literal(ty),
        }
    }

    fn lit_of(&mut self, value: Value) -> Expr {
        let bare = self.rng.chance(1, 2);
        let style = self.int_style(value);
        Expr::new(value.ty(), ExprKind::Lit(Lit { value, bare, style }))
    }

    fn int_style(&mut self, v: Value) -> u8 {
        match v.as_i128() {
            Some(x) if x >= 0 => *self.rng.pick(&[0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]),
            _ => 0,
        }
    }

    /// A literal of type `ty`: edge values often.
    fn literal(&mut self, ty: Ty) -> Expr {
        let v = match ty {
            Ty::Bool => Value::Bool(self.rng.chance(1, 2)),
            Ty::F32 | Ty::F64 => {
                let f64_only = ty == Ty::F64;
                let edges: &[f64] = &[0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1.5, -2.5, 0.1, 3.0, 10.0, 1e10, -1e-10, 100.0];
                match self.rng.weighted(&[6, 2, 3, 2]) {
                    0 => Value::float(ty, *self.rng.pick(edges)),
                    1 => {
                        let extremes: Vec<Value> = if f64_only {
                            vec![
                                Value::F64(f64::MAX),
                                Value::F64(f64::MIN),
                                Value::F64(f64::MIN_POSITIVE),
                                Value::F64(5e-324),
                                Value::F64(-1.5e-310),
                                Value::F64(f64::EPSILON),
                            ]
                        } else {
                            vec![
                                Value::F32(f32::MAX),
                                Value::F32(f32::MIN),
                                Value::F32(f32::MIN_POSITIVE),
                                Value::F32(1e-45),
                                Value::F32(-3e-40),
                                Value::F32(f32::EPSILON),
                                Value::F32(16777217.0),
                            ]
                        };
                        *self.rng.pick(&extremes)
                    }
                    2 => {
                        // A short decimal, as people write them.
                        let x =
                            (self.rng.range(-100_000, 100_000) as f64) / *self.rng.pick(&[1.0, 10.0, 100.0, 1000.0]);
                        Value::float(ty, x)
                    }
                    _ => loop {
                        let v = Value::from_bits(ty, self.rng.next_u64());
                        if v.as_f64().is_some_and(f64::is_finite) {
                            break v;
                        }
                    },
                }
            }
            t => {
                let (min, max) = t.int_range();
                let x = match self.rng.weighted(&[4, 3, 2, 2]) {
                    0 => *self.rng.pick(&[0, 1, 2, 3, 7, 8, 31, 32, 63, 64, 100]),
                    1 => *self.rng.pick(&[min, max, min + 1, max - 1, -1, -2, max / 2, min / 2]),
                    2 => {
                        let b = self.rng.range(0, t.bits() as i128 - 1);
                        (1i128 << b) + self.rng.range(-1, 1)
                    }
                    _ => self.rng.range(min, max),
                };
                Value::int(t, x.clamp(min, max))
            }
        };
        self.lit_of(v)
    }

    /// A constant of the standard library of type `ty`, in one of its spellings.
    fn path_const(&mut self, ty: Ty) -> Option<(String, Value)> {
        let prefix = *self.rng.pick(&["", "", "", "std::", "core::"]);
        let t = ty.name();
        Some(match ty {
            Ty::Bool => return None,
            Ty::F32 | Ty::F64 => {
                let f32 = ty == Ty::F32;
                let v = |a: f32, b: f64| if f32 { Value::F32(a) } else { Value::F64(b) };
                let (name, value) = *self.rng.pick(&[
                    ("MAX", v(f32::MAX, f64::MAX)),
                    ("MIN", v(f32::MIN, f64::MIN)),
                    ("EPSILON", v(f32::EPSILON, f64::EPSILON)),
                    ("MIN_POSITIVE", v(f32::MIN_POSITIVE, f64::MIN_POSITIVE)),
                    ("INFINITY", v(f32::INFINITY, f64::INFINITY)),
                    ("NEG_INFINITY", v(f32::NEG_INFINITY, f64::NEG_INFINITY)),
                    ("NAN", v(f32::NAN, f64::NAN)),
                    ("consts::PI", v(std::f32::consts::PI, std::f64::consts::PI)),
                    ("consts::E", v(std::f32::consts::E, std::f64::consts::E)),
                    ("consts::TAU", v(std::f32::consts::TAU, std::f64::consts::TAU)),
                    ("consts::SQRT_2", v(std::f32::consts::SQRT_2, std::f64::consts::SQRT_2)),
                    ("consts::FRAC_1_SQRT_2", v(std::f32::consts::FRAC_1_SQRT_2, std::f64::consts::FRAC_1_SQRT_2)),
                    ("consts::LN_2", v(std::f32::consts::LN_2, std::f64::consts::LN_2)),
                ]);
                // `f32::consts::PI` is not Rust: the module path needs `std::` or `core::`.
                let prefix = if name.starts_with("consts") && prefix.is_empty() { "std::" } else { prefix };
                (format!("{prefix}{t}::{name}"), value)
            }
            Ty::U32 if self.rng.chance(1, 3) => {
                let (p, v) = *self.rng.pick(&[
                    ("i8::BITS", 8),
                    ("u64::BITS", 64),
                    ("f32::MANTISSA_DIGITS", 24),
                    ("f64::MANTISSA_DIGITS", 53),
                    ("f64::RADIX", 2),
                    ("f32::DIGITS", 6),
                ]);
                (p.to_string(), Value::U32(v))
            }
            Ty::I32 if self.rng.chance(1, 3) => {
                let (p, v) =
                    *self.rng.pick(&[("f32::MAX_EXP", 128), ("f64::MIN_EXP", -1021), ("f64::MAX_10_EXP", 308)]);
                (p.to_string(), Value::I32(v))
            }
            _ => {
                let (p, v) = int_path_const(ty, self.rng.chance(1, 2));
                (format!("{prefix}{p}"), v)
            }
        })
    }

    fn unary(&mut self, ty: Ty, d: u32) -> Expr {
        let op = if ty == Ty::Bool || ty.is_unsigned() || (ty.is_signed() && self.rng.chance(1, 2)) {
            UnOp::Not
        } else {
            UnOp::Neg
        };
        let e = self.expr(ty, d);
        Expr::new(ty, ExprKind::Unary(op, Box::new(e)))
    }

    /// `a op b` of type `ty` (arithmetic, bitwise, shifts).
    fn arith(&mut self, ty: Ty, d: u32) -> Expr {
        let ops = if ty.is_float() { FLOAT_OPS } else { INT_OPS };
        let op = ops[self.rng.weighted(&ops.iter().map(|o| o.1).collect::<Vec<_>>())].0;
        let a = self.expr(ty, d);
        let b = match op {
            BinOp::Shl | BinOp::Shr => self.shift_amount(ty, d),
            BinOp::Div | BinOp::Rem if ty.is_int() => self.divisor(ty, d),
            _ => self.expr(ty, d),
        };
        Expr::new(ty, ExprKind::Binary(op, Box::new(a), Box::new(b)))
    }

    /// A shift amount: of any integer type; within the width or not (it is masked).
    fn shift_amount(&mut self, ty: Ty, d: u32) -> Expr {
        let t = self.int_type();
        if self.rng.chance(1, 2) {
            let (_, max) = t.int_range();
            let v = self.rng.range(0, (2 * ty.bits() as i128).min(max));
            self.lit_of(Value::int(t, v))
        } else {
            self.expr(t, d)
        }
    }

    /// A divisor: a literal that cannot fault half the time, anything otherwise, and `-1`
    /// now and then (`MIN / -1` overflows).
    fn divisor(&mut self, ty: Ty, d: u32) -> Expr {
        if ty.is_signed() && self.rng.chance(1, 10) {
            return self.lit_of(Value::int(ty, -1));
        }
        if self.rng.chance(1, 2) {
            let (_, max) = ty.int_range();
            let v = loop {
                let v = self.rng.range(if ty.is_signed() { -9 } else { 1 }, 9.min(max));
                if v != 0 && v != -1 {
                    break v;
                }
            };
            self.lit_of(Value::int(ty, v))
        } else {
            self.expr(ty, d)
        }
    }

    /// A `bool` from comparisons, logic, or bitwise operations on `bool`.
    fn boolean(&mut self, d: u32) -> Expr {
        match self.rng.weighted(&[6, 3, 1]) {
            0 => {
                let t = self.any_type();
                let op = *self.rng.pick(COMPARISONS);
                let a = self.expr(t, d);
                let b = self.expr(t, d);
                Expr::new(Ty::Bool, ExprKind::Binary(op, Box::new(a), Box::new(b)))
            }
            1 => {
                let op = if self.rng.chance(1, 2) { BinOp::LogicAnd } else { BinOp::LogicOr };
                let a = self.expr(Ty::Bool, d);
                let b = self.expr(Ty::Bool, d);
                Expr::new(Ty::Bool, ExprKind::Binary(op, Box::new(a), Box::new(b)))
            }
            _ => {
                let op = *self.rng.pick(&[BinOp::And, BinOp::Or, BinOp::Xor]);
                let a = self.expr(Ty::Bool, d);
                let b = self.expr(Ty::Bool, d);
                Expr::new(Ty::Bool, ExprKind::Binary(op, Box::new(a), Box::new(b)))
            }
        }
    }

    /// A method call whose result has type `ty`.
    fn method(&mut self, ty: Ty, d: u32) -> Option<Expr> {
        let mut cands: Vec<(&'static MethodInfo, Ty)> = Vec::new();
        for m in METHODS {
            if self.cfg.exact_only && m.accuracy != Accuracy::Exact {
                continue;
            }
            for rt in Ty::ALL {
                if m.recv.accepts(rt) && m.ret.resolve(rt) == ty {
                    cands.push((m, rt));
                }
            }
        }
        if cands.is_empty() {
            return None;
        }
        let (m, rt) = *self.rng.pick(&cands);
        let mut recv = self.expr(rt, d);
        if matches!(m.method, Method::IsSignNegative | Method::IsSignPositive) {
            recv = nan_free(recv);
        }
        let clamp = matches!(m.method, Method::IClamp | Method::FClamp);
        let args: Vec<Expr> = if clamp && self.rng.chance(3, 5) {
            // Bounds in order (no fault) most of the time.
            let a = self.literal(rt);
            let b = self.literal(rt);
            let (ExprKind::Lit(la), ExprKind::Lit(lb)) = (&a.kind, &b.kind) else { unreachable!() };
            let ordered = match (la.value.as_i128(), lb.value.as_i128()) {
                (Some(x), Some(y)) => x <= y,
                _ => la.value.as_f64() <= lb.value.as_f64(),
            };
            if ordered { vec![a, b] } else { vec![b, a] }
        } else {
            let mut args = Vec::new();
            for slot in m.args {
                let at = slot.resolve(rt);
                let arg = match m.method {
                    Method::Copysign => nan_free(self.expr(at, d)),
                    Method::IDivEuclid
                    | Method::IRemEuclid
                    | Method::WrappingDiv
                    | Method::WrappingRem
                    | Method::SaturatingDiv => self.divisor(at, d),
                    Method::Pow | Method::WrappingPow | Method::SaturatingPow | Method::Powi
                        if self.rng.chance(2, 3) =>
                    {
                        let v = self.rng.range(if at == Ty::I32 { -4 } else { 0 }, 12);
                        self.lit_of(Value::int(at, v))
                    }
                    _ => self.expr(at, d),
                };
                args.push(arg);
            }
            args
        };
        let path = self.rng.chance(1, 4) || (m.method.is_special() && self.rng.chance(1, 2));
        let call = Expr::new(ty, ExprKind::Method { method: m.method, recv: Box::new(recv), args, path });
        // Rust leaves unspecified which zero `min`/`max` return for `+0` and `-0`: adding
        // `+0.0` makes both `+0`.
        Some(if matches!(m.method, Method::FMin | Method::FMax) {
            Expr::new(ty, ExprKind::Binary(BinOp::Add, Box::new(call), Box::new(Self::bare(Value::float(ty, 0.0)))))
        } else {
            call
        })
    }

    fn match_expr(&mut self, ty: Ty, d: u32) -> Expr {
        let st = loop {
            let t = self.any_type();
            if !t.is_float() {
                break t;
            }
        };
        let scrutinee = self.expr(st, d);
        let n = self.rng.range(1, 4) as usize;
        let mut arms = Vec::new();
        for i in 0..=n {
            let last = i == n;
            self.vars.push(Vec::new());
            let pat = if last { self.last_pattern(st) } else { self.pattern(st, true) };
            let guard = if !last && self.rng.chance(1, 4) {
                let saved = std::mem::replace(&mut self.no_jumps, true);
                let g = self.expr(Ty::Bool, d);
                self.no_jumps = saved;
                Some(g)
            } else {
                None
            };
            let body = self.expr(ty, d);
            self.vars.pop();
            arms.push(Arm { pat, guard, body });
        }
        Expr::new(ty, ExprKind::Match { scrutinee: Box::new(scrutinee), arms })
    }

    /// The last arm's pattern, which matches everything left.
    fn last_pattern(&mut self, st: Ty) -> Pat {
        match self.rng.weighted(&[3, 2, 1]) {
            0 => Pat::Wild,
            1 => {
                let name = self.fresh("n");
                self.declare(name.clone(), st, false, false);
                Pat::Bind(name, None)
            }
            _ if st.is_int() => {
                // `..=x | x..` covers every value.
                let (min, max) = st.int_range();
                let x = self.rng.range(min, max);
                Pat::Or(vec![
                    Pat::Range { lo: None, hi: Some(Bound { value: Value::int(st, x), name: None }), inclusive: true },
                    Pat::Range { lo: Some(Bound { value: Value::int(st, x), name: None }), hi: None, inclusive: false },
                ])
            }
            _ => Pat::Or(vec![Pat::Lit(Value::Bool(true), true), Pat::Lit(Value::Bool(false), true)]),
        }
    }

    /// A pattern for a scrutinee of type `st`; `bind` allows bindings (not inside `|`).
    fn pattern(&mut self, st: Ty, bind: bool) -> Pat {
        let value = |g: &mut Self| match g.literal(st).kind {
            ExprKind::Lit(l) => l.value,
            _ => unreachable!(),
        };
        if st == Ty::Bool {
            return match self.rng.weighted(&[4, 1]) {
                0 => Pat::Lit(value(self), self.rng.chance(1, 2)),
                _ => Pat::Or(vec![Pat::Lit(Value::Bool(true), true), Pat::Lit(Value::Bool(false), true)]),
            };
        }
        let (min, max) = st.int_range();
        match self.rng.weighted(&[4, 4, 1, 2, if bind { 1 } else { 0 }, if bind { 1 } else { 0 }]) {
            0 => Pat::Lit(value(self), self.rng.chance(1, 2)),
            1 => {
                // A bound is a number, or now and then a constant of the function.
                let consts = self.consts_of(st);
                let end = |g: &mut Self| -> (i128, Option<String>) {
                    if !consts.is_empty() && g.rng.chance(1, 4) {
                        let (name, v) = g.rng.pick(&consts).clone();
                        (v.as_i128().unwrap(), Some(name))
                    } else {
                        (value(g).as_i128().unwrap(), None)
                    }
                };
                let a = end(self);
                let b = if self.rng.chance(1, 2) { end(self) } else { ((a.0 + self.rng.range(0, 20)).min(max), None) };
                let (lo, hi) = if a.0 <= b.0 { (a, b) } else { (b, a) };
                let named = |g: &mut Self, (v, name): (i128, Option<String>)| {
                    // `T::MIN` and `T::MAX` spelled as paths half the time.
                    let name = name.or_else(|| {
                        ((v == min || v == max) && g.rng.chance(1, 2)).then(|| int_path_const(st, v == max).0)
                    });
                    Some(Bound { value: Value::int(st, v), name })
                };
                let (l, h) = (lo.0, hi.0);
                let (lo, hi) = (named(self, lo), named(self, hi));
                match self.rng.below(5) {
                    0 => Pat::Range { lo, hi: None, inclusive: false },
                    1 => Pat::Range { lo: None, hi, inclusive: true },
                    // An exclusive end must leave the range non-empty.
                    2 if h > l => Pat::Range { lo, hi, inclusive: false },
                    3 if h > min => Pat::Range { lo: None, hi, inclusive: false },
                    _ => Pat::Range { lo, hi, inclusive: true },
                }
            }
            2 => {
                let consts = self.consts_of(st);
                if !consts.is_empty() && self.rng.chance(1, 2) {
                    let (name, v) = self.rng.pick(&consts).clone();
                    Pat::PathConst(name, v)
                } else {
                    let (p, v) = int_path_const(st, self.rng.chance(1, 2));
                    Pat::PathConst(p, v)
                }
            }
            3 => {
                let n = self.rng.range(2, 3) as usize;
                Pat::Or((0..n).map(|_| self.pattern(st, false)).collect())
            }
            4 => {
                let name = self.fresh("n");
                self.declare(name.clone(), st, false, false);
                Pat::Bind(name, None)
            }
            _ => {
                let sub = self.pattern(st, false);
                let name = self.fresh("n");
                self.declare(name.clone(), st, false, false);
                Pat::Bind(name, Some(Box::new(sub)))
            }
        }
    }
}

#[derive(Copy, Clone)]
enum BlockEnd {
    /// A statement's block (`if` without value, loop bodies).
    Unit,
    Value(Ty),
    /// A branch of an `if` whose other branch has a value: it may end in `return`,
    /// `break` or `continue` instead (a block of type `!` elsewhere would leave rustc an
    /// unconstrained type).
    Branch(Ty),
    /// A function's body: its result.
    FnResult,
}

/// `T::MAX` or `T::MIN` of an integer type, with its value.
fn int_path_const(ty: Ty, max: bool) -> (String, Value) {
    let (lo, hi) = ty.int_range();
    if max {
        (format!("{}::MAX", ty.name()), Value::int(ty, hi))
    } else {
        (format!("{}::MIN", ty.name()), Value::int(ty, lo))
    }
}

/// `e.max(T::NEG_INFINITY)`: `e`, or `-inf` for a NaN, whose sign Rust leaves unspecified.
fn nan_free(e: Expr) -> Expr {
    let ty = e.ty;
    let ninf = Value::float(ty, f64::NEG_INFINITY);
    let arg = Expr::new(ty, ExprKind::PathConst(format!("{}::NEG_INFINITY", ty.name()), ninf));
    Expr::new(ty, ExprKind::Method { method: Method::FMax, recv: Box::new(e), args: vec![arg], path: false })
}
