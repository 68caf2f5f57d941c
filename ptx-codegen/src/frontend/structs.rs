//! User structs (`#[derive(GpuType)]`, `#[repr(C)]`): their definitions, entered in the
//! struct table from the entries an expansion carries, and the expressions on them:
//! reading a field (`p.mass`, `p.pos[k]`, `a[i].vel[0]`), writing one in place
//! (`p.mass = m`, `a[i].pos[k] += v`) and struct literals (`Particle { pos, vel, mass }`).
//!
//! A struct value is a whole: copied by `let`, passed to and returned from device
//! functions, stored as an element. Its array fields are read and written by element: an
//! array is not a value of the kernel language.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::Visit;

use super::callees::path_key;
use super::context::{FnChecker, Write};
use super::diagnostics::conversion_hint;
use super::syntax;
use crate::ir::{BinaryOp, Block, Expr, ExprKind, Step, Stmt, Type};
use crate::ty::{FieldDef, ScalarType, StructDef, StructId};

/// A user struct as an expansion receives it: its id (its name and a hash of its
/// definition), its definition, and the struct paths its fields write with their ids.
#[derive(Clone, Debug)]
pub struct StructEntry {
    pub id: String,
    pub item: syn::ItemStruct,
    pub fields: Vec<(String, String)>,
}

/// Enters every struct of `entries` in the struct table under its id (a struct's fields
/// may name others among them, in any order).
pub fn define_structs(entries: &[StructEntry]) -> Result<(), syn::Error> {
    let mut pending: Vec<&StructEntry> = entries.iter().filter(|e| StructId::by_key(&e.id).is_none()).collect();
    while !pending.is_empty() {
        let before = pending.len();
        let mut errors: Vec<syn::Error> = Vec::new();
        pending.retain(|e| match struct_def(&e.item, &|p| field_struct(e, p)) {
            Ok(Some(def)) => {
                StructId::define(&e.id, def);
                false
            }
            Ok(None) => true,
            Err(err) => {
                errors.push(err);
                false
            }
        });
        if let Some(mut first) = errors.pop() {
            errors.into_iter().for_each(|e| first.combine(e));
            return Err(first);
        }
        if pending.len() == before {
            let e = pending[0];
            return Err(syn::Error::new_spanned(
                &e.item.ident,
                format!(
                    "the fields of `{}` name a struct whose definition did not arrive (or that contains it)",
                    e.item.ident
                ),
            ));
        }
    }
    Ok(())
}

/// The struct a field's type path names, once it is defined: `Err` where the path names
/// none of the entry's structs.
fn field_struct(e: &StructEntry, path: &syn::Path) -> Result<Option<StructId>, ()> {
    let key = path_key(path);
    let (_, id) = e.fields.iter().find(|(p, _)| *p == key).ok_or(())?;
    Ok(StructId::by_key(id))
}

/// The definition of a `#[repr(C)]` struct of GPU types; `Ok(None)` while a struct its
/// fields name is not yet defined. `named` looks up a field's struct type (`Err`: the path
/// names no GPU struct).
pub fn struct_def(
    item: &syn::ItemStruct,
    named: &dyn Fn(&syn::Path) -> Result<Option<StructId>, ()>,
) -> Result<Option<StructDef>, syn::Error> {
    if !item.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(&item.generics, "a GPU struct cannot be generic"));
    }
    let syn::Fields::Named(fields) = &item.fields else {
        return Err(syn::Error::new_spanned(
            &item.fields,
            "a GPU struct has named fields (`struct P { x: f32, … }`), not tuple fields or none",
        ));
    };
    let mut out = Vec::new();
    let mut waiting = false;
    for f in &fields.named {
        let name = syntax::name(f.ident.as_ref().expect("named fields have names"));
        let (elem, len) = match &f.ty {
            syn::Type::Array(a) => (
                &*a.elem,
                Some(array_len(&a.len).ok_or_else(|| {
                    field_error(&a.len, "an array field's length is an integer literal (`[f32; 3]`)")
                })?),
            ),
            t => (t, None),
        };
        let ty = match syntax::scalar_type(elem) {
            Ok(t) => t,
            Err(syntax::TypeProblem::Named(_)) => match elem {
                syn::Type::Path(p) if p.qself.is_none() => match named(&p.path) {
                    Ok(Some(id)) => ScalarType::Struct(id),
                    Ok(None) => {
                        waiting = true;
                        continue;
                    }
                    Err(()) => return Err(field_error(elem, FIELD_TYPES)),
                },
                _ => return Err(field_error(elem, FIELD_TYPES)),
            },
            Err(_) => return Err(field_error(elem, FIELD_TYPES)),
        };
        out.push(FieldDef { name, ty, len });
    }
    if waiting {
        return Ok(None);
    }
    Ok(Some(StructDef { name: syntax::name(&item.ident), fields: out }))
}

/// What a GPU struct's field may be.
pub const FIELD_TYPES: &str = "a field of a GPU struct is a scalar (f32, f64, the integers, bool), `f16`/`bf16`, `Complex<f32>`/`Complex<f64>`, another `#[derive(GpuType)]` struct, or an array `[T; N]` of one of those; not a reference, a pointer, a tuple or a heap type";

fn field_error(at: &impl ToTokens, msg: &str) -> syn::Error {
    syn::Error::new_spanned(at, msg)
}

fn array_len(e: &syn::Expr) -> Option<u64> {
    match syntax::bare(e) {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse().ok(),
        _ => None,
    }
}

/// The user struct entered under `key` (an entry's id).
pub fn struct_type(key: &str) -> Option<ScalarType> {
    StructId::by_key(key).map(ScalarType::Struct)
}

/// The user structs among `callees` (path as written → id), for a function's scope.
pub(super) fn scope(callees: &[(String, String)]) -> Vec<(String, ScalarType)> {
    callees.iter().filter_map(|(p, id)| Some((p.clone(), ScalarType::Struct(StructId::by_key(id)?)))).collect()
}

/// The paths of the user structs `item` may name (types in its signature and body, struct
/// literals), each once: the macro fetches their definitions as it fetches its callees'.
/// A path is one when it could be a struct of the crate: a capitalised name without
/// generic arguments that is not one of Rust's own (`String`, `Vec`, `Self`, …) or
/// num-complex's. Of generic arguments only the first is a type (`gpu::shared::<S, N>()`:
/// `N` is a constant, which syn reads as a type).
pub fn struct_paths(item: &syn::ItemFn) -> Vec<syn::Path> {
    let mut v = StructPaths(Vec::new());
    v.visit_item_fn(item);
    // The function's own type parameters are not structs (`fn f<T>(x: T)`).
    let generic = |p: &syn::Path| item.sig.generics.type_params().any(|t| p.is_ident(&t.ident));
    v.0.retain(|p| !generic(p));
    v.0
}

/// The struct paths a struct's fields write (for nested structs).
pub fn field_struct_paths(item: &syn::ItemStruct) -> Vec<syn::Path> {
    let mut v = StructPaths(Vec::new());
    v.visit_item_struct(item);
    v.0
}

/// The path of `ty` where it may name a user struct (as [`struct_paths`] decides).
pub fn struct_type_path(ty: &syn::Type) -> Option<&syn::Path> {
    match syntax::bare_type(ty) {
        syn::Type::Path(p) if p.qself.is_none() && may_be_struct(&p.path) => Some(&p.path),
        _ => None,
    }
}

/// A capitalised name without generic arguments that is not one of Rust's own types,
/// num-complex's or the GPU built-ins'.
fn may_be_struct(path: &syn::Path) -> bool {
    let Some(last) = path.segments.last() else { return false };
    let plain = path.segments.iter().all(|s| s.arguments.is_none());
    let first = syntax::name(&path.segments[0].ident);
    let foreign = matches!(first.as_str(), "std" | "core" | "alloc" | "gpu" | "gpu_runtime" | "num_complex" | "half");
    plain && syntax::may_name_struct(&syntax::name(&last.ident)) && !foreign
}

struct StructPaths(Vec<syn::Path>);

impl StructPaths {
    fn note(&mut self, path: &syn::Path) {
        if may_be_struct(path) {
            let key = path_key(path);
            if !self.0.iter().any(|p| path_key(p) == key) {
                self.0.push(path.clone());
            }
        }
    }
}

impl<'ast> Visit<'ast> for StructPaths {
    fn visit_type_path(&mut self, t: &'ast syn::TypePath) {
        if t.qself.is_none() {
            self.note(&t.path);
        }
        syn::visit::visit_type_path(self, t);
    }

    fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
        if s.qself.is_none() {
            self.note(&s.path);
        }
        syn::visit::visit_expr_struct(self, s);
    }

    fn visit_angle_bracketed_generic_arguments(&mut self, a: &'ast syn::AngleBracketedGenericArguments) {
        if let Some(syn::GenericArgument::Type(t)) = a.args.first() {
            self.visit_type(t);
        }
    }

    // A nested item's types are its own.
    fn visit_item(&mut self, i: &'ast syn::Item) {
        if let syn::Item::Fn(f) = i {
            self.visit_item_fn(f);
        }
    }
}

/// A part of a struct being read or written: the struct (a variable, an element or any
/// value), the steps into it, and the part's type (`len`: the length of an array field,
/// before it is indexed).
struct Part {
    root: Expr,
    path: Vec<Step>,
    ty: ScalarType,
    len: Option<u64>,
}

impl FnChecker<'_> {
    /// The user struct a value of type `t` is, if it is one.
    fn struct_of(&mut self, t: Type) -> Option<ScalarType> {
        match self.prog.infer.shallow(t) {
            Type::Scalar(s) if s.is_struct() => Some(s),
            _ => None,
        }
    }

    /// `base.name` where `base` (checked) is a struct or a part of one; `Err(base)` when it
    /// is neither.
    fn part(&mut self, f: &syn::ExprField, base: Expr) -> Result<Option<Part>, Expr> {
        let syn::Member::Named(member) = &f.member else { return Err(base) };
        let Some(s) = self.struct_of(base.ty) else { return Err(base) };
        let (root, mut path) = match base.kind {
            // `a.b.c`: one walk from `a`.
            ExprKind::Member { base: root, path } => (*root, path),
            kind => (Expr { kind, ..base }, Vec::new()),
        };
        let def = s.struct_def().expect("a struct type");
        let name = syntax::name(member);
        let Some((i, field)) = def.field(&name) else {
            let names: Vec<String> = def.fields.iter().map(|f| format!("`{}`", f.name)).collect();
            self.error(member, format!("no field `{name}` on `{}`: its fields are {}", def.name, names.join(", ")));
            return Ok(None);
        };
        path.push(Step::Field(i as u32));
        Ok(Some(Part { root, path, ty: field.ty, len: field.len }))
    }

    /// `p.name` (reading) where `p` is a struct; `Err(base)` where `base` is not one.
    pub(super) fn struct_field(&mut self, f: &syn::ExprField, base: Expr) -> Result<Expr, Expr> {
        let span = f.span();
        let Some(part) = self.part(f, base)? else { return Ok(self.error_expr(span)) };
        if part.len.is_some() {
            self.error(
                f,
                format!(
                    "`{}` is an array field: read and write its elements (`{0}[k]`); an array is not a value in {}",
                    syntax::render_tokens(f.to_token_stream()),
                    self.subject()
                ),
            );
            return Ok(self.error_expr(span));
        }
        Ok(self.member(part, span))
    }

    fn member(&self, part: Part, span: Span) -> Expr {
        self.mk(ExprKind::Member { base: Box::new(part.root), path: part.path }, Type::Scalar(part.ty), span)
    }

    /// `p.name[k]` (reading); `None` when the indexed expression is not a field.
    pub(super) fn struct_elem(&mut self, ix: &syn::ExprIndex) -> Option<Expr> {
        let f = syntax::named_field(&ix.expr)?;
        let span = ix.span();
        let base = self.expr(&f.base);
        let part = match self.array_part(f, base, &ix.index) {
            Ok(Some(p)) => p,
            Ok(None) => return Some(self.error_expr(span)),
            Err(base) => {
                if self.prog.infer.shallow(base.ty) != Type::Error {
                    let found = self.prog.infer.describe(base.ty);
                    self.error(
                        &f.base,
                        format!("no field `{}` on `{found}`", syntax::render_tokens(f.member.to_token_stream())),
                    );
                }
                return Some(self.error_expr(span));
            }
        };
        Some(self.member(part, span))
    }

    /// `base.name[index]` as a part: `name` must be an array field.
    fn array_part(&mut self, f: &syn::ExprField, base: Expr, index: &syn::Expr) -> Result<Option<Part>, Expr> {
        let Some(mut part) = self.part(f, base)? else { return Ok(None) };
        let Some(len) = part.len else {
            let shown = syntax::render_tokens(f.to_token_stream());
            self.error(
                f,
                format!(
                    "cannot index `{shown}`, a `{}`: only a struct's array fields are indexed",
                    part.ty.rust_name()
                ),
            );
            return Ok(None);
        };
        let i = self.expr(index);
        let usize_t = Type::Scalar(ScalarType::Usize);
        if self.prog.infer.unify(i.ty, usize_t).is_err() {
            let found = self.prog.infer.describe(i.ty);
            self.error(
                index,
                format!("the index of `{}` is a `usize`, found `{found}`", syntax::render_tokens(f.to_token_stream())),
            );
            return Ok(None);
        }
        part.path.push(Step::Elem { index: Box::new(i), len });
        part.len = None;
        Ok(Some(part))
    }

    /// `Name { field: value, … }` for a user struct `Name`; `None` for another path.
    pub(super) fn struct_lit(&mut self, s: &syn::ExprStruct) -> Option<Expr> {
        let ty = self.lookup_struct(&path_key(&s.path))?;
        let def = ty.struct_def().expect("a struct type");
        let span = s.span();
        if let Some(rest) = &s.rest {
            self.error(rest, format!("`..` is not supported in a struct literal: give every field of `{}`", def.name));
            return Some(self.error_expr(span));
        }
        let mut given: Vec<Option<&syn::Expr>> = vec![None; def.fields.len()];
        // The fields in the order written, which is the order Rust evaluates them in.
        let mut order = Vec::with_capacity(def.fields.len());
        let mut ok = true;
        for f in &s.fields {
            let name = match &f.member {
                syn::Member::Named(n) => syntax::name(n),
                syn::Member::Unnamed(i) => i.index.to_string(),
            };
            match def.field(&name) {
                Some((i, _)) if given[i].is_none() => {
                    given[i] = Some(&f.expr);
                    order.push(i);
                }
                Some(_) => {
                    self.error(&f.member, format!("field `{name}` specified more than once"));
                    ok = false;
                }
                None => {
                    self.error(&f.member, format!("`{}` has no field named `{name}`", def.name));
                    ok = false;
                }
            }
        }
        let missing: Vec<String> =
            def.fields.iter().zip(&given).filter(|(_, g)| g.is_none()).map(|(f, _)| format!("`{}`", f.name)).collect();
        if !missing.is_empty() {
            self.error(s, format!("missing fields {} in initializer of `{}`", missing.join(", "), def.name));
            ok = false;
        }
        let mut values: Vec<Option<Expr>> = (0..def.fields.len()).map(|_| None).collect();
        for &i in &order {
            let src = given[i].expect("given in the order");
            values[i] = Some(self.field_value(&def.fields[i], src));
        }
        if !ok {
            return Some(self.error_expr(span));
        }
        let values: Vec<Expr> = values.into_iter().map(|v| v.expect("every field given")).collect();
        if order.windows(2).all(|w| w[0] < w[1]) {
            return Some(self.mk(ExprKind::StructLit(values), Type::Scalar(ty), span));
        }
        Some(self.in_written_order(values, &order, ty, span))
    }

    /// A literal whose fields are written out of the definition's order: each value (each
    /// element of an array field) into a temporary in the order written, then the struct
    /// from the temporaries.
    fn in_written_order(&mut self, values: Vec<Expr>, order: &[usize], ty: ScalarType, span: Span) -> Expr {
        self.scopes.push(Vec::new());
        let mut stmts = Vec::new();
        let mut values: Vec<Option<Expr>> = values.into_iter().map(Some).collect();
        let mut bound: Vec<Option<Expr>> = (0..values.len()).map(|_| None).collect();
        for &i in order {
            let v = values[i].take().expect("each field once");
            let mut bind = |cx: &mut Self, e: Expr, name: String| {
                let local = cx.declare(name, e.ty, false, span);
                let ty = e.ty;
                stmts.push(Stmt::Let { local, init: Some(e) });
                cx.mk(ExprKind::Local(local), ty, span)
            };
            let kind = match v.kind {
                ExprKind::ArrayList(elems) => ExprKind::ArrayList(
                    elems.into_iter().enumerate().map(|(k, e)| bind(self, e, format!("__field{i}_{k}"))).collect(),
                ),
                ExprKind::ArrayRepeat(e, n) => {
                    ExprKind::ArrayRepeat(Box::new(bind(self, *e, format!("__field{i}"))), n)
                }
                kind => {
                    let e = Expr { kind, ..v };
                    bound[i] = Some(bind(self, e, format!("__field{i}")));
                    continue;
                }
            };
            bound[i] = Some(Expr { kind, ..v });
        }
        self.scopes.pop();
        let fields = bound.into_iter().map(|b| b.expect("each field bound")).collect();
        let tail = self.mk(ExprKind::StructLit(fields), Type::Scalar(ty), span);
        self.mk(ExprKind::Block(Block { stmts, tail: Some(Box::new(tail)) }), Type::Scalar(ty), span)
    }

    /// A field's value in a literal: a value of its type, or for an array field an array
    /// expression of its length (`[x, y, z]`, `[0.0; 3]`).
    fn field_value(&mut self, field: &FieldDef, src: &syn::Expr) -> Expr {
        let span = src.span();
        let want = Type::Scalar(field.ty);
        let Some(len) = field.len else {
            let v = self.expr(src);
            self.expect_field_type(&v, want, src, &field.name);
            return v;
        };
        match syntax::bare(src) {
            syn::Expr::Repeat(r) => {
                let v = self.expr(&r.expr);
                self.expect_field_type(&v, want, &r.expr, &field.name);
                if self.const_len(&r.len).is_some_and(|n| n != len) {
                    self.error(&r.len, format!("field `{}` has {len} elements", field.name));
                }
                self.mk(ExprKind::ArrayRepeat(Box::new(v), len), Type::Unit, span)
            }
            syn::Expr::Array(a) => {
                if a.elems.len() as u64 != len {
                    self.error(a, format!("field `{}` has {len} elements, found {}", field.name, a.elems.len()));
                }
                let vals = a
                    .elems
                    .iter()
                    .map(|e| {
                        let v = self.expr(e);
                        self.expect_field_type(&v, want, e, &field.name);
                        v
                    })
                    .collect();
                self.mk(ExprKind::ArrayList(vals), Type::Unit, span)
            }
            _ => {
                self.error(
                    src,
                    format!(
                        "field `{}` is an array: give its elements here (`[x, y, z]` or `[v; {len}]`); an array is not a value in {}",
                        field.name,
                        self.subject()
                    ),
                );
                self.error_expr(span)
            }
        }
    }

    fn expect_field_type(&mut self, v: &Expr, want: Type, src: &syn::Expr, field: &str) {
        if self.prog.infer.unify(v.ty, want).is_err() {
            let (want, found) = (self.prog.infer.describe(want), self.prog.infer.describe(v.ty));
            let hint = conversion_hint(src, &found, &want);
            self.error(src, format!("mismatched types: field `{field}` is a `{want}`, found `{found}`{hint}"));
        }
    }

    /// `place.field… = value` and `place.field… op= value` where `place` is a struct
    /// variable or an element of an array of structs; `None` when `target` is no such part.
    pub(super) fn struct_assign(
        &mut self,
        target: &syn::Expr,
        op: Option<BinaryOp>,
        value: &syn::Expr,
        span: Span,
    ) -> Option<Expr> {
        let (root, steps) = self.struct_place(target)?;
        // Every index of the place a variable, a constant or a literal: evaluated twice, it
        // gives the same element (see the complex `op=` below).
        let plain = |e: &syn::Expr| matches!(syntax::bare(e), syn::Expr::Lit(_) | syn::Expr::Path(_));
        let plain_indices = steps.iter().all(|s| match s {
            PlaceStep::Elem(_, i) => plain(i),
            PlaceStep::Field(_) => true,
        }) && match &root {
            Root::Element(ix) => plain(&ix.index),
            Root::Local(_) => true,
        };
        // The place is checked first (a whole array field is refused without a second
        // error for its value); it is evaluated after the value, as Rust evaluates it for
        // primitives (`ExprKind::AssignMember`).
        let mut base = match root {
            Root::Local(name) => {
                let local = self.place(name, Write::Update)?;
                let ty = self.locals[local.0 as usize].ty;
                self.mk(ExprKind::Local(local), ty, name.span())
            }
            Root::Element(ix) => {
                let e = self.index_expr(ix);
                if let ExprKind::Index { array, .. } = &e.kind {
                    let local = self.array_local(&ix.expr).map(|(l, _)| l);
                    if let Some(local) = local {
                        self.check_writable(local, *array, target);
                    }
                }
                e
            }
        };
        let mut part = None;
        for (k, step) in steps.iter().rev().enumerate() {
            let next = match step {
                PlaceStep::Field(f) => self.part(f, base),
                PlaceStep::Elem(f, i) => self.array_part(f, base, i),
            };
            let p = match next {
                Ok(Some(p)) => p,
                Ok(None) | Err(_) => return Some(self.error_expr(span)),
            };
            if let Some(len) = p.len {
                let shown = if k + 1 == steps.len() { target.to_token_stream() } else { step.expr().to_token_stream() };
                self.error(
                    shown,
                    format!(
                        "`{}` is an array field of {len} elements: assign its elements (`{0}[k] = v`); an array is not a value in {}",
                        syntax::render_tokens(step.expr().to_token_stream()),
                        self.subject()
                    ),
                );
                return Some(self.error_expr(span));
            }
            base = self.member(Part { root: p.root.clone(), path: p.path.clone(), ty: p.ty, len: None }, span);
            part = Some(p);
        }
        let part = part.expect("a place has a step");
        let rhs = self.expr(value);
        let leaf = part.ty;
        match op {
            None => self.expect_field_type(
                &rhs,
                Type::Scalar(leaf),
                value,
                &syntax::render_tokens(target.to_token_stream()),
            ),
            // A complex field: `place = place op value` (num-complex's `op=` on its parts),
            // the place read as `base` (built above). Rust evaluates a non-primitive `op=`'s
            // place before its value, and its borrow checker keeps the value from writing
            // the place, so reading the place after the value gives Rust's result where the
            // place's indices are plain (evaluated twice, they must have no effects and read
            // nothing the value writes).
            Some(bop) if leaf.is_complex() && plain_indices => {
                let value = self.complex_binary(bop, base, rhs, super::context::SpanRange::of(value));
                if self.prog.infer.unify(value.ty, Type::Scalar(leaf)).is_err() {
                    return Some(self.error_expr(span));
                }
                let kind = ExprKind::AssignMember {
                    place: Box::new(part.root),
                    path: part.path,
                    leaf,
                    op: None,
                    value: Box::new(value),
                };
                return Some(self.mk(kind, Type::Unit, span));
            }
            Some(_) if leaf.is_complex() || leaf.is_struct() => {
                let t = syntax::render_tokens(target.to_token_stream());
                let why = if leaf.is_complex() {
                    " with an index that is not a variable, a constant or a literal"
                } else {
                    ""
                };
                self.error(
                    target,
                    format!(
                        "`op=` on a `{}` field{why} is not supported: write `{t} = {t} {} …`",
                        leaf.rust_name(),
                        op.map_or("", |o| o.symbol()),
                    ),
                );
                return Some(self.error_expr(span));
            }
            Some(op) => {
                let cur = self.mk(ExprKind::Block(Default::default()), Type::Scalar(leaf), target.span());
                self.check_operands(op, &cur, &rhs, target, value, super::context::SpanRange(span, span));
            }
        }
        let kind =
            ExprKind::AssignMember { place: Box::new(part.root), path: part.path, leaf, op, value: Box::new(rhs) };
        Some(self.mk(kind, Type::Unit, span))
    }

    /// Whether `target` is a part of a struct variable or element, as a place.
    pub(super) fn is_struct_place(&self, target: &syn::Expr) -> bool {
        self.struct_place(target).is_some()
    }

    /// The syntax of a struct part as a place, when `target` is one: the root (a struct
    /// variable, or `a[i]` of an array of structs) and the steps from it, outermost first.
    fn struct_place<'e>(&self, target: &'e syn::Expr) -> Option<(Root<'e>, Vec<PlaceStep<'e>>)> {
        let mut steps = Vec::new();
        let mut at = syntax::bare(target);
        loop {
            match at {
                syn::Expr::Field(f) if matches!(f.member, syn::Member::Named(_)) => {
                    steps.push(PlaceStep::Field(f));
                    at = syntax::bare(&f.base);
                }
                syn::Expr::Index(ix) => {
                    let syn::Expr::Field(f) = syntax::bare(&ix.expr) else { break };
                    if !matches!(f.member, syn::Member::Named(_)) {
                        break;
                    }
                    steps.push(PlaceStep::Elem(f, &ix.index));
                    at = syntax::bare(&f.base);
                }
                _ => break,
            }
        }
        if steps.is_empty() {
            return None;
        }
        let root = match at {
            syn::Expr::Path(p) if p.qself.is_none() => {
                let id = self.lookup(&syntax::name(p.path.get_ident()?))?;
                let ty = self.locals[id.0 as usize].ty;
                matches!(self.prog.infer.shallow(ty), Type::Scalar(s) if s.is_struct()).then_some(Root::Local(at))?
            }
            syn::Expr::Index(ix) => {
                let (_, a) = self.array_local(&ix.expr)?;
                let elem = self.prog.arrays[a as usize].0;
                matches!(self.prog.infer.shallow(elem), Type::Scalar(s) if s.is_struct())
                    .then_some(Root::Element(ix))?
            }
            _ => return None,
        };
        Some((root, steps))
    }
}

enum Root<'e> {
    Local(&'e syn::Expr),
    Element(&'e syn::ExprIndex),
}

/// One step of a place, as written: `.field` or `.field[index]`.
enum PlaceStep<'e> {
    Field(&'e syn::ExprField),
    Elem(&'e syn::ExprField, &'e syn::Expr),
}

impl PlaceStep<'_> {
    fn expr(&self) -> &syn::ExprField {
        match self {
            PlaceStep::Field(f) | PlaceStep::Elem(f, _) => f,
        }
    }
}
