//! The GPU's built-ins of an explicit kernel: indexing and `len()` dispatched to the arrays,
//! the thread and block indices, barriers and fences, atomics, and the warp's votes,
//! matches and shuffles.

use inkwell::values::{AsValueRef, BasicMetadataValueEnum, BasicValueEnum, IntValue, PointerValue};
use inkwell::{AddressSpace, AtomicOrdering, AtomicRMWBinOp, FloatPredicate, IntPredicate};
use proc_macro2::Span;

use super::nvvm::{SHARED, read_sreg};
use super::types::{bits_type, memory_type};
use super::{FnLower, LResult, Value, basic_value, internal};
use crate::ir::{AtomicOp, Expr, ExprKind, GpuOp};
use crate::ty::ScalarType;

impl<'ctx> FnLower<'_, 'ctx> {
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
                self.store_updated(p, *elem, *op, v, value)?;
                Ok(None)
            }
            ExprKind::Atomic { op, array, index, args } => self.atomic(*op, *array, index, args, e.span),
            ExprKind::LoadVector { array, index, lanes } => self.vector_access(*array, index, *lanes, None, e),
            ExprKind::StoreVector { array, index, values } => {
                self.vector_access(*array, index, values.len() as u32, Some(values), e)
            }
            ExprKind::Gpu(op, args) => self.gpu(*op, args, e),
            ExprKind::Mma(op, args) => self.mma(*op, args, e),
            ExprKind::CopyAsync { dst, dst_index, src, src_index, lanes, checked } => {
                self.copy_async(*dst, dst_index, *src, src_index, (*lanes, *checked), e)
            }
            _ => Err(internal("an array initialiser outside a `let`", e.span)),
        }
    }

    /// `gpu::atomic::*` (relaxed ordering: LLVM's `monotonic`, PTX's `atom` without
    /// `.acq`/`.rel`; order with `sync_threads` or the fences). A call: its arguments are
    /// evaluated in order, the index before the values, and the index is checked after
    /// all of them, as the called function checks it.
    fn atomic(&mut self, op: AtomicOp, a: u32, index: &[Expr], args: &[Expr], span: Span) -> LResult<Value<'ctx>> {
        let Some(idx) = self.index_values(index)? else { return Ok(None) };
        let mut vals = Vec::new();
        for x in args {
            match self.expr(x)? {
                Some(v) => vals.push(v),
                None => return Ok(None),
            }
        }
        let p = self.element_ptr_at(a, &idx, true, span)?;
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
            .and_then(|i| i.set_alignment(t.size_bytes()).ok().and_then(|_| i.set_atomic_ordering(ord).ok()))
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

    fn dim3(&self, reg: &str) -> LResult<BasicValueEnum<'ctx>> {
        let i32t = self.cx.i32_type();
        let st = self.cx.struct_type(&[i32t.into(), i32t.into(), i32t.into()], false);
        let mut agg = st.get_undef();
        for (i, axis) in ["x", "y", "z"].iter().enumerate() {
            let v = read_sreg(self.module, &self.builder, &format!("{reg}.{axis}"))?;
            agg = self.builder.build_insert_value(agg, v, i as u32, axis)?.into_struct_value();
        }
        Ok(agg.into())
    }

    /// `block_idx.axis * block_dim.axis + thread_idx.axis` (`grid`) or `block_dim.axis *
    /// grid_dim.axis` (`gridsize`), in 64 bits.
    fn grid_axis(&self, axis: &str, size: bool) -> LResult<IntValue<'ctx>> {
        let i64t = self.cx.i64_type();
        let r = |n: &str| -> LResult<IntValue<'ctx>> {
            Ok(self.builder.build_int_z_extend(
                read_sreg(self.module, &self.builder, &format!("{n}.{axis}"))?,
                i64t,
                n,
            )?)
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
            GpuOp::CopyAsyncCommit => {
                self.call_void("llvm.nvvm.cp.async.commit.group", &[])?;
                return Ok(None);
            }
            GpuOp::CopyAsyncWait(n) => {
                let n = self.cx.i32_type().const_int(u64::from(n), false);
                self.call_void("llvm.nvvm.cp.async.wait.group", &[n.into()])?;
                return Ok(None);
            }
            GpuOp::CopyAsyncWaitAll => {
                self.call_void("llvm.nvvm.cp.async.wait.all", &[])?;
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
            GpuOp::LaneId => read_sreg(self.module, &self.builder, "laneid")?.into(),
            GpuOp::LaneMask(m) => read_sreg(self.module, &self.builder, &format!("lanemask.{}", m.register()))?.into(),
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
        let x = self.scalar_bits(v, t)?;
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

    /// A scalar as the integer of its bits (a float's bits; an integer or `bool` as it is),
    /// what the warp's exchanges move and compare.
    fn scalar_bits(&self, v: BasicValueEnum<'ctx>, t: ScalarType) -> LResult<IntValue<'ctx>> {
        Ok(match t.is_floating() {
            true => self.builder.build_bit_cast(v, bits_type(self.cx, t), "bits")?.into_int_value(),
            false => v.into_int_value(),
        })
    }

    fn call_void(&self, name: &str, args: &[BasicMetadataValueEnum<'ctx>]) -> LResult<()> {
        let decl = self.intrinsic_decl(name, &[])?;
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
        let x = self.scalar_bits(v, t)?;
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
        // `shfl.sync` reads only the low 5 bits of an offset, so `shfl_down_sync(m, v, 33)`
        // would read lane + 1. An offset of a warp or more names no lane of the warp: the
        // lane keeps its own value, as the language (and the simulator) says. (A `shfl_sync`
        // lane is taken modulo 32 on both.)
        let r = if op == GpuOp::Shfl {
            r
        } else {
            let in_warp = b.build_int_compare(IntPredicate::ULT, lane, i32t.const_int(32, false), "in_warp")?;
            b.build_select(in_warp, r, x, "shuffled")?.into_int_value()
        };
        Ok(if t.is_floating() { b.build_bit_cast(r, v.get_type(), "value")? } else { r.into() })
    }
}
