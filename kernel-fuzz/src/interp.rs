//! An interpreter of generated programs that follows Rust's semantics in a release build
//! ([`Overflow::Wrap`]: integers wrap, shift amounts are masked) or in a build with overflow
//! checks ([`Overflow::Check`]: `+ - *`, unary `-`, `abs`, `pow` and shifts by the width or
//! more panic, as `checked_add` and friends say); float→int casts saturate, operands evaluate
//! left to right (a compound assignment's value before its variable is read), and where
//! Rust panics the run stops with the panic's [`Fault`]. Every operation calls the Rust
//! function that defines it (`wrapping_add`, `f32::rem_euclid`, the range iterators for
//! `for`), so the interpreter adds only the control flow; the fixed-seed corpus compiled by
//! rustc checks it against rustc.

use std::collections::HashMap;

use crate::ast::*;
use crate::methods::Method;
use crate::special::SpecialMath;
use crate::ty::{Ty, Value};
use crate::with_int;

/// Where Rust panics in the kernel language, named by the panic.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Fault {
    DivideByZero,
    RemainderByZero,
    DivideOverflow,
    RemainderOverflow,
    StepByZero,
    FloatClampBounds,
    IntClampBounds,
    AddOverflow,
    SubOverflow,
    MulOverflow,
    NegOverflow,
    ShlOverflow,
    ShrOverflow,
}

impl Fault {
    pub const ALL: [Fault; 13] = [
        Fault::DivideByZero,
        Fault::RemainderByZero,
        Fault::DivideOverflow,
        Fault::RemainderOverflow,
        Fault::StepByZero,
        Fault::FloatClampBounds,
        Fault::IntClampBounds,
        Fault::AddOverflow,
        Fault::SubOverflow,
        Fault::MulOverflow,
        Fault::NegOverflow,
        Fault::ShlOverflow,
        Fault::ShrOverflow,
    ];

    /// The fault of a panic message of Rust's standard library.
    pub fn from_panic(message: &str) -> Option<Fault> {
        let prefixes = [
            (Fault::DivideByZero, "attempt to divide by zero"),
            (Fault::RemainderByZero, "attempt to calculate the remainder with a divisor of zero"),
            (Fault::DivideOverflow, "attempt to divide with overflow"),
            (Fault::RemainderOverflow, "attempt to calculate the remainder with overflow"),
            (Fault::StepByZero, "assertion failed: step != 0"),
            (Fault::FloatClampBounds, "min > max, or either was NaN"),
            // `Ord::clamp`: "min > max. min = 3, max = 1" (before 1.86: "assertion failed:
            // min <= max").
            (Fault::IntClampBounds, "min > max"),
            (Fault::IntClampBounds, "assertion failed: min <= max"),
            (Fault::AddOverflow, "attempt to add with overflow"),
            (Fault::SubOverflow, "attempt to subtract with overflow"),
            (Fault::MulOverflow, "attempt to multiply with overflow"),
            (Fault::NegOverflow, "attempt to negate with overflow"),
            (Fault::ShlOverflow, "attempt to shift left with overflow"),
            (Fault::ShrOverflow, "attempt to shift right with overflow"),
        ];
        prefixes.iter().find(|(_, p)| message.starts_with(p)).map(|(f, _)| *f)
    }
}

/// Why a run did not return values.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Stop {
    /// Rust panics.
    Fault(Fault),
    /// More loop iterations than any generated program runs: the generator's bound failed.
    Runaway,
    /// Not a well-formed program (an unknown name, a `match` that matched nothing): only a
    /// program the generator did not write, such as a reducer's candidate.
    Invalid(String),
}

/// The most loop iterations a run may take before it is called a runaway.
pub const MAX_STEPS: u64 = 1_000_000;

/// What integer overflow does.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Overflow {
    /// A release build: it wraps.
    Wrap,
    /// A build with overflow checks: it panics.
    Check,
}

/// Runs `p` on `args` (one value per parameter, of its type), as a release build.
pub fn run(p: &Program, args: &[Value]) -> Result<Vec<Value>, Stop> {
    run_with(p, args, Overflow::Wrap)
}

/// Runs `p` on `args` with integer overflow `overflow`.
pub fn run_with(p: &Program, args: &[Value], overflow: Overflow) -> Result<Vec<Value>, Stop> {
    run_traced(p, args, overflow).0
}

/// [`run_with`], and for a fault the name of the function it arose in (the program's
/// function, one of its helpers, or a nested function).
pub fn run_traced<'p>(
    p: &'p Program,
    args: &[Value],
    overflow: Overflow,
) -> (Result<Vec<Value>, Stop>, Option<&'p str>) {
    let mut it = Interp {
        fns: HashMap::new(),
        consts: HashMap::new(),
        env: Vec::new(),
        base: 0,
        steps: 0,
        overflow,
        fault_in: None,
    };
    for h in &p.helpers {
        it.fns.insert(&h.name, h);
        it.collect(&h.body);
    }
    it.collect(&p.func.body);
    let r = match it.call_fn(&p.func, args.to_vec()) {
        Ok(v) => Ok(v),
        Err(Flow::Stop(s)) => Err(s),
        Err(other) => Err(Stop::Invalid(format!("{other:?} escaped the function"))),
    };
    (r, it.fault_in)
}

#[derive(Debug)]
enum Flow<'p> {
    Break(Option<&'p str>, Option<Value>),
    Continue(Option<&'p str>),
    Return(Vec<Value>),
    Stop(Stop),
}

type R<'p, T> = Result<T, Flow<'p>>;

fn fault<'p, T>(f: Fault) -> R<'p, T> {
    Err(Flow::Stop(Stop::Fault(f)))
}

fn invalid<'p, T>(what: String) -> R<'p, T> {
    Err(Flow::Stop(Stop::Invalid(what)))
}

struct Interp<'p> {
    fns: HashMap<&'p str, &'p FnItem>,
    consts: HashMap<&'p str, &'p ConstItem>,
    /// The locals of every active call, innermost binding of a name last.
    env: Vec<(&'p str, Value)>,
    /// Where the current call's locals start.
    base: usize,
    steps: u64,
    overflow: Overflow,
    /// The function a fault arose in (the innermost call it left).
    fault_in: Option<&'p str>,
}

/// Whether a `break`/`continue` with this label leaves (or continues) a loop with `label`.
fn targets(jump: Option<&str>, label: &Option<String>) -> bool {
    jump.is_none() || jump == label.as_deref()
}

impl<'p> Interp<'p> {
    /// Indexes the functions and constants (their names are unique in a program).
    fn collect(&mut self, b: &'p Block) {
        visit_blocks(b, &mut |blk| {
            for s in &blk.stmts {
                match s {
                    Stmt::Fn(f) => {
                        self.fns.insert(&f.name, f);
                    }
                    Stmt::Const(c) => {
                        self.consts.insert(&c.name, c);
                    }
                    _ => {}
                }
            }
        });
    }

    fn step(&mut self) -> R<'p, ()> {
        self.steps += 1;
        if self.steps > MAX_STEPS { Err(Flow::Stop(Stop::Runaway)) } else { Ok(()) }
    }

    fn call_fn(&mut self, f: &'p FnItem, args: Vec<Value>) -> R<'p, Vec<Value>> {
        if args.len() != f.params.len() {
            return invalid(format!("{} takes {} arguments", f.name, f.params.len()));
        }
        let (saved_base, saved_len) = (self.base, self.env.len());
        self.base = self.env.len();
        for (p, v) in f.params.iter().zip(args) {
            self.env.push((&p.name, v));
        }
        let r = match self.block(&f.body) {
            Ok(Some(v)) => Ok(v),
            Ok(None) => invalid(format!("{} ends without a value", f.name)),
            Err(Flow::Return(v)) => Ok(v),
            Err(e) => {
                if matches!(e, Flow::Stop(Stop::Fault(_))) && self.fault_in.is_none() {
                    self.fault_in = Some(&f.name);
                }
                Err(e)
            }
        };
        self.env.truncate(saved_len);
        self.base = saved_base;
        r
    }

    fn lookup(&self, name: &str) -> R<'p, Value> {
        match self.env[self.base..].iter().rev().find(|(n, _)| *n == name) {
            Some((_, v)) => Ok(*v),
            None => invalid(format!("no variable {name}")),
        }
    }

    fn set(&mut self, name: &str, v: Value) -> R<'p, ()> {
        match self.env[self.base..].iter_mut().rev().find(|(n, _)| *n == name) {
            Some(slot) => {
                slot.1 = v;
                Ok(())
            }
            None => invalid(format!("no variable {name}")),
        }
    }

    /// Runs a block; its tail's values (`None` when it has none).
    fn block(&mut self, b: &'p Block) -> R<'p, Option<Vec<Value>>> {
        let mark = self.env.len();
        let r = self.block_inner(b);
        self.env.truncate(mark);
        r
    }

    fn block_inner(&mut self, b: &'p Block) -> R<'p, Option<Vec<Value>>> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        match &b.tail {
            None => Ok(None),
            Some(t) => self.tail(t).map(Some),
        }
    }

    fn tail(&mut self, t: &'p Tail) -> R<'p, Vec<Value>> {
        match t {
            Tail::Scalar(e) => Ok(vec![self.expr(e)?]),
            Tail::Tuple(es) => es.iter().map(|e| self.expr(e)).collect(),
        }
    }

    fn scalar_block(&mut self, b: &'p Block) -> R<'p, Value> {
        match self.block(b)? {
            Some(v) => Ok(v[0]),
            None => invalid("a block used as a value has no value".into()),
        }
    }

    fn stmt(&mut self, s: &'p Stmt) -> R<'p, ()> {
        match s {
            Stmt::Const(_) | Stmt::Fn(_) => {}
            Stmt::Let { name, init, ty, .. } => {
                // A deferred initialisation holds a placeholder until its assignment.
                let v = match init {
                    Some(e) => self.expr(e)?,
                    None => Value::from_bits(*ty, 0),
                };
                self.env.push((name, v));
            }
            Stmt::LetTuple { names, call } => {
                let vals = self.call(call)?;
                for (n, v) in names.iter().zip(vals) {
                    if let Some((name, _)) = n {
                        self.env.push((name, v));
                    }
                }
            }
            Stmt::Assign { name, op, value } => {
                // Rust evaluates the value of `x op= v` before it reads `x`.
                let v = self.expr(value)?;
                let new = match op {
                    None => v,
                    Some(op) => binary(*op, self.lookup(name)?, v, self.overflow).or_else(fault)?,
                };
                self.set(name, new)?;
            }
            Stmt::Expr(e, _) => {
                self.expr(e)?;
            }
            Stmt::If { cond, then, els } => {
                if self.expr(cond)?.truthy() {
                    self.block(then)?;
                } else if let Some(e) = els {
                    self.block(e)?;
                }
            }
            Stmt::While { label, cond, body } => loop {
                self.step()?;
                if !self.expr(cond)?.truthy() {
                    break;
                }
                match self.block(body) {
                    Ok(_) => {}
                    Err(Flow::Break(l, None)) if targets(l, label) => break,
                    Err(Flow::Continue(l)) if targets(l, label) => {}
                    Err(e) => return Err(e),
                }
            },
            Stmt::For { label, var, range, body } => {
                let start = self.expr(&range.start)?;
                let end = self.expr(&range.end)?;
                let step = match &range.step {
                    Some(s) => Some(self.expr(s)?),
                    None => None,
                };
                let step = match step {
                    Some(Value::Usize(0)) => return fault(Fault::StepByZero),
                    Some(Value::Usize(k)) => Some(k),
                    Some(other) => return invalid(format!("step_by({other})")),
                    None => None,
                };
                for i in range_values(start, end, range.inclusive, range.rev, step)? {
                    self.step()?;
                    let mark = self.env.len();
                    self.env.push((var, i));
                    let r = self.block(body);
                    self.env.truncate(mark);
                    match r {
                        Ok(_) => {}
                        Err(Flow::Break(l, None)) if targets(l, label) => break,
                        Err(Flow::Continue(l)) if targets(l, label) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Stmt::Loop { label, body } => loop {
                self.step()?;
                match self.block(body) {
                    Ok(_) => {}
                    Err(Flow::Break(l, None)) if targets(l, label) => break,
                    Err(Flow::Continue(l)) if targets(l, label) => {}
                    Err(e) => return Err(e),
                }
            },
            Stmt::Break { label, value } => {
                let v = match value {
                    Some(e) => Some(self.expr(e)?),
                    None => None,
                };
                return Err(Flow::Break(label.as_deref(), v));
            }
            Stmt::Continue { label } => return Err(Flow::Continue(label.as_deref())),
            Stmt::Return(t) => {
                let v = self.tail(t)?;
                return Err(Flow::Return(v));
            }
        }
        Ok(())
    }

    fn call(&mut self, c: &'p Call) -> R<'p, Vec<Value>> {
        let Some(f) = self.fns.get(c.func.as_str()).copied() else {
            return invalid(format!("no function {}", c.func));
        };
        let args = c.args.iter().map(|a| self.expr(a)).collect::<R<'p, Vec<Value>>>()?;
        self.call_fn(f, args)
    }

    fn const_value(&mut self, name: &str) -> R<'p, Value> {
        let Some(c) = self.consts.get(name).copied() else {
            return invalid(format!("no constant {name}"));
        };
        // A constant sees no variables.
        let saved = std::mem::replace(&mut self.base, self.env.len());
        let v = self.expr(&c.value);
        self.base = saved;
        v
    }

    fn expr(&mut self, e: &'p Expr) -> R<'p, Value> {
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
                call_method(*method, r, &args, self.overflow).or_else(fault)?
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

/// The values a `for` loop over this range visits: Rust's own iterators decide.
fn range_values<'p>(
    start: Value,
    end: Value,
    inclusive: bool,
    rev: bool,
    step: Option<usize>,
) -> R<'p, Box<dyn Iterator<Item = Value>>> {
    fn finish<T: Copy + 'static>(
        it: Box<dyn DoubleEndedIterator<Item = T>>,
        rev: bool,
        step: Option<usize>,
        wrap: fn(T) -> Value,
    ) -> Box<dyn Iterator<Item = Value>> {
        let it: Box<dyn Iterator<Item = T>> = if rev { Box::new(it.rev()) } else { it };
        let it: Box<dyn Iterator<Item = T>> = match step {
            Some(k) => Box::new(it.step_by(k)),
            None => it,
        };
        Box::new(it.map(wrap))
    }
    macro_rules! ranges {
        ($($v:ident: $t:ty),*) => {
            match (start, end) {
                $((Value::$v(a), Value::$v(b)) => {
                    let it: Box<dyn DoubleEndedIterator<Item = $t>> =
                        if inclusive { Box::new(a..=b) } else { Box::new(a..b) };
                    Ok(finish(it, rev, step, Value::$v))
                })*
                _ => invalid(format!("a range from {start} to {end}")),
            }
        };
    }
    ranges!(I8: i8, I16: i16, I32: i32, I64: i64, Isize: isize, U8: u8, U16: u16, U32: u32, U64: u64, Usize: usize)
}

/// The ordering of two values of one type (`None` for NaN or different types).
fn compare(a: Value, b: Value) -> Option<std::cmp::Ordering> {
    if a.ty() != b.ty() {
        return None;
    }
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.partial_cmp(&y),
        (Value::F32(x), Value::F32(y)) => x.partial_cmp(&y),
        (Value::F64(x), Value::F64(y)) => x.partial_cmp(&y),
        _ => a.as_i128()?.partial_cmp(&b.as_i128()?),
    }
}

impl Value {
    fn truthy(self) -> bool {
        matches!(self, Value::Bool(true))
    }

    /// `self as to`, with Rust's semantics.
    pub fn cast(self, to: Ty) -> Value {
        macro_rules! to {
            ($x:expr) => {
                match to {
                    Ty::I8 => Value::I8($x as i8),
                    Ty::I16 => Value::I16($x as i16),
                    Ty::I32 => Value::I32($x as i32),
                    Ty::I64 => Value::I64($x as i64),
                    Ty::Isize => Value::Isize($x as isize),
                    Ty::U8 => Value::U8($x as u8),
                    Ty::U16 => Value::U16($x as u16),
                    Ty::U32 => Value::U32($x as u32),
                    Ty::U64 => Value::U64($x as u64),
                    Ty::Usize => Value::Usize($x as usize),
                    Ty::F32 => Value::F32($x as f32),
                    Ty::F64 => Value::F64($x as f64),
                    Ty::Bool => panic!("no cast to bool"),
                }
            };
        }
        match self {
            Value::Bool(b) if to == Ty::Bool => Value::Bool(b),
            Value::Bool(b) => to!(b as u8),
            Value::F32(x) => to!(x),
            Value::F64(x) => to!(x),
            v => with_int!(v, x => to!(x), _ => unreachable!()),
        }
    }
}

fn unary(op: UnOp, a: Value, overflow: Overflow) -> Result<Value, Fault> {
    Ok(match (op, a) {
        (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
        (UnOp::Neg, Value::F32(x)) => Value::F32(-x),
        (UnOp::Neg, Value::F64(x)) => Value::F64(-x),
        (UnOp::Neg, v) if overflow == Overflow::Check => {
            with_int!(v, x => Prim::into_value(x.checked_neg().ok_or(Fault::NegOverflow)?), _ => unreachable!())
        }
        (UnOp::Neg, v) => with_int!(v, x => Prim::into_value(x.wrapping_neg()), _ => unreachable!()),
        (UnOp::Not, v) => with_int!(v, x => Prim::into_value(!x), _ => unreachable!("! on a float")),
    })
}

/// `a op b` for the non-short-circuit operators.
fn binary(op: BinOp, a: Value, b: Value, overflow: Overflow) -> Result<Value, Fault> {
    let check = overflow == Overflow::Check;
    if op.is_comparison() {
        let o = compare(a, b);
        return Ok(Value::Bool(match op {
            BinOp::Eq => o.is_some_and(|o| o.is_eq()),
            BinOp::Ne => !o.is_some_and(|o| o.is_eq()),
            BinOp::Lt => o.is_some_and(|o| o.is_lt()),
            BinOp::Le => o.is_some_and(|o| o.is_le()),
            BinOp::Gt => o.is_some_and(|o| o.is_gt()),
            _ => o.is_some_and(|o| o.is_ge()),
        }));
    }
    if op.is_shift() {
        // Checked: an amount of the width or more, or a negative one, panics.
        let amount = b.as_i128().expect("an integer shift amount");
        if check && !(0..a.ty().bits() as i128).contains(&amount) {
            return Err(if op == BinOp::Shl { Fault::ShlOverflow } else { Fault::ShrOverflow });
        }
        // Masked to the width, as `wrapping_shl` does (the amount's low bits are the same in
        // every integer type).
        let n = match b.cast(Ty::U32) {
            Value::U32(n) => n,
            _ => unreachable!(),
        };
        return Ok(
            with_int!(a, x => Prim::into_value(if op == BinOp::Shl { x.wrapping_shl(n) } else { x.wrapping_shr(n) }), _ => unreachable!()),
        );
    }
    macro_rules! int_ops {
        ($($v:ident),*) => {
            match (a, b) {
                $((Value::$v(x), Value::$v(y)) => Value::$v(match op {
                    BinOp::Add if check => x.checked_add(y).ok_or(Fault::AddOverflow)?,
                    BinOp::Sub if check => x.checked_sub(y).ok_or(Fault::SubOverflow)?,
                    BinOp::Mul if check => x.checked_mul(y).ok_or(Fault::MulOverflow)?,
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::Div if y == 0 => return Err(Fault::DivideByZero),
                    BinOp::Div => x.checked_div(y).ok_or(Fault::DivideOverflow)?,
                    BinOp::Rem if y == 0 => return Err(Fault::RemainderByZero),
                    BinOp::Rem => x.checked_rem(y).ok_or(Fault::RemainderOverflow)?,
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    BinOp::Xor => x ^ y,
                    _ => unreachable!(),
                }),)*
                (Value::F32(x), Value::F32(y)) => Value::F32(float_op(op, x, y)),
                (Value::F64(x), Value::F64(y)) => Value::F64(float_op(op, x, y)),
                (Value::Bool(x), Value::Bool(y)) => Value::Bool(match op {
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    BinOp::Xor => x ^ y,
                    _ => unreachable!(),
                }),
                _ => unreachable!("{op:?} on {a} and {b}"),
            }
        };
    }
    Ok(int_ops!(I8, I16, I32, I64, Isize, U8, U16, U32, U64, Usize))
}

fn float_op<
    T: std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>
        + std::ops::Rem<Output = T>,
>(
    op: BinOp,
    x: T,
    y: T,
) -> T {
    match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => x / y,
        BinOp::Rem => x % y,
        _ => unreachable!(),
    }
}

/// A primitive's conversions to and from [`Value`].
trait Prim: Copy {
    fn from_value(v: Value) -> Self;
    fn into_value(self) -> Value;
}

macro_rules! prim {
    ($($t:ty: $v:ident),*) => {$(
        impl Prim for $t {
            fn from_value(v: Value) -> Self {
                match v {
                    Value::$v(x) => x,
                    other => panic!("expected a {}, found {other}", stringify!($t)),
                }
            }
            fn into_value(self) -> Value {
                Value::$v(self)
            }
        }
    )*};
}
prim!(bool: Bool, i8: I8, i16: I16, i32: I32, i64: I64, isize: Isize, u8: U8, u16: U16, u32: U32, u64: U64, usize: Usize, f32: F32, f64: F64);

fn call_method(m: Method, recv: Value, args: &[Value], overflow: Overflow) -> Result<Value, Fault> {
    // `abs` and `pow` check for overflow where the build does (their arithmetic is
    // compiled into the caller); every other method behaves alike in either build.
    if overflow == Overflow::Check {
        match m {
            Method::IAbs => {
                let f = Fault::NegOverflow;
                return match recv {
                    Value::I8(x) => checked(x.checked_abs(), f),
                    Value::I16(x) => checked(x.checked_abs(), f),
                    Value::I32(x) => checked(x.checked_abs(), f),
                    Value::I64(x) => checked(x.checked_abs(), f),
                    Value::Isize(x) => checked(x.checked_abs(), f),
                    _ => unreachable!("abs of a signed integer"),
                };
            }
            Method::Pow => {
                let n = <u32 as Prim>::from_value(args[0]);
                return with_int!(recv, x => checked(x.checked_pow(n), Fault::MulOverflow), _ => unreachable!());
            }
            _ => {}
        }
    }
    match recv {
        Value::I8(x) => i8_method(m, x, args),
        Value::I16(x) => i16_method(m, x, args),
        Value::I32(x) => i32_method(m, x, args),
        Value::I64(x) => i64_method(m, x, args),
        Value::Isize(x) => isize_method(m, x, args),
        Value::U8(x) => u8_method(m, x, args),
        Value::U16(x) => u16_method(m, x, args),
        Value::U32(x) => u32_method(m, x, args),
        Value::U64(x) => u64_method(m, x, args),
        Value::Usize(x) => usize_method(m, x, args),
        Value::F32(x) => f32_method(m, x, args),
        Value::F64(x) => f64_method(m, x, args),
        Value::Bool(_) => panic!("no methods on bool"),
    }
}

fn checked<T: Prim>(v: Option<T>, f: Fault) -> Result<Value, Fault> {
    v.map(Prim::into_value).ok_or(f)
}

macro_rules! signed_methods {
    ($m:ident, $x:ident) => {
        match $m {
            // `abs` and `-` wrap in a release build.
            Method::IAbs => $x.wrapping_abs().into_value(),
            Method::ISignum => $x.signum().into_value(),
            Method::UnsignedAbs => $x.unsigned_abs().into_value(),
            Method::WrappingAbs => $x.wrapping_abs().into_value(),
            Method::SaturatingNeg => $x.saturating_neg().into_value(),
            Method::SaturatingAbs => $x.saturating_abs().into_value(),
            m => panic!("{m:?} is not a method of signed integers"),
        }
    };
}

macro_rules! unsigned_methods {
    ($m:ident, $x:ident) => {
        match $m {
            Method::IsPowerOfTwo => $x.is_power_of_two().into_value(),
            m => panic!("{m:?} is not a method of unsigned integers"),
        }
    };
}

macro_rules! int_method {
    ($name:ident: $t:ty, $extra:ident) => {
        fn $name(m: Method, x: $t, args: &[Value]) -> Result<Value, Fault> {
            let a = |i: usize| <$t as Prim>::from_value(args[i]);
            let n = || <u32 as Prim>::from_value(args[0]);
            Ok(match m {
                Method::IMin => x.min(a(0)).into_value(),
                Method::IMax => x.max(a(0)).into_value(),
                Method::IClamp if a(0) > a(1) => return Err(Fault::IntClampBounds),
                Method::IClamp => x.clamp(a(0), a(1)).into_value(),
                Method::IRemEuclid if a(0) == 0 => return Err(Fault::RemainderByZero),
                Method::IRemEuclid => x.checked_rem_euclid(a(0)).ok_or(Fault::RemainderOverflow)?.into_value(),
                Method::IDivEuclid if a(0) == 0 => return Err(Fault::DivideByZero),
                Method::IDivEuclid => x.checked_div_euclid(a(0)).ok_or(Fault::DivideOverflow)?.into_value(),
                // `pow` wraps in a release build.
                Method::Pow => x.wrapping_pow(n()).into_value(),
                Method::AbsDiff => x.abs_diff(a(0)).into_value(),
                Method::CountOnes => x.count_ones().into_value(),
                Method::CountZeros => x.count_zeros().into_value(),
                Method::LeadingZeros => x.leading_zeros().into_value(),
                Method::TrailingZeros => x.trailing_zeros().into_value(),
                Method::RotateLeft => x.rotate_left(n()).into_value(),
                Method::RotateRight => x.rotate_right(n()).into_value(),
                Method::SwapBytes => x.swap_bytes().into_value(),
                Method::ReverseBits => x.reverse_bits().into_value(),
                Method::WrappingAdd => x.wrapping_add(a(0)).into_value(),
                Method::WrappingSub => x.wrapping_sub(a(0)).into_value(),
                Method::WrappingMul => x.wrapping_mul(a(0)).into_value(),
                Method::WrappingDiv if a(0) == 0 => return Err(Fault::DivideByZero),
                Method::WrappingDiv => x.wrapping_div(a(0)).into_value(),
                Method::WrappingRem if a(0) == 0 => return Err(Fault::RemainderByZero),
                Method::WrappingRem => x.wrapping_rem(a(0)).into_value(),
                Method::WrappingNeg => x.wrapping_neg().into_value(),
                Method::WrappingShl => x.wrapping_shl(n()).into_value(),
                Method::WrappingShr => x.wrapping_shr(n()).into_value(),
                Method::WrappingPow => x.wrapping_pow(n()).into_value(),
                Method::SaturatingAdd => x.saturating_add(a(0)).into_value(),
                Method::SaturatingSub => x.saturating_sub(a(0)).into_value(),
                Method::SaturatingMul => x.saturating_mul(a(0)).into_value(),
                Method::SaturatingDiv if a(0) == 0 => return Err(Fault::DivideByZero),
                Method::SaturatingDiv => x.saturating_div(a(0)).into_value(),
                Method::SaturatingPow => x.saturating_pow(n()).into_value(),
                m => $extra!(m, x),
            })
        }
    };
}

int_method!(i8_method: i8, signed_methods);
int_method!(i16_method: i16, signed_methods);
int_method!(i32_method: i32, signed_methods);
int_method!(i64_method: i64, signed_methods);
int_method!(isize_method: isize, signed_methods);
int_method!(u8_method: u8, unsigned_methods);
int_method!(u16_method: u16, unsigned_methods);
int_method!(u32_method: u32, unsigned_methods);
int_method!(u64_method: u64, unsigned_methods);
int_method!(usize_method: usize, unsigned_methods);

macro_rules! float_method {
    ($name:ident: $t:ty) => {
        fn $name(m: Method, x: $t, args: &[Value]) -> Result<Value, Fault> {
            let a = |i: usize| <$t as Prim>::from_value(args[i]);
            Ok(match m {
                Method::FAbs => x.abs().into_value(),
                Method::FSignum => x.signum().into_value(),
                Method::FMin => x.min(a(0)).into_value(),
                Method::FMax => x.max(a(0)).into_value(),
                // `min > max`, or either is NaN.
                Method::FClamp if a(0).partial_cmp(&a(1)).is_none_or(|o| o.is_gt()) => {
                    return Err(Fault::FloatClampBounds);
                }
                Method::FClamp => x.clamp(a(0), a(1)).into_value(),
                Method::FRemEuclid => x.rem_euclid(a(0)).into_value(),
                Method::FDivEuclid => x.div_euclid(a(0)).into_value(),
                Method::Copysign => x.copysign(a(0)).into_value(),
                Method::Floor => x.floor().into_value(),
                Method::Ceil => x.ceil().into_value(),
                Method::Round => x.round().into_value(),
                Method::RoundTiesEven => x.round_ties_even().into_value(),
                Method::Trunc => x.trunc().into_value(),
                Method::Fract => x.fract().into_value(),
                Method::Sqrt => x.sqrt().into_value(),
                Method::MulAdd => x.mul_add(a(0), a(1)).into_value(),
                Method::Recip => x.recip().into_value(),
                Method::ToDegrees => x.to_degrees().into_value(),
                Method::ToRadians => x.to_radians().into_value(),
                Method::IsNan => x.is_nan().into_value(),
                Method::IsInfinite => x.is_infinite().into_value(),
                Method::IsFinite => x.is_finite().into_value(),
                Method::IsSignNegative => x.is_sign_negative().into_value(),
                Method::IsSignPositive => x.is_sign_positive().into_value(),
                Method::Powi => x.powi(<i32 as Prim>::from_value(args[0])).into_value(),
                Method::Cbrt => x.cbrt().into_value(),
                Method::Exp => x.exp().into_value(),
                Method::Exp2 => x.exp2().into_value(),
                Method::ExpM1 => x.exp_m1().into_value(),
                Method::Ln => x.ln().into_value(),
                Method::Log2 => x.log2().into_value(),
                Method::Log10 => x.log10().into_value(),
                Method::Ln1p => x.ln_1p().into_value(),
                Method::Log => x.log(a(0)).into_value(),
                Method::Powf => x.powf(a(0)).into_value(),
                Method::Sin => x.sin().into_value(),
                Method::Cos => x.cos().into_value(),
                Method::Tan => x.tan().into_value(),
                Method::Asin => x.asin().into_value(),
                Method::Acos => x.acos().into_value(),
                Method::Atan => x.atan().into_value(),
                Method::Atan2 => x.atan2(a(0)).into_value(),
                Method::Sinh => x.sinh().into_value(),
                Method::Cosh => x.cosh().into_value(),
                Method::Tanh => x.tanh().into_value(),
                Method::Asinh => x.asinh().into_value(),
                Method::Acosh => x.acosh().into_value(),
                Method::Atanh => x.atanh().into_value(),
                Method::Hypot => x.hypot(a(0)).into_value(),
                Method::Erf => SpecialMath::erf(x).into_value(),
                Method::Erfc => SpecialMath::erfc(x).into_value(),
                Method::Gamma => SpecialMath::gamma(x).into_value(),
                Method::LnGamma => SpecialMath::ln_gamma(x).into_value(),
                m => panic!("{m:?} is not a float method"),
            })
        }
    };
}

float_method!(f32_method: f32);
float_method!(f64_method: f64);
