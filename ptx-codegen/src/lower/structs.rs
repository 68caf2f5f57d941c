//! User structs: a part is read and written through its address (a variable's slot, an
//! element's address, or a temporary's), one `getelementptr` per step; a literal is built
//! field by field.

use inkwell::types::BasicType;
use inkwell::values::{BasicValueEnum, PointerValue};
use proc_macro2::Span;

use super::types::{llvm_type, memory_type};
use super::{FnLower, LResult, Value, internal};
use crate::ir::{Expr, ExprKind, Step};
use crate::ty::ScalarType;

impl<'ctx> FnLower<'_, 'ctx> {
    pub(super) fn struct_expr(&mut self, e: &Expr) -> LResult<Value<'ctx>> {
        match &e.kind {
            ExprKind::Member { base, path } => {
                let Some((p, leaf)) = self.part_ptr(base, path, e.span)? else { return Ok(None) };
                let v = self.builder.build_load(memory_type(self.cx, leaf), p, "part")?;
                Ok(Some(self.load_value(v, leaf)?))
            }
            ExprKind::AssignMember { place, path, leaf, op, value } => {
                // The value first, then the place (Rust's order for primitives).
                let Some(v) = self.expr(value)? else { return Ok(None) };
                let Some((p, _)) = self.part_ptr(place, path, e.span)? else { return Ok(None) };
                self.store_updated(p, *leaf, *op, v, value)?;
                Ok(None)
            }
            ExprKind::StructLit(fields) => {
                let t = self.scalar_of(e)?;
                let def = t.struct_def().ok_or_else(|| internal("a struct literal of another type", e.span))?;
                let mut agg = llvm_type(self.cx, t).into_struct_type().get_undef();
                for (i, (field, value)) in def.fields.iter().zip(fields).enumerate() {
                    let v = match (field.len, &value.kind) {
                        (None, _) => match self.expr(value)? {
                            Some(v) => self.store_value(v, field.ty)?,
                            None => return Ok(None),
                        },
                        (Some(len), kind) => match self.array_value(field.ty, len, kind, value.span)? {
                            Some(v) => v,
                            None => return Ok(None),
                        },
                    };
                    agg = self.builder.build_insert_value(agg, v, i as u32, "field")?.into_struct_value();
                }
                Ok(Some(agg.into()))
            }
            _ => Err(internal("not a struct expression", e.span)),
        }
    }

    /// An array field's value from `[x, y, z]` or `[v; n]` (`v` evaluated once).
    fn array_value(
        &mut self,
        elem: ScalarType,
        len: u64,
        kind: &ExprKind,
        span: Span,
    ) -> LResult<Option<BasicValueEnum<'ctx>>> {
        let at = memory_type(self.cx, elem).array_type(len as u32);
        let mut agg = at.get_undef();
        let values: Vec<BasicValueEnum<'ctx>> = match kind {
            ExprKind::ArrayList(vals) => {
                let mut out = Vec::with_capacity(vals.len());
                for v in vals {
                    match self.expr(v)? {
                        Some(v) => out.push(self.store_value(v, elem)?),
                        None => return Ok(None),
                    }
                }
                out
            }
            ExprKind::ArrayRepeat(v, _) => match self.expr(v)? {
                Some(v) => vec![self.store_value(v, elem)?; len as usize],
                None => return Ok(None),
            },
            _ => return Err(internal("an array field's value of the wrong kind", span)),
        };
        if values.len() as u64 != len {
            return Err(internal("an array field's value of the wrong length", span));
        }
        for (i, v) in values.into_iter().enumerate() {
            agg = self.builder.build_insert_value(agg, v, i as u32, "elem")?.into_array_value();
        }
        Ok(Some(agg.into()))
    }

    /// The address of the part `path` of the struct `root` (a variable, an element, or
    /// another value, kept in a temporary), and the part's type; each array index is
    /// bounds-checked as it is reached.
    fn part_ptr(
        &mut self,
        root: &Expr,
        path: &[Step],
        span: Span,
    ) -> LResult<Option<(PointerValue<'ctx>, ScalarType)>> {
        let mut t = self.scalar_of(root)?;
        let mut p = match &root.kind {
            ExprKind::Local(id) => self.slot(*id)?,
            ExprKind::Index { array, index, checked } => match self.element_ptr(*array, index, *checked, span)? {
                Some(p) => p,
                None => return Ok(None),
            },
            _ => {
                let Some(v) = self.expr(root)? else { return Ok(None) };
                let tmp = self.alloca(llvm_type(self.cx, t), "struct")?;
                self.builder.build_store(tmp, v)?;
                tmp
            }
        };
        let i64t = self.cx.i64_type();
        let mut array: Option<u64> = None;
        for step in path {
            match step {
                Step::Field(i) => {
                    let def =
                        t.struct_def().ok_or_else(|| internal("a field of a value that is not a struct", span))?;
                    let st = llvm_type(self.cx, t).into_struct_type();
                    p = self.builder.build_struct_gep(st, p, *i, "field")?;
                    let field = def.fields.get(*i as usize).ok_or_else(|| internal("a field out of range", span))?;
                    t = field.ty;
                    array = field.len;
                }
                Step::Elem { index, len } => {
                    if array != Some(*len) {
                        return Err(internal("an element of a field that is not an array of its length", span));
                    }
                    let Some(i) = self.expr(index)? else { return Ok(None) };
                    let i = i.into_int_value();
                    self.check_bounds(i, i64t.const_int(*len, false))?;
                    let at = memory_type(self.cx, t).array_type(*len as u32);
                    // SAFETY: the index is checked against the array's length above; `gep`
                    // only computes the address.
                    p = unsafe { self.builder.build_gep(at, p, &[i64t.const_zero(), i], "elem")? };
                    array = None;
                }
            }
        }
        if array.is_some() {
            return Err(internal("a whole array field as a value", span));
        }
        Ok(Some((p, t)))
    }
}
