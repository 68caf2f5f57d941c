//! An interpreter of generated programs that follows Rust's semantics in a release build
//! ([`Overflow::Wrap`]: integers wrap, shift amounts are masked) or in a build with overflow
//! checks ([`Overflow::Check`]: `+ - *`, unary `-`, `abs`, `pow` and shifts by the width or
//! more panic, as `checked_add` and friends say); float→int casts saturate, operands evaluate
//! left to right (a compound assignment's value before its variable is read), and where
//! Rust panics the run stops with the panic's [`Fault`]. Every operation calls the Rust
//! function that defines it (`wrapping_add`, `f32::rem_euclid`, the range iterators for
//! `for`), so the interpreter adds only the control flow; the fixed-seed corpus compiled by
//! rustc checks it against rustc.
//!
//! The run's state and its results are here; `statements` runs blocks, statements, loops
//! and calls, `expressions` expressions and `match`, and `operations` the operators,
//! casts and methods on values.

mod expressions;
mod operations;
mod statements;

use std::collections::HashMap;

use crate::ast::*;
use crate::ty::Value;

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
    let mut it = Interp::new(overflow);
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
    /// The bounds of the last `clamp` that faulted (Rust's panic names them).
    clamp_bounds: Option<(Value, Value)>,
}

impl Interp<'_> {
    /// An interpreter with no functions, constants or variables yet.
    fn new(overflow: Overflow) -> Self {
        Interp {
            fns: HashMap::new(),
            consts: HashMap::new(),
            env: Vec::new(),
            base: 0,
            steps: 0,
            overflow,
            fault_in: None,
            clamp_bounds: None,
        }
    }
}

/// Whether a `break`/`continue` with this label leaves (or continues) a loop with `label`.
fn targets(jump: Option<&str>, label: &Option<String>) -> bool {
    jump.is_none() || jump == label.as_deref()
}

/// The variables of one run of statements, innermost binding of a name last.
pub(crate) type Env<'p> = Vec<(&'p str, Value)>;

/// The scalar interpreter, driven by another one (the explicit kernels'): it evaluates
/// expressions and runs statements in environments the driver keeps (one per thread), and
/// knows the `fn` and `const` items it has been shown.
pub(crate) struct Scalars<'p> {
    it: Interp<'p>,
}

impl<'p> Scalars<'p> {
    pub(crate) fn new(overflow: Overflow) -> Scalars<'p> {
        Scalars { it: Interp::new(overflow) }
    }

    /// Indexes the `fn` and `const` items of `s` (itself, or in its blocks).
    pub(crate) fn collect_stmt(&mut self, s: &'p Stmt) {
        match s {
            Stmt::Fn(f) => {
                self.it.fns.insert(&f.name, f);
            }
            Stmt::Const(c) => {
                self.it.consts.insert(&c.name, c);
            }
            _ => {}
        }
        visit_stmt_blocks(s, &mut |b| self.it.collect_items(b));
    }

    /// Indexes the `fn` and `const` items in the blocks of `e`.
    pub(crate) fn collect_expr(&mut self, e: &'p Expr) {
        visit_expr_blocks(e, &mut |b| self.it.collect_items(b));
    }

    /// Runs `f` on the interpreter with `env` as the current call's variables.
    fn with_env<T>(&mut self, env: &mut Env<'p>, f: impl FnOnce(&mut Interp<'p>) -> R<'p, T>) -> Result<T, Stop> {
        std::mem::swap(&mut self.it.env, env);
        self.it.base = 0;
        self.it.steps = 0;
        let r = f(&mut self.it);
        std::mem::swap(&mut self.it.env, env);
        match r {
            Ok(v) => Ok(v),
            Err(Flow::Stop(s)) => Err(s),
            Err(other) => Err(Stop::Invalid(format!("{other:?} escaped the kernel's statement"))),
        }
    }

    /// The value of `e` in `env`.
    pub(crate) fn eval(&mut self, env: &mut Env<'p>, e: &'p Expr) -> Result<Value, Stop> {
        self.with_env(env, |it| it.expr(e))
    }

    /// Runs `s` in `env`; a `let` adds its variables to it.
    pub(crate) fn exec(&mut self, env: &mut Env<'p>, s: &'p Stmt) -> Result<(), Stop> {
        self.with_env(env, |it| it.stmt(s))
    }

    /// The bounds of the last `clamp` that faulted.
    pub(crate) fn clamp_bounds(&self) -> Option<(Value, Value)> {
        self.it.clamp_bounds
    }

    /// `a op b` with the run's overflow semantics.
    pub(crate) fn binary(&self, op: BinOp, a: Value, b: Value) -> Result<Value, Fault> {
        operations::binary(op, a, b, self.it.overflow)
    }
}
