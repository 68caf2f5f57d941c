//! Explicit kernels (`#[kernel]`, Numba's `@cuda.jit`): slice parameters, local and shared
//! arrays, indexing, and the GPU's built-ins (`gpu::thread_idx()`, barriers, warp
//! operations, atomics).

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;

use super::builtins::{gpu_path, shared_rank};
use super::const_eval;
use super::context::SpanRange;
use super::context::{ArrayDecl, BOOL, FnChecker, LocalKind, USIZE};
use super::diagnostics::{TypeUse, arity, conversion_hint};
use super::infer::VarKind;
use super::syntax;
use crate::ir::{ArrayKind, BinaryOp, Block, Expr, ExprKind, FnId, Literal, LocalId, Param, Stmt, Type};
use crate::ty::ScalarType;

/// What a constant expression may hold, as the messages say it.
macro_rules! constant_forms {
    () => {
        "integer literals and `const`s, combined with `+ - * / % << >> & | ^`, `as` casts and parentheses"
    };
}

/// What a shared array's size may be.
const SIZE_MESSAGE: &str = concat!(
    "a shared array's size is fixed when the kernel is compiled: a constant expression (",
    constant_forms!(),
    "; braced where it is not a single name or literal: `gpu::shared::<f32, { TPB * TPB }>()`); \
     for a size chosen at launch, use `gpu::dynamic_shared::<T>()` with `LaunchConfig::shared_bytes`"
);

/// What a local array's length may be.
const LEN_MESSAGE: &str = concat!(
    "an array length must be a constant expression (",
    constant_forms!(),
    "): `[0.0f32; 8]`, `[0.0f32; N / 4]`"
);

/// The scalar element type of `&[T]` / `&mut [T]`: `Some((T's syntax, mutable))`.
fn slice_type(ty: &syn::Type) -> Option<(&syn::Type, bool)> {
    match ty {
        syn::Type::Paren(p) => slice_type(&p.elem),
        syn::Type::Group(g) => slice_type(&g.elem),
        syn::Type::Reference(r) => match &*r.elem {
            syn::Type::Slice(s) => Some((&s.elem, r.mutability.is_some())),
            _ => None,
        },
        _ => None,
    }
}

impl FnChecker<'_> {
    /// Whether this check is of the kernel itself (not of a helper or a nested function).
    pub(super) fn is_kernel_entry(&self) -> bool {
        self.prog.kernel_entry && self.current == Some(FnId(0))
    }

    /// A kernel's parameters: scalars, `&[T]` and `&mut [T]`. The kernel returns nothing.
    pub(super) fn kernel_signature(&mut self, sig: &syn::Signature) -> Vec<Param> {
        if let Some(a) = &sig.asyncness {
            self.error(a, "a kernel cannot be `async`");
        }
        if let Some(u) = &sig.unsafety {
            self.error(u, "a kernel cannot be `unsafe fn`: its safety is checked (every index is bounds-checked); use an `unsafe` block around `get_unchecked`");
        }
        if let Some(abi) = &sig.abi {
            self.error(abi, "a kernel cannot declare an ABI (`extern`): remove it");
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            self.error(
                &sig.generics,
                "a kernel cannot be generic: use concrete types (`fn k(x: &[f32], out: &mut [f32])`)",
            );
        }
        if let Some(v) = &sig.variadic {
            self.error(v, "a kernel cannot be variadic");
        }
        if let syn::ReturnType::Type(_, ty) = &sig.output {
            self.error(ty, "a kernel returns nothing: write results into a `&mut [T]` parameter");
        }
        let mut params = Vec::new();
        for input in &sig.inputs {
            let pt = match input {
                syn::FnArg::Receiver(r) => {
                    self.error(
                        r,
                        "a kernel cannot take `self`: its parameters are slices (`&[T]`, `&mut [T]`) and scalars",
                    );
                    continue;
                }
                syn::FnArg::Typed(pt) => pt,
            };
            let Some((name, mutable, span)) = self.binding(&pt.pat, "parameter") else {
                for (name, span) in syntax::pattern_names(&pt.pat) {
                    self.new_local(name, Type::Error, false, LocalKind::Param, span);
                }
                continue;
            };
            if let Some((elem, slice_mut)) = slice_type(&pt.ty) {
                let Some(t) = self.scalar_type(elem, TypeUse::Param) else {
                    self.new_local(name, Type::Error, false, LocalKind::Param, span);
                    continue;
                };
                let id = self.prog.new_array(Type::Scalar(t), ArrayKind::Slice { mutable: slice_mut }, span);
                let local = self.new_local(name.clone(), Type::Array(id), mutable, LocalKind::Param, span);
                params.push(Param { name, ty: t, local, slice: Some(slice_mut) });
                continue;
            }
            let ty = match syntax::scalar_type(&pt.ty) {
                Ok(t) => Some(t),
                // A user struct by value: one parameter of its `#[repr(C)]` bytes, as
                // CUDA C++ passes a struct.
                Err(syntax::TypeProblem::Named(n)) if self.lookup_struct(&n).is_some() => self.lookup_struct(&n),
                Err(_) => {
                    self.error(&pt.ty, format!("a kernel parameter is a value (a scalar such as f32, i32, usize or bool, `f16`/`bf16`, `Complex<f32>`/`Complex<f64>`, or a `#[derive(GpuType)]` struct), a read-only slice `&[T]` or a written slice `&mut [T]` of one, not `{}`", syntax::render_tokens(pt.ty.to_token_stream())));
                    None
                }
            };
            let local =
                self.new_local(name.clone(), ty.map_or(Type::Error, Type::Scalar), mutable, LocalKind::Param, span);
            if let Some(ty) = ty {
                params.push(Param { name, ty, local, slice: None });
            }
        }
        params
    }

    /// The array a place expression names: a variable of array type.
    pub(super) fn array_local(&self, e: &syn::Expr) -> Option<(LocalId, u32)> {
        match e {
            syn::Expr::Paren(p) => self.array_local(&p.expr),
            syn::Expr::Group(g) => self.array_local(&g.expr),
            syn::Expr::Path(p) if p.qself.is_none() => {
                let id = self.lookup(&syntax::name(p.path.get_ident()?))?;
                match self.locals[id.0 as usize].ty {
                    Type::Array(a) => Some((id, a)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    pub(super) fn array_name(&self, local: LocalId) -> String {
        self.locals[local.0 as usize].name.clone()
    }

    /// Checks the index of an element of array `a`: a `usize`, or a tuple of one `usize`
    /// per dimension for a 2-D or 3-D shared array.
    pub(super) fn array_index(&mut self, a: u32, index: &syn::Expr, what: &str) -> Option<Vec<Expr>> {
        let rank = self.prog.array_rank(a);
        let elems: Vec<&syn::Expr> = match (rank, syntax::bare(index)) {
            (1, i) => vec![i],
            (_, syn::Expr::Tuple(t)) if t.elems.len() == rank => t.elems.iter().collect(),
            (2, _) => {
                self.error(
                    index,
                    format!("`{what}` is a 2-D shared array: index it with a pair, `{what}[(row, column)]`"),
                );
                return None;
            }
            _ => {
                self.error(
                    index,
                    format!("`{what}` is a 3-D shared array: index it with a triple, `{what}[(i, j, k)]`"),
                );
                return None;
            }
        };
        let mut out = Vec::new();
        let mut ok = true;
        for i in elems {
            let e = self.expr(i);
            if self.prog.infer.unify(e.ty, USIZE).is_err() {
                let found = self.prog.infer.describe(e.ty);
                let hint = conversion_hint(i, &found, "usize");
                let ty = self.prog.array_type_name(a);
                self.error(i, format!("the type `{ty}` cannot be indexed by `{found}`: an index is a `usize`{hint}"));
                ok = false;
            }
            out.push(e);
        }
        ok.then_some(out)
    }

    /// `a[i]` (reading).
    pub(super) fn index_expr(&mut self, ix: &syn::ExprIndex) -> Expr {
        let span = ix.span();
        if let Some(e) = self.struct_elem(ix) {
            return e;
        }
        let Some((local, a)) = self.array_local(&ix.expr) else {
            return self.unsupported_index(&ix.expr, span);
        };
        let name = self.array_name(local);
        let Some(index) = self.array_index(a, &ix.index, &name) else { return self.error_expr(span) };
        let ty = self.prog.arrays[a as usize].0;
        self.mk(ExprKind::Index { array: a, index, checked: true }, ty, span)
    }

    fn unsupported_index(&mut self, base: &syn::Expr, span: Span) -> Expr {
        if !self.prog.kernel {
            self.error(base, "indexing is not supported: a vectorized function sees one element of each argument at a time, as a scalar");
        } else {
            let e = self.expr(base);
            if self.prog.infer.shallow(e.ty) != Type::Error {
                let found = self.prog.infer.describe(e.ty);
                self.error(base, format!("cannot index into a value of type `{found}`: a kernel indexes its slice parameters, local arrays and shared arrays by name (`s[i]`)"));
            }
        }
        self.error_expr(span)
    }

    /// `a[i] = v` and `a[i] op= v` (`checked`), `*a.get_unchecked_mut(i) = v` and `op=`
    /// (not): `place` is the left side.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn assign_element(
        &mut self,
        base: &syn::Expr,
        index_src: &syn::Expr,
        checked: bool,
        place: &syn::Expr,
        op: Option<BinaryOp>,
        value: &syn::Expr,
        whole: &syn::Expr,
    ) -> Expr {
        let span = whole.span();
        let rhs = self.expr(value);
        let Some((local, a)) = self.array_local(base) else {
            return self.unsupported_index(base, span);
        };
        if !checked && self.unsafe_depth == 0 {
            self.error(place, "call to unsafe function `get_unchecked_mut` is unsafe and requires unsafe block: write `unsafe { *s.get_unchecked_mut(i) = v; }`, or index with `s[i]` (bounds-checked)");
        }
        let name = self.array_name(local);
        let index = self.array_index(a, index_src, &name);
        let elem = self.prog.arrays[a as usize].0;
        self.check_writable(local, a, whole);
        match op {
            None => {
                if self.prog.infer.unify(elem, rhs.ty).is_err() {
                    let (want, found) = (self.prog.infer.describe(elem), self.prog.infer.describe(rhs.ty));
                    let hint = conversion_hint(value, &found, &want);
                    self.error(value, format!("mismatched types: expected `{want}`, found `{found}`{hint}"));
                }
            }
            Some(op) if self.prog.infer.complex_part(elem).is_some() => {
                let Some(index) = index else { return self.error_expr(span) };
                return self.complex_assign_element(a, elem, index, checked, op, rhs, SpanRange::of(whole));
            }
            Some(op) => {
                let target = self.mk(ExprKind::Block(Default::default()), elem, place.span());
                self.check_operands(op, &target, &rhs, place, value, SpanRange::of(whole));
            }
        }
        let Some(index) = index else { return self.error_expr(span) };
        // The element type is known after inference (see `resolve`).
        let kind = ExprKind::AssignIndex { array: a, elem: ScalarType::Bool, index, checked, op, value: Box::new(rhs) };
        self.mk(kind, Type::Unit, span)
    }

    /// Reports a write of an element of `a` (the variable `local`) where `a` is read-only.
    pub(super) fn check_writable(&mut self, local: LocalId, a: u32, whole: &syn::Expr) {
        let name = self.array_name(local);
        let kind = &self.prog.arrays[a as usize].1;
        if let ArrayKind::Slice { mutable: false } = kind {
            self.error(whole, format!("cannot assign to `{name}[_]`, which is behind a `&` reference: make the parameter a written slice, `{name}: &mut [T]`"));
        } else if matches!(kind, ArrayKind::Local { .. }) && !self.locals[local.0 as usize].mutable {
            self.error(whole, format!("cannot assign to `{name}[_]`, as `{name}` is not declared as mutable: declare it with `let mut {name}`"));
        }
    }

    /// `a[i] op= v` on a complex element: num-complex's compound assignment, `a[i] = a[i] op
    /// v`, with the place first as Rust takes it for an overloaded operator (the index once,
    /// its bounds check, then `v`).
    #[allow(clippy::too_many_arguments)]
    fn complex_assign_element(
        &mut self,
        a: u32,
        elem: Type,
        index: Vec<Expr>,
        checked: bool,
        op: BinaryOp,
        rhs: Expr,
        range: SpanRange,
    ) -> Expr {
        let span = range.0;
        self.scopes.push(Vec::new());
        let mut stmts = Vec::new();
        let mut at = Vec::with_capacity(index.len());
        for (k, i) in index.into_iter().enumerate() {
            let local = self.declare(format!("__index{k}"), i.ty, false, span);
            stmts.push(Stmt::Let { local, init: Some(i) });
            at.push(self.mk(ExprKind::Local(local), USIZE, span));
        }
        let old = self.mk(ExprKind::Index { array: a, index: at.clone(), checked }, elem, span);
        let old_local = self.declare("__old".into(), elem, false, span);
        stmts.push(Stmt::Let { local: old_local, init: Some(old) });
        let rhs_ty = rhs.ty;
        let value_local = self.declare("__value".into(), rhs_ty, false, span);
        stmts.push(Stmt::Let { local: value_local, init: Some(rhs) });
        self.scopes.pop();
        let (old, value) =
            (self.mk(ExprKind::Local(old_local), elem, span), self.mk(ExprKind::Local(value_local), rhs_ty, span));
        let new = self.complex_binary(op, old, value, range);
        if self.prog.infer.unify(new.ty, elem).is_err() {
            return self.error_expr(span);
        }
        let store = ExprKind::AssignIndex {
            array: a,
            elem: ScalarType::Bool,
            index: at,
            checked,
            op: None,
            value: Box::new(new),
        };
        let tail = self.mk(store, Type::Unit, span);
        self.mk(ExprKind::Block(Block { stmts, tail: Some(Box::new(tail)) }), Type::Unit, span)
    }

    /// A method of an array: `a.len()`, `s.get_unchecked(i)`.
    pub(super) fn array_method(&mut self, m: &syn::ExprMethodCall, local: LocalId, a: u32) -> Expr {
        let span = m.span();
        let name = syntax::name(&m.method);
        let arr = self.array_name(local);
        let dims = match &self.prog.arrays[a as usize].1 {
            ArrayKind::Shared { dims } => Some(dims.clone()),
            _ => None,
        };
        let usize_lit = |cx: &mut Self, v: u64| cx.mk(ExprKind::Lit(Literal::Int(v.into())), USIZE, span);
        match (name.as_str(), m.args.len()) {
            // Every element, whatever the rank (Rust's `len` of `[[T; C]; R]` would be `R`;
            // Numba's `size` is the model here, as the simulator's `Shared2d::len`).
            ("len", 0) => self.mk(ExprKind::ArrayLen(a), USIZE, span),
            ("is_empty", 0) => {
                let len = self.mk(ExprKind::ArrayLen(a), USIZE, span);
                let zero = usize_lit(self, 0);
                self.mk(ExprKind::Binary(BinaryOp::Eq, Box::new(len), Box::new(zero)), BOOL, span)
            }
            ("shape", 0) if dims.as_ref().is_some_and(|d| d.len() > 1) => {
                let dims = dims.expect("checked");
                let elems: Vec<Expr> = dims.iter().map(|d| usize_lit(self, *d)).collect();
                let ty = self.prog.infer.tuple(vec![USIZE; dims.len()]);
                self.mk(ExprKind::Tuple(elems), ty, span)
            }
            ("rows" | "cols", 0) if dims.as_ref().is_some_and(|d| d.len() == 2) => {
                let dims = dims.expect("checked");
                usize_lit(self, if name == "rows" { dims[0] } else { dims[1] })
            }
            ("shape" | "rows" | "cols", _) => {
                let what = if name == "shape" { "a 2-D or 3-D" } else { "a 2-D" };
                self.error(&m.method, format!("`{name}()` is a method of {what} shared array; `{arr}` has `len()`"));
                self.error_expr(span)
            }
            ("slice", _) => {
                self.error(
                    m,
                    format!(
                        "a view is bound with `let`: `let part = {arr}.slice(start, end);`, then indexed as `part[i]`"
                    ),
                );
                self.error_expr(span)
            }
            ("get_unchecked" | "get_unchecked_mut", 1) => {
                let deref = std::mem::take(&mut self.under_deref);
                if self.unsafe_depth == 0 {
                    self.error(m, format!("call to unsafe function `{name}` is unsafe and requires unsafe block: write `unsafe {{ *s.{name}(i) }}`, or index with `s[i]` (bounds-checked)"));
                }
                let kind = self.prog.arrays[a as usize].1.clone();
                if name == "get_unchecked_mut" && matches!(kind, ArrayKind::Slice { mutable: false }) {
                    self.error(m, format!("cannot borrow `{arr}[_]` as mutable, as it is behind a `&` reference: use `get_unchecked`, or make the parameter `{arr}: &mut [T]`"));
                } else if name == "get_unchecked_mut"
                    && matches!(kind, ArrayKind::Local { .. })
                    && !self.locals[local.0 as usize].mutable
                {
                    self.error(m, format!("cannot borrow `{arr}` as mutable, as it is not declared as mutable: declare it with `let mut {arr}`"));
                }
                // Threads share a `&mut` slice or a shared array: a reference to one of
                // its elements is not a value the kernel can hold (the simulator reads it
                // atomically), only its element is.
                let shared = matches!(
                    kind,
                    ArrayKind::Slice { mutable: true }
                        | ArrayKind::Shared { .. }
                        | ArrayKind::DynamicShared
                        | ArrayKind::View { .. }
                );
                if shared && !deref {
                    self.error(m, format!("take the element itself, `*{arr}.{name}(i)`: a reference into a `&mut` slice or a shared array cannot be kept"));
                }
                let Some(index) = self.array_index(a, &m.args[0], &arr) else { return self.error_expr(span) };
                let ty = self.prog.arrays[a as usize].0;
                self.mk(ExprKind::Index { array: a, index, checked: false }, ty, span)
            }
            ("len" | "is_empty" | "get_unchecked" | "get_unchecked_mut", n) => {
                let want = usize::from(name.starts_with("get"));
                self.error(m, arity(&name, want, n));
                self.error_expr(span)
            }
            _ => {
                self.error(&m.method, format!("unknown method `{name}` on `{arr}`: a kernel's slices and arrays have `len()`, `is_empty()`, `get_unchecked(i)` and `get_unchecked_mut(i)` (in `unsafe`) and indexing (`{arr}[i]`); shared arrays also `slice(start, end)` (1-D), `shape()` (2-D and 3-D), `rows()` and `cols()` (2-D)"));
                self.error_expr(span)
            }
        }
    }

    /// `let a = [v; N]`, `let a = [x, y, z]`, `let t = gpu::shared::<T, N>()`, … Returns
    /// `None` when `init` is no array (an ordinary `let`).
    pub(super) fn array_let(&mut self, l: &syn::Local, init: &syn::Expr) -> Option<Option<Stmt>> {
        if !self.prog.kernel {
            return None;
        }
        let span = init.span();
        let (elem, kind, init_kind) = match syntax::bare(init) {
            syn::Expr::Repeat(r) => {
                let v = self.expr(&r.expr);
                let Some(len) = self.const_len(&r.len) else {
                    self.declare_unusable(l);
                    return Some(None);
                };
                let elem = v.ty;
                (elem, ArrayKind::Local { len }, ExprKind::ArrayRepeat(Box::new(v), len))
            }
            syn::Expr::Array(arr) => {
                let elem = self.prog.infer.fresh(VarKind::Any);
                let mut vals = Vec::new();
                for e in &arr.elems {
                    let v = self.expr(e);
                    if self.prog.infer.unify(elem, v.ty).is_err() {
                        let (want, found) = (self.prog.infer.describe(elem), self.prog.infer.describe(v.ty));
                        self.error(e, format!("mismatched types: the array's elements are `{want}`, found `{found}`"));
                    }
                    vals.push(v);
                }
                if vals.is_empty() {
                    self.error(arr, "an empty array is not supported: give it elements, e.g. `[0.0f32; 8]`");
                    return Some(None);
                }
                (elem, ArrayKind::Local { len: vals.len() as u64 }, ExprKind::ArrayList(vals))
            }
            syn::Expr::MethodCall(m) if syntax::name(&m.method) == "slice" => {
                let (local, base) = self.array_local(&m.receiver)?;
                let (elem, kind) = self.prog.arrays[base as usize].clone_parts();
                let arr = self.array_name(local);
                let viewable = match &kind {
                    ArrayKind::Shared { dims } => dims.len() == 1,
                    ArrayKind::DynamicShared | ArrayKind::View { .. } => true,
                    _ => false,
                };
                if !viewable {
                    self.error(m, format!("`slice(start, end)` makes a view of a 1-D shared array, of dynamic shared memory or of another view; `{arr}` is {}", kind_phrase(&kind)));
                    return Some(None);
                }
                if m.args.len() != 2 {
                    self.error(m, format!("`slice` takes 2 arguments (the start and the end, `{arr}.slice(start, end)`), but {} were given", m.args.len()));
                    return Some(None);
                }
                let mut bounds = Vec::new();
                for b in &m.args {
                    let e = self.expr(b);
                    if self.prog.infer.unify(e.ty, USIZE).is_err() {
                        let found = self.prog.infer.describe(e.ty);
                        let hint = conversion_hint(b, &found, "usize");
                        self.error(
                            b,
                            format!("mismatched types: a view's start and end are `usize`, found `{found}`{hint}"),
                        );
                    }
                    bounds.push(e);
                }
                (elem, ArrayKind::View { base }, ExprKind::ArrayView { base, bounds })
            }
            syn::Expr::Call(c) => {
                let syn::Expr::Path(p) = &*c.func else { return None };
                let rest = gpu_path(&p.path)?;
                let kind = match rest.as_slice() {
                    [s] => shared_rank(s)?,
                    _ => return None,
                };
                if !c.args.is_empty() {
                    self.error(
                        &c.args,
                        format!("`gpu::{}` takes no arguments: its type and size are generic arguments", rest[0]),
                    );
                }
                let Some((elem, dims)) = self.shared_generics(p.path.segments.last().expect("a path"), kind) else {
                    self.declare_unusable(l);
                    return Some(None);
                };
                let kind = if kind == 0 { ArrayKind::DynamicShared } else { ArrayKind::Shared { dims } };
                (Type::Scalar(elem), kind, ExprKind::SharedArray)
            }
            _ => return None,
        };
        let (pat, annotation) = match &l.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            p => (p, None),
        };
        if let Some(t) = annotation {
            self.array_annotation(t, elem, &kind);
        }
        let Some((name, mutable, bind_span)) = self.binding(pat, "`let` binding") else { return Some(None) };
        let id = self.prog.new_array(elem, kind, span);
        let local = self.declare(name, Type::Array(id), mutable, bind_span);
        let init = self.mk(init_kind, Type::Array(id), span);
        Some(Some(Stmt::Let { local, init: Some(init) }))
    }

    /// Declares the variable of a `let` whose array could not be made: its error is
    /// reported, and the name still exists, so its uses say nothing more.
    fn declare_unusable(&mut self, l: &syn::Local) {
        let pat = if let syn::Pat::Type(pt) = &l.pat { &*pt.pat } else { &l.pat };
        if let Some((name, mutable, bind_span)) = self.binding(pat, "`let` binding") {
            self.declare(name, Type::Error, mutable, bind_span);
        }
    }

    /// `let a: [T; N] = …`: the annotation must agree with the local array's value (and
    /// types its literals, as in Rust). Shared arrays take no annotation.
    fn array_annotation(&mut self, t: &syn::Type, elem: Type, kind: &ArrayKind) {
        let len = match kind {
            ArrayKind::Local { len } => *len,
            _ => {
                self.error(t, "write no type on a shared array variable: its type comes from `gpu::shared*` (`let s = gpu::shared::<f32, 256>();`)");
                return;
            }
        };
        let syn::Type::Array(ta) = syntax::bare_type(t) else {
            self.error(
                t,
                format!("a local array's type is `[T; N]`: here `[{}; {len}]`", self.prog.infer.describe(elem)),
            );
            return;
        };
        if let Some(want) = self.scalar_type(&ta.elem, TypeUse::Let) {
            if self.prog.infer.unify(elem, Type::Scalar(want)).is_err() {
                let found = self.prog.infer.describe(elem);
                self.error(&ta.elem, format!("mismatched types: expected `{want}` elements, found `{found}`"));
            }
        }
        if let Some(n) = self.const_len(&ta.len) {
            if n != len {
                self.error(&ta.len, format!("mismatched types: expected an array of {n} elements, found one of {len}"));
            }
        }
    }

    /// A local array's length: a constant expression.
    pub(super) fn const_len(&mut self, e: &syn::Expr) -> Option<u64> {
        self.const_size(e, LEN_MESSAGE)
    }

    /// A size fixed when the program is compiled: a constant expression of type `usize`
    /// (`8`, `N`, `{ TPB * TPB }`, `N / 4`), computed with Rust's rules. `message` says
    /// what the size may be.
    fn const_size(&mut self, e: &syn::Expr, message: &str) -> Option<u64> {
        if let Err((at, why)) = self.const_syntax(e) {
            self.error_at(at, format!("{why}{message}"));
            return None;
        }
        let v = self.const_context().expr(e);
        if self.prog.infer.resolve(v.ty) == Type::Error {
            return None; // reported where it went wrong (e.g. a constant's own value)
        }
        if self.prog.infer.unify(v.ty, USIZE).is_err() {
            let found = self.prog.infer.describe(v.ty);
            let hint = conversion_hint(e, &found, "usize");
            self.error(e, format!("mismatched types: a size is a `usize`, found `{found}`{hint}"));
            return None;
        }
        match self.int_value(&v) {
            Ok(n) => Some(n as u64),
            Err(const_eval::Failure::Overflow(at, msg)) => {
                self.error_at(at, format!("evaluation of constant value failed: {msg}"));
                None
            }
            Err(const_eval::Failure::NotConstant(at)) => {
                self.error_at(at, message);
                None
            }
        }
    }

    /// Whether `e` is written as a constant expression may be: `Err` with the place and
    /// the reason (which the caller's message completes) where it is not.
    fn const_syntax(&self, e: &syn::Expr) -> Result<(), (SpanRange, String)> {
        use syn::{BinOp, Expr, UnOp};
        let not = |at: SpanRange, why: String| Err((at, why));
        match e {
            Expr::Lit(_) => Ok(()),
            Expr::Paren(p) => self.const_syntax(&p.expr),
            Expr::Group(g) => self.const_syntax(&g.expr),
            Expr::Block(b) if b.label.is_none() => match b.block.stmts.as_slice() {
                [syn::Stmt::Expr(inner, None)] => self.const_syntax(inner),
                _ => not(SpanRange::of(b), String::new()),
            },
            Expr::Path(p) => match p.path.get_ident() {
                Some(i) if self.lookup(&syntax::name(i)).is_some() => not(
                    SpanRange::of(i),
                    format!("attempt to use a non-constant value in a constant: `{i}` is a variable; "),
                ),
                _ => Ok(()),
            },
            Expr::Unary(u) if matches!(u.op, UnOp::Neg(_) | UnOp::Not(_)) => self.const_syntax(&u.expr),
            Expr::Cast(c) => self.const_syntax(&c.expr),
            Expr::Binary(b) => match b.op {
                BinOp::Add(_)
                | BinOp::Sub(_)
                | BinOp::Mul(_)
                | BinOp::Div(_)
                | BinOp::Rem(_)
                | BinOp::Shl(_)
                | BinOp::Shr(_)
                | BinOp::BitAnd(_)
                | BinOp::BitOr(_)
                | BinOp::BitXor(_) => self.const_syntax(&b.left).and_then(|()| self.const_syntax(&b.right)),
                _ => not(SpanRange::of(&b.op), String::new()),
            },
            Expr::Call(_) | Expr::MethodCall(_) => not(
                SpanRange::of(e),
                "a constant cannot call functions (Rust's `min` and `max` are not `const`, and no call of the kernel language is); "
                    .into(),
            ),
            _ => not(SpanRange::of(e), String::new()),
        }
    }

    /// `<T, N>` / `<T, R, C>` / `<T, A, B, C>` / `<T>` of `gpu::shared*`.
    fn shared_generics(&mut self, seg: &syn::PathSegment, rank: usize) -> Option<(ScalarType, Vec<u64>)> {
        let name = syntax::name(&seg.ident);
        let want = match rank {
            0 => "`gpu::dynamic_shared::<T>()`",
            1 => "`gpu::shared::<T, N>()`",
            2 => "`gpu::shared_2d::<T, ROWS, COLUMNS>()`",
            _ => "`gpu::shared_3d::<T, A, B, C>()`",
        };
        let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
            self.error(seg, format!("`gpu::{name}` needs its element type and size: write {want}"));
            return None;
        };
        let args: Vec<&syn::GenericArgument> = args.args.iter().collect();
        if args.len() != rank + 1 {
            self.error(seg, format!("`gpu::{name}` takes {} generic arguments: write {want}", rank + 1));
            return None;
        }
        let syn::GenericArgument::Type(t) = args[0] else {
            self.error(
                args[0],
                format!("the first generic argument of `gpu::{name}` is the element type: write {want}"),
            );
            return None;
        };
        let elem = self.scalar_type(t, TypeUse::Let)?;
        let mut dims = Vec::new();
        for a in &args[1..] {
            let n = match a {
                syn::GenericArgument::Const(e) => self.const_size(e, SIZE_MESSAGE)?,
                // `N` in `::<f32, N>` reads as a type: the same path as an expression.
                syn::GenericArgument::Type(syn::Type::Path(p)) if p.qself.is_none() => {
                    let e = syn::Expr::Path(syn::ExprPath { attrs: Vec::new(), qself: None, path: p.path.clone() });
                    self.const_size(&e, SIZE_MESSAGE)?
                }
                _ => {
                    self.error(a, SIZE_MESSAGE);
                    return None;
                }
            };
            if n == 0 {
                self.error(a, "a shared array needs at least one element");
                return None;
            }
            dims.push(n);
        }
        Some((elem, dims))
    }
}

/// How a message names an array of this kind.
fn kind_phrase(kind: &ArrayKind) -> &'static str {
    match kind {
        ArrayKind::Slice { .. } => "a slice parameter",
        ArrayKind::Local { .. } => "the thread's own array",
        ArrayKind::Shared { dims } if dims.len() == 2 => "a 2-D shared array",
        ArrayKind::Shared { .. } => "a 3-D shared array",
        ArrayKind::DynamicShared | ArrayKind::View { .. } => "a view",
    }
}

impl super::context::ProgramCx {
    pub(super) fn new_array(&mut self, elem: Type, kind: ArrayKind, span: Span) -> u32 {
        self.arrays.push(ArrayDecl(elem, kind, span));
        self.arrays.len() as u32 - 1
    }

    fn array_rank(&self, a: u32) -> usize {
        match &self.arrays[a as usize].1 {
            ArrayKind::Shared { dims } => dims.len(),
            _ => 1,
        }
    }

    /// How Rust would name the array's type, for messages.
    fn array_type_name(&self, a: u32) -> String {
        let ArrayDecl(elem, kind, _) = &self.arrays[a as usize];
        let t = self.infer.describe(*elem);
        match kind {
            ArrayKind::Slice { .. } | ArrayKind::DynamicShared | ArrayKind::View { .. } => format!("[{t}]"),
            ArrayKind::Local { len } => format!("[{t}; {len}]"),
            ArrayKind::Shared { dims } => dims.iter().rev().fold(t, |inner, d| format!("[{inner}; {d}]")),
        }
    }

    /// The program's arrays with their element types resolved.
    pub(super) fn final_arrays(&mut self) -> Vec<crate::ir::ArrayInfo> {
        let mut out = Vec::new();
        for ArrayDecl(elem, kind, span) in self.arrays.clone() {
            let elem = match self.infer.resolve(elem) {
                Type::Scalar(t) => t,
                Type::Error => ScalarType::Bool,
                t => {
                    let found = self.infer.describe(t);
                    self.error_at(span, format!("an array holds scalars (f32, f64, integers, bool), not `{found}`"));
                    ScalarType::Bool
                }
            };
            out.push(crate::ir::ArrayInfo { elem, kind });
        }
        out
    }
}
