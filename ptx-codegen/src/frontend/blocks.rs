//! Blocks and their statements: `let`, `let (a, b)`, expression statements, items and macros.

use proc_macro2::Span;

use super::builtins::gpu_path;
use super::context::{FnChecker, LocalKind};
use super::diagnostics::{TypeUse, conversion_hint};
use super::infer::VarKind;
use super::syntax;
use crate::ir::{Block, Stmt, Type};

impl FnChecker<'_> {
    pub(super) fn block(&mut self, b: &syn::Block) -> (Block, Type) {
        // A block's `fn` and `const` items are visible in the whole block (and in each
        // other), so they are checked first.
        let items = self.block_items(b);
        self.scopes.push(Vec::new());
        let mut out = Block::default();
        let mut diverges = false;
        let n = b.stmts.len();
        for (i, stmt) in b.stmts.iter().enumerate() {
            match stmt {
                syn::Stmt::Local(l) => {
                    if let Some(s) = self.let_stmt(l) {
                        if let Stmt::Let { init: Some(e), .. } | Stmt::LetTuple { init: e, .. } = &s {
                            diverges |= self.prog.infer.shallow(e.ty) == Type::Never;
                        }
                        out.stmts.push(s);
                    }
                }
                syn::Stmt::Item(item) => self.item_stmt(item),
                syn::Stmt::Expr(e, None) if i + 1 == n => {
                    out.tail = Some(Box::new(self.expr(e)));
                }
                syn::Stmt::Expr(e, semi) => {
                    let x = self.expr(e);
                    let t = self.prog.infer.shallow(x.ty);
                    diverges |= t == Type::Never;
                    if semi.is_none() && self.prog.infer.unify(t, Type::Unit).is_err() {
                        let found = self.prog.infer.describe(t);
                        self.error(e, format!("expected `()`, found `{found}`: a value in the middle of a block is discarded; end the statement with `;` or use the value"));
                    }
                    out.stmts.push(Stmt::Expr(x));
                }
                syn::Stmt::Macro(m) if self.host_only_print(&m.mac) => {}
                syn::Stmt::Macro(m) => self.macro_error(&m.mac),
            }
        }
        self.scopes.pop();
        if items {
            self.item_scopes.pop();
        }
        let ty = match &out.tail {
            Some(t) => t.ty,
            None if diverges => Type::Never,
            None => Type::Unit,
        };
        (out, ty)
    }

    fn let_stmt(&mut self, l: &syn::Local) -> Option<Stmt> {
        if let Some(li) = l.init.as_ref().filter(|li| li.diverge.is_none()) {
            if let Some(s) = self.array_let(l, &li.expr) {
                return s;
            }
        }
        let (pat, annotation) = match &l.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        if let (syn::Pat::Tuple(tp), None) = (pat, annotation) {
            return self.let_tuple(tp, l);
        }
        let declared = match annotation {
            Some(syn::Type::Infer(_)) | None => None,
            Some(t) if self.prog.kernel && is_dim3(t) => Some(Type::Dim3),
            Some(t) if self.prog.kernel && super::mma::fragment_type(t).is_some() => {
                match super::mma::fragment_type(t)? {
                    Ok(f) => Some(Type::Fragment(f)),
                    Err(message) => {
                        self.error(t, message);
                        return None;
                    }
                }
            }
            Some(t) => Some(Type::Scalar(self.scalar_type(t, TypeUse::Let)?)),
        };
        let ty = declared.unwrap_or_else(|| self.prog.infer.fresh(VarKind::Any));
        let mut init = None;
        if let Some(li) = &l.init {
            if let Some((else_tok, _)) = &li.diverge {
                self.error(
                    else_tok,
                    format!(
                        "`let … else` is not supported in {}: patterns here cannot fail, so drop the `else`",
                        self.subject()
                    ),
                );
            }
            let e = self.expr(&li.expr);
            if self.prog.infer.unify(ty, e.ty).is_err() {
                let (want, found) = (self.prog.infer.describe(ty), self.prog.infer.describe(e.ty));
                let hint = conversion_hint(&li.expr, &found, &want);
                self.error(&li.expr, format!("mismatched types: expected `{want}`, found `{found}`{hint}"));
            }
            init = Some(e);
        }
        let Some((name, mutable, span)) = self.binding(pat, "`let` binding") else {
            for (name, span) in syntax::pattern_names(pat) {
                self.declare(name, Type::Error, false, span);
            }
            return None;
        };
        let kind = if init.is_none() && !mutable { LocalKind::Deferred } else { LocalKind::Let };
        let local = self.declare_as(name, ty, mutable, kind, span);
        Some(Stmt::Let { local, init })
    }

    /// `let (a, _, c) = tuple;`
    fn let_tuple(&mut self, tp: &syn::PatTuple, l: &syn::Local) -> Option<Stmt> {
        let Some(li) = &l.init else {
            self.error(tp, "a tuple pattern needs a value: `let (a, b) = …;`");
            return None;
        };
        let init = self.expr(&li.expr);
        let names: Vec<Option<(String, bool, Span)>> = tp
            .elems
            .iter()
            .map(|p| match p {
                syn::Pat::Wild(_) => None,
                p => self.binding(p, "tuple pattern"),
            })
            .collect();
        let elems = match self.prog.infer.tuple_elems(init.ty) {
            Some(e) if e.len() == names.len() => e,
            Some(e) => {
                self.error(tp, format!("this pattern has {} elements but the tuple has {}", names.len(), e.len()));
                vec![Type::Error; names.len()]
            }
            None => {
                if self.prog.infer.shallow(init.ty) != Type::Error {
                    let found = self.prog.infer.describe(init.ty);
                    self.error(&li.expr, format!("a tuple pattern needs a tuple, found `{found}`"));
                }
                vec![Type::Error; names.len()]
            }
        };
        let locals = names
            .into_iter()
            .zip(elems)
            .map(|(n, ty)| n.map(|(name, mutable, span)| self.declare(name, ty, mutable, span)))
            .collect();
        Some(Stmt::LetTuple { locals, init })
    }

    fn item_stmt(&mut self, item: &syn::Item) {
        let what = match item {
            // Checked when the block is entered.
            syn::Item::Fn(_) | syn::Item::Const(_) => return,
            syn::Item::Static(_) => format!("`static` items are not supported in {}: use a `const`", self.subject()),
            syn::Item::Use(_) => {
                format!(
                    "`use` inside {} is not supported: refer to the scalar types and methods directly",
                    self.subject()
                )
            }
            _ => format!("items cannot be declared inside {}", self.subject()),
        };
        self.error(item, what);
    }

    /// `print!`, `println!`, `eprint!` and `eprintln!` in a kernel: they print in the
    /// simulator (`name::simulate`), whose copy of the body keeps them, and compile to
    /// nothing on the GPU.
    pub(super) fn host_only_print(&self, mac: &syn::Macro) -> bool {
        let name = mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        self.prog.kernel && matches!(name.as_str(), "print" | "println" | "eprint" | "eprintln")
    }

    pub(super) fn macro_error(&mut self, mac: &syn::Macro) {
        let name = mac.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let panics = matches!(
            name.as_str(),
            "panic" | "assert" | "assert_eq" | "assert_ne" | "unreachable" | "todo" | "unimplemented"
        );
        let msg = match (self.prog.kernel, panics) {
            (false, _) => format!(
                "macros such as `{name}!` cannot run on the GPU: a vectorized function computes one value from scalars, with no I/O, allocation or formatting"
            ),
            (true, true) => format!(
                "`{name}!` cannot run on the GPU: {} stops a thread with an error only where Rust would panic by itself (an index out of bounds, a division by zero); to refuse an input, `return` early or write a flag into a `&mut` slice",
                self.subject()
            ),
            (true, false) => format!(
                "macros such as `{name}!` cannot run on the GPU: {} has no I/O, allocation or formatting (`print!` and `println!` print in the simulator, and compile to nothing on the GPU)",
                self.subject()
            ),
        };
        self.error(mac, msg);
    }
}

/// `gpu::Dim3` (or `Dim3`, `gpu_runtime::gpu::Dim3`): what `gpu::thread_idx()` and its
/// siblings return.
fn is_dim3(t: &syn::Type) -> bool {
    match syntax::bare_type(t) {
        syn::Type::Path(p) if p.qself.is_none() && p.path.segments.iter().all(|s| s.arguments.is_none()) => {
            p.path.is_ident("Dim3") || matches!(gpu_path(&p.path).as_deref(), Some([name]) if name == "Dim3")
        }
        _ => false,
    }
}
