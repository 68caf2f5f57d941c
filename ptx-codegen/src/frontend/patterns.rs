//! Patterns: the single-name bindings of parameters, `let` and `for`, and `match` with its arms.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use super::context::Require;
use super::context::SpanRange;
use super::context::{FnChecker, LocalKind};
use super::infer::VarKind;
use super::syntax;
use crate::ir::{BinaryOp, Block, Expr, ExprKind, LocalId, LogicalOp, Stmt, Type};
use crate::ty::ScalarType;

impl FnChecker<'_> {
    /// A binding pattern: `x`, `mut x` or `_`. Returns (name, mutable, span).
    pub(super) fn binding(&mut self, pat: &syn::Pat, what: &str) -> Option<(String, bool, Span)> {
        match pat {
            syn::Pat::Ident(pi) => {
                if let Some(r) = &pi.by_ref {
                    self.error(r, format!("a {what} cannot be bound by reference: write `{}`", pi.ident));
                    return None;
                }
                if let Some((at, _)) = &pi.subpat {
                    self.error(at, format!("`@` patterns are not supported in a {what}"));
                    return None;
                }
                Some((syntax::name(&pi.ident), pi.mutability.is_some(), pi.ident.span()))
            }
            syn::Pat::Wild(w) => Some(("_".to_string(), false, w.span())),
            syn::Pat::Paren(p) => self.binding(&p.pat, what),
            syn::Pat::Tuple(_) | syn::Pat::TupleStruct(_) | syn::Pat::Struct(_) | syn::Pat::Slice(_) => {
                self.error(
                    pat,
                    format!("destructuring is not supported in a {what}: {subject} works on scalars, so bind a single name (`x`)", subject = self.subject()),
                );
                None
            }
            _ => {
                self.error(
                    pat,
                    format!("this pattern is not supported in a {what}: bind a single name (`x` or `mut x`)"),
                );
                None
            }
        }
    }

    /// `match` on an integer or `bool`, as an `if` chain over the arms in order.
    pub(super) fn match_expr(&mut self, m: &syn::ExprMatch) -> Expr {
        let span = m.span();
        let scrutinee = self.expr(&m.expr);
        let st = scrutinee.ty;
        self.prog.require(st, Require::Matchable, SpanRange::of(&m.expr));
        if m.arms.is_empty() {
            self.error(m, "a `match` needs at least one arm");
            return self.error_expr(span);
        }
        // The scrutinee is evaluated once, into a local no name refers to.
        let value = self.new_local("match value".into(), st, false, LocalKind::Let, span);
        let mut result_ty = self.prog.infer.fresh(VarKind::Any);
        let mut arms: Vec<(Option<Expr>, Vec<Stmt>, Expr, bool)> = Vec::new();
        for arm in &m.arms {
            self.scopes.push(Vec::new());
            let mut binds = Vec::new();
            let cond = self.pattern(&arm.pat, value, st, &mut binds);
            let guard = arm.guard.as_ref().map(|(_, g)| {
                let e = self.expr(g);
                self.expect_bool(&e, g, "a match guard");
                e
            });
            let body = self.expr(&arm.body);
            if self.prog.infer.unify(result_ty, body.ty).is_err() {
                let (a, b) = (self.prog.infer.describe(result_ty), self.prog.infer.describe(body.ty));
                self.error(
                    &arm.body,
                    format!("`match` arms have different types: `{a}` and `{b}`; every arm must produce the same type"),
                );
                // Reported once: the match has no type the rest may disagree with.
                result_ty = Type::Error;
            }
            self.scopes.pop();
            let has_guard = guard.is_some();
            let bool_ty = Type::Scalar(ScalarType::Bool);
            let cond = match (cond, guard) {
                (None, None) => None,
                (Some(c), None) | (None, Some(c)) => Some(c),
                (Some(c), Some(g)) => {
                    let sp = g.span;
                    Some(self.mk(ExprKind::Logical(LogicalOp::And, Box::new(c), Box::new(g)), bool_ty, sp))
                }
            };
            arms.push((cond, binds, body, has_guard));
        }
        // From the last arm up. rustc checks on the host copy that the arms are
        // exhaustive, so the last arm without a guard needs no test.
        let mut chain: Option<Expr> = None;
        let last = arms.len() - 1;
        for (i, (cond, binds, body, has_guard)) in arms.into_iter().enumerate().rev() {
            let bspan = body.span;
            let then = Block { stmts: binds.clone(), tail: Some(Box::new(body)) };
            chain = Some(match cond {
                Some(c) if i < last || has_guard => {
                    let els = chain.unwrap_or_else(|| self.mk(ExprKind::Unreachable, Type::Never, bspan));
                    let cspan = c.span;
                    let test = self.mk(
                        ExprKind::Block(Block { stmts: binds, tail: Some(Box::new(c)) }),
                        Type::Scalar(ScalarType::Bool),
                        cspan,
                    );
                    let then = Block { stmts: Vec::new(), tail: then.tail };
                    self.mk(ExprKind::If { cond: Box::new(test), then, els: Some(Box::new(els)) }, result_ty, bspan)
                }
                _ => self.mk(ExprKind::Block(then), result_ty, bspan),
            });
        }
        let body = Block { stmts: vec![Stmt::Let { local: value, init: Some(scrutinee) }], tail: chain.map(Box::new) };
        self.mk(ExprKind::Block(body), result_ty, span)
    }

    /// The condition under which `pat` matches the local `value` (`None`: always), and the
    /// bindings it introduces (appended to `binds`, declared in the current scope).
    fn pattern(&mut self, pat: &syn::Pat, value: LocalId, st: Type, binds: &mut Vec<Stmt>) -> Option<Expr> {
        let span = pat.span();
        let bool_ty = Type::Scalar(ScalarType::Bool);
        let scrutinee = self.mk(ExprKind::Local(value), st, span);
        let compare = |cx: &mut Self, op: BinaryOp, bound: Expr| -> Expr {
            let s = cx.mk(ExprKind::Local(value), st, span);
            cx.mk(ExprKind::Binary(op, Box::new(s), Box::new(bound)), bool_ty, span)
        };
        match pat {
            syn::Pat::Wild(_) => None,
            syn::Pat::Paren(p) => self.pattern(&p.pat, value, st, binds),
            syn::Pat::Ident(pi)
                if pi.by_ref.is_none() && pi.mutability.is_none() && pi.subpat.is_none() && {
                    let name = syntax::name(&pi.ident);
                    self.lookup_const(&name).is_some() || looks_like_constant(&name)
                } =>
            {
                // As in Rust, a name that is a constant in scope is a constant pattern, not
                // a binding. One that looks like a constant but is none the function can see
                // (a module-level `const`) is refused rather than taken as a binding.
                let name = syntax::name(&pi.ident);
                if self.lookup_const(&name).is_none() {
                    self.error(
                        &pi.ident,
                        format!(
                            "`{name}` in a pattern: no constant `{name}` is in sight (outside the function only the scalar constants of its own module in the same file are), so this would bind a new variable; define the constant inside the function (`const {name}: i32 = …;`) or beside it, or give a binding a lowercase name"
                        ),
                    );
                    return None;
                }
                let path = syn::ExprPath { attrs: Vec::new(), qself: None, path: pi.ident.clone().into() };
                let c = self.path_expr(&path);
                self.unify_pattern(st, &c, pi);
                Some(compare(self, BinaryOp::Eq, c))
            }
            syn::Pat::Ident(pi) => {
                if pi.by_ref.is_some() {
                    self.error(pi, "`ref` bindings are not supported: bind by value (`x`)");
                }
                let local = self.declare(syntax::name(&pi.ident), st, pi.mutability.is_some(), pi.ident.span());
                binds.push(Stmt::Let { local, init: Some(scrutinee) });
                match &pi.subpat {
                    Some((_, sub)) => self.pattern(sub, value, st, binds),
                    None => None,
                }
            }
            syn::Pat::Lit(l) => {
                let lit = self.lit(&l.lit, false, SpanRange::of(l));
                self.unify_pattern(st, &lit, l);
                Some(compare(self, BinaryOp::Eq, lit))
            }
            syn::Pat::Path(p) => {
                let c = self.path_expr(p);
                self.unify_pattern(st, &c, p);
                Some(compare(self, BinaryOp::Eq, c))
            }
            syn::Pat::Range(r) => {
                let mut conds = Vec::new();
                if let Some(lo) = &r.start {
                    let lo_e = self.pattern_bound(lo);
                    self.unify_pattern(st, &lo_e, lo);
                    conds.push(compare(self, BinaryOp::Ge, lo_e));
                }
                if let Some(hi) = &r.end {
                    let hi_e = self.pattern_bound(hi);
                    self.unify_pattern(st, &hi_e, hi);
                    let op = if matches!(r.limits, syn::RangeLimits::Closed(_)) { BinaryOp::Le } else { BinaryOp::Lt };
                    conds.push(compare(self, op, hi_e));
                }
                self.prog.require(st, Require::Int("a range pattern"), SpanRange::of(r));
                conds
                    .into_iter()
                    .reduce(|a, b| self.mk(ExprKind::Logical(LogicalOp::And, Box::new(a), Box::new(b)), bool_ty, span))
            }
            syn::Pat::Or(o) => {
                let mut conds = Vec::new();
                let mut always = false;
                for case in &o.cases {
                    let before = binds.len();
                    let c = self.pattern(case, value, st, binds);
                    if binds.len() != before {
                        self.error(case, "bindings inside `|` patterns are not supported: bind the whole value instead (`x @ (1 | 2)` is not supported either); use a guard");
                    }
                    match c {
                        Some(c) => conds.push(c),
                        None => always = true,
                    }
                }
                if always {
                    return None;
                }
                conds
                    .into_iter()
                    .reduce(|a, b| self.mk(ExprKind::Logical(LogicalOp::Or, Box::new(a), Box::new(b)), bool_ty, span))
            }
            _ => {
                self.error(pat, format!("this pattern is not supported: a `match` in {} takes literals (`3`, `true`), ranges (`1..=9`), constants (`i32::MAX`), `|`, `_` and bindings (`n`, `n @ 1..=9`)", self.subject()));
                None
            }
        }
    }

    /// A range pattern's bound: a literal (possibly negative) or a constant path.
    fn pattern_bound(&mut self, e: &syn::Expr) -> Expr {
        match e {
            syn::Expr::Lit(_) | syn::Expr::Path(_) | syn::Expr::Unary(syn::ExprUnary { op: syn::UnOp::Neg(_), .. }) => {
                self.expr(e)
            }
            _ => self.unsupported(e, "a range pattern's bounds are literals or constants such as `i32::MAX`"),
        }
    }

    fn unify_pattern(&mut self, st: Type, e: &Expr, src: &dyn ToTokens) {
        if self.prog.infer.unify(st, e.ty).is_err() {
            let (want, found) = (self.prog.infer.describe(st), self.prog.infer.describe(e.ty));
            self.error(src, format!("mismatched types: this pattern is `{found}` but the value matched is `{want}`"));
        }
    }
}

/// Whether a name is spelled as Rust spells constants (`K`, `MAX_LEN`, `N2`).
fn looks_like_constant(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}
