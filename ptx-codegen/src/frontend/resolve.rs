//! Resolution: a checked function's final types, with tuples numbered in the program's table.

use super::context::{FnChecker, ProgramCx};
use super::syntax;
use crate::ir::{Block, Expr, ExprKind, Function, Local, Param, RetType, Stmt, Type};

impl FnChecker<'_> {
    /// Resolves the types of a checked function's locals and body; the function's check
    /// ends here.
    pub(super) fn finish_function(
        mut self,
        f: Option<(Vec<Param>, RetType, Block)>,
        item: &syn::ItemFn,
    ) -> Option<Function> {
        let mut locals = Vec::with_capacity(self.locals.len());
        for l in std::mem::take(&mut self.locals) {
            let ty = self.prog.final_type(l.ty);
            match ty {
                Type::Scalar(_) | Type::Error | Type::Tuple(_) | Type::Dim3 | Type::Array(_) | Type::Fragment(_) => {}
                Type::Infer(_) | Type::Never => {
                    // A variable that is never given a value of known type.
                    self.error_at(
                        l.span,
                        format!("type annotations needed: give `{}` a type, e.g. `let {}: f32 = …`", l.name, l.name),
                    );
                }
                Type::Unit => self.error_at(
                    l.span,
                    format!(
                        "`{}` holds `()`: a variable in {subject} must hold a scalar",
                        l.name,
                        subject = self.subject()
                    ),
                ),
            }
            locals.push(Local { name: l.name, ty, mutable: l.mutable });
        }
        let (params, ret, mut body) = f?;
        if self.prog.errors.is_empty() {
            self.prog.resolve_block(&mut body);
        }
        Some(Function { name: syntax::name(&item.sig.ident), params, ret, locals, body, span: item.sig.ident.span() })
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
        self.refuse_compound(e);
        match &mut e.kind {
            ExprKind::Lit(_)
            | ExprKind::Local(_)
            | ExprKind::Continue { .. }
            | ExprKind::Unreachable
            | ExprKind::SharedArray
            | ExprKind::ArrayLen(_) => {}
            ExprKind::ArrayRepeat(a, _) => self.resolve_expr(a),
            ExprKind::ArrayList(args)
            | ExprKind::Gpu(_, args)
            | ExprKind::Mma(_, args)
            | ExprKind::Index { index: args, .. }
            | ExprKind::ArrayView { bounds: args, .. } => {
                for a in args {
                    self.resolve_expr(a);
                }
            }
            ExprKind::AssignIndex { array, elem, index, value, .. } => {
                if let Type::Scalar(t) = self.infer.resolve(self.arrays[*array as usize].0) {
                    *elem = t;
                }
                for a in index {
                    self.resolve_expr(a);
                }
                self.resolve_expr(value);
            }
            ExprKind::Atomic { index, args, .. } => {
                for a in index.iter_mut().chain(args) {
                    self.resolve_expr(a);
                }
            }
            ExprKind::LoadVector { index, .. } => self.resolve_expr(index),
            ExprKind::CopyAsync { dst_index, src_index, .. } => {
                self.resolve_expr(dst_index);
                self.resolve_expr(src_index);
            }
            ExprKind::StoreVector { index, values, .. } => {
                self.resolve_expr(index);
                for a in values {
                    self.resolve_expr(a);
                }
            }
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
            ExprKind::Member { base, path } => {
                self.resolve_expr(base);
                self.resolve_steps(path);
            }
            ExprKind::AssignMember { place, path, value, .. } => {
                self.resolve_expr(value);
                self.resolve_expr(place);
                self.resolve_steps(path);
            }
            ExprKind::StructLit(fields) => {
                for a in fields {
                    self.resolve_expr(a);
                }
            }
        }
    }

    fn resolve_steps(&mut self, path: &mut [crate::ir::Step]) {
        for step in path {
            if let crate::ir::Step::Elem { index, .. } = step {
                self.resolve_expr(index);
            }
        }
    }

    /// The built-ins that move integers and floats only, given a complex value or a user
    /// struct (known to be one only now, after inference): an error here, never a lowering
    /// that would treat its parts as one number.
    fn refuse_compound(&mut self, e: &Expr) {
        #[derive(Clone, Copy, PartialEq)]
        enum Compound {
            Complex,
            Struct,
        }
        let compound = |t: Type| match self.infer.resolve(t) {
            Type::Scalar(s) if s.is_complex() => Some(Compound::Complex),
            Type::Scalar(s) if s.is_struct() => Some(Compound::Struct),
            _ => None,
        };
        let problem = match &e.kind {
            ExprKind::Gpu(_, args) => match args.iter().find_map(|a| compound(a.ty)) {
                Some(Compound::Complex) => {
                    "a warp built-in takes integers, floats and `bool`, not a complex number: apply it to the parts (`z.re`, `z.im`) one at a time"
                }
                Some(Compound::Struct) => {
                    "a warp built-in takes integers, floats and `bool`, not a struct: apply it to its fields (`p.x`) one at a time"
                }
                None => return,
            },
            ExprKind::Atomic { array, .. } => match compound(self.arrays[*array as usize].0) {
                Some(Compound::Complex) => {
                    "atomics work on integer and float elements, not complex ones: update the parts through arrays of their own"
                }
                Some(Compound::Struct) => {
                    "atomics work on integer and float elements, not structs: update the fields through arrays of their own"
                }
                None => return,
            },
            ExprKind::LoadVector { array, .. }
            | ExprKind::StoreVector { array, .. }
            | ExprKind::CopyAsync { dst: array, .. } => match compound(self.arrays[*array as usize].0) {
                Some(Compound::Complex) => {
                    "`gpu::load2`/`load4`/`store2`/`store4`/`copy_async*` move integers and floats: a complex element is read and written whole, `a[i]`"
                }
                Some(Compound::Struct) => {
                    "`gpu::load2`/`load4`/`store2`/`store4`/`copy_async*` move integers and floats, not structs: a struct element is read and written whole, `a[i]`, or by field"
                }
                None => return,
            },
            _ => return,
        };
        self.error_at(e.span, problem);
    }
}
