//! Expressions: operators, casts, method calls, calls, and `if`/blocks as values.

use super::{BlockEnd, COMPLEX_OPS, FLOAT_OPS, FnSig, Gen, INT_OPS, RARE_FAULT_ODDS};
use crate::ast::*;
use crate::methods::{Accuracy, METHODS, Method, MethodInfo};
use crate::ty::{Ty, Value};

const COMPARISONS: &[BinOp] = &[BinOp::Eq, BinOp::Ne, BinOp::Lt, BinOp::Le, BinOp::Gt, BinOp::Ge];

impl Gen<'_> {
    /// An expression of type `ty`; `depth` bounds its nesting.
    pub(super) fn expr(&mut self, ty: Ty, depth: u32) -> Expr {
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
            t if t.is_half() || t.is_complex() => (6, 1),
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
                    if !(t == Ty::Bool && (ty.is_float() || ty.is_complex())) {
                        break t;
                    }
                };
                let e = self.expr(from, d);
                self.convert(e, ty, d)
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

    pub(super) fn call(&mut self, f: &FnSig, depth: u32) -> Call {
        self.work += self.weight * f.work;
        let args = f.params.iter().map(|t| self.expr(*t, depth)).collect();
        let structs = f.struct_params.iter().map(|&d| self.struct_arg(d)).collect();
        Call { func: f.name.clone(), args, structs }
    }

    /// A variable, a literal or a constant.
    fn leaf(&mut self, ty: Ty) -> Expr {
        let vars: Vec<String> = self.visible().iter().filter(|v| v.ty == ty).map(|v| v.name.clone()).collect();
        // A struct's scalars one time in two where there are some (so that what is done to
        // structs shows in the results); nothing is drawn where there are none.
        let fields: Vec<&String> = vars.iter().filter(|n| n.contains('.')).collect();
        if !fields.is_empty() && self.rng.chance(1, 2) {
            let name = (*self.rng.pick(&fields)).clone();
            return Expr::new(ty, ExprKind::Var(name));
        }
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

    pub(super) fn var(name: &str, ty: Ty) -> Expr {
        Expr::new(ty, ExprKind::Var(name.to_string()))
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

    /// `e` converted to `to`: `e as T` between primitive types; for the half types
    /// `from_f32`, `to_f32` and their kin (through `f32` or `as` where no function converts
    /// directly); a complex number's part (`z.re`, `z.im`), or one built from a part.
    pub(super) fn convert(&mut self, e: Expr, to: Ty, d: u32) -> Expr {
        let from = e.ty;
        let new = |t: Ty| t.is_half() || t.is_complex();
        if !new(from) && !new(to) {
            return Expr::new(to, ExprKind::Cast(Box::new(e)));
        }
        if let Some(p) = from.part() {
            let f = if self.rng.chance(1, 2) { Func::Re } else { Func::Im };
            let part = Expr::func(p, f, vec![e], 0);
            return if to == p { part } else { self.convert(part, to, d) };
        }
        if let Some(p) = to.part() {
            let re = if from == p { e } else { self.convert(e, p, d) };
            if self.rng.chance(1, 3) {
                let spelling = self.rng.below(2) as u8;
                return Expr::func(to, Func::FromPart, vec![re], spelling);
            }
            let other = self.expr(p, d);
            let args = if self.rng.chance(1, 4) { vec![other, re] } else { vec![re, other] };
            let spelling = self.new_spelling();
            return Expr::func(to, Func::New, args, spelling);
        }
        let spelling = |g: &mut Self| g.rng.below(2) as u8;
        if to.is_half() {
            return match from {
                Ty::F64 if self.cfg.half_from_f64 && self.rng.chance(2, 3) => {
                    let s = spelling(self);
                    Expr::func(to, Func::FromF64, vec![e], s)
                }
                Ty::U8 | Ty::I8 if self.rng.chance(1, 2) => Expr::func(to, Func::FromSmall, vec![e], 0),
                Ty::Bool => Expr::func(to, Func::FromSmall, vec![Expr::new(Ty::U8, ExprKind::Cast(Box::new(e)))], 0),
                _ => {
                    // Through `f32`: `h.to_f32()` of another half (exact), `x as f32` of the rest.
                    let x = if from == Ty::F32 { e } else { self.convert(e, Ty::F32, d) };
                    let s = spelling(self);
                    Expr::func(to, Func::FromF32, vec![x], s)
                }
            };
        }
        // From a half type to a primitive one.
        let s = spelling(self);
        match to {
            Ty::F32 => Expr::func(to, Func::ToF32, vec![e], s),
            Ty::F64 => Expr::func(to, Func::ToF64, vec![e], s),
            _ => {
                let wide = if self.rng.chance(1, 2) { Ty::F32 } else { Ty::F64 };
                let f = if wide == Ty::F32 { Func::ToF32 } else { Func::ToF64 };
                Expr::new(to, ExprKind::Cast(Box::new(Expr::func(wide, f, vec![e], s))))
            }
        }
    }

    /// `a op b` of a complex type: with another complex number, or with a part on either side.
    fn complex_arith(&mut self, ty: Ty, d: u32) -> Expr {
        let op = COMPLEX_OPS[self.rng.weighted(&COMPLEX_OPS.iter().map(|o| o.1).collect::<Vec<_>>())].0;
        let p = ty.part().expect("a complex type");
        let (a, b) = match self.rng.weighted(&[6, 2, 2]) {
            0 => (self.expr(ty, d), self.expr(ty, d)),
            1 => (self.expr(ty, d), self.expr(p, d)),
            _ => (self.expr(p, d), self.expr(ty, d)),
        };
        Expr::new(ty, ExprKind::Binary(op, Box::new(a), Box::new(b)))
    }

    /// `a op b` of type `ty` (arithmetic, bitwise, shifts).
    fn arith(&mut self, ty: Ty, d: u32) -> Expr {
        if ty.is_complex() {
            return self.complex_arith(ty, d);
        }
        let ops = if ty.is_float() || ty.is_half() { FLOAT_OPS } else { INT_OPS };
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
    pub(super) fn shift_amount(&mut self, ty: Ty, d: u32) -> Expr {
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
    pub(super) fn divisor(&mut self, ty: Ty, d: u32) -> Expr {
        if self.cfg.rare_faults && !self.rng.chance(1, RARE_FAULT_ODDS) {
            return self.safe_divisor(ty, d);
        }
        if ty.is_signed() && self.rng.chance(1, 10) {
            return self.lit_of(Value::int(ty, -1));
        }
        if self.rng.chance(1, 2) { self.small_divisor(ty) } else { self.expr(ty, d) }
    }

    /// A literal divisor in `-9..=9` that is neither 0 nor -1.
    fn small_divisor(&mut self, ty: Ty) -> Expr {
        let (_, max) = ty.int_range();
        let v = loop {
            let v = self.rng.range(if ty.is_signed() { -9 } else { 1 }, 9.min(max));
            if v != 0 && v != -1 {
                break v;
            }
        };
        self.lit_of(Value::int(ty, v))
    }

    /// A divisor that is neither 0 nor -1: a literal, or `((e & 7) + 1)`.
    fn safe_divisor(&mut self, ty: Ty, d: u32) -> Expr {
        if self.rng.chance(1, 2) {
            return self.small_divisor(ty);
        }
        let e = self.expr(ty, d);
        let low = Expr::new(ty, ExprKind::Binary(BinOp::And, Box::new(e), Box::new(self.lit_of(Value::int(ty, 7)))));
        Expr::new(ty, ExprKind::Binary(BinOp::Add, Box::new(low), Box::new(self.lit_of(Value::int(ty, 1)))))
    }

    /// A `bool` from comparisons, logic, or bitwise operations on `bool`.
    fn boolean(&mut self, d: u32) -> Expr {
        match self.rng.weighted(&[6, 3, 1]) {
            0 => {
                let t = self.any_type();
                // Complex numbers are not ordered.
                let op =
                    if t.is_complex() { *self.rng.pick(&[BinOp::Eq, BinOp::Ne]) } else { *self.rng.pick(COMPARISONS) };
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
            for rt in self.cfg.types() {
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
        if matches!(
            m.method,
            Method::IsSignNegative | Method::IsSignPositive | Method::HIsSignNegative | Method::HIsSignPositive
        ) {
            recv = nan_free(recv);
        }
        let clamp = matches!(m.method, Method::IClamp | Method::FClamp);
        let ordered = clamp && (self.cfg.rare_faults && !self.rng.chance(1, RARE_FAULT_ODDS) || self.rng.chance(3, 5));
        let args: Vec<Expr> = if ordered {
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
                    Method::Copysign | Method::HCopysign => nan_free(self.expr(at, d)),
                    Method::IDivEuclid
                    | Method::IRemEuclid
                    | Method::WrappingDiv
                    | Method::WrappingRem
                    | Method::SaturatingDiv => self.divisor(at, d),
                    Method::Pow
                    | Method::WrappingPow
                    | Method::SaturatingPow
                    | Method::Powi
                    | Method::CPowi
                    | Method::CPowu
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
        let path = (self.rng.chance(1, 4) || (m.method.is_special() && self.rng.chance(1, 2))) && !m.method.takes_ref();
        let call = Expr::new(ty, ExprKind::Method { method: m.method, recv: Box::new(recv), args, path });
        // Rust leaves unspecified which zero `min`/`max` return for `+0` and `-0`: adding
        // `+0.0` makes both `+0`.
        Some(if matches!(m.method, Method::FMin | Method::FMax) {
            Expr::new(ty, ExprKind::Binary(BinOp::Add, Box::new(call), Box::new(Self::bare(Value::float(ty, 0.0)))))
        } else {
            call
        })
    }
}

/// `e.max(T::NEG_INFINITY)`: `e`, or `-inf` for a NaN, whose sign Rust leaves unspecified
/// (`half`'s `max` returns its argument for a NaN receiver too).
fn nan_free(e: Expr) -> Expr {
    let ty = e.ty;
    let ninf = Value::float(ty, f64::NEG_INFINITY);
    let arg = Expr::new(ty, ExprKind::PathConst(format!("{}::NEG_INFINITY", ty.name()), ninf));
    let method = if ty.is_half() { Method::HMax } else { Method::FMax };
    Expr::new(ty, ExprKind::Method { method, recv: Box::new(e), args: vec![arg], path: false })
}
