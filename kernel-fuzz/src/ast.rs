//! The typed syntax of generated programs: what the generator builds, the renderer prints
//! as Rust and the interpreter runs. Every expression knows its type; names are unique
//! where Rust would need scoping rules the generator does not model (functions, constants,
//! labels), and shadowing is real only for variables.

use crate::methods::Method;
use crate::ty::{Ty, Value};

/// A generated vectorized function.
#[derive(Clone, Debug)]
pub struct Program {
    /// The seed it was generated from (`kernel_fuzz::program(seed, …)` builds it again).
    pub seed: u64,
    pub func: FnItem,
    /// Top-level helper functions beside it (`#[device]` functions for the GPU), called by
    /// plain name from the function and from later helpers (never recursively); their names
    /// (`fz{seed}_h{i}`) are unique across seeds.
    pub helpers: Vec<FnItem>,
    /// The structs its functions use ([`Config::structs`](crate::Config::structs)), each
    /// after those it holds; their names (`Fz{seed}S{i}`) are unique across seeds.
    pub structs: Vec<StructDef>,
}

/// A `#[repr(C)]` struct of the program: named fields of scalars, arrays of scalars and
/// earlier structs.
#[derive(Clone, Debug)]
pub struct StructDef {
    pub name: String,
    pub fields: Vec<(String, FieldTy)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldTy {
    Scalar(Ty),
    /// `[T; n]`.
    Array(Ty, usize),
    /// A struct defined earlier in the program, by name.
    Struct(String),
}

impl FieldTy {
    pub fn rust(&self) -> String {
        match self {
            FieldTy::Scalar(t) => t.name().to_string(),
            FieldTy::Array(t, n) => format!("[{}; {n}]", t.name()),
            FieldTy::Struct(name) => name.clone(),
        }
    }
}

/// A struct parameter of a function (after its scalar ones). `leaves` are the paths of
/// its scalars (`b0.f0`, `b0.f1[2]`, `b0.f2.f0`), each a variable to the code inside.
#[derive(Clone, Debug)]
pub struct StructParam {
    pub name: String,
    pub ty: String,
    pub mutable: bool,
    pub leaves: Vec<String>,
}

/// A struct value: a literal, a copy of a struct variable (or of a struct field of one),
/// or the result of a call.
#[derive(Clone, Debug)]
pub enum StructInit {
    Literal(StructLit),
    Copy { from: String, leaves: Vec<String> },
    Call(Call),
}

/// `Name { f0: e, f1: [e, e], f2: Inner { … } }`, fields in their declared order (the
/// order Rust evaluates them in).
#[derive(Clone, Debug)]
pub struct StructLit {
    pub name: String,
    pub fields: Vec<(String, FieldInit)>,
}

#[derive(Clone, Debug)]
pub enum FieldInit {
    Scalar(Expr),
    Array(Vec<Expr>),
    Struct(StructLit),
}

impl StructLit {
    /// Its scalar expressions in evaluation order (one per leaf).
    pub fn exprs(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        for (_, f) in &self.fields {
            match f {
                FieldInit::Scalar(e) => out.push(e),
                FieldInit::Array(es) => out.extend(es),
                FieldInit::Struct(l) => out.extend(l.exprs()),
            }
        }
        out
    }

    pub fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        let mut out = Vec::new();
        for (_, f) in &mut self.fields {
            match f {
                FieldInit::Scalar(e) => out.push(e),
                FieldInit::Array(es) => out.extend(es.iter_mut()),
                FieldInit::Struct(l) => out.extend(l.exprs_mut()),
            }
        }
        out
    }
}

impl StructInit {
    /// The scalar expressions it evaluates (a call's arguments, a literal's fields).
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            StructInit::Literal(l) => l.exprs(),
            StructInit::Copy { .. } => Vec::new(),
            StructInit::Call(c) => c.args.iter().collect(),
        }
    }

    pub fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            StructInit::Literal(l) => l.exprs_mut(),
            StructInit::Copy { .. } => Vec::new(),
            StructInit::Call(c) => c.args.iter_mut().collect(),
        }
    }
}

/// A function: the vectorized one, or a `fn` item nested in a block.
#[derive(Clone, Debug)]
pub struct FnItem {
    pub name: String,
    pub params: Vec<Param>,
    /// Struct parameters, after the scalar ones.
    pub struct_params: Vec<StructParam>,
    pub ret: Ret,
    pub body: Block,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub ty: Ty,
    pub mutable: bool,
    /// Declared as a raw identifier (`r#p0`), used as `p0`: the same name to Rust.
    pub raw: bool,
}

/// A function's result: one scalar, a tuple of them, or (a helper's) a struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ret {
    Scalar(Ty),
    Tuple(Vec<Ty>),
    Struct(String),
}

impl Ret {
    /// The scalars of a scalar or tuple result (none for a struct).
    pub fn scalars(&self) -> &[Ty] {
        match self {
            Ret::Scalar(t) => std::slice::from_ref(t),
            Ret::Tuple(ts) => ts,
            Ret::Struct(_) => &[],
        }
    }

    pub fn rust(&self) -> String {
        match self {
            Ret::Struct(name) => name.clone(),
            Ret::Scalar(t) => t.name().to_string(),
            Ret::Tuple(ts) if ts.len() == 1 => format!("({},)", ts[0].name()),
            Ret::Tuple(ts) => format!("({})", ts.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Tail>,
}

/// What a block ends with: a scalar, or (a function body's) tuple or struct.
#[derive(Clone, Debug)]
pub enum Tail {
    Scalar(Box<Expr>),
    Tuple(Vec<Expr>),
    Struct(StructInit),
}

impl Tail {
    /// Its scalar expressions, in evaluation order.
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            Tail::Scalar(e) => vec![e],
            Tail::Tuple(es) => es.iter().collect(),
            Tail::Struct(init) => init.exprs(),
        }
    }

    pub fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Tail::Scalar(e) => vec![e],
            Tail::Tuple(es) => es.iter_mut().collect(),
            Tail::Struct(init) => init.exprs_mut(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct ConstItem {
    pub name: String,
    pub ty: Ty,
    pub value: Expr,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Const(ConstItem),
    Fn(FnItem),
    /// `let x = init;`, `let mut x: T = init;`, or `let x;` (assigned on every path later).
    Let {
        name: String,
        mutable: bool,
        annotated: bool,
        ty: Ty,
        init: Option<Expr>,
    },
    /// `let (a, _, mut c) = h(…);`
    LetTuple {
        names: Vec<Option<(String, bool)>>,
        call: Call,
    },
    /// `let s = init;` of a struct; `leaves` are its scalars' paths (`s.f0`, `s.f1[1]`).
    LetStruct {
        name: String,
        mutable: bool,
        init: StructInit,
        leaves: Vec<String>,
    },
    /// `s = init;` (or `s.f2 = init;`) of a whole struct, `leaves` its scalars' paths.
    AssignStruct {
        name: String,
        init: StructInit,
        leaves: Vec<String>,
    },
    /// `x = v;` or `x op= v;`.
    Assign {
        name: String,
        op: Option<BinOp>,
        value: Expr,
    },
    /// An expression evaluated for its effects (and faults): `a / b;`, or `let _ = a / b;`
    /// when the flag is set.
    Expr(Expr, bool),
    /// `if c { … }` (no value), with `else` when `els` is there.
    If {
        cond: Expr,
        then: Block,
        els: Option<Block>,
    },
    While {
        label: Option<String>,
        cond: Expr,
        body: Block,
    },
    For {
        label: Option<String>,
        var: String,
        range: Box<RangeLoop>,
        body: Block,
    },
    /// A `loop` left by `break;` (no value).
    Loop {
        label: Option<String>,
        body: Block,
    },
    Break {
        label: Option<String>,
        value: Option<Expr>,
    },
    Continue {
        label: Option<String>,
    },
    Return(Tail),
}

/// `(start..end)` or `(start..=end)`, then `.rev()`, then `.step_by(step)`.
#[derive(Clone, Debug)]
pub struct RangeLoop {
    pub ty: Ty,
    pub start: Expr,
    pub end: Expr,
    pub inclusive: bool,
    pub rev: bool,
    pub step: Option<Expr>,
}

/// A call of a nested function.
#[derive(Clone, Debug)]
pub struct Call {
    pub func: String,
    pub args: Vec<Expr>,
    /// Struct arguments, after the scalar ones: a struct variable (or a struct field of
    /// one) and the paths of its scalars.
    pub structs: Vec<StructArg>,
}

#[derive(Clone, Debug)]
pub struct StructArg {
    pub name: String,
    pub leaves: Vec<String>,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `&&`, `||`: short-circuit.
    LogicAnd,
    LogicOr,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::LogicAnd => "&&",
            BinOp::LogicOr => "||",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
    }

    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }

    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::LogicAnd | BinOp::LogicOr)
    }
}

/// A literal. `bare` asks for it to be written without a suffix where rustc would still
/// give it its type (the renderer decides); a literal is never NaN or infinite.
#[derive(Copy, Clone, Debug)]
pub struct Lit {
    pub value: Value,
    pub bare: bool,
    /// How an integer is spelled: 0 decimal, 1 hex, 2 binary, 3 octal, 4 with `_`.
    pub style: u8,
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub ty: Ty,
    pub kind: ExprKind,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Lit(Lit),
    Var(String),
    /// A constant item of the program.
    Const(String),
    /// A constant of the standard library (`i32::MAX`, `std::f64::consts::PI`), with its value.
    PathConst(String, Value),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `e as T`, `T` being this expression's type.
    Cast(Box<Expr>),
    /// `recv.m(args)`, or `T::m(recv, args)` when `path` is set.
    Method {
        method: Method,
        recv: Box<Expr>,
        args: Vec<Expr>,
        path: bool,
    },
    Call(Call),
    /// `h(…).k` of a function returning a tuple.
    Field(Call, usize),
    If {
        cond: Box<Expr>,
        then: Block,
        els: Block,
    },
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<Arm>,
    },
    Block(Block),
    /// A `loop` that produces its value with `break value`.
    Loop {
        label: Option<String>,
        body: Block,
    },
    /// A conversion, constructor or part of the half and complex types, which have no `as`
    /// and no literals: `f16::from_f32(x)`, `h.to_f32()`, `Complex::new(re, im)`, `z.re`.
    /// `spelling` picks one of its ways to be written ([`Func`] lists them); the renderer
    /// writes a spelling that needs a typed operand another way where it has none.
    Func {
        func: Func,
        args: Vec<Expr>,
        spelling: u8,
    },
}

/// What [`ExprKind::Func`] computes, with its spellings (the result type is the
/// expression's; `T` a half type, `Complex32`/`c32` standing for either width).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Func {
    /// `T::from_f32(x)` (0) or `T::from_f32_const(x)` (1): rounded once.
    FromF32,
    /// `T::from_f64(x)` (0) or `T::from_f64_const(x)` (1): rounded once.
    FromF64,
    /// `T::from(x)` of a `u8` or an `i8` (exact).
    FromSmall,
    /// `h.to_f32()` (0) or `f32::from(h)` (1).
    ToF32,
    /// `h.to_f64()` (0) or `f64::from(h)` (1).
    ToF64,
    /// `Complex::new(re, im)` (0, with a typed part), `Complex32::new(re, im)` (1),
    /// `Complex::<f32>::new(re, im)` (2), `c32(re, im)` (3), `Complex { re, im }` (4, with a
    /// typed part).
    New,
    /// `Complex::from(re)` (0, with a typed part) or `Complex32::from(re)` (1).
    FromPart,
    /// `z.re`.
    Re,
    /// `z.im`.
    Im,
}

impl Func {
    /// Whether the spelling may stand in a constant's value.
    pub fn is_const(self, spelling: u8) -> bool {
        match self {
            Func::FromF32 | Func::FromF64 => spelling == 1,
            Func::New => spelling != 3,
            Func::Re | Func::Im => true,
            Func::FromSmall | Func::ToF32 | Func::ToF64 | Func::FromPart => false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Arm {
    pub pat: Pat,
    pub guard: Option<Expr>,
    pub body: Expr,
}

#[derive(Clone, Debug)]
pub enum Pat {
    Wild,
    /// A literal; `bare` as for [`Lit`] (a pattern always has its scrutinee's type).
    Lit(Value, bool),
    /// A constant of the standard library (`u8::MAX`).
    PathConst(String, Value),
    /// `lo..=hi`, `lo..hi`, `lo..`, `..=hi`, `..hi`.
    Range {
        lo: Option<Bound>,
        hi: Option<Bound>,
        inclusive: bool,
    },
    Or(Vec<Pat>),
    /// `n` or `n @ sub`.
    Bind(String, Option<Box<Pat>>),
}

/// A range pattern's bound: its value, written as a number or as the constant `name`
/// (`u8::MAX`, a local `const`) that holds it.
#[derive(Clone, Debug)]
pub struct Bound {
    pub value: Value,
    pub name: Option<String>,
}

impl Expr {
    pub fn new(ty: Ty, kind: ExprKind) -> Expr {
        Expr { ty, kind }
    }

    pub fn lit(value: Value) -> Expr {
        Expr::new(value.ty(), ExprKind::Lit(Lit { value, bare: false, style: 0 }))
    }

    /// `f(args)` of type `ty`, in spelling `spelling`.
    pub fn func(ty: Ty, func: Func, args: Vec<Expr>, spelling: u8) -> Expr {
        Expr::new(ty, ExprKind::Func { func, args, spelling })
    }

    /// The zero of a type, as an expression: a literal, `f16::from_f32_const(0.0)` or
    /// `Complex32::new(0.0, 0.0)` (all three constants).
    pub fn zero(ty: Ty) -> Expr {
        if ty.is_half() {
            Expr::func(ty, Func::FromF32, vec![Expr::lit(Value::F32(0.0))], 1)
        } else if let Some(part) = ty.part() {
            let z = || Expr::lit(Value::zero(part));
            Expr::func(ty, Func::New, vec![z(), z()], 1)
        } else {
            Expr::lit(Value::zero(ty))
        }
    }
}

/// Calls `f` on every block of `b` (itself first), nested functions' bodies included.
pub fn visit_blocks<'a>(b: &'a Block, f: &mut dyn FnMut(&'a Block)) {
    f(b);
    for s in &b.stmts {
        visit_stmt_blocks(s, f);
    }
    if let Some(t) = &b.tail {
        visit_tail_blocks(t, f);
    }
}

/// Calls `f` on every block in `s` (outer ones first), nested functions' bodies included.
pub fn visit_stmt_blocks<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Block)) {
    match s {
        Stmt::Const(c) => visit_expr_blocks(&c.value, f),
        Stmt::Fn(func) => visit_blocks(&func.body, f),
        Stmt::Let { init, .. } => {
            if let Some(e) = init {
                visit_expr_blocks(e, f);
            }
        }
        Stmt::LetTuple { call, .. } => call.args.iter().for_each(|a| visit_expr_blocks(a, f)),
        Stmt::LetStruct { init, .. } | Stmt::AssignStruct { init, .. } => {
            init.exprs().into_iter().for_each(|a| visit_expr_blocks(a, f))
        }
        Stmt::Assign { value, .. } => visit_expr_blocks(value, f),
        Stmt::Expr(e, _) => visit_expr_blocks(e, f),
        Stmt::If { cond, then, els } => {
            visit_expr_blocks(cond, f);
            visit_blocks(then, f);
            if let Some(e) = els {
                visit_blocks(e, f);
            }
        }
        Stmt::While { cond, body, .. } => {
            visit_expr_blocks(cond, f);
            visit_blocks(body, f);
        }
        Stmt::For { range, body, .. } => {
            visit_expr_blocks(&range.start, f);
            visit_expr_blocks(&range.end, f);
            if let Some(s) = &range.step {
                visit_expr_blocks(s, f);
            }
            visit_blocks(body, f);
        }
        Stmt::Loop { body, .. } => visit_blocks(body, f),
        Stmt::Break { value, .. } => {
            if let Some(v) = value {
                visit_expr_blocks(v, f);
            }
        }
        Stmt::Continue { .. } => {}
        Stmt::Return(t) => visit_tail_blocks(t, f),
    }
}

fn visit_tail_blocks<'a>(t: &'a Tail, f: &mut dyn FnMut(&'a Block)) {
    t.exprs().into_iter().for_each(|e| visit_expr_blocks(e, f));
}

/// Calls `f` on every block in `e` (outer ones first), nested functions' bodies included.
pub fn visit_expr_blocks<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Block)) {
    match &e.kind {
        ExprKind::Lit(_) | ExprKind::Var(_) | ExprKind::Const(_) | ExprKind::PathConst(..) => {}
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => visit_expr_blocks(a, f),
        ExprKind::Binary(_, a, b) => {
            visit_expr_blocks(a, f);
            visit_expr_blocks(b, f);
        }
        ExprKind::Method { recv, args, .. } => {
            visit_expr_blocks(recv, f);
            args.iter().for_each(|a| visit_expr_blocks(a, f));
        }
        ExprKind::Call(c) | ExprKind::Field(c, _) => c.args.iter().for_each(|a| visit_expr_blocks(a, f)),
        ExprKind::If { cond, then, els } => {
            visit_expr_blocks(cond, f);
            visit_blocks(then, f);
            visit_blocks(els, f);
        }
        ExprKind::Match { scrutinee, arms } => {
            visit_expr_blocks(scrutinee, f);
            for a in arms {
                if let Some(g) = &a.guard {
                    visit_expr_blocks(g, f);
                }
                visit_expr_blocks(&a.body, f);
            }
        }
        ExprKind::Block(b) | ExprKind::Loop { body: b, .. } => visit_blocks(b, f),
        ExprKind::Func { args, .. } => args.iter().for_each(|a| visit_expr_blocks(a, f)),
    }
}

/// Calls `f` on every expression in `stmts` and `tail` (parents before children), nested
/// blocks and nested functions included.
pub fn visit_exprs<'a>(stmts: &'a [Stmt], tail: Option<&'a Tail>, f: &mut dyn FnMut(&'a Expr)) {
    for s in stmts {
        visit_stmt_exprs(s, f);
    }
    if let Some(t) = tail {
        t.exprs().into_iter().for_each(|e| visit_expr(e, f));
    }
}

fn visit_block_exprs<'a>(b: &'a Block, f: &mut dyn FnMut(&'a Expr)) {
    visit_exprs(&b.stmts, b.tail.as_ref(), f);
}

fn visit_stmt_exprs<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Expr)) {
    match s {
        Stmt::Const(c) => visit_expr(&c.value, f),
        Stmt::Fn(func) => visit_block_exprs(&func.body, f),
        Stmt::Let { init, .. } => init.iter().for_each(|e| visit_expr(e, f)),
        Stmt::LetTuple { call, .. } => call.args.iter().for_each(|e| visit_expr(e, f)),
        Stmt::LetStruct { init, .. } | Stmt::AssignStruct { init, .. } => {
            init.exprs().into_iter().for_each(|e| visit_expr(e, f))
        }
        Stmt::Assign { value, .. } | Stmt::Expr(value, _) => visit_expr(value, f),
        Stmt::If { cond, then, els } => {
            visit_expr(cond, f);
            visit_block_exprs(then, f);
            els.iter().for_each(|e| visit_block_exprs(e, f));
        }
        Stmt::While { cond, body, .. } => {
            visit_expr(cond, f);
            visit_block_exprs(body, f);
        }
        Stmt::For { range, body, .. } => {
            visit_expr(&range.start, f);
            visit_expr(&range.end, f);
            range.step.iter().for_each(|e| visit_expr(e, f));
            visit_block_exprs(body, f);
        }
        Stmt::Loop { body, .. } => visit_block_exprs(body, f),
        Stmt::Break { value, .. } => value.iter().for_each(|e| visit_expr(e, f)),
        Stmt::Continue { .. } => {}
        Stmt::Return(t) => t.exprs().into_iter().for_each(|e| visit_expr(e, f)),
    }
}

/// Calls `f` on `e` and every expression inside it.
pub fn visit_expr<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Lit(_) | ExprKind::Var(_) | ExprKind::Const(_) | ExprKind::PathConst(..) => {}
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => visit_expr(a, f),
        ExprKind::Binary(_, a, b) => {
            visit_expr(a, f);
            visit_expr(b, f);
        }
        ExprKind::Method { recv, args, .. } => {
            visit_expr(recv, f);
            args.iter().for_each(|a| visit_expr(a, f));
        }
        ExprKind::Call(c) | ExprKind::Field(c, _) => c.args.iter().for_each(|a| visit_expr(a, f)),
        ExprKind::If { cond, then, els } => {
            visit_expr(cond, f);
            visit_block_exprs(then, f);
            visit_block_exprs(els, f);
        }
        ExprKind::Match { scrutinee, arms } => {
            visit_expr(scrutinee, f);
            for a in arms {
                a.guard.iter().for_each(|g| visit_expr(g, f));
                visit_expr(&a.body, f);
            }
        }
        ExprKind::Block(b) | ExprKind::Loop { body: b, .. } => visit_block_exprs(b, f),
        ExprKind::Func { args, .. } => args.iter().for_each(|a| visit_expr(a, f)),
    }
}
