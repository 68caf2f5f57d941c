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
//!
//! The generator's state and its entry point are here; what it draws lives beside it:
//! `items` (functions, blocks, `const` and `fn` items), `statements`, `loops` (and
//! the bounds that make them terminate), `expressions`, `literals` (and the standard
//! library's constants), `patterns` (`match` and its arms).

mod expressions;
mod items;
mod literals;
mod loops;
mod patterns;
mod statements;
mod structs;

use crate::ast::*;
use crate::rng::Rng;
use crate::ty::{Ty, Value};

/// What the generator may produce.
#[derive(Clone, Debug)]
pub struct Config {
    /// Only operations the GPU computes bit for bit like an optimised build for the CPU (no
    /// libdevice functions, no `powi`; see [`Accuracy`](crate::methods::Accuracy)): for the
    /// corpus compared on the GPU, where libdevice is within ulps of the CPU only and the
    /// CPU's functions are built with optimisation.
    pub exact_only: bool,
    /// Operands that can make an operation fault (a divisor, `clamp`'s bounds, `step_by`'s
    /// step) are drawn so that they cannot, but one time in [`RARE_FAULT_ODDS`]: for
    /// explicit kernels, where one faulting thread fails the whole launch (a thread index
    /// is 0 somewhere, so a divisor drawn from the variables would be 0 in every launch).
    pub rare_faults: bool,
    /// `half::f16` and `half::bf16` values too: their operators (computed in `f32`, rounded
    /// once), comparisons, methods and conversions. A configuration without them (and
    /// without [`Config::complex`]) draws exactly what it drew before they existed, so the
    /// programs of the fixed corpora stay the same.
    pub halves: bool,
    /// `Complex<f32>` and `Complex<f64>` values too: `+ - * /` (with each other and with
    /// their parts' type), `-`, `==`, `!=`, the parts, the constructors, and the methods
    /// whose formulas use arithmetic only (`conj`, `norm_sqr`, `scale`, `inv`, `powi`, …).
    /// num-complex's other methods (`exp`, `sqrt`, `norm`, `arg`, …) call the math library,
    /// so the GPU is within ulps of the CPU only there: they are never drawn.
    pub complex: bool,
    /// `f16::from_f64` and `bf16::from_f64` (and their `_const` forms) too. The compiler
    /// rounds once, as the interpreter does; the `half` crate on x86 rounds twice (through
    /// `f32`) or drops the low bits first, so only where the interpreter is the reference.
    pub half_from_f64: bool,
    /// `#[repr(C)]` structs too (one to three per program, of scalars, arrays of scalars
    /// and earlier structs): struct literals, copies, field reads and updates (`s.f1[2] +=
    /// …`), whole-struct assignments, and helpers and nested functions that take and
    /// return them. The program's own function keeps scalar parameters and results.
    pub structs: bool,
}

impl Config {
    /// The host differential tests: everything, libdevice functions included (the host JIT
    /// runs the CPU's own functions in their place).
    pub const HOST: Config = Config {
        exact_only: false,
        rare_faults: false,
        halves: false,
        complex: false,
        half_from_f64: false,
        structs: false,
    };
    /// The GPU corpus: what the GPU computes bit for bit like the CPU.
    pub const GPU: Config = Config { exact_only: true, ..Config::HOST };
    /// The scalar parts of explicit kernels: [`Config::GPU`], faults rare.
    pub const KERNEL: Config = Config { rare_faults: true, ..Config::GPU };

    /// This configuration with the half and complex types ([`Config::halves`],
    /// [`Config::complex`]), without `from_f64` (what a corpus rustc compiles may hold).
    pub const fn with_new_types(self) -> Config {
        Config { halves: true, complex: true, ..self }
    }

    /// This configuration with `f16::from_f64` and `bf16::from_f64` (for seeds whose
    /// reference is the interpreter).
    pub const fn with_half_from_f64(self) -> Config {
        Config { half_from_f64: true, ..self }
    }

    /// This configuration with structs ([`Config::structs`]).
    pub const fn with_structs(self) -> Config {
        Config { structs: true, ..self }
    }

    /// The types it draws from: [`Ty::ALL`], then those its flags allow.
    pub fn types(&self) -> Vec<Ty> {
        let mut ts = Ty::ALL.to_vec();
        if self.halves {
            ts.extend(Ty::HALVES);
        }
        if self.complex {
            ts.extend(Ty::COMPLEX);
        }
        ts
    }
}

/// With [`Config::rare_faults`], one operand in this many may fault.
pub const RARE_FAULT_ODDS: u64 = 16;

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
        returns: true,
        structs: Vec::new(),
    };
    g.budget = g.rng.range(30, 220) as i64;
    g.structs = g.struct_defs(seed);
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
    let (func, _) = g.function(format!("fz{seed}"), params, Vec::new(), ret, 3);
    Program { seed, func, helpers, structs: g.structs }
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
    /// A struct variable (or a struct field of one), of this struct of the program: not a
    /// scalar (`ty` means nothing). Its scalars are variables of their own, named by their
    /// paths (`s.f1[2]`).
    strukt: Option<usize>,
}

#[derive(Clone)]
struct FnSig {
    name: String,
    params: Vec<Ty>,
    /// The structs of the struct parameters, after the scalar ones.
    struct_params: Vec<usize>,
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
    /// The current function may `return` (a function's own body, nested ones included; not
    /// the statements another generator places in an explicit kernel, whose `return` has
    /// no value).
    returns: bool,
    /// The program's structs (none without [`Config::structs`]).
    structs: Vec<StructDef>,
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
/// The operators of the float and the half types.
const FLOAT_OPS: &[(BinOp, u32)] =
    &[(BinOp::Add, 5), (BinOp::Sub, 4), (BinOp::Mul, 4), (BinOp::Div, 3), (BinOp::Rem, 1)];
/// The arithmetic of the complex types (num-complex's `%` is no operator of the kernel
/// language).
const COMPLEX_OPS: &[(BinOp, u32)] = &[(BinOp::Add, 5), (BinOp::Sub, 4), (BinOp::Mul, 4), (BinOp::Div, 3)];

impl Gen<'_> {
    fn fresh(&mut self, prefix: &str) -> String {
        self.next_name += 1;
        format!("{prefix}{}", self.next_name)
    }

    /// A type of the configuration: a half or complex type one time in three where they
    /// are allowed (the draws are those of a configuration without them where they are not).
    fn any_type(&mut self) -> Ty {
        let extra: Vec<Ty> = self.cfg.types().split_off(Ty::ALL.len());
        if !extra.is_empty() && self.rng.chance(1, 3) {
            return *self.rng.pick(&extra);
        }
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

    /// The visible scalar variables (the latest binding of each name).
    fn visible(&self) -> Vec<&Var> {
        self.visible_all().into_iter().filter(|v| v.strukt.is_none()).collect()
    }

    /// The visible variables, structs too.
    fn visible_all(&self) -> Vec<&Var> {
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
        self.vars.last_mut().expect("a scope").push(Var { name, ty, mutable, reserved, strukt: None });
    }

    fn consts_of(&self, ty: Ty) -> Vec<(String, Value)> {
        self.items.iter().flat_map(|s| &s.consts).filter(|c| c.1 == ty).map(|c| (c.0.clone(), c.2)).collect()
    }

    /// Functions callable here whose calls the remaining work allows (and whose struct
    /// parameters a visible struct variable can take).
    fn callable(&self) -> Vec<FnSig> {
        self.items
            .iter()
            .flat_map(|s| &s.fns)
            .filter(|f| self.work + self.weight * f.work <= WORK_LIMIT)
            .filter(|f| f.struct_params.iter().all(|&d| !self.visible_structs(d).is_empty()))
            .cloned()
            .collect()
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

/// A variable another generator (the explicit kernels') shows the scalar generator: the
/// scalar code may read it, and assign it when it is `mutable` and not `reserved`; a
/// `reserved` one is never shadowed either.
#[derive(Clone, Debug)]
pub(crate) struct ScalarVar {
    pub(crate) name: String,
    pub(crate) ty: Ty,
    pub(crate) mutable: bool,
    pub(crate) reserved: bool,
}

/// The scalar generator, driven by another one: expressions and statements over the
/// variables it is shown, which never `return` (an explicit kernel's `return` has no value)
/// and whose loops run at most a given number of iterations.
pub(crate) struct Scalars<'c> {
    g: Gen<'c>,
}

impl<'c> Scalars<'c> {
    /// A generator drawing from `rng`, with `budget` nodes for everything it generates.
    pub(crate) fn new(rng: Rng, cfg: &'c Config, budget: i64) -> Scalars<'c> {
        let g = Gen {
            rng,
            cfg,
            next_name: 0,
            vars: Vec::new(),
            // The outermost scope: the items of the kernel's body (see `item`).
            items: vec![ItemScope::default()],
            loops: Vec::new(),
            ret: Ret::Scalar(Ty::Bool),
            weight: 1,
            work: 0,
            budget,
            no_jumps: false,
            returns: false,
            structs: Vec::new(),
        };
        Scalars { g }
    }

    pub(crate) fn rng(&mut self) -> &mut Rng {
        &mut self.g.rng
    }

    /// Nodes left in the budget.
    pub(crate) fn budget(&self) -> i64 {
        self.g.budget
    }

    /// A name no generated name takes (`prefix` and a number).
    pub(crate) fn fresh(&mut self, prefix: &str) -> String {
        self.g.fresh(prefix)
    }

    /// Shows the generator `vars` (one scope) and a loop allowance of `work` iterations.
    fn enter(&mut self, vars: &[ScalarVar], work: u64) {
        let scope = vars
            .iter()
            .map(|v| Var { name: v.name.clone(), ty: v.ty, mutable: v.mutable, reserved: v.reserved, strukt: None })
            .collect();
        self.g.vars = vec![scope];
        self.g.weight = 1;
        self.g.work = WORK_LIMIT.saturating_sub(work);
    }

    /// An expression of type `ty` over `vars`, nested at most `depth` deep, whose loops run
    /// at most `work` iterations.
    pub(crate) fn expr(&mut self, vars: &[ScalarVar], ty: Ty, depth: u32, work: u64) -> Expr {
        self.enter(vars, work);
        let e = self.g.expr(ty, depth);
        self.g.vars.clear();
        e
    }

    /// A literal of this value, written bare or with its suffix.
    pub(crate) fn lit_of(&mut self, v: Value) -> Expr {
        self.g.lit_of(v)
    }

    /// A statement (a deferred `let` is two) over `vars`, and the variables it declares
    /// for the code after it, in order.
    pub(crate) fn stmts(&mut self, vars: &[ScalarVar], depth: u32, work: u64) -> (Vec<Stmt>, Vec<ScalarVar>) {
        self.enter(vars, work);
        let mut out = Vec::new();
        self.g.stmt(depth, &mut out);
        let scope = self.g.vars.pop().unwrap_or_default();
        self.g.vars.clear();
        let declared = scope[vars.len()..]
            .iter()
            .map(|v| ScalarVar { name: v.name.clone(), ty: v.ty, mutable: v.mutable, reserved: v.reserved })
            .collect();
        (out, declared)
    }

    /// A `const` or `fn` item for the outermost scope: every later expression may name it.
    pub(crate) fn item(&mut self, depth: u32) -> Stmt {
        self.g.vars.clear();
        if self.g.rng.chance(1, 2) {
            Stmt::Const(self.g.const_item())
        } else {
            let name = self.g.fresh("h");
            Stmt::Fn(self.g.fn_item(name, depth))
        }
    }
}
