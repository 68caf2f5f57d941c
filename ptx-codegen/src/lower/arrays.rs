//! The arrays of a kernel: slices, local and shared arrays and views, where their elements
//! are, and the bounds checks of indexing and slicing (a miss writes the thread's fault
//! record, see [`super::explicit_entry`]).

use inkwell::module::Linkage;
use inkwell::types::{BasicType, BasicTypeEnum, VectorType};
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use proc_macro2::Span;

use super::explicit_entry::fault_struct;
use super::nvvm::{SHARED, read_dynamic_smem_size};
use super::types::{memory_type, ret_type};
use super::{FnLower, LResult, Value, internal};
use crate::abi::Fault;
use crate::ir::{ArrayKind, BinaryOp, Expr, ExprKind, LocalId, Type};
use crate::ty::ScalarType;

/// Where an array's elements are, for the function being lowered. A shared array's shape
/// is the program's ([`ArrayKind::Shared`]), known when the kernel is compiled.
#[derive(Copy, Clone)]
pub(super) struct ArrayPlace<'ctx> {
    pub(super) ptr: PointerValue<'ctx>,
    /// Every element (`i64`), whatever the rank: what `len()` gives, as in the simulator.
    pub(super) len: IntValue<'ctx>,
}

fn is_array(t: Type) -> Option<u32> {
    match t {
        Type::Array(a) => Some(a),
        _ => None,
    }
}

impl<'ctx> FnLower<'_, 'ctx> {
    pub(super) fn elem_type(&self, a: u32) -> ScalarType {
        self.array_info[a as usize].elem
    }

    /// `let a = <array>`: a local array's storage (allocated once, filled each time the
    /// `let` runs) or a shared array's global.
    pub(super) fn array_let(&mut self, local: LocalId, init: &Expr) -> LResult<()> {
        let Some(a) = is_array(self.func.local(local).ty) else {
            return Err(internal("an array initialiser for a scalar variable", init.span));
        };
        let info = self.array_info[a as usize].clone();
        let mt = memory_type(self.cx, info.elem);
        let i64t = self.cx.i64_type();
        match (&info.kind, &init.kind) {
            (ArrayKind::Local { len }, ExprKind::ArrayList(_) | ExprKind::ArrayRepeat(..)) => {
                let place = match self.arrays.get(&a) {
                    Some(p) => *p,
                    None => {
                        let ptr = self.alloca(mt.array_type(*len as u32).into(), &self.func.local(local).name)?;
                        let p = ArrayPlace { ptr, len: i64t.const_int(*len, false) };
                        self.arrays.insert(a, p);
                        p
                    }
                };
                let values: Vec<(u64, &Expr)> = match &init.kind {
                    ExprKind::ArrayList(vals) => vals.iter().enumerate().map(|(i, v)| (i as u64, v)).collect(),
                    ExprKind::ArrayRepeat(v, _) => vec![(0, &**v)],
                    _ => unreachable!("matched above"),
                };
                let mut stored = Vec::new();
                for (i, v) in values {
                    let Some(x) = self.expr(v)? else { return Ok(()) };
                    stored.push((i, self.store_value(x, info.elem)?));
                }
                if let ExprKind::ArrayRepeat(..) = init.kind {
                    let x = stored[0].1;
                    stored = (0..*len).map(|i| (i, x)).collect();
                }
                for (i, x) in stored {
                    // SAFETY: `i` is below the array's length (its elements are stored in order).
                    let p = unsafe {
                        self.builder.build_in_bounds_gep(mt, place.ptr, &[i64t.const_int(i, false)], "elem")?
                    };
                    self.builder.build_store(p, x)?;
                }
            }
            (ArrayKind::Shared { dims }, ExprKind::SharedArray) => {
                let name = format!("shared_{a}");
                let total: u64 = dims.iter().product();
                let g = match self.module.get_global(&name) {
                    Some(g) => g,
                    None => {
                        let ty = mt.array_type(total as u32);
                        let g = self.module.add_global(ty, Some(AddressSpace::from(SHARED)), &name);
                        g.set_linkage(Linkage::Internal);
                        g.set_initializer(&ty.get_undef());
                        g.set_alignment(16);
                        g
                    }
                };
                let p = ArrayPlace { ptr: g.as_pointer_value(), len: i64t.const_int(total, false) };
                self.arrays.insert(a, p);
            }
            (ArrayKind::DynamicShared, ExprKind::SharedArray) => {
                // Every `dynamic_shared` is the same memory, as `extern __shared__` in CUDA.
                let name = "dynamic_shared";
                let g = match self.module.get_global(name) {
                    Some(g) => g,
                    None => {
                        let g = self.module.add_global(
                            self.cx.i8_type().array_type(0),
                            Some(AddressSpace::from(SHARED)),
                            name,
                        );
                        g.set_linkage(Linkage::External);
                        g.set_alignment(16);
                        g
                    }
                };
                let bytes = read_dynamic_smem_size(self.cx, &self.builder)?;
                let bytes = self.builder.build_int_z_extend(bytes, i64t, "bytes")?;
                let size = i64t.const_int(info.elem.size_bytes() as u64, false);
                let len = self.builder.build_int_unsigned_div(bytes, size, "len")?;
                self.arrays.insert(a, ArrayPlace { ptr: g.as_pointer_value(), len });
            }
            (ArrayKind::View { base }, ExprKind::ArrayView { bounds, .. }) => {
                let (Some(start), Some(end)) = (self.expr(&bounds[0])?, self.expr(&bounds[1])?) else {
                    return Ok(());
                };
                let (start, end) = (start.into_int_value(), end.into_int_value());
                let whole = self.place(*base, init.span)?;
                // The checks of `&s[start..end]`, in Rust's order (and with its messages,
                // `kernel_abi::Fault`): the start, the end, then the two against each other.
                let b = &self.builder;
                let start_past = b.build_int_compare(IntPredicate::UGT, start, whole.len, "start_past")?;
                self.raise_at(start_past, Fault::SliceStartOutOfRange, start, whole.len)?;
                let end_past = self.builder.build_int_compare(IntPredicate::UGT, end, whole.len, "end_past")?;
                self.raise_at(end_past, Fault::SliceEndOutOfRange, end, whole.len)?;
                let inverted = self.builder.build_int_compare(IntPredicate::UGT, start, end, "inverted")?;
                self.raise_at(inverted, Fault::SliceStartAfterEnd, start, end)?;
                // SAFETY: `start <= end <= len` (checked above): the address is in the array.
                let ptr = unsafe { self.builder.build_in_bounds_gep(mt, whole.ptr, &[start], "view")? };
                let len = self.builder.build_int_sub(end, start, "view_len")?;
                self.arrays.insert(a, ArrayPlace { ptr, len });
            }
            _ => return Err(internal("an array initialiser of the wrong kind", init.span)),
        }
        Ok(())
    }

    pub(super) fn place(&self, a: u32, span: Span) -> LResult<ArrayPlace<'ctx>> {
        self.arrays.get(&a).copied().ok_or_else(|| internal("an array used before its `let`", span))
    }

    /// The address of `a[index]`, bounds-checked when `checked` (a miss raises
    /// [`Fault::IndexOutOfBounds`] with the index and the length).
    pub(super) fn element_ptr(
        &mut self,
        a: u32,
        index: &[Expr],
        checked: bool,
        span: Span,
    ) -> LResult<Option<PointerValue<'ctx>>> {
        let Some(idx) = self.index_values(index)? else { return Ok(None) };
        self.element_ptr_at(a, &idx, checked, span).map(Some)
    }

    /// The values of an index's expressions, in order (`None`: one of them does not
    /// return).
    pub(super) fn index_values(&mut self, index: &[Expr]) -> LResult<Option<Vec<IntValue<'ctx>>>> {
        let mut idx = Vec::new();
        for e in index {
            match self.expr(e)? {
                Some(v) => idx.push(v.into_int_value()),
                None => return Ok(None),
            }
        }
        Ok(Some(idx))
    }

    /// [`FnLower::element_ptr`] at an index already computed: the checks, then the address.
    pub(super) fn element_ptr_at(
        &mut self,
        a: u32,
        idx: &[IntValue<'ctx>],
        checked: bool,
        span: Span,
    ) -> LResult<PointerValue<'ctx>> {
        let place = self.place(a, span)?;
        let i64t = self.cx.i64_type();
        let linear = match (&self.array_info[a as usize].kind, idx) {
            (_, [i]) => {
                if checked {
                    self.check_bounds(*i, place.len)?;
                }
                *i
            }
            // Row-major, each index checked against its own dimension (as indexing
            // `[[T; C]; R]` checks it).
            (ArrayKind::Shared { dims }, idx) if dims.len() == idx.len() => {
                let dims = dims.clone();
                let mut linear = i64t.const_zero();
                for (k, (i, d)) in idx.iter().zip(&dims).enumerate() {
                    let d = i64t.const_int(*d, false);
                    if checked {
                        self.check_bounds(*i, d)?;
                    }
                    linear = if k == 0 {
                        *i
                    } else {
                        let scaled = self.builder.build_int_mul(linear, d, "scaled")?;
                        self.builder.build_int_add(scaled, *i, "linear")?
                    };
                }
                linear
            }
            _ => return Err(internal("an index of the wrong rank", span)),
        };
        let mt = memory_type(self.cx, self.elem_type(a));
        // SAFETY: the index is checked against the length above (or the user vouched for it
        // with `unsafe { get_unchecked }`); `gep` only computes the address.
        let p = unsafe { self.builder.build_gep(mt, place.ptr, &[linear], "elem")? };
        Ok(p)
    }

    /// `gpu::load2/load4(a, i)` (`values: None`: the elements, as a tuple) and
    /// `gpu::store2/store4(a, i, values…)`: the elements `a[i..][..lanes]`, with the checks
    /// of that slice in Rust's order and with its messages (the start against the length,
    /// then `lanes` against what is left). Where their address is aligned to their size,
    /// one vector access (`ld.v4`, `st.v2`, …); elsewhere (an index that is not a multiple
    /// of `lanes`, a view that starts between), one access per element: the same values
    /// either way.
    pub(super) fn vector_access(
        &mut self,
        a: u32,
        index: &Expr,
        lanes: u32,
        values: Option<&[Expr]>,
        e: &Expr,
    ) -> LResult<Value<'ctx>> {
        let Some(i) = self.expr(index)? else { return Ok(None) };
        let i = i.into_int_value();
        let mut stored = Vec::new();
        for v in values.unwrap_or_default() {
            let Some(x) = self.expr(v)? else { return Ok(None) };
            stored.push(x);
        }
        let t = self.elem_type(a);
        let stored: Vec<BasicValueEnum<'ctx>> =
            stored.into_iter().map(|x| self.store_value(x, t)).collect::<LResult<_>>()?;
        let i64t = self.cx.i64_type();
        // `i + lanes <= len` (checked here): the elements are in the array.
        let first = self.window(a, i, i64t.const_int(lanes as u64, false), e.span)?;
        let mt = memory_type(self.cx, t);
        let bytes = lanes * t.size_bytes();
        let addr = self.builder.build_ptr_to_int(first, i64t, "addr")?;
        let low = self.builder.build_and(addr, i64t.const_int(bytes as u64 - 1, false), "misalignment")?;
        let aligned = self.builder.build_int_compare(IntPredicate::EQ, low, i64t.const_zero(), "aligned")?;
        let (vector_bb, scalar_bb, done_bb) = (
            self.cx.append_basic_block(self.llfn, "vector_access"),
            self.cx.append_basic_block(self.llfn, "element_access"),
            self.cx.append_basic_block(self.llfn, "accessed"),
        );
        self.builder.build_conditional_branch(aligned, vector_bb, scalar_bb)?;
        let vt = vector_type(mt, lanes);
        let b = &self.builder;

        b.position_at_end(vector_bb);
        let mut from_vector = Vec::new();
        if stored.is_empty() {
            let v = b.build_load(vt, first, "vector")?;
            let load = v.as_instruction_value().ok_or_else(|| internal("a load that is no instruction", e.span))?;
            load.set_alignment(bytes).map_err(|_| internal("an alignment LLVM refuses", e.span))?;
            for k in 0..lanes {
                let k = self.cx.i32_type().const_int(k as u64, false);
                from_vector.push(b.build_extract_element(v.into_vector_value(), k, "lane")?);
            }
        } else {
            let mut v = vt.get_undef();
            for (k, x) in stored.iter().enumerate() {
                let k = self.cx.i32_type().const_int(k as u64, false);
                v = b.build_insert_element(v, *x, k, "lane")?;
            }
            let store = b.build_store(first, v)?;
            store.set_alignment(bytes).map_err(|_| internal("an alignment LLVM refuses", e.span))?;
        }
        b.build_unconditional_branch(done_bb)?;

        b.position_at_end(scalar_bb);
        let mut from_elements = Vec::new();
        for k in 0..lanes {
            // SAFETY: `k < lanes`: in the elements checked above.
            let p = unsafe { b.build_in_bounds_gep(mt, first, &[i64t.const_int(k as u64, false)], "element")? };
            match stored.get(k as usize) {
                Some(x) => {
                    let store = b.build_store(p, *x)?;
                    store.set_alignment(t.size_bytes()).map_err(|_| internal("an alignment LLVM refuses", e.span))?;
                }
                // Volatile, so that LLVM keeps the two paths apart: it would otherwise see
                // that both read the same elements and keep only these loads, which any
                // alignment allows, dropping the vector load.
                None => {
                    let v = b.build_load(mt, p, "element")?;
                    let load =
                        v.as_instruction_value().ok_or_else(|| internal("a load that is no instruction", e.span))?;
                    load.set_volatile(true).map_err(|_| internal("a load LLVM cannot make volatile", e.span))?;
                    load.set_alignment(t.size_bytes()).map_err(|_| internal("an alignment LLVM refuses", e.span))?;
                    from_elements.push(v)
                }
            }
        }
        b.build_unconditional_branch(done_bb)?;

        b.position_at_end(done_bb);
        if !stored.is_empty() {
            return Ok(None);
        }
        let ty = self.value_type(e.ty).ok_or_else(|| internal("a vector load without a tuple type", e.span))?;
        // The phis first: they lead their block.
        let mut lanes = Vec::new();
        for (v, s) in from_vector.into_iter().zip(from_elements) {
            let phi = self.builder.build_phi(mt, "lane")?;
            phi.add_incoming(&[(&v, vector_bb), (&s, scalar_bb)]);
            lanes.push(phi.as_basic_value());
        }
        let mut agg = ty.into_struct_type().get_undef();
        for (k, v) in lanes.into_iter().enumerate() {
            let x = self.load_value(v, t)?;
            agg = self.builder.build_insert_value(agg, x, k as u32, "tuple")?.into_struct_value();
        }
        Ok(Some(agg.into()))
    }

    /// The checks of `&a[i..][..n]` in Rust's order and with its messages (the start
    /// against the length, then `n` against what is left); gives `&a[i]`.
    pub(super) fn window(
        &mut self,
        a: u32,
        i: IntValue<'ctx>,
        n: IntValue<'ctx>,
        span: Span,
    ) -> LResult<PointerValue<'ctx>> {
        let place = self.place(a, span)?;
        let start_past = self.builder.build_int_compare(IntPredicate::UGT, i, place.len, "start_past")?;
        let rest = self.builder.build_int_sub(place.len, i, "rest")?;
        let short = self.builder.build_int_compare(IntPredicate::UGT, n, rest, "short")?;
        // One branch on the way through; which check failed is sorted out off it.
        let outside = self.builder.build_or(start_past, short, "outside")?;
        let outside = self.unlikely(outside)?;
        let (slow, inside) =
            (self.cx.append_basic_block(self.llfn, "window_fault"), self.cx.append_basic_block(self.llfn, "window"));
        self.builder.build_conditional_branch(outside, slow, inside)?;
        self.builder.position_at_end(slow);
        self.raise_at(start_past, Fault::SliceStartOutOfRange, i, place.len)?;
        self.raise_at(short, Fault::SliceEndOutOfRange, n, rest)?;
        self.builder.build_unconditional_branch(inside)?;
        self.builder.position_at_end(inside);
        let mt = memory_type(self.cx, self.elem_type(a));
        // SAFETY: `i <= len` (checked above).
        Ok(unsafe { self.builder.build_in_bounds_gep(mt, place.ptr, &[i], "first")? })
    }

    /// `&a[i]` without a check (`get_unchecked`'s address).
    fn unchecked_first(&mut self, a: u32, i: IntValue<'ctx>, span: Span) -> LResult<PointerValue<'ctx>> {
        let place = self.place(a, span)?;
        let mt = memory_type(self.cx, self.elem_type(a));
        // SAFETY: LLVM's GEP itself is not a memory access; the caller's `unsafe` block
        // vouches that `a[i..][..n]` is in bounds.
        Ok(unsafe { self.builder.build_in_bounds_gep(mt, place.ptr, &[i], "first")? })
    }

    /// `gpu::copy_asyncN(dst, i, src, j)`: the checks of `dst[i..][..lanes]`, then of
    /// `src[j..][..lanes]` (Rust's `dst[i..][..n].copy_from_slice(&src[j..][..n])`; none for
    /// `copy_asyncN_unchecked`, `checked` false), then `cp.async` (`.cg` for 16 bytes, `.ca`
    /// for 4 and 8; several of 16 bytes for more) where both addresses are aligned to the
    /// copy's size, and a copy element by element (at once) elsewhere.
    pub(super) fn copy_async(
        &mut self,
        dst: u32,
        dst_index: &Expr,
        src: u32,
        src_index: &Expr,
        (lanes, checked): (u32, bool),
        e: &Expr,
    ) -> LResult<Value<'ctx>> {
        let Some(i) = self.expr(dst_index)? else { return Ok(None) };
        let Some(j) = self.expr(src_index)? else { return Ok(None) };
        let (i, j) = (i.into_int_value(), j.into_int_value());
        let (to, from) = if checked {
            let n = self.cx.i64_type().const_int(u64::from(lanes), false);
            (self.window(dst, i, n, e.span)?, self.window(src, j, n, e.span)?)
        } else {
            (self.unchecked_first(dst, i, e.span)?, self.unchecked_first(src, j, e.span)?)
        };
        let t = self.elem_type(dst);
        let bytes = lanes * t.size_bytes();
        let piece = bytes.min(16);
        let i64t = self.cx.i64_type();
        let b = &self.builder;
        let low = |p: PointerValue<'ctx>, name: &str| -> LResult<IntValue<'ctx>> {
            let addr = b.build_ptr_to_int(p, i64t, name)?;
            Ok(b.build_and(addr, i64t.const_int(u64::from(piece) - 1, false), name)?)
        };
        let (async_bb, element_bb, done_bb) = (
            self.cx.append_basic_block(self.llfn, "copy_async"),
            self.cx.append_basic_block(self.llfn, "copy_elements"),
            self.cx.append_basic_block(self.llfn, "copied"),
        );
        if piece <= t.align_bytes() {
            // Every element's address is aligned to its type (slices and shared arrays
            // are), so pieces no larger than that alignment always are: no test.
            b.build_unconditional_branch(async_bb)?;
        } else {
            let misaligned = b.build_or(low(to, "to_low")?, low(from, "from_low")?, "misaligned")?;
            let aligned = b.build_int_compare(IntPredicate::EQ, misaligned, i64t.const_zero(), "aligned")?;
            b.build_conditional_branch(aligned, async_bb, element_bb)?;
        }

        b.position_at_end(async_bb);
        let name = match piece {
            16 => "llvm.nvvm.cp.async.cg.shared.global.16",
            8 => "llvm.nvvm.cp.async.ca.shared.global.8",
            _ => "llvm.nvvm.cp.async.ca.shared.global.4",
        };
        let decl = self.intrinsic_decl(name, &[])?;
        let i8t = self.cx.i8_type();
        for k in 0..bytes / piece {
            let at = i64t.const_int(u64::from(k * piece), false);
            // SAFETY: `k * piece < bytes`: in the windows checked above.
            let (d, s) = unsafe {
                (b.build_in_bounds_gep(i8t, to, &[at], "to")?, b.build_in_bounds_gep(i8t, from, &[at], "from")?)
            };
            b.build_call(decl, &[d.into(), s.into()], "")?;
        }
        b.build_unconditional_branch(done_bb)?;

        // The element path is a loop that is never unrolled (`.pragma "nounroll"` in the
        // PTX): unrolled, it was short enough for ptxas to predicate instead of branching
        // around, so every aligned copy also issued its `lanes` loads and stores.
        b.position_at_end(element_bb);
        let loop_bb = self.cx.append_basic_block(self.llfn, "copy_element");
        b.build_unconditional_branch(loop_bb)?;
        b.position_at_end(loop_bb);
        let k = b.build_phi(i64t, "k")?;
        let mt = memory_type(self.cx, t);
        let at = k.as_basic_value().into_int_value();
        // SAFETY: `k < lanes`: in the windows checked above.
        let (d, s) =
            unsafe { (b.build_in_bounds_gep(mt, to, &[at], "to")?, b.build_in_bounds_gep(mt, from, &[at], "from")?) };
        let v = b.build_load(mt, s, "element")?;
        b.build_store(d, v)?;
        let next = b.build_int_add(at, i64t.const_int(1, false), "next")?;
        let more = b.build_int_compare(IntPredicate::ULT, next, i64t.const_int(u64::from(lanes), false), "more")?;
        let back = b.build_conditional_branch(more, loop_bb, done_bb)?;
        k.add_incoming(&[(&i64t.const_zero(), element_bb), (&next, loop_bb)]);
        never_unroll(self.cx, back);
        b.position_at_end(done_bb);
        Ok(None)
    }

    pub(super) fn check_bounds(&mut self, i: IntValue<'ctx>, len: IntValue<'ctx>) -> LResult<()> {
        let out = self.builder.build_int_compare(IntPredicate::UGE, i, len, "out_of_bounds")?;
        self.raise_at(out, Fault::IndexOutOfBounds, i, len)
    }

    /// `if cond { raise fault(index, len) }`, on a branch marked unlikely: a fault of the
    /// fault record's kind, which carries two numbers (an index and a length).
    pub(super) fn raise_at(
        &mut self,
        cond: IntValue<'ctx>,
        fault: Fault,
        index: IntValue<'ctx>,
        len: IntValue<'ctx>,
    ) -> LResult<()> {
        let code = self.cx.i32_type().const_int(fault.code() as u64, false);
        self.raise_record(cond, code, index, len)
    }

    /// Where `cond` holds, fills the kernel's fault record (`code`, and two `i64` words:
    /// an index and a length, or what else the code says) and returns.
    pub(super) fn raise_record(
        &mut self,
        cond: IntValue<'ctx>,
        code: IntValue<'ctx>,
        index: IntValue<'ctx>,
        len: IntValue<'ctx>,
    ) -> LResult<()> {
        let Some(err) = self.err else {
            return Err(internal("a fault record is filled in a function without one", self.func.span));
        };
        let fail = self.cx.append_basic_block(self.llfn, "index_fault");
        let cont = self.cx.append_basic_block(self.llfn, "in_bounds");
        let cond = self.unlikely(cond)?;
        self.builder.build_conditional_branch(cond, fail, cont)?;
        self.builder.position_at_end(fail);
        let st = fault_struct(self.cx);
        self.builder.build_store(err, code)?;
        self.builder.build_store(self.builder.build_struct_gep(st, err, 1, "fault_index")?, index)?;
        self.builder.build_store(self.builder.build_struct_gep(st, err, 2, "fault_len")?, len)?;
        let ret_ty = ret_type(self.cx, &self.func.ret);
        self.builder.build_store(self.ret_slot.expect("set before the body"), ret_ty.const_zero())?;
        self.builder.build_unconditional_branch(self.ret_bb.expect("set before the body"))?;
        self.builder.position_at_end(cont);
        Ok(())
    }

    /// `*p = v` (`op: None`) or `*p = *p op v` for a scalar of type `t` in memory at `p`;
    /// `value` is `v`'s expression (its type, and the divisor's checks).
    pub(super) fn store_updated(
        &mut self,
        p: PointerValue<'ctx>,
        t: ScalarType,
        op: Option<BinaryOp>,
        v: BasicValueEnum<'ctx>,
        value: &Expr,
    ) -> LResult<()> {
        let nv = match op {
            None => v,
            Some(op) => {
                let cur = self.builder.build_load(memory_type(self.cx, t), p, "cur")?;
                let cur = self.load_value(cur, t)?;
                self.binary(op, cur, t, v, self.scalar_of(value)?, value)?
            }
        };
        let nv = self.store_value(nv, t)?;
        self.builder.build_store(p, nv)?;
        Ok(())
    }

    /// A value as stored in memory (`bool` as a byte).
    pub(super) fn store_value(&self, v: BasicValueEnum<'ctx>, t: ScalarType) -> LResult<BasicValueEnum<'ctx>> {
        Ok(match t {
            ScalarType::Bool => self.builder.build_int_z_extend(v.into_int_value(), self.cx.i8_type(), "byte")?.into(),
            _ => v,
        })
    }

    pub(super) fn load_value(&self, v: BasicValueEnum<'ctx>, t: ScalarType) -> LResult<BasicValueEnum<'ctx>> {
        Ok(match t {
            ScalarType::Bool => {
                let zero = self.cx.i8_type().const_zero();
                self.builder.build_int_compare(IntPredicate::NE, v.into_int_value(), zero, "bool")?.into()
            }
            _ => v,
        })
    }
}

/// `lanes` elements of memory type `mt` as one LLVM vector.
fn vector_type<'ctx>(mt: BasicTypeEnum<'ctx>, lanes: u32) -> VectorType<'ctx> {
    match mt {
        BasicTypeEnum::IntType(t) => t.vec_type(lanes),
        BasicTypeEnum::FloatType(t) => t.vec_type(lanes),
        other => unreachable!("a scalar's memory type is an integer or a float, not {other:?}"),
    }
}

/// Marks the loop whose back edge is `back` never to be unrolled
/// (`!llvm.loop !{self, !{"llvm.loop.unroll.disable"}}`, which the NVPTX backend also
/// writes as `.pragma "nounroll"` for ptxas).
fn never_unroll(cx: &inkwell::context::Context, back: inkwell::values::InstructionValue<'_>) {
    use inkwell::context::AsContextRef;
    use inkwell::llvm_sys::core::{
        LLVMGetMDKindIDInContext, LLVMMDNodeInContext2, LLVMMDStringInContext2, LLVMMetadataAsValue, LLVMSetMetadata,
    };
    use inkwell::llvm_sys::debuginfo::{LLVMMetadataReplaceAllUsesWith, LLVMTemporaryMDNode};
    use inkwell::values::AsValueRef;
    let c = cx.as_ctx_ref();
    let name = "llvm.loop.unroll.disable";
    let kind = "llvm.loop";
    // SAFETY: every reference is into `cx`, which outlives the calls; the temporary node
    // is replaced by the loop's own node (making it refer to itself, as loop IDs do) and
    // freed by that replacement.
    unsafe {
        let disable = LLVMMDStringInContext2(c, name.as_ptr().cast(), name.len());
        let mut inner = [disable];
        let option = LLVMMDNodeInContext2(c, inner.as_mut_ptr(), 1);
        let temp = LLVMTemporaryMDNode(c, std::ptr::null_mut(), 0);
        let mut ops = [temp, option];
        let id = LLVMMDNodeInContext2(c, ops.as_mut_ptr(), 2);
        LLVMMetadataReplaceAllUsesWith(temp, id);
        let kind_id = LLVMGetMDKindIDInContext(c, kind.as_ptr().cast(), kind.len() as u32);
        LLVMSetMetadata(back.as_value_ref(), kind_id, LLVMMetadataAsValue(c, id));
    }
}
