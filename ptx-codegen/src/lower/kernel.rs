//! Explicit kernels: arrays (slices, local and shared), bounds checks, the GPU's built-ins,
//! atomics, and the `.entry` that runs the kernel body once per thread and writes the
//! [`kernel_abi::ThreadFault`] record of the first failing thread.

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic as LlvmIntrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicMetadataTypeEnum, BasicType};
use inkwell::values::{AsValueRef, BasicMetadataValueEnum, BasicValueEnum, FunctionValue, IntValue, PointerValue};
use inkwell::{AddressSpace, AtomicOrdering, AtomicRMWBinOp, FloatPredicate, IntPredicate};
use proc_macro2::Span;

use super::{FnLower, LResult, Value, basic_value, internal, memory_type};
use crate::abi::Fault;
use crate::ir::{ArrayKind, AtomicOp, Expr, ExprKind, GpuOp, LocalId, Program, Type};
use crate::options::LaunchBounds;
use crate::ty::ScalarType;

/// Where an array's elements are, for the function being lowered. A shared array's shape
/// is the program's ([`ArrayKind::Shared`]), known when the kernel is compiled.
#[derive(Copy, Clone)]
pub(super) struct ArrayPlace<'ctx> {
    pub(super) ptr: PointerValue<'ctx>,
    /// Every element (`i64`), whatever the rank: what `len()` gives, as in the simulator.
    pub(super) len: IntValue<'ctx>,
}

/// The global address space (slices) and the shared one.
pub(super) const GLOBAL: u16 = 1;
const SHARED: u16 = 3;

/// The per-thread fault record the kernel body writes: `{ code: i32, index: i64, len: i64 }`
/// (the code first, where the scalar functions' `i32` fault code is).
fn fault_struct(cx: &Context) -> inkwell::types::StructType<'_> {
    cx.struct_type(&[cx.i32_type().into(), cx.i64_type().into(), cx.i64_type().into()], false)
}

/// The integer type of a scalar's bits (`bool` is `i1`).
fn bits_type(cx: &Context, t: ScalarType) -> inkwell::types::IntType<'_> {
    match t {
        ScalarType::F32 => cx.i32_type(),
        ScalarType::F64 => cx.i64_type(),
        t => super::int_type(cx, t),
    }
}

fn is_array(t: Type) -> Option<u32> {
    match t {
        Type::Array(a) => Some(a),
        _ => None,
    }
}

impl<'ctx> FnLower<'_, 'ctx> {
    fn elem_type(&self, a: u32) -> ScalarType {
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
                // LLVM 19 has no intrinsic for this special register.
                let bytes = self.asm_u32("mov.u32 $0, %dynamic_smem_size;")?;
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

    /// An inline-assembly instruction that writes one `u32` (`$0`), a value that is the same
    /// wherever in the kernel it is read (LLVM may merge or move it).
    fn asm_u32(&self, asm: &str) -> LResult<IntValue<'ctx>> {
        let ty = self.cx.i32_type().fn_type(&[], false);
        let f = self.cx.create_inline_asm(ty, asm.to_string(), "=r".to_string(), false, false, None, false);
        let call = self.builder.build_indirect_call(ty, f, &[], "asm")?;
        Ok(basic_value(call.try_as_basic_value(), self.func.span)?.into_int_value())
    }

    fn place(&self, a: u32, span: Span) -> LResult<ArrayPlace<'ctx>> {
        self.arrays.get(&a).copied().ok_or_else(|| internal("an array used before its `let`", span))
    }

    /// The address of `a[index]`, bounds-checked when `checked` (a miss raises
    /// [`Fault::IndexOutOfBounds`] with the index and the length).
    fn element_ptr(
        &mut self,
        a: u32,
        index: &[Expr],
        checked: bool,
        span: Span,
    ) -> LResult<Option<PointerValue<'ctx>>> {
        let mut idx = Vec::new();
        for e in index {
            match self.expr(e)? {
                Some(v) => idx.push(v.into_int_value()),
                None => return Ok(None),
            }
        }
        let place = self.place(a, span)?;
        let i64t = self.cx.i64_type();
        let linear = match (&self.array_info[a as usize].kind, idx.as_slice()) {
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
        Ok(Some(p))
    }

    fn check_bounds(&mut self, i: IntValue<'ctx>, len: IntValue<'ctx>) -> LResult<()> {
        let out = self.builder.build_int_compare(IntPredicate::UGE, i, len, "out_of_bounds")?;
        self.raise_at(out, Fault::IndexOutOfBounds, i, len)
    }

    /// `if cond { raise fault(index, len) }`, on a branch marked unlikely: a fault of the
    /// fault record's kind, which carries two numbers (an index and a length).
    fn raise_at(
        &mut self,
        cond: IntValue<'ctx>,
        fault: Fault,
        index: IntValue<'ctx>,
        len: IntValue<'ctx>,
    ) -> LResult<()> {
        let Some(err) = self.err else {
            return Err(internal("an index is checked in a function without a fault record", self.func.span));
        };
        let fail = self.cx.append_basic_block(self.llfn, "index_fault");
        let cont = self.cx.append_basic_block(self.llfn, "in_bounds");
        let cond = self.unlikely(cond)?;
        self.builder.build_conditional_branch(cond, fail, cont)?;
        self.builder.position_at_end(fail);
        let st = fault_struct(self.cx);
        let code = self.cx.i32_type().const_int(fault.code() as u64, false);
        self.builder.build_store(err, code)?;
        self.builder.build_store(self.builder.build_struct_gep(st, err, 1, "fault_index")?, index)?;
        self.builder.build_store(self.builder.build_struct_gep(st, err, 2, "fault_len")?, len)?;
        let ret_ty = super::ret_type(self.cx, &self.func.ret);
        self.builder.build_store(self.ret_slot.expect("set before the body"), ret_ty.const_zero())?;
        self.builder.build_unconditional_branch(self.ret_bb.expect("set before the body"))?;
        self.builder.position_at_end(cont);
        Ok(())
    }

    /// A value as stored in memory (`bool` as a byte).
    fn store_value(&self, v: BasicValueEnum<'ctx>, t: ScalarType) -> LResult<BasicValueEnum<'ctx>> {
        Ok(match t {
            ScalarType::Bool => self.builder.build_int_z_extend(v.into_int_value(), self.cx.i8_type(), "byte")?.into(),
            _ => v,
        })
    }

    fn load_value(&self, v: BasicValueEnum<'ctx>, t: ScalarType) -> LResult<BasicValueEnum<'ctx>> {
        Ok(match t {
            ScalarType::Bool => {
                let zero = self.cx.i8_type().const_zero();
                self.builder.build_int_compare(IntPredicate::NE, v.into_int_value(), zero, "bool")?.into()
            }
            _ => v,
        })
    }

    /// The kernel language's own expressions (arrays, GPU built-ins, atomics).
    pub(super) fn kernel_expr(&mut self, e: &Expr) -> LResult<Value<'ctx>> {
        match &e.kind {
            ExprKind::Index { array, index, checked } => {
                let Some(p) = self.element_ptr(*array, index, *checked, e.span)? else { return Ok(None) };
                let t = self.elem_type(*array);
                let v = self.builder.build_load(memory_type(self.cx, t), p, "element")?;
                Ok(Some(self.load_value(v, t)?))
            }
            ExprKind::ArrayLen(a) => {
                let place = self.place(*a, e.span)?;
                Ok(Some(place.len.into()))
            }
            ExprKind::AssignIndex { array, elem, index, checked, op, value } => {
                let Some(v) = self.expr(value)? else { return Ok(None) };
                let Some(p) = self.element_ptr(*array, index, *checked, e.span)? else { return Ok(None) };
                let nv = match op {
                    None => v,
                    Some(op) => {
                        let cur = self.builder.build_load(memory_type(self.cx, *elem), p, "cur")?;
                        let cur = self.load_value(cur, *elem)?;
                        self.binary(*op, cur, *elem, v, self.scalar_of(value)?, value)?
                    }
                };
                let nv = self.store_value(nv, *elem)?;
                self.builder.build_store(p, nv)?;
                Ok(None)
            }
            ExprKind::Atomic { op, array, index, args } => self.atomic(*op, *array, index, args, e.span),
            ExprKind::Gpu(op, args) => self.gpu(*op, args, e),
            _ => Err(internal("an array initialiser outside a `let`", e.span)),
        }
    }

    /// `gpu::atomic::*` (relaxed ordering: LLVM's `monotonic`, PTX's `atom` without
    /// `.acq`/`.rel`; order with `sync_threads` or the fences).
    fn atomic(&mut self, op: AtomicOp, a: u32, index: &[Expr], args: &[Expr], span: Span) -> LResult<Value<'ctx>> {
        let mut vals = Vec::new();
        for x in args {
            match self.expr(x)? {
                Some(v) => vals.push(v),
                None => return Ok(None),
            }
        }
        let Some(p) = self.element_ptr(a, index, true, span)? else { return Ok(None) };
        let t = self.elem_type(a);
        let ord = AtomicOrdering::Monotonic;
        let b = &self.builder;
        if op == AtomicOp::CompareAndSwap {
            let pair = b.build_cmpxchg(p, vals[0].into_int_value(), vals[1].into_int_value(), ord, ord)?;
            return Ok(Some(b.build_extract_value(pair, 0, "old")?));
        }
        let v = vals[0];
        if t.is_float() {
            return Ok(Some(match op {
                AtomicOp::Add | AtomicOp::Sub => {
                    let x = v.into_float_value();
                    let x = if op == AtomicOp::Sub { b.build_float_neg(x, "neg")? } else { x };
                    // SAFETY: the builder is positioned, `p` points to a float of `x`'s
                    // type, and the result is a float value of that type.
                    unsafe {
                        use inkwell::llvm_sys::LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic;
                        use inkwell::llvm_sys::LLVMAtomicRMWBinOp::LLVMAtomicRMWBinOpFAdd;
                        let r = inkwell::llvm_sys::core::LLVMBuildAtomicRMW(
                            b.as_mut_ptr(),
                            LLVMAtomicRMWBinOpFAdd,
                            p.as_value_ref(),
                            x.as_value_ref(),
                            LLVMAtomicOrderingMonotonic,
                            0,
                        );
                        inkwell::values::FloatValue::new(r).into()
                    }
                }
                AtomicOp::Exchange => {
                    let it = bits_type(self.cx, t);
                    let bits = b.build_bit_cast(v, it, "bits")?.into_int_value();
                    let old = b.build_atomicrmw(AtomicRMWBinOp::Xchg, p, bits, ord)?;
                    b.build_bit_cast(old, v.get_type(), "old")?
                }
                AtomicOp::Min | AtomicOp::Max | AtomicOp::NanMin | AtomicOp::NanMax => {
                    self.float_min_max(op, p, t, v.into_float_value())?.into()
                }
                _ => return Err(internal("a float atomic the frontend refuses", span)),
            }));
        }
        let signed = t.is_signed_int();
        let rmw = match op {
            AtomicOp::Add => AtomicRMWBinOp::Add,
            AtomicOp::Sub => AtomicRMWBinOp::Sub,
            AtomicOp::Min | AtomicOp::NanMin if signed => AtomicRMWBinOp::Min,
            AtomicOp::Min | AtomicOp::NanMin => AtomicRMWBinOp::UMin,
            AtomicOp::Max | AtomicOp::NanMax if signed => AtomicRMWBinOp::Max,
            AtomicOp::Max | AtomicOp::NanMax => AtomicRMWBinOp::UMax,
            // LLVM 19's NVPTX backend makes a compare-and-swap loop of `uinc_wrap` and
            // `udec_wrap`; 32-bit ones have their own instructions.
            AtomicOp::Inc | AtomicOp::Dec if t.bits() == 32 => {
                return Ok(Some(self.atom_inc_dec(op == AtomicOp::Inc, p, v.into_int_value())?.into()));
            }
            AtomicOp::Inc => AtomicRMWBinOp::UIncWrap,
            AtomicOp::Dec => AtomicRMWBinOp::UDecWrap,
            AtomicOp::Exchange => AtomicRMWBinOp::Xchg,
            AtomicOp::And => AtomicRMWBinOp::And,
            AtomicOp::Or => AtomicRMWBinOp::Or,
            AtomicOp::Xor => AtomicRMWBinOp::Xor,
            AtomicOp::CompareAndSwap => unreachable!("handled above"),
        };
        Ok(Some(b.build_atomicrmw(rmw, p, v.into_int_value(), ord)?.into()))
    }

    /// A float atomic minimum or maximum, with Numba's NaN rules: `min`/`max` store `v`
    /// only when it is ordered below/above the value in memory (so a NaN in memory stays
    /// and a NaN `v` is ignored); `nanmin`/`nanmax` also replace a NaN in memory (a NaN `v`
    /// is still ignored). IEEE comparisons: `-0.0` and `0.0` are equal. A compare-and-swap
    /// loop on the bits, which returns the value it decided on (the old value, as an atomic
    /// read would have seen it).
    fn float_min_max(
        &mut self,
        op: AtomicOp,
        p: PointerValue<'ctx>,
        t: ScalarType,
        v: inkwell::values::FloatValue<'ctx>,
    ) -> LResult<inkwell::values::FloatValue<'ctx>> {
        let it = bits_type(self.cx, t);
        let ord = AtomicOrdering::Monotonic;
        let b = &self.builder;
        let v_bits = b.build_bit_cast(v, it, "v_bits")?.into_int_value();
        let first = b.build_load(it, p, "first")?.into_int_value();
        // An atomic load must be aligned to its size (the module's data layout is not set
        // yet, and LLVM's default aligns `i64` to 4 bytes, which it would turn into a call).
        first
            .as_instruction()
            .and_then(|i| i.set_alignment(t.size_bytes() as u32).ok().and_then(|_| i.set_atomic_ordering(ord).ok()))
            .ok_or_else(|| internal("cannot make the load atomic", self.func.span))?;
        let from = b.get_insert_block().ok_or_else(|| internal("an unpositioned builder", self.func.span))?;
        let head = self.cx.append_basic_block(self.llfn, "minmax");
        let swap = self.cx.append_basic_block(self.llfn, "minmax_swap");
        let done = self.cx.append_basic_block(self.llfn, "minmax_done");
        b.build_unconditional_branch(head)?;
        b.position_at_end(head);
        let cur = b.build_phi(it, "cur")?;
        cur.add_incoming(&[(&first, from)]);
        let cur_bits = cur.as_basic_value().into_int_value();
        let cur_f = b.build_bit_cast(cur_bits, v.get_type(), "cur_f")?.into_float_value();
        let (pred, nan_replaced) = match op {
            AtomicOp::Min => (FloatPredicate::OGT, false),
            AtomicOp::Max => (FloatPredicate::OLT, false),
            AtomicOp::NanMin => (FloatPredicate::UGT, true),
            _ => (FloatPredicate::ULT, true),
        };
        let mut store = b.build_float_compare(pred, cur_f, v, "better")?;
        if nan_replaced {
            let v_ordered = b.build_float_compare(FloatPredicate::ORD, v, v, "v_ordered")?;
            store = b.build_and(store, v_ordered, "store")?;
        }
        b.build_conditional_branch(store, swap, done)?;
        b.position_at_end(swap);
        let pair = b.build_cmpxchg(p, cur_bits, v_bits, ord, ord)?;
        let seen = b.build_extract_value(pair, 0, "seen")?.into_int_value();
        let swapped = b.build_extract_value(pair, 1, "swapped")?.into_int_value();
        cur.add_incoming(&[(&seen, swap)]);
        b.build_conditional_branch(swapped, done, head)?;
        b.position_at_end(done);
        // The old value: what the last comparison saw (swapped or left alone).
        let old = b.build_phi(it, "old")?;
        old.add_incoming(&[(&cur_bits, head), (&cur_bits, swap)]);
        Ok(b.build_bit_cast(old.as_basic_value(), v.get_type(), "old_f")?.into_float_value())
    }

    /// `atom.inc.u32` / `atom.dec.u32` on global or shared memory (by the pointer's address
    /// space), as inline assembly that reads and writes memory.
    fn atom_inc_dec(&self, inc: bool, p: PointerValue<'ctx>, v: IntValue<'ctx>) -> LResult<IntValue<'ctx>> {
        let space = if p.get_type().get_address_space() == AddressSpace::from(SHARED) { "shared" } else { "global" };
        let op = if inc { "inc" } else { "dec" };
        let i32t = self.cx.i32_type();
        let ty = i32t.fn_type(&[p.get_type().into(), i32t.into()], false);
        let asm = format!("atom.{space}.{op}.u32 $0, [$1], $2;");
        let f = self.cx.create_inline_asm(ty, asm, "=r,l,r,~{memory}".to_string(), true, false, None, false);
        let call = self.builder.build_indirect_call(ty, f, &[p.into(), v.into()], "old")?;
        Ok(basic_value(call.try_as_basic_value(), self.func.span)?.into_int_value())
    }

    fn sreg(&self, name: &str) -> LResult<IntValue<'ctx>> {
        Ok(self.llvm(&format!("llvm.nvvm.read.ptx.sreg.{name}"), &[], &[])?.into_int_value())
    }

    fn dim3(&self, reg: &str) -> LResult<BasicValueEnum<'ctx>> {
        let i32t = self.cx.i32_type();
        let st = self.cx.struct_type(&[i32t.into(), i32t.into(), i32t.into()], false);
        let mut agg = st.get_undef();
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            let v = self.sreg(&format!("{reg}.{axis}"))?;
            agg = self.builder.build_insert_value(agg, v, i as u32, axis)?.into_struct_value();
        }
        Ok(agg.into())
    }

    /// `block_idx.axis * block_dim.axis + thread_idx.axis` (`grid`) or `block_dim.axis *
    /// grid_dim.axis` (`gridsize`), in 64 bits.
    fn grid_axis(&self, axis: &str, size: bool) -> LResult<IntValue<'ctx>> {
        let i64t = self.cx.i64_type();
        let r = |n: &str| -> LResult<IntValue<'ctx>> {
            Ok(self.builder.build_int_z_extend(self.sreg(&format!("{n}.{axis}"))?, i64t, n)?)
        };
        if size {
            Ok(self.builder.build_int_mul(r("ntid")?, r("nctaid")?, "gridsize")?)
        } else {
            let base = self.builder.build_int_mul(r("ctaid")?, r("ntid")?, "base")?;
            Ok(self.builder.build_int_add(base, r("tid")?, "grid")?)
        }
    }

    fn gpu(&mut self, op: GpuOp, args: &[Expr], e: &Expr) -> LResult<Value<'ctx>> {
        let mut vals = Vec::new();
        for a in args {
            match self.expr(a)? {
                Some(v) => vals.push(v),
                None => return Ok(None),
            }
        }
        let i32t = self.cx.i32_type();
        let b = &self.builder;
        let to_i32 = |v: BasicValueEnum<'ctx>| b.build_int_z_extend(v.into_int_value(), i32t, "pred");
        let nonzero = |v: IntValue<'ctx>| b.build_int_compare(IntPredicate::NE, v, i32t.const_zero(), "bool");
        let v: BasicValueEnum<'ctx> = match op {
            GpuOp::ThreadIdx => self.dim3("tid")?,
            GpuOp::BlockIdx => self.dim3("ctaid")?,
            GpuOp::BlockDim => self.dim3("ntid")?,
            GpuOp::GridDim => self.dim3("nctaid")?,
            GpuOp::Grid(n) | GpuOp::GridSize(n) => {
                let size = matches!(op, GpuOp::GridSize(_));
                let axes: Vec<IntValue<'ctx>> =
                    ["x", "y", "z"][..n as usize].iter().map(|a| self.grid_axis(a, size)).collect::<LResult<_>>()?;
                if n == 1 {
                    axes[0].into()
                } else {
                    let st = self.value_type(e.ty).ok_or_else(|| internal("grid without a type", e.span))?;
                    let mut agg = st.into_struct_type().get_undef();
                    for (i, v) in axes.into_iter().enumerate() {
                        agg = self.builder.build_insert_value(agg, v, i as u32, "grid")?.into_struct_value();
                    }
                    agg.into()
                }
            }
            GpuOp::SyncThreads => {
                self.call_void("llvm.nvvm.barrier0", &[])?;
                return Ok(None);
            }
            GpuOp::SyncThreadsCount => self.llvm("llvm.nvvm.barrier0.popc", &[], &[to_i32(vals[0])?.into()])?,
            GpuOp::SyncThreadsAnd | GpuOp::SyncThreadsOr => {
                let name = if op == GpuOp::SyncThreadsAnd { "llvm.nvvm.barrier0.and" } else { "llvm.nvvm.barrier0.or" };
                let r = self.llvm(name, &[], &[to_i32(vals[0])?.into()])?.into_int_value();
                nonzero(r)?.into()
            }
            GpuOp::ThreadFence | GpuOp::ThreadFenceBlock | GpuOp::ThreadFenceSystem => {
                let name = match op {
                    GpuOp::ThreadFence => "llvm.nvvm.membar.gl",
                    GpuOp::ThreadFenceBlock => "llvm.nvvm.membar.cta",
                    _ => "llvm.nvvm.membar.sys",
                };
                self.call_void(name, &[])?;
                return Ok(None);
            }
            GpuOp::LaneId => self.sreg("laneid")?.into(),
            GpuOp::LaneMask(m) => self.sreg(&format!("lanemask.{}", m.register()))?.into(),
            GpuOp::CheckIndex => {
                let (i, len) = (vals[0].into_int_value(), vals[1].into_int_value());
                self.check_bounds(i, len)?;
                i.into()
            }
            // The intrinsics of the warp's built-ins are `convergent` (LLVM moves no call of
            // one into or out of a branch, nor merges the calls of two branches) and read or
            // write memory LLVM cannot see (it does not assume two calls give the same value).
            // `activemask` needs PTX 6.2 (see `compile_kernel_ir`).
            GpuOp::ActiveMask => self.llvm("llvm.nvvm.activemask", &[], &[])?,
            GpuOp::SyncWarp => {
                self.call_void("llvm.nvvm.bar.warp.sync", &[vals[0].into()])?;
                return Ok(None);
            }
            GpuOp::MatchAny | GpuOp::MatchAll => {
                let t = self.scalar_of(&args[1])?;
                return self.warp_match(op, vals[0].into_int_value(), vals[1], t, e).map(Some);
            }
            GpuOp::Ballot => self.llvm("llvm.nvvm.vote.ballot.sync", &[], &[vals[0].into(), vals[1].into()])?,
            GpuOp::AllSync => self.llvm("llvm.nvvm.vote.all.sync", &[], &[vals[0].into(), vals[1].into()])?,
            GpuOp::AnySync => self.llvm("llvm.nvvm.vote.any.sync", &[], &[vals[0].into(), vals[1].into()])?,
            GpuOp::Shfl | GpuOp::ShflUp | GpuOp::ShflDown | GpuOp::ShflXor => {
                let t = self.scalar_of(&args[1])?;
                self.shuffle(op, vals[0].into_int_value(), vals[1], t, vals[2].into_int_value())?
            }
        };
        Ok(Some(v))
    }

    /// `match_any_sync`/`match_all_sync` on the bits of a scalar: 64-bit values as such,
    /// narrower ones widened to 32 bits (equal bits stay equal, different ones different).
    fn warp_match(
        &self,
        op: GpuOp,
        mask: IntValue<'ctx>,
        v: BasicValueEnum<'ctx>,
        t: ScalarType,
        e: &Expr,
    ) -> LResult<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        let it = bits_type(self.cx, t);
        let x = if t.is_float() { b.build_bit_cast(v, it, "bits")?.into_int_value() } else { v.into_int_value() };
        let wide = t.bits().max(8) == 64;
        let x = if wide { x } else { b.build_int_z_extend_or_bit_cast(x, self.cx.i32_type(), "wide")? };
        let width = if wide { "i64" } else { "i32" };
        if op == GpuOp::MatchAny {
            return self.llvm(&format!("llvm.nvvm.match.any.sync.{width}"), &[], &[mask.into(), x.into()]);
        }
        let pair = self.llvm(&format!("llvm.nvvm.match.all.sync.{width}p"), &[], &[mask.into(), x.into()])?;
        let pair = pair.into_struct_value();
        let st = self.value_type(e.ty).ok_or_else(|| internal("match_all_sync without a type", e.span))?;
        let mut agg = st.into_struct_type().get_undef();
        for i in 0..2 {
            let field = b.build_extract_value(pair, i, "field")?;
            agg = b.build_insert_value(agg, field, i, "pair")?.into_struct_value();
        }
        Ok(agg.into())
    }

    fn call_void(&self, name: &str, args: &[BasicMetadataValueEnum<'ctx>]) -> LResult<()> {
        let decl = LlvmIntrinsic::find(name)
            .and_then(|i| i.get_declaration(self.module, &[]))
            .ok_or_else(|| internal(format!("LLVM has no intrinsic {name}"), self.func.span))?;
        self.builder.build_call(decl, args, "")?;
        Ok(())
    }

    /// A warp shuffle of any scalar: 32-bit values natively, 64-bit ones as two 32-bit
    /// halves, narrower ones (and `bool`) widened to 32 bits.
    fn shuffle(
        &self,
        op: GpuOp,
        mask: IntValue<'ctx>,
        v: BasicValueEnum<'ctx>,
        t: ScalarType,
        lane: IntValue<'ctx>,
    ) -> LResult<BasicValueEnum<'ctx>> {
        let (name, clamp) = match op {
            GpuOp::Shfl => ("llvm.nvvm.shfl.sync.idx.i32", 0x1f),
            GpuOp::ShflUp => ("llvm.nvvm.shfl.sync.up.i32", 0),
            GpuOp::ShflDown => ("llvm.nvvm.shfl.sync.down.i32", 0x1f),
            _ => ("llvm.nvvm.shfl.sync.bfly.i32", 0x1f),
        };
        let i32t = self.cx.i32_type();
        let i64t = self.cx.i64_type();
        let b = &self.builder;
        let c = i32t.const_int(clamp, false);
        let shfl = |x: IntValue<'ctx>| -> LResult<IntValue<'ctx>> {
            Ok(self.llvm(name, &[], &[mask.into(), x.into(), lane.into(), c.into()])?.into_int_value())
        };
        let bits = t.bits().max(8);
        let it = bits_type(self.cx, t);
        let x = if t.is_float() { b.build_bit_cast(v, it, "bits")?.into_int_value() } else { v.into_int_value() };
        let r = if bits == 64 {
            let lo = b.build_int_truncate(x, i32t, "lo")?;
            let hi =
                b.build_int_truncate(b.build_right_shift(x, i64t.const_int(32, false), false, "hi")?, i32t, "hi")?;
            let (lo, hi) = (shfl(lo)?, shfl(hi)?);
            let lo = b.build_int_z_extend(lo, i64t, "lo64")?;
            let hi = b.build_left_shift(b.build_int_z_extend(hi, i64t, "hi64")?, i64t.const_int(32, false), "hi")?;
            b.build_or(lo, hi, "joined")?
        } else if bits == 32 && t != ScalarType::Bool {
            shfl(x)?
        } else {
            let wide = b.build_int_z_extend(x, i32t, "wide")?;
            b.build_int_truncate(shfl(wide)?, it, "narrow")?
        };
        Ok(if t.is_float() { b.build_bit_cast(r, v.get_type(), "value")? } else { r.into() })
    }
}

/// Marks the functions of a kernel program `convergent`, as clang marks every CUDA device
/// function: a call of one may reach a warp built-in or a barrier, so LLVM must not move it
/// into or out of a branch, nor merge the calls of two branches, before inlining it (the
/// intrinsics themselves are convergent). LLVM drops the mark where nothing needs it.
pub fn mark_convergent<'ctx>(cx: &'ctx Context, functions: &[FunctionValue<'ctx>]) {
    let convergent = cx.create_enum_attribute(Attribute::get_named_enum_kind_id("convergent"), 0);
    for f in functions {
        f.add_attribute(AttributeLoc::Function, convergent);
    }
}

/// The `.entry` of an explicit kernel: the body (inlined) once per thread with the
/// parameters as they come, then, if the body failed, the [`kernel_abi::ThreadFault`]
/// record: `atom.global.cas.b64` of word 0 from 0 to 1, and only the winner writes words
/// 1..6 (code, index, len, block and thread ids). The failing thread then returns.
pub fn lower_explicit_entry<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    body: FunctionValue<'ctx>,
    program: &Program,
    symbol: &str,
    bounds: Option<LaunchBounds>,
) -> LResult<FunctionValue<'ctx>> {
    let global = cx.ptr_type(AddressSpace::from(GLOBAL));
    let i64t = cx.i64_type();
    let f = program.entry();
    let mut params: Vec<BasicMetadataTypeEnum> = Vec::new();
    for p in &f.params {
        match p.slice {
            Some(_) => params.extend::<[BasicMetadataTypeEnum; 2]>([global.into(), i64t.into()]),
            None => params.push(memory_type(cx, p.ty).into()),
        }
    }
    params.push(global.into());
    let kernel = module.add_function(symbol, cx.void_type().fn_type(&params, false), None);
    let attr = |name: &str| cx.create_enum_attribute(Attribute::get_named_enum_kind_id(name), 0);
    // The runtime refuses a `&mut` argument that aliases another argument, so no slice
    // overlaps a written one; `&[T]` is only read: LLVM may use `ld.global.nc`.
    let mut slot = 0u32;
    for p in &f.params {
        if let Some(mutable) = p.slice {
            kernel.add_attribute(AttributeLoc::Param(slot), attr("noalias"));
            kernel.add_attribute(AttributeLoc::Param(slot), attr("nocapture"));
            if !mutable {
                kernel.add_attribute(AttributeLoc::Param(slot), attr("readonly"));
            }
            slot += 2;
        } else {
            slot += 1;
        }
    }
    body.add_attribute(AttributeLoc::Function, attr("alwaysinline"));
    // `kernel`, and `launch_bounds` as `.maxntid` / `.minnctapersm` (what ptxas budgets
    // registers by; the driver refuses a larger block).
    let mut annotations = vec![("kernel", 1)];
    if let Some(b) = bounds {
        annotations.push(("maxntidx", b.max_threads));
        annotations.extend(b.min_blocks.map(|m| ("minctasm", m)));
    }
    for (key, value) in annotations {
        let annotation = cx.metadata_node(&[
            kernel.as_global_value().as_pointer_value().into(),
            cx.metadata_string(key).into(),
            cx.i32_type().const_int(u64::from(value), false).into(),
        ]);
        module
            .add_global_metadata("nvvm.annotations", &annotation)
            .map_err(|e| internal(format!("cannot annotate the kernel: {e}"), Span::call_site()))?;
    }

    let b = cx.create_builder();
    let entry = cx.append_basic_block(kernel, "entry");
    b.position_at_end(entry);
    let fs = fault_struct(cx);
    let fault = b.build_alloca(fs, "fault")?;
    b.build_store(fault, fs.const_zero())?;
    let mut args: Vec<BasicMetadataValueEnum> = Vec::new();
    let mut slot = 0u32;
    for p in &f.params {
        let v = kernel.get_nth_param(slot).expect("declared above");
        match p.slice {
            Some(_) => {
                args.push(v.into());
                args.push(kernel.get_nth_param(slot + 1).expect("declared above").into());
                slot += 2;
            }
            None if p.ty == ScalarType::Bool => {
                let t = b.build_int_compare(IntPredicate::NE, v.into_int_value(), cx.i8_type().const_zero(), "bool")?;
                args.push(t.into());
                slot += 1;
            }
            None => {
                args.push(v.into());
                slot += 1;
            }
        }
    }
    args.push(fault.into());
    b.build_call(body, &args, "")?;
    let code = b.build_load(cx.i32_type(), fault, "code")?.into_int_value();
    let failed = b.build_int_compare(IntPredicate::NE, code, cx.i32_type().const_zero(), "failed")?;
    let record = cx.append_basic_block(kernel, "record_fault");
    let write = cx.append_basic_block(kernel, "write_fault");
    let done = cx.append_basic_block(kernel, "done");
    b.build_conditional_branch(failed, record, done)?;
    b.position_at_end(record);
    let out = kernel.get_last_param().expect("the fault record").into_pointer_value();
    let pair = b.build_cmpxchg(
        out,
        i64t.const_zero(),
        i64t.const_int(1, false),
        AtomicOrdering::Monotonic,
        AtomicOrdering::Monotonic,
    )?;
    let won = b.build_extract_value(pair, 1, "won")?.into_int_value();
    b.build_conditional_branch(won, write, done)?;
    b.position_at_end(write);
    let sreg = |name: &str| -> LResult<IntValue<'ctx>> {
        let f = LlvmIntrinsic::find(&format!("llvm.nvvm.read.ptx.sreg.{name}"))
            .and_then(|i| i.get_declaration(module, &[]))
            .ok_or_else(|| internal(format!("{name} is missing"), Span::call_site()))?;
        let v = basic_value(b.build_call(f, &[], "sreg")?.try_as_basic_value(), Span::call_site())?;
        Ok(b.build_int_z_extend(v.into_int_value(), i64t, "sreg64")?)
    };
    let pair_of = |lo: IntValue<'ctx>, hi: IntValue<'ctx>| -> LResult<IntValue<'ctx>> {
        let hi = b.build_left_shift(hi, i64t.const_int(32, false), "hi")?;
        Ok(b.build_or(lo, hi, "pair")?)
    };
    let index = b.build_load(i64t, b.build_struct_gep(fs, fault, 1, "index")?, "index")?.into_int_value();
    let len = b.build_load(i64t, b.build_struct_gep(fs, fault, 2, "len")?, "len")?.into_int_value();
    let words = [
        b.build_int_z_extend(code, i64t, "code64")?,
        index,
        len,
        pair_of(sreg("ctaid.x")?, sreg("ctaid.y")?)?,
        pair_of(sreg("ctaid.z")?, sreg("tid.x")?)?,
        pair_of(sreg("tid.y")?, sreg("tid.z")?)?,
    ];
    for (k, w) in words.into_iter().enumerate() {
        // SAFETY: the record has `THREAD_FAULT_WORDS` (8) words; `k + 1` is at most 6.
        let p = unsafe { b.build_in_bounds_gep(i64t, out, &[i64t.const_int(k as u64 + 1, false)], "word")? };
        b.build_store(p, w)?.set_alignment(8).map_err(|e| internal(e.to_string(), Span::call_site()))?;
    }
    b.build_unconditional_branch(done)?;
    b.position_at_end(done);
    b.build_return(None)?;
    Ok(kernel)
}
