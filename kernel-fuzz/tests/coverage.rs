//! The generator covers the kernel language: over the host corpus's seeds, every scalar
//! type, operator, cast, method, statement and pattern form appears, and the interpreter
//! sees every fault (those of overflow checks in its checked mode). Top-level helpers occur in a share
//! of the programs, are called (by the function, by later helpers, by nested functions) and fault. A change that stops the generator from producing something fails
//! here rather than silently shrinking what the differential test checks. Over the corpus
//! with the half and complex types, each of those types appears everywhere a type can, with
//! every operator, method, conversion and constructor the generator has for it, and values
//! that matter (NaN, infinities, zeros of both signs) reach their operations.

use std::collections::BTreeSet;

use kernel_fuzz::ast::*;
use kernel_fuzz::corpus::{GPU_STRUCT_SEEDS, HOST_SEEDS, HOST_STRUCT_SEEDS, HOST_TYPES_SEEDS};
use kernel_fuzz::inputs::inputs;
use kernel_fuzz::methods::METHODS;
use kernel_fuzz::{Config, Fault, Overflow, Stop, Ty, Value, program, run_traced};

/// What the corpus contains, as names.
#[derive(Default)]
struct Seen {
    seen: BTreeSet<String>,
    /// The statement before was `let x = <bare literal>;`.
    untyped_let: bool,
}

impl Seen {
    fn add(&mut self, what: impl Into<String>) {
        self.seen.insert(what.into());
    }

    fn block(&mut self, b: &Block, fn_body: bool) {
        let mut diverges = false;
        for s in &b.stmts {
            self.stmt(s);
            diverges |= matches!(s, Stmt::Return(_) | Stmt::Break { .. } | Stmt::Continue { .. });
        }
        match &b.tail {
            Some(Tail::Scalar(e)) => self.expr(e),
            Some(Tail::Tuple(es)) => {
                self.add(format!("tuple of {}", es.len()));
                es.iter().for_each(|e| self.expr(e));
            }
            Some(Tail::Struct(init)) => {
                self.add("struct result");
                self.struct_init(init);
            }
            None if diverges && !fn_body => self.add("a branch that diverges"),
            None => {}
        }
    }

    fn struct_init(&mut self, init: &StructInit) {
        match init {
            StructInit::Literal(l) => {
                self.add("struct literal");
                for (_, f) in &l.fields {
                    match f {
                        FieldInit::Scalar(_) => self.add("struct literal scalar field"),
                        FieldInit::Array(_) => self.add("struct literal array field"),
                        FieldInit::Struct(_) => self.add("struct literal struct field"),
                    }
                }
                l.exprs().into_iter().for_each(|e| self.expr(e));
            }
            StructInit::Copy { from, .. } => {
                self.add(if from.contains('.') { "struct copied from a field" } else { "struct copied" })
            }
            StructInit::Call(c) => {
                self.add("struct from a call");
                if !c.structs.is_empty() {
                    self.add("call with a struct argument");
                }
                c.args.iter().for_each(|a| self.expr(a));
            }
        }
    }

    fn func(&mut self, f: &FnItem) {
        for p in &f.struct_params {
            self.add(if p.mutable { "mut struct parameter" } else { "struct parameter" });
        }
        if matches!(f.ret, Ret::Struct(_)) {
            self.add("function returning a struct");
        }
        for p in &f.params {
            self.add(format!("parameter {}", p.ty.name()));
            if p.mutable {
                self.add("mut parameter");
            }
            if p.raw {
                self.add("raw parameter");
            }
        }
        for t in f.ret.scalars() {
            self.add(format!("result {}", t.name()));
        }
        self.block(&f.body, true);
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Const(c) => {
                self.add(format!("const {}", c.ty.name()));
                if matches!(c.value.kind, ExprKind::Binary(..)) {
                    self.add("const from a const");
                }
                self.expr(&c.value);
            }
            Stmt::Fn(f) => {
                self.add(if matches!(f.ret, Ret::Tuple(_)) { "nested fn returning a tuple" } else { "nested fn" });
                self.func(f);
            }
            Stmt::Let { annotated: true, init: Some(Expr { kind: ExprKind::Var(_), .. }), .. } if self.untyped_let => {
                self.add("let without a type, typed by a later use");
                self.untyped_let = false;
            }
            Stmt::Let { annotated, mutable, init, ty, .. } => {
                self.untyped_let = !annotated && matches!(init, Some(Expr { kind: ExprKind::Lit(l), .. }) if l.bare);
                self.add(format!("let {}", ty.name()));
                self.add(if *annotated { "let with a type" } else { "let without a type" });
                if *mutable {
                    self.add("let mut");
                }
                match init {
                    Some(e) => self.expr(e),
                    None => self.add("deferred initialisation"),
                }
            }
            Stmt::LetStruct { mutable, init, .. } => {
                self.add(if *mutable { "let mut struct" } else { "let struct" });
                self.struct_init(init);
            }
            Stmt::AssignStruct { name, init, .. } => {
                self.add(if name.contains('.') { "struct field assigned whole" } else { "struct assigned" });
                self.struct_init(init);
            }
            Stmt::LetTuple { names, call } => {
                self.add("let (a, b) = f(..)");
                if names.iter().any(Option::is_none) {
                    self.add("let (_, b)");
                }
                call.args.iter().for_each(|a| self.expr(a));
            }
            Stmt::Assign { op, value, name } => {
                match op {
                    None => self.add("assignment"),
                    Some(op) => {
                        self.add(format!("compound {}=", op.symbol()));
                        self.add(format!("compound {}= of {}", op.symbol(), Self::class(value.ty)));
                    }
                }
                if name.contains('[') {
                    self.add("array element of a struct assigned");
                } else if name.contains('.') {
                    self.add("struct field assigned");
                }
                self.expr(value);
            }
            Stmt::Expr(e, let_underscore) => {
                self.add(if *let_underscore { "let _ = expression" } else { "expression statement" });
                self.expr(e);
            }
            Stmt::If { cond, then, els } => {
                self.add(if els.is_some() { "if-else statement" } else { "if statement" });
                self.expr(cond);
                self.block(then, false);
                if let Some(e) = els {
                    self.block(e, false);
                }
            }
            Stmt::While { label, cond, body } => {
                self.add("while");
                if label.is_some() {
                    self.add("labelled loop");
                }
                self.expr(cond);
                self.block(body, false);
            }
            Stmt::For { range, body, .. } => {
                self.add(format!("for over {}", range.ty.name()));
                self.add(format!(
                    "for over {}{}{}",
                    if range.inclusive { "a..=b" } else { "a..b" },
                    if range.rev { " rev" } else { "" },
                    if range.step.is_some() { " step_by" } else { "" }
                ));
                self.expr(&range.start);
                self.expr(&range.end);
                if let Some(s) = &range.step {
                    self.expr(s);
                }
                self.block(body, false);
            }
            Stmt::Loop { body, .. } => {
                self.add("loop statement");
                self.block(body, false);
            }
            Stmt::Break { label, value } => {
                self.add(match (label, value) {
                    (None, None) => "break",
                    (Some(_), None) => "break 'label",
                    (None, Some(_)) => "break value",
                    (Some(_), Some(_)) => "break 'label value",
                });
                if let Some(v) = value {
                    self.expr(v);
                }
            }
            Stmt::Continue { label } => self.add(if label.is_some() { "continue 'label" } else { "continue" }),
            Stmt::Return(t) => {
                self.add("return");
                match t {
                    Tail::Struct(init) => self.struct_init(init),
                    _ => t.exprs().into_iter().for_each(|e| self.expr(e)),
                }
            }
        }
    }

    fn class(t: Ty) -> &'static str {
        if t == Ty::Bool {
            "bool"
        } else if t.is_half() {
            "half"
        } else if t.is_complex() {
            "complex"
        } else if t.is_float() {
            "float"
        } else if t.is_signed() {
            "signed"
        } else {
            "unsigned"
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Lit(l) => {
                self.add(format!("literal {}", l.value.ty().name()));
                if l.bare {
                    self.add(format!("bare literal {}", Self::class(l.value.ty())));
                }
            }
            ExprKind::Var(name) => {
                self.add("variable");
                if name.contains('[') {
                    self.add("array element of a struct read");
                } else if name.matches('.').count() > 1 {
                    self.add("field of a struct field read");
                } else if name.contains('.') {
                    self.add("struct field read");
                }
            }
            ExprKind::Const(_) => self.add("const use"),
            ExprKind::PathConst(p, _) => {
                self.add("std constant");
                if p.contains("consts::") {
                    self.add("std::f*::consts");
                }
            }
            ExprKind::Unary(op, a) => {
                self.add(format!("{op:?} {}", Self::class(e.ty)));
                self.expr(a);
            }
            ExprKind::Binary(op, a, b) => {
                self.add(format!("{} on {}", op.symbol(), Self::class(a.ty)));
                if a.ty != b.ty && !op.is_shift() {
                    self.add(format!("{} on {} and {}", op.symbol(), a.ty.name(), b.ty.name()));
                }
                if a.ty.is_half() || a.ty.is_complex() {
                    self.add(format!("{} on {}", op.symbol(), a.ty.name()));
                }
                if op.is_shift() {
                    self.add(format!("shift by {}", b.ty.name()));
                }
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Cast(a) => {
                self.add(format!("{} as {}", a.ty.name(), e.ty.name()));
                self.expr(a);
            }
            ExprKind::Method { method, recv, args, path } => {
                self.add(format!("method {} on {}", method.info().name, recv.ty.name()));
                self.add(format!("{method:?}"));
                if *path {
                    self.add("method in path form");
                }
                self.expr(recv);
                args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::Call(c) => {
                self.add("call");
                if !c.structs.is_empty() {
                    self.add("call with a struct argument");
                }
                c.args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::Field(c, _) => {
                self.add("tuple field of a call");
                c.args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::If { cond, then, els } => {
                self.add("if expression");
                if els.stmts.is_empty()
                    && matches!(&els.tail, Some(Tail::Scalar(x)) if matches!(x.kind, ExprKind::If { .. }))
                {
                    self.add("else if");
                }
                self.expr(cond);
                self.block(then, false);
                self.block(els, false);
            }
            ExprKind::Match { scrutinee, arms } => {
                self.add(format!("match on {}", Self::class(scrutinee.ty)));
                self.expr(scrutinee);
                for a in arms {
                    self.pat(&a.pat);
                    if let Some(g) = &a.guard {
                        self.add("match guard");
                        self.expr(g);
                    }
                    self.expr(&a.body);
                }
            }
            ExprKind::Block(b) => {
                self.add("block expression");
                self.block(b, false);
            }
            ExprKind::Loop { label, body } => {
                self.add("loop with a value");
                if label.is_some() {
                    self.add("labelled loop");
                }
                self.block(body, false);
            }
            ExprKind::Func { func, args, spelling } => {
                let from = args.first().map_or("nothing", |a| a.ty.name());
                self.add(format!("{func:?} of {from} to {}", e.ty.name()));
                self.add(format!("{func:?} spelled {spelling}"));
                args.iter().for_each(|a| self.expr(a));
            }
        }
    }

    fn pat(&mut self, p: &Pat) {
        match p {
            Pat::Wild => self.add("pattern _"),
            Pat::Lit(..) => self.add("pattern literal"),
            Pat::PathConst(path, _) if !path.contains("::") => self.add("pattern local constant"),
            Pat::PathConst(..) => self.add("pattern constant"),
            Pat::Range { lo, hi, inclusive } => {
                if lo.iter().chain(hi).any(|b| b.name.as_ref().is_some_and(|n| !n.contains("::"))) {
                    self.add("range pattern bounded by a local constant");
                }
                if lo.iter().chain(hi).any(|b| b.name.as_ref().is_some_and(|n| n.contains("::"))) {
                    self.add("range pattern bounded by T::MIN or T::MAX");
                }
                self.add(match (lo.is_some(), hi.is_some(), inclusive) {
                    (true, true, true) => "pattern a..=b",
                    (true, true, false) => "pattern a..b",
                    (true, false, _) => "pattern a..",
                    (false, true, true) => "pattern ..=b",
                    (false, true, false) => "pattern ..b",
                    (false, false, _) => "pattern ..",
                });
            }
            Pat::Or(ps) => {
                self.add("pattern |");
                ps.iter().for_each(|q| self.pat(q));
            }
            Pat::Bind(_, None) => self.add("pattern binding"),
            Pat::Bind(_, Some(sub)) => {
                self.add("pattern n @ sub");
                self.pat(sub);
            }
        }
    }
}

/// How the corpus uses top-level helper functions: programs with helpers, whose function
/// calls one, with a helper calling an earlier one, with a nested function calling one, and
/// that fault inside a helper on some input.
#[derive(Default, Debug)]
struct HelperStats {
    with_helpers: usize,
    helpers: usize,
    called: usize,
    chained: usize,
    from_nested: usize,
    faulting: usize,
}

/// The names of the functions called in `b` (nested functions' bodies included).
fn called(b: &Block) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    visit_exprs(&b.stmts, b.tail.as_ref(), &mut |e| {
        if let ExprKind::Call(c) | ExprKind::Field(c, _) = &e.kind {
            out.insert(c.func.clone());
        }
    });
    visit_blocks(b, &mut |blk| {
        for s in &blk.stmts {
            if let Stmt::LetTuple { call, .. } = s {
                out.insert(call.func.clone());
            }
        }
    });
    out
}

impl HelperStats {
    fn add(&mut self, p: &Program) {
        if p.helpers.is_empty() {
            return;
        }
        self.with_helpers += 1;
        self.helpers += p.helpers.len();
        let is_helper = |n: &String| p.helpers.iter().any(|h| &h.name == n);
        self.called += called(&p.func.body).iter().any(is_helper) as usize;
        self.chained += p.helpers.iter().any(|h| called(&h.body).iter().any(is_helper)) as usize;
        let mut nested = false;
        visit_blocks(&p.func.body, &mut |b| {
            for s in &b.stmts {
                if let Stmt::Fn(f) = s {
                    nested |= called(&f.body).iter().any(is_helper);
                }
            }
        });
        self.from_nested += nested as usize;
    }

    fn check(&self, n: usize) {
        println!("{n} programs: {self:?}");
        let share = |k: usize| k as f64 / n as f64;
        assert!((0.15..0.40).contains(&share(self.with_helpers)), "helpers in too few or too many programs: {self:?}");
        assert!(share(self.called) > 0.10, "the functions seldom call their helpers: {self:?}");
        assert!(self.chained > 20 && self.from_nested > 5, "helpers seldom call helpers: {self:?}");
        assert!(self.faulting > 20, "faults seldom arise in helpers: {self:?}");
    }
}

/// Constructs the corpus must contain, one per line.
const CONSTRUCTS: &str = "
Neg signed
Neg float
Not signed
Not unsigned
Not bool
bare literal signed
bare literal unsigned
bare literal float
mut parameter
let with a type
let without a type
let mut
assignment
expression statement
let _ = expression
tuple of 6
if statement
if-else statement
if expression
else if
match on signed
match on unsigned
match on bool
match guard
pattern _
pattern literal
pattern constant
pattern a..=b
pattern a..b
pattern a..
pattern ..=b
pattern ..b
pattern |
pattern binding
pattern n @ sub
while
loop statement
loop with a value
labelled loop
block expression
break
break 'label
break value
break 'label value
continue
continue 'label
return
a branch that diverges
nested fn
nested fn returning a tuple
call
tuple field of a call
let (a, b) = f(..)
let (_, b)
const from a const
const use
std constant
std::f*::consts
method in path form
variable
tuple of 1
tuple of 2
tuple of 3
compound +=
compound /=
compound %=
compound <<=
compound >>=
compound &=
deferred initialisation
raw parameter
range pattern bounded by a local constant
range pattern bounded by T::MIN or T::MAX
let without a type, typed by a later use
pattern local constant
";

#[test]
fn the_corpus_covers_the_language() {
    let mut seen = Seen::default();
    let mut faults = BTreeSet::new();
    let mut helpers = HelperStats::default();
    for seed in HOST_SEEDS {
        let p = program(seed, &Config::HOST);
        seen.func(&p.func);
        for h in &p.helpers {
            seen.func(h);
        }
        helpers.add(&p);
        let params: Vec<Ty> = p.func.params.iter().map(|q| q.ty).collect();
        let mut helper_fault = false;
        for args in inputs(seed, &params, 16) {
            for overflow in [Overflow::Wrap, Overflow::Check] {
                let (r, at) = run_traced(&p, &args, overflow);
                if let Err(Stop::Fault(f)) = r {
                    faults.insert(format!("{f:?}"));
                    helper_fault |= at.is_some_and(|name| p.helpers.iter().any(|h| h.name == name));
                }
            }
        }
        helpers.faulting += helper_fault as usize;
    }
    helpers.check((HOST_SEEDS.end - HOST_SEEDS.start) as usize);
    let mut want: Vec<String> = Vec::new();
    for t in Ty::ALL {
        let n = t.name();
        want.extend([format!("parameter {n}"), format!("result {n}"), format!("let {n}"), format!("const {n}")]);
        want.push(format!("literal {n}"));
        for u in Ty::ALL {
            // `as bool` is no cast, and `bool as f32` is not Rust.
            if u != Ty::Bool && !(t == Ty::Bool && u.is_float()) {
                want.push(format!("{n} as {}", u.name()));
            }
        }
        if t.is_int() {
            want.push(format!("for over {n}"));
            want.push(format!("shift by {n}"));
        }
    }
    // The primitive types' methods (the half and complex types' are the other test's).
    for m in METHODS.iter().filter(|m| Ty::ALL.iter().any(|t| m.recv.accepts(*t))) {
        want.push(format!("{:?}", m.method));
        for t in Ty::ALL.into_iter().filter(|t| m.recv.accepts(*t)) {
            want.push(format!("method {} on {}", m.name, t.name()));
        }
    }
    for class in ["signed", "unsigned"] {
        for op in ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">="] {
            want.push(format!("{op} on {class}"));
        }
    }
    for op in ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">="] {
        want.push(format!("{op} on float"));
    }
    for op in ["&", "|", "^", "&&", "||", "==", "!=", "<", ">"] {
        want.push(format!("{op} on bool"));
    }
    for range in ["a..b", "a..=b"] {
        for rev in ["", " rev"] {
            for step in ["", " step_by"] {
                want.push(format!("for over {range}{rev}{step}"));
            }
        }
    }
    want.extend(CONSTRUCTS.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from));
    let missing: Vec<&String> = want.iter().filter(|w| !seen.seen.contains(*w)).collect();
    assert!(missing.is_empty(), "the corpus of {} functions never has: {missing:?}", HOST_SEEDS.end - HOST_SEEDS.start);
    let missing_faults: Vec<String> =
        Fault::ALL.iter().map(|f| format!("{f:?}")).filter(|f| !faults.contains(f)).collect();
    assert!(missing_faults.is_empty(), "the corpus never faults with {missing_faults:?}");
}

/// What the corpus with the half and complex types must contain besides the primitive
/// types' constructs: the literals' spellings, conversions and constructors.
const NEW_TYPE_CONSTRUCTS: &str = "
Neg half
Neg complex
FromF32 spelled 0
FromF32 spelled 1
ToF32 spelled 0
ToF32 spelled 1
ToF64 spelled 0
ToF64 spelled 1
New spelled 0
New spelled 1
New spelled 2
New spelled 3
New spelled 4
FromPart spelled 0
FromPart spelled 1
compound += of half
compound %= of half
compound += of complex
compound /= of complex
";

/// Which special values `v` is or holds as a part: a NaN, an infinity, `-0`.
fn specials(v: Value) -> Vec<&'static str> {
    let floats: Vec<f64> = match v {
        Value::C32(re, im) => vec![re as f64, im as f64],
        Value::C64(re, im) => vec![re, im],
        v => v.half_f64().or(v.as_f64()).into_iter().collect(),
    };
    let mut out = Vec::new();
    if floats.iter().any(|x| x.is_nan()) {
        out.push("NaN");
    }
    if floats.iter().any(|x| x.is_infinite()) {
        out.push("infinite");
    }
    if floats.iter().any(|x| *x == 0.0 && x.is_sign_negative()) {
        out.push("-0");
    }
    out
}

/// What the generator's programs of `seeds` with `cfg` contain, and the interpreter's
/// results over their inputs: per type, whether a NaN, an infinity, `-0` (`±0` parts)
/// came out of some function.
fn survey(seeds: std::ops::Range<u64>, cfg: &Config, run_them: bool) -> (Seen, BTreeSet<String>) {
    let mut seen = Seen::default();
    let mut results = BTreeSet::new();
    for seed in seeds {
        let p = program(seed, cfg);
        seen.func(&p.func);
        for h in &p.helpers {
            seen.func(h);
        }
        if !run_them {
            continue;
        }
        let params: Vec<Ty> = p.func.params.iter().map(|q| q.ty).collect();
        for args in inputs(seed, &params, 16) {
            if let (Ok(vs), _) = run_traced(&p, &args, Overflow::Wrap) {
                for v in vs {
                    let t = v.ty().name();
                    for what in specials(v) {
                        results.insert(format!("{what} {t}"));
                    }
                    results.insert(format!("computed {t}"));
                }
            }
        }
    }
    (seen, results)
}

#[test]
fn the_corpus_with_new_types_covers_them() {
    let (seen, results) = survey(HOST_TYPES_SEEDS, &Config::HOST.with_new_types(), true);
    let mut want: Vec<String> = Vec::new();
    for t in Ty::HALVES.into_iter().chain(Ty::COMPLEX) {
        let n = t.name();
        want.extend([format!("parameter {n}"), format!("result {n}"), format!("let {n}"), format!("const {n}")]);
        // Results of the function that the interpreter computed, special ones among them.
        want.extend(["NaN", "infinite", "-0", "computed"].map(|what| format!("{what} {n}")));
    }
    for m in METHODS.iter().filter(|m| !Ty::ALL.iter().any(|t| m.recv.accepts(*t))) {
        want.push(format!("{:?}", m.method));
        for t in Ty::EVERY.into_iter().filter(|t| m.recv.accepts(*t)) {
            want.push(format!("method {} on {}", m.name, t.name()));
        }
    }
    for t in Ty::HALVES {
        let n = t.name();
        for op in ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">="] {
            want.push(format!("{op} on {n}"));
        }
        want.push(format!("FromF32 of f32 to {n}"));
        for small in ["u8", "i8"] {
            want.push(format!("FromSmall of {small} to {n}"));
        }
        want.push(format!("ToF32 of {n} to f32"));
        want.push(format!("ToF64 of {n} to f64"));
        for other in Ty::HALVES {
            // One half type to another (or to itself) goes through `to_f32`.
            want.push(format!("FromF32 of f32 to {}", other.name()));
        }
    }
    for t in Ty::COMPLEX {
        let (n, p) = (t.name(), t.part().unwrap().name());
        for op in ["+", "-", "*", "/"] {
            want.push(format!("{op} on {n}"));
            want.push(format!("{op} on {n} and {p}"));
            want.push(format!("{op} on {p} and {n}"));
        }
        for op in ["==", "!="] {
            want.push(format!("{op} on {n}"));
        }
        want.push(format!("New of {p} to {n}"));
        want.push(format!("FromPart of {p} to {n}"));
        want.push(format!("Re of {n} to {p}"));
        want.push(format!("Im of {n} to {p}"));
    }
    want.extend(NEW_TYPE_CONSTRUCTS.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from));
    let missing: Vec<&String> = want.iter().filter(|w| !seen.seen.contains(*w) && !results.contains(*w)).collect();
    assert!(
        missing.is_empty(),
        "the corpus of {} functions with the new types never has: {missing:?}",
        HOST_TYPES_SEEDS.end - HOST_TYPES_SEEDS.start
    );
    // `from_f64` is only where the interpreter is the reference: never in that corpus, and
    // in the configuration that allows it.
    assert!(!seen.seen.iter().any(|s| s.starts_with("FromF64")), "from_f64 in a corpus rustc compiles");
    let (with_f64, _) = survey(0..1000, &Config::HOST.with_new_types().with_half_from_f64(), false);
    for t in Ty::HALVES {
        let want = format!("FromF64 of f64 to {}", t.name());
        assert!(with_f64.seen.contains(&want), "with from_f64 allowed, 1000 programs never have {want}");
    }
    for spelling in ["FromF64 spelled 0", "FromF64 spelled 1"] {
        assert!(with_f64.seen.contains(spelling), "with from_f64 allowed, 1000 programs never have {spelling}");
    }
    // Without the flags the generator draws none of it.
    let (old, _) = survey(0..300, &Config::HOST, false);
    let new: Vec<&String> = old
        .seen
        .iter()
        .filter(|s| ["f16", "bf16", "Complex", "half", "complex", "Func", "From", "ToF"].iter().any(|w| s.contains(w)))
        .collect();
    assert!(new.is_empty(), "Config::HOST draws {new:?}");
}

/// Struct constructs: every way of making, reading, writing and passing a struct appears in
/// the corpus with structs, and without the flag the generator draws none of it.
#[test]
fn the_corpus_with_structs_covers_them() {
    let (seen, _) = survey(HOST_STRUCT_SEEDS, &Config::HOST.with_structs(), false);
    let want = [
        "let struct",
        "let mut struct",
        "struct literal",
        "struct literal scalar field",
        "struct literal array field",
        "struct literal struct field",
        "struct copied",
        "struct copied from a field",
        "struct from a call",
        "struct assigned",
        "struct field assigned whole",
        "struct field assigned",
        "array element of a struct assigned",
        "struct field read",
        "array element of a struct read",
        "field of a struct field read",
        "struct parameter",
        "mut struct parameter",
        "function returning a struct",
        "struct result",
        "call with a struct argument",
    ];
    let missing: Vec<&&str> = want.iter().filter(|w| !seen.seen.contains(**w)).collect();
    assert!(missing.is_empty(), "the corpus with structs never has: {missing:?}");
    // Every program of the corpora has structs, of every type among their fields (the GPU
    // corpus's with the half and complex types).
    let mut field_types = BTreeSet::new();
    let corpora = [
        (HOST_STRUCT_SEEDS, Config::HOST.with_structs()),
        (GPU_STRUCT_SEEDS, Config::GPU.with_new_types().with_structs()),
    ];
    for (seed, cfg) in corpora.iter().flat_map(|(seeds, cfg)| seeds.clone().map(move |s| (s, cfg))) {
        let p = program(seed, cfg);
        assert!(!p.structs.is_empty(), "seed {seed} has no struct");
        for d in &p.structs {
            for (_, f) in &d.fields {
                if let FieldTy::Scalar(t) | FieldTy::Array(t, _) = f {
                    field_types.insert(t.name());
                }
            }
        }
    }
    for t in Ty::EVERY {
        assert!(field_types.contains(t.name()), "no struct field of type {}", t.name());
    }
    let (old, _) = survey(0..300, &Config::HOST, false);
    let drawn: Vec<&String> = old.seen.iter().filter(|s| s.contains("struct")).collect();
    assert!(drawn.is_empty(), "Config::HOST draws {drawn:?}");
}
