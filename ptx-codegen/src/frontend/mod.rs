//! The frontend: a `syn::ItemFn` in, a typed [`ir::Function`] out, or every diagnostic the
//! function deserves, each at its own span.
//!
//! The checker follows rustc's rules for the scalar subset of Rust (literal inference,
//! operator typing, `as` casts), so a function it accepts means on the GPU what it means
//! on the CPU. Whatever the GPU cannot run gets an error that says what is supported.

mod blocks;
mod callees;
mod calls;
mod consts;
mod diagnostics;
mod exprs;
mod infer;
mod items;
mod operators;
mod patterns;
mod signature;
mod syntax;

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use crate::ir::{
    Block, Expr, ExprKind, FnId, ForRange, Function, Local, LocalId, LoopId, Param, Program, RetType, Stmt, Type,
};
use crate::ty::ScalarType;
pub use callees::{external_callees, path_key};
use diagnostics::{SpanRange, conversion_hint};
use infer::{InferTable, VarKind};
use items::{ConstDef, ItemScope};
use operators::cast_problem;
use signature::{FnSig, fn_sig};

/// A helper function the vectorized function calls, collected from the crate (a
/// `#[device]` function): its id, its item, and its own callees (as written in its body)
/// with their ids.
#[derive(Clone, Debug)]
pub struct HelperDef {
    pub id: String,
    pub item: syn::ItemFn,
    pub callees: Vec<(String, String)>,
}

/// Checks a function alone (no helpers from elsewhere in the crate).
pub fn check_function(item: &syn::ItemFn) -> Result<Program, syn::Error> {
    check_program(item, &[], &[])
}

/// Checks a vectorized function and the helpers it calls, and produces the program's
/// kernel IR or all its errors combined. `entry_callees` maps the paths the function calls
/// (as written, e.g. `"utils::smooth"`) to helper ids.
pub fn check_program(
    entry: &syn::ItemFn,
    entry_callees: &[(String, String)],
    helpers: &[HelperDef],
) -> Result<Program, syn::Error> {
    let mut cx = ProgramCx {
        functions: vec![None; helpers.len() + 1],
        sigs: vec![None; helpers.len() + 1],
        ..ProgramCx::default()
    };
    let ids: Vec<(String, FnId)> =
        helpers.iter().enumerate().map(|(i, h)| (h.id.clone(), FnId(i as u32 + 1))).collect();
    let scope_of = |callees: &[(String, String)]| ItemScope {
        fns: callees
            .iter()
            .filter_map(|(path, id)| ids.iter().find(|(i, _)| i == id).map(|(_, f)| (path.clone(), *f)))
            .collect(),
        consts: Vec::new(),
    };
    cx.sigs[0] = fn_sig(entry);
    for (i, h) in helpers.iter().enumerate() {
        cx.sigs[i + 1] = fn_sig(&h.item);
    }
    cx.check_fn(FnId(0), entry, vec![scope_of(entry_callees)], Vec::new());
    for (i, h) in helpers.iter().enumerate() {
        cx.check_fn(FnId(i as u32 + 1), &h.item, vec![scope_of(&h.callees)], Vec::new());
    }
    cx.check_recursion();
    cx.check_obligations();
    if let Some(e) = cx.combined_errors() {
        return Err(e);
    }
    let functions = std::mem::take(&mut cx.functions).into_iter().collect::<Option<Vec<_>>>();
    let tuples = std::mem::take(&mut cx.tuples);
    functions
        .map(|functions| Program { functions, tuples })
        .ok_or_else(|| syn::Error::new_spanned(&entry.sig.ident, "internal compiler error: a function was not checked"))
}

/// Checks a function whose calls of `external` paths (functions defined elsewhere, whose
/// definitions have not been fetched yet) are taken on trust: every other problem is
/// reported now, before the macro goes to fetch them.
pub fn precheck(entry: &syn::ItemFn, external: &[String]) -> Result<(), syn::Error> {
    // FnId(1) stands for every external function: no signature, so its calls check their
    // arguments and give an error type without a message.
    let mut cx = ProgramCx { functions: vec![None, None], sigs: vec![fn_sig(entry), None], ..ProgramCx::default() };
    let scope = ItemScope { fns: external.iter().map(|p| (p.clone(), FnId(1))).collect(), consts: Vec::new() };
    cx.check_fn(FnId(0), entry, vec![scope], Vec::new());
    cx.calls.retain(|&(_, to, _)| to != FnId(1));
    cx.check_recursion();
    cx.check_obligations();
    cx.combined_errors().map_or(Ok(()), Err)
}

/// What the scalar types of a signature are, without checking the body: the macro needs
/// them to generate the call wrapper even when the body has errors.
pub fn signature_types(sig: &syn::Signature) -> Result<(Vec<ScalarType>, RetType), syn::Error> {
    let mut cx = ProgramCx::default();
    let (params, ret) = FnChecker::new(&mut cx, None, Vec::new(), Vec::new()).signature(sig);
    match (cx.errors.is_empty(), ret) {
        (true, Some(ret)) => Ok((params.iter().map(|p| p.ty).collect(), ret)),
        _ => Err(cx.combined_errors().unwrap_or_else(|| syn::Error::new_spanned(&sig.ident, "invalid signature"))),
    }
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum LoopKind {
    Loop,
    While,
    For,
}

struct LoopFrame {
    id: LoopId,
    label: Option<String>,
    kind: LoopKind,
    /// The type of the `loop`'s value, given by its `break`s.
    value_ty: Type,
    has_break: bool,
}

/// A requirement on a type that may not be known until inference ends.
#[derive(Clone)]
enum Require {
    /// `+ - * / %`: an integer or float type.
    Numeric(&'static str),
    /// Unary `-`: a signed integer or a float.
    Negatable,
    /// `& | ^ !`: an integer or `bool`.
    IntOrBool(&'static str),
    /// Shift operands: an integer.
    Int(&'static str),
    /// An integer literal's value fits its type.
    Fits(i128),
    /// `as` between these types is allowed.
    CastTo(ScalarType),
    /// A comparison's operands: a scalar, not `()`.
    Comparable,
    /// A `match` scrutinee: an integer or `bool`.
    Matchable,
}

struct Obligation {
    ty: Type,
    req: Require,
    span: SpanRange,
}

struct LocalInfo {
    name: String,
    ty: Type,
    mutable: bool,
    is_param: bool,
    span: Span,
}

/// What the whole program's check shares: the diagnostics, the type inference and what it
/// must prove at the end, and the program's functions, constants and tuple types.
#[derive(Default)]
struct ProgramCx {
    errors: Vec<syn::Error>,
    infer: InferTable,
    obligations: Vec<Obligation>,
    /// The program's functions by [`FnId`], filled as they are checked.
    functions: Vec<Option<Function>>,
    sigs: Vec<Option<FnSig>>,
    consts: Vec<ConstDef>,
    /// Calls between the program's functions: (caller, callee, where).
    calls: Vec<(FnId, FnId, SpanRange)>,
    /// Loop ids are unique in the program, not just in a function.
    next_loop: u32,
    /// The program's tuple types, after inference ([`Program::tuples`]).
    tuples: Vec<Vec<ScalarType>>,
}

/// The check of one function body (or of one `const` item's value): its variables, scopes
/// and loops, over the program's shared state.
struct FnChecker<'p> {
    prog: &'p mut ProgramCx,
    locals: Vec<LocalInfo>,
    scopes: Vec<Vec<(String, LocalId)>>,
    loops: Vec<LoopFrame>,
    /// The current function's result type (a scalar or a tuple).
    ret: Option<Type>,
    generic_names: Vec<String>,
    /// The functions and constants visible here, innermost last.
    item_scopes: Vec<ItemScope>,
    /// The function whose calls these are (for the call graph).
    current: Option<FnId>,
    /// The variables of the functions around a nested one, for a better message when it
    /// uses one (Rust's nested functions cannot).
    outer_locals: Vec<String>,
}

impl ProgramCx {
    fn require(&mut self, ty: Type, req: Require, span: impl Into<SpanRange>) {
        let span = span.into();
        self.obligations.push(Obligation { ty, req, span });
    }

    /// Checks what inference had to leave open, now that it is over.
    fn check_obligations(&mut self) {
        for ob in std::mem::take(&mut self.obligations) {
            let t = self.infer.resolve(ob.ty);
            self.check_obligation(t, &ob.req, ob.span);
        }
    }
}

impl<'p> FnChecker<'p> {
    fn new(
        prog: &'p mut ProgramCx,
        current: Option<FnId>,
        item_scopes: Vec<ItemScope>,
        outer_locals: Vec<String>,
    ) -> FnChecker<'p> {
        FnChecker {
            prog,
            locals: Vec::new(),
            scopes: Vec::new(),
            loops: Vec::new(),
            ret: None,
            generic_names: Vec::new(),
            item_scopes,
            current,
            outer_locals,
        }
    }

    fn new_local(&mut self, name: String, ty: Type, mutable: bool, is_param: bool, span: Span) -> LocalId {
        self.locals.push(LocalInfo { name, ty, mutable, is_param, span });
        LocalId(self.locals.len() as u32 - 1)
    }

    fn declare(&mut self, name: String, ty: Type, mutable: bool, span: Span) -> LocalId {
        let id = self.new_local(name.clone(), ty, mutable, false, span);
        if name != "_" {
            self.scopes.last_mut().expect("a scope is open").push((name, id));
        }
        id
    }

    fn lookup(&self, name: &str) -> Option<LocalId> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == name).map(|(_, id)| *id)
    }

    /// A constant declared by a `const` item in scope.
    fn lookup_const(&self, name: &str) -> Option<usize> {
        self.item_scopes.iter().rev().flat_map(|s| s.consts.iter().rev()).find(|(n, _)| n == name).map(|(_, i)| *i)
    }

    /// A function in scope: a nested `fn`, or a helper called by this path.
    fn lookup_fn(&self, path: &str) -> Option<FnId> {
        self.item_scopes.iter().rev().flat_map(|s| s.fns.iter().rev()).find(|(n, _)| n == path).map(|(_, f)| *f)
    }

    fn push_loop(&mut self, label: Option<&syn::Label>, kind: LoopKind) -> LoopId {
        let id = LoopId(self.prog.next_loop);
        self.prog.next_loop += 1;
        let value_ty = if kind == LoopKind::Loop { self.prog.infer.fresh(VarKind::Any) } else { Type::Unit };
        self.loops.push(LoopFrame {
            id,
            label: label.map(|l| l.name.ident.to_string()),
            kind,
            value_ty,
            has_break: false,
        });
        id
    }

    fn loop_body(&mut self, body: &syn::Block) -> Block {
        let (b, ty) = self.block(body);
        if self.prog.infer.unify(ty, Type::Unit).is_err() {
            let found = self.prog.infer.describe(ty);
            self.error(body, format!("a loop body cannot produce a value (found `{found}`): end it with `;`, or use `break value` in a `loop`"));
        }
        b
    }

    fn while_expr(&mut self, w: &syn::ExprWhile) -> Expr {
        let span = w.span();
        let cond = match &*w.cond {
            syn::Expr::Let(l) => {
                self.error(
                    l,
                    "`while let` is not supported in a vectorized function: use `while` with a `bool` condition",
                );
                self.error_expr(l.span())
            }
            c => {
                let e = self.expr(c);
                self.expect_bool(&e, c, "the condition of `while`");
                e
            }
        };
        let id = self.push_loop(w.label.as_ref(), LoopKind::While);
        let body = self.loop_body(&w.body);
        self.loops.pop();
        self.mk(ExprKind::While { id, cond: Box::new(cond), body }, Type::Unit, span)
    }

    fn loop_expr(&mut self, l: &syn::ExprLoop) -> Expr {
        let span = l.span();
        let id = self.push_loop(l.label.as_ref(), LoopKind::Loop);
        let body = self.loop_body(&l.body);
        let frame = self.loops.pop().expect("pushed above");
        let ty = if frame.has_break { frame.value_ty } else { Type::Never };
        self.mk(ExprKind::Loop { id, body }, ty, span)
    }

    fn for_expr(&mut self, f: &syn::ExprForLoop) -> Expr {
        let span = f.span();
        let Some(iter) = self.range_iter(&f.expr) else {
            return self.error_expr(span);
        };
        let (start, end, inclusive, reverse, step) = iter;
        let elem_ty = match self.prog.infer.unify(start.ty, end.ty) {
            Ok(t) => t,
            Err(()) => {
                let (a, b) = (self.prog.infer.describe(start.ty), self.prog.infer.describe(end.ty));
                self.error(&f.expr, format!("mismatched types: the range runs from `{a}` to `{b}`; both ends must have the same integer type"));
                Type::Error
            }
        };
        self.prog.require(elem_ty, Require::Int("a `for` range"), SpanRange::of(&f.expr));
        self.scopes.push(Vec::new());
        let var = match self.binding(&f.pat, "`for` loop variable") {
            Some((name, mutable, vspan)) => self.declare(name, elem_ty, mutable, vspan),
            None => self.declare("_".into(), elem_ty, false, f.pat.span()),
        };
        let id = self.push_loop(f.label.as_ref(), LoopKind::For);
        let body = self.loop_body(&f.body);
        self.loops.pop();
        self.scopes.pop();
        let range =
            ForRange { var, start: Box::new(start), end: Box::new(end), inclusive, reverse, step: step.map(Box::new) };
        self.mk(ExprKind::For { id, range, body }, Type::Unit, span)
    }

    /// `a..b`, `a..=b`, optionally followed by `.rev()` and then `.step_by(k)`.
    #[allow(clippy::type_complexity)]
    fn range_iter(&mut self, e: &syn::Expr) -> Option<(Expr, Expr, bool, bool, Option<Expr>)> {
        const SUPPORTED: &str = "a `for` loop in a vectorized function iterates over an integer range: `a..b`, `a..=b`, optionally with `.rev()` and then `.step_by(k)`";
        match e {
            syn::Expr::Paren(p) => self.range_iter(&p.expr),
            syn::Expr::Group(g) => self.range_iter(&g.expr),
            syn::Expr::Range(r) => {
                let (Some(a), Some(b)) = (&r.start, &r.end) else {
                    self.error(r, format!("an open range cannot be iterated here: {SUPPORTED}"));
                    return None;
                };
                let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
                let (start, end) = (self.expr(a), self.expr(b));
                Some((start, end, inclusive, false, None))
            }
            syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => {
                let (s, e2, inc, rev, step) = self.range_iter(&m.receiver)?;
                if step.is_some() || rev {
                    self.error(&m.method, format!("`.rev()` must come right after the range: {SUPPORTED}"));
                    return None;
                }
                Some((s, e2, inc, true, None))
            }
            syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                let (s, e2, inc, rev, step) = self.range_iter(&m.receiver)?;
                if step.is_some() {
                    self.error(&m.method, format!("`.step_by` can be applied once: {SUPPORTED}"));
                    return None;
                }
                let k = self.expr(&m.args[0]);
                if self.prog.infer.unify(k.ty, Type::Scalar(ScalarType::Usize)).is_err() {
                    let found = self.prog.infer.describe(k.ty);
                    self.error(
                        &m.args[0],
                        format!("mismatched types: `step_by` takes a `usize`, found `{found}` (write `k as usize`)"),
                    );
                }
                Some((s, e2, inc, rev, Some(k)))
            }
            _ => {
                self.error(e, SUPPORTED);
                None
            }
        }
    }

    fn loop_target(&mut self, label: Option<&syn::Lifetime>, what: &str, at: &dyn ToTokens) -> Option<usize> {
        match label {
            Some(l) => {
                let name = l.ident.to_string();
                let found = self.loops.iter().rposition(|f| f.label.as_deref() == Some(&name));
                if found.is_none() {
                    self.error(l, format!("use of undeclared label `'{name}`"));
                }
                found
            }
            None => {
                if self.loops.is_empty() {
                    self.error(at, format!("`{what}` outside of a loop"));
                }
                self.loops.len().checked_sub(1)
            }
        }
    }

    fn break_expr(&mut self, b: &syn::ExprBreak) -> Expr {
        let span = b.span();
        let value = b.expr.as_ref().map(|v| self.expr(v));
        let Some(idx) = self.loop_target(b.label.as_ref(), "break", b) else {
            return self.mk(ExprKind::Block(Block::default()), Type::Never, span);
        };
        let (id, kind, vt) = {
            let f = &mut self.loops[idx];
            f.has_break = true;
            (f.id, f.kind, f.value_ty)
        };
        match (&value, kind) {
            (Some(v), LoopKind::Loop) => {
                if self.prog.infer.unify(vt, v.ty).is_err() {
                    let (want, found) = (self.prog.infer.describe(vt), self.prog.infer.describe(v.ty));
                    self.error(
                        b.expr.as_ref().unwrap(),
                        format!("mismatched types: this `loop` breaks with `{want}` elsewhere, found `{found}`"),
                    );
                }
            }
            (Some(_), _) => {
                self.error(b, "`break` with a value is only allowed in a `loop`, not in `while` or `for`");
            }
            (None, LoopKind::Loop) => {
                if self.prog.infer.unify(vt, Type::Unit).is_err() {
                    let want = self.prog.infer.describe(vt);
                    self.error(b, format!("this `loop` produces `{want}`: write `break <value>`"));
                }
            }
            (None, _) => {}
        }
        self.mk(ExprKind::Break { target: id, value: value.map(Box::new) }, Type::Never, span)
    }

    fn continue_expr(&mut self, c: &syn::ExprContinue) -> Expr {
        let span = c.span();
        let Some(idx) = self.loop_target(c.label.as_ref(), "continue", c) else {
            return self.mk(ExprKind::Block(Block::default()), Type::Never, span);
        };
        let target = self.loops[idx].id;
        self.mk(ExprKind::Continue { target }, Type::Never, span)
    }

    fn return_expr(&mut self, r: &syn::ExprReturn) -> Expr {
        let span = r.span();
        let value = r.expr.as_ref().map(|v| self.expr(v));
        if let Some(ret) = self.ret {
            let vt = value.as_ref().map_or(Type::Unit, |v| v.ty);
            if self.prog.infer.unify(vt, ret).is_err() {
                let found = self.prog.infer.describe(vt);
                let want = self.prog.infer.describe(ret);
                let msg = if value.is_none() {
                    format!("`return` needs a value: this function returns `{want}`")
                } else {
                    let hint = conversion_hint(r.expr.as_ref().unwrap(), &found, &want);
                    format!("mismatched types: this function returns `{want}`, found `{found}`{hint}")
                };
                self.error(r, msg);
            }
        }
        self.mk(ExprKind::Return(value.map(Box::new)), Type::Never, span)
    }

    /// Resolves the types of a checked function's locals and body.
    fn finish_function(mut self, f: Option<(Vec<Param>, RetType, Block)>, item: &syn::ItemFn) -> Option<Function> {
        let mut locals = Vec::with_capacity(self.locals.len());
        for l in std::mem::take(&mut self.locals) {
            let ty = self.prog.final_type(l.ty);
            match ty {
                Type::Scalar(_) | Type::Error | Type::Tuple(_) => {}
                Type::Infer(_) | Type::Never => {
                    // A variable that is never given a value of known type.
                    self.error_at(
                        l.span,
                        format!("type annotations needed: give `{}` a type, e.g. `let {}: f32 = …`", l.name, l.name),
                    );
                }
                Type::Unit => self.error_at(
                    l.span,
                    format!("`{}` holds `()`: a variable in a vectorized function must hold a scalar", l.name),
                ),
            }
            locals.push(Local { name: l.name, ty, mutable: l.mutable });
        }
        let (params, ret, mut body) = f?;
        if self.prog.errors.is_empty() {
            self.prog.resolve_block(&mut body);
        }
        Some(Function { name: item.sig.ident.to_string(), params, ret, locals, body, span: item.sig.ident.span() })
    }
}

impl ProgramCx {
    /// A type after inference, with tuples renumbered into the program's tuple table.
    fn final_type(&mut self, t: Type) -> Type {
        let t = self.infer.resolve(t);
        let Type::Tuple(_) = t else { return t };
        let elems = self.infer.tuple_elems(t).expect("a tuple");
        let mut scalars = Vec::with_capacity(elems.len());
        for e in elems {
            match self.infer.resolve(e) {
                Type::Scalar(s) => scalars.push(s),
                // Nested tuples, `()` or unknowns in a tuple: reported where they arise.
                _ => return Type::Error,
            }
        }
        let id = match self.tuples.iter().position(|p| *p == scalars) {
            Some(i) => i,
            None => {
                self.tuples.push(scalars);
                self.tuples.len() - 1
            }
        };
        Type::Tuple(id as u32)
    }

    fn check_obligation(&mut self, t: Type, req: &Require, span: SpanRange) {
        let Type::Scalar(s) = t else {
            match (t, req) {
                (Type::Unit, Require::Comparable | Require::Numeric(_)) => {
                    self.error_at(span, "`()` has no value to compute with")
                }
                (Type::Tuple(_), _) => {
                    let what = match req {
                        Require::Numeric(op) | Require::IntOrBool(op) => format!("`{op}`"),
                        Require::Negatable => "unary `-`".into(),
                        Require::Comparable => "a comparison".into(),
                        Require::CastTo(to) => format!("`as {to}`"),
                        Require::Matchable => "`match`".into(),
                        Require::Int(what) => what.to_string(),
                        Require::Fits(_) => return,
                    };
                    let shown = self.infer.describe(t);
                    self.error_at(
                        span,
                        format!(
                            "{what} does not apply to the tuple `{shown}`: apply it to its elements (`t.0`, `t.1`, …)"
                        ),
                    );
                }
                _ => {} // errors and unknowns are reported elsewhere
            }
            return;
        };
        let problem = match req {
            Require::Numeric(op) if !(s.is_int() || s.is_float()) => {
                Some(format!("cannot apply `{op}` to `{s}`: arithmetic needs an integer or float type"))
            }
            Require::Negatable if !(s.is_signed_int() || s.is_float()) => Some(if s.is_unsigned_int() {
                format!("cannot negate an unsigned `{s}`: use a signed type or `wrapping_neg`")
            } else {
                format!("cannot apply unary `-` to `{s}`")
            }),
            Require::IntOrBool(op) if s.is_float() => {
                Some(format!("cannot apply `{op}` to `{s}`: bitwise operators need an integer or `bool`"))
            }
            Require::Int(what) if !s.is_int() => Some(format!("{what} needs an integer type, found `{s}`")),
            // A negative literal of an unsigned type is reported by `Negatable`.
            Require::Fits(v) if *v < 0 && s.is_unsigned_int() => None,
            Require::Fits(v) => {
                let (lo, hi) = s.int_range().unwrap_or((i128::MIN, i128::MAX));
                (*v < lo || *v > hi)
                    .then(|| format!("literal out of range for `{s}`: `{v}` does not fit in {lo}..={hi}"))
            }
            Require::CastTo(to) => cast_problem(s, *to),
            Require::Matchable if s.is_float() => Some(format!(
                "`match` on `{s}` is not supported: match on integers or `bool`, or compare with `if`/`else if`"
            )),
            _ => None,
        };
        if let Some(p) = problem {
            self.error_at(span, p);
        }
    }

    fn resolve_block(&mut self, b: &mut Block) {
        for s in &mut b.stmts {
            match s {
                Stmt::Let { init: Some(e), .. } | Stmt::LetTuple { init: e, .. } | Stmt::Expr(e) => {
                    self.resolve_expr(e)
                }
                Stmt::Let { init: None, .. } => {}
            }
        }
        if let Some(t) = &mut b.tail {
            self.resolve_expr(t);
        }
    }

    fn resolve_expr(&mut self, e: &mut Expr) {
        e.ty = self.final_type(e.ty);
        if let Type::Infer(_) = e.ty {
            self.error_at(e.span, "type annotations needed for this expression");
        }
        match &mut e.kind {
            ExprKind::Lit(_) | ExprKind::Local(_) | ExprKind::Continue { .. } | ExprKind::Unreachable => {}
            ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::Assign(_, a) | ExprKind::CompoundAssign(_, _, a) => {
                self.resolve_expr(a)
            }
            ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => {
                self.resolve_expr(a);
                self.resolve_expr(b);
            }
            ExprKind::Block(b) | ExprKind::Loop { body: b, .. } => self.resolve_block(b),
            ExprKind::If { cond, then, els } => {
                self.resolve_expr(cond);
                self.resolve_block(then);
                if let Some(x) = els {
                    self.resolve_expr(x);
                }
            }
            ExprKind::While { cond, body, .. } => {
                self.resolve_expr(cond);
                self.resolve_block(body);
            }
            ExprKind::For { range, body, .. } => {
                self.resolve_expr(&mut range.start);
                self.resolve_expr(&mut range.end);
                if let Some(s) = &mut range.step {
                    self.resolve_expr(s);
                }
                self.resolve_block(body);
            }
            ExprKind::Break { value, .. } | ExprKind::Return(value) => {
                if let Some(v) = value {
                    self.resolve_expr(v);
                }
            }
            ExprKind::Call(_, args) | ExprKind::CallFn(_, args) | ExprKind::Tuple(args) => {
                for a in args {
                    self.resolve_expr(a);
                }
            }
            ExprKind::Field(a, _) => self.resolve_expr(a),
        }
    }
}

#[cfg(test)]
mod tests;
