//! Items: the program's functions, a block's nested `fn`s and `const`s, and calls that recurse.

use super::const_eval;
use super::context::SpanRange;
use super::context::{ConstDef, FnChecker, ItemScope, LocalKind, ProgramCx};
use super::diagnostics::{TypeUse, conversion_hint};
use super::signature::fn_sig;
use super::syntax;
use crate::ir::{Block, FnId, LocalId, Param, RetType, Type};

impl ProgramCx {
    /// Checks function `id` in a fresh function context that sees `item_scopes`: a
    /// top-level function its module scope, a nested one the items of the blocks around it.
    pub(super) fn check_fn(
        &mut self,
        id: FnId,
        item: &syn::ItemFn,
        item_scopes: Vec<ItemScope>,
        outer_locals: Vec<String>,
    ) {
        let mut cx = FnChecker::new(self, Some(id), item_scopes, outer_locals);
        let checked = cx.function(item);
        let f = cx.finish_function(checked, item);
        self.functions[id.0 as usize] = f;
    }

    /// Reports every cycle of calls between the program's functions.
    pub(super) fn check_recursion(&mut self) {
        let n = self.sigs.len();
        let name = |cx: &Self, f: FnId| cx.sigs[f.0 as usize].as_ref().map_or("?".to_string(), |s| s.name.clone());
        let mut reported = std::collections::HashSet::new();
        for start in 0..n {
            // Depth-first search for a path from `start` back to itself.
            let mut stack: Vec<(FnId, Vec<(FnId, SpanRange)>)> = vec![(FnId(start as u32), Vec::new())];
            let mut seen = vec![false; n];
            while let Some((f, path)) = stack.pop() {
                for (from, to, span) in self.calls.clone() {
                    if from != f {
                        continue;
                    }
                    let mut p = path.clone();
                    p.push((to, span));
                    if to.0 as usize == start {
                        let mut members: Vec<u32> = p.iter().map(|(f, _)| f.0).collect();
                        members.sort_unstable();
                        if reported.insert(members) {
                            let chain: Vec<String> = std::iter::once(FnId(start as u32))
                                .chain(p.iter().map(|(f, _)| *f))
                                .map(|f| format!("`{}`", name(self, f)))
                                .collect();
                            let msg = format!(
                                "recursion is not supported on the GPU: {} (a kernel has no call stack to grow); rewrite it as a loop",
                                chain.join(" calls ")
                            );
                            self.error_at(p[0].1, msg);
                        }
                    } else if !seen[to.0 as usize] {
                        seen[to.0 as usize] = true;
                        stack.push((to, p));
                    }
                }
            }
        }
    }
}

impl FnChecker<'_> {
    fn function(&mut self, item: &syn::ItemFn) -> Option<(Vec<Param>, RetType, Block)> {
        let kernel = self.is_kernel_entry();
        let (params, ret) = if kernel {
            // A kernel returns nothing (its lowering returns an empty struct).
            (self.kernel_signature(&item.sig), Some(RetType::Tuple(Vec::new())))
        } else {
            self.signature(&item.sig)
        };
        self.ret = match kernel {
            true => Some(Type::Unit),
            false => ret.as_ref().map(|r| self.prog.ret_type(r)),
        };
        // Every named parameter is in scope, also one whose type was rejected (as an error
        // type), so that the body's uses of it report nothing more.
        let bindings = self
            .locals
            .iter()
            .enumerate()
            .filter(|(_, l)| l.kind == LocalKind::Param && l.name != "_")
            .map(|(i, l)| (l.name.clone(), LocalId(i as u32)))
            .collect();
        self.scopes.push(bindings);
        let (body, body_ty) = self.block(&item.block);
        self.scopes.pop();
        let ret = ret?;
        let want = self.ret.expect("set above");
        // A kernel's return type is reported by its signature.
        let reported = kernel && matches!(item.sig.output, syn::ReturnType::Type(..));
        if !reported && self.prog.infer.unify(body_ty, want).is_err() {
            let found = self.prog.infer.describe(body_ty);
            let ret_name = ret.rust_name();
            let at = match item.block.stmts.last() {
                Some(syn::Stmt::Expr(e, None)) => SpanRange::of(e),
                _ => item.block.brace_token.span.close().into(),
            };
            let msg = if kernel {
                format!(
                    "a kernel returns nothing, but its body evaluates to `{found}`: end the last statement with `;` and write results into a `&mut [T]` parameter"
                )
            } else if body_ty == Type::Unit {
                format!(
                    "this function returns `{ret_name}` but its body ends without a value: end it with an expression of type `{ret_name}` (no `;`) or `return` one"
                )
            } else {
                format!("mismatched types: this function returns `{ret_name}` but its body evaluates to `{found}`")
            };
            self.error_at(at, msg);
        }
        Some((params, ret, body))
    }

    /// Declares and checks a block's nested `fn`s and `const`s; returns whether it pushed
    /// an item scope.
    pub(super) fn block_items(&mut self, b: &syn::Block) -> bool {
        let (mut fns, mut consts, mut statics) = (Vec::new(), Vec::new(), Vec::new());
        for s in &b.stmts {
            match s {
                syn::Stmt::Item(syn::Item::Fn(f)) => fns.push(f),
                syn::Stmt::Item(syn::Item::Const(c)) => consts.push(c),
                // A `static` is reported (see `item_stmt`); its name is bound quietly.
                syn::Stmt::Item(syn::Item::Static(c)) => statics.push(c),
                _ => {}
            }
        }
        if fns.is_empty() && consts.is_empty() && statics.is_empty() {
            return false;
        }
        let mut scope = ItemScope::default();
        for f in &fns {
            let id = FnId(self.prog.functions.len() as u32);
            self.prog.functions.push(None);
            let structs = self.item_scopes.iter().flat_map(|s| s.structs.iter().cloned()).collect();
            self.prog.sigs.push(fn_sig(f, structs));
            scope.fns.push((syntax::name(&f.sig.ident), id));
        }
        let first_const = self.prog.consts.len();
        for c in &consts {
            scope.consts.push((syntax::name(&c.ident), self.prog.consts.len()));
            self.prog.consts.push(ConstDef { value: None });
        }
        for st in &statics {
            scope.consts.push((syntax::name(&st.ident), self.prog.consts.len()));
            self.prog.consts.push(ConstDef { value: None });
        }
        self.item_scopes.push(scope);
        // A constant may name one declared after it: check them in the order their values
        // need (a cycle is an error, never a silently missing value).
        let (order, cycles) = const_order(&consts);
        for i in order {
            self.const_item(first_const + i, consts[i]);
        }
        for (i, through) in cycles {
            let names: Vec<String> = through.iter().map(|&k| format!("`{}`", consts[k].ident)).collect();
            self.error(
                &consts[i].ident,
                format!(
                    "the value of `{}` depends on itself (through {}): a constant's value cannot refer to itself",
                    consts[i].ident,
                    names.join(", ")
                ),
            );
        }
        // The block's own variables are not in scope yet (items are checked first), but a
        // nested function that names one deserves the same explanation.
        let block_vars: Vec<String> = b
            .stmts
            .iter()
            .filter_map(|s| match s {
                syn::Stmt::Local(l) => Some(syntax::pattern_names(&l.pat).into_iter().map(|(n, _)| n)),
                _ => None,
            })
            .flatten()
            .collect();
        let outer: Vec<String> = (self.outer_locals.iter().cloned())
            .chain(block_vars)
            .chain(self.scopes.iter().flatten().map(|(n, _)| n.clone()))
            .collect();
        for (k, f) in fns.iter().enumerate() {
            let id = self.item_scopes.last().expect("pushed above").fns[k].1;
            self.prog.check_fn(id, f, self.item_scopes.clone(), outer.clone());
        }
        true
    }

    /// `const NAME: T = value;`: checked where it is declared, with no local in scope (a
    /// constant cannot use variables), and inlined where it is used.
    fn const_item(&mut self, index: usize, c: &syn::ItemConst) {
        if !c.generics.params.is_empty() {
            self.error(&c.generics, "a generic `const` is not supported");
        }
        let Some(ty) = self.scalar_type(&c.ty, TypeUse::Let) else { return };
        let value = self.const_context().expr(&c.expr);
        if self.prog.infer.unify(Type::Scalar(ty), value.ty).is_err() {
            let found = self.prog.infer.describe(value.ty);
            let hint = conversion_hint(&c.expr, &found, ty.rust_name());
            self.error(&c.expr, format!("mismatched types: `{}` is a `{ty}`, found `{found}`{hint}", c.ident));
            return;
        }
        // Integer constants are computed here, as rustc computes them: an overflow is an
        // error where the constant is defined, used or not. (Uses inline the expression;
        // sizes compute it again where they need the number.)
        if ty.is_int() {
            if let Err(const_eval::Failure::Overflow(at, msg)) = self.int_value(&value) {
                self.error_at(at, format!("evaluation of `{}` failed: {msg}", c.ident));
                return;
            }
        }
        self.prog.consts[index] = ConstDef { value: Some(value) };
    }

    /// A fresh context for a `const` item's value: the items in scope, but none of the
    /// function's variables, loops or result type.
    pub(super) fn const_context(&mut self) -> FnChecker<'_> {
        FnChecker::new(&mut *self.prog, self.current, self.item_scopes.clone(), self.outer_locals.clone())
    }
}

/// An order in which a block's `const`s can be checked, each after the ones its value
/// names, and the ones in a cycle (each with the constants of its cycle), left out.
fn const_order(consts: &[&syn::ItemConst]) -> (Vec<usize>, Vec<(usize, Vec<usize>)>) {
    use syn::visit::Visit;
    /// The block's constants a value names (single-identifier paths).
    struct Names<'a> {
        consts: &'a [&'a syn::ItemConst],
        found: Vec<usize>,
    }
    impl<'ast> Visit<'ast> for Names<'_> {
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if let Some(ident) = p.path.get_ident() {
                if let Some(k) = self.consts.iter().position(|c| c.ident == *ident) {
                    if !self.found.contains(&k) {
                        self.found.push(k);
                    }
                }
            }
            syn::visit::visit_expr_path(self, p);
        }
    }
    let deps: Vec<Vec<usize>> = consts
        .iter()
        .map(|c| {
            let mut names = Names { consts, found: Vec::new() };
            names.visit_expr(&c.expr);
            names.found
        })
        .collect();
    // Depth-first, in declaration order, so constants without dependencies keep their
    // order. `state`: 0 unvisited, 1 on the current path, 2 done.
    fn visit(k: usize, deps: &[Vec<usize>], state: &mut [u8], order: &mut Vec<usize>, path: &mut Vec<usize>) -> bool {
        match state[k] {
            2 => return true,
            1 => return false,
            _ => {}
        }
        state[k] = 1;
        path.push(k);
        let mut ok = true;
        for &d in &deps[k] {
            ok &= visit(d, deps, state, order, path);
        }
        path.pop();
        state[k] = 2;
        if ok {
            order.push(k);
        }
        ok
    }
    let mut state = vec![0u8; consts.len()];
    let mut order = Vec::new();
    for k in 0..consts.len() {
        visit(k, &deps, &mut state, &mut order, &mut Vec::new());
    }
    // What is not in the order is in a cycle, or depends on one.
    let cycles = (0..consts.len())
        .filter(|k| !order.contains(k))
        .map(|k| (k, deps[k].iter().copied().filter(|d| !order.contains(d)).collect()))
        .collect();
    (order, cycles)
}
