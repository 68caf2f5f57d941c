//! The reduction kernel of a function `(T, T) -> T`: `name::reduce` folds an array with it
//! in one launch over the data plus one single-block launch over the per-block results.
//!
//! Entry parameters: [`ReduceParams`]. Each thread folds a grid-stride slice of the input
//! (of 16-byte vectors where the input is aligned, its elements are 4 or 8 bytes and every
//! thread gets at least one vector, then the elements after the last whole vector), then
//! each block folds its threads' values as a tree in shared memory, and thread 0 writes
//! the block's value. Every launch uses at most `ceil(n / block)` blocks, so every
//! block has at least one element and needs no identity value. Shared memory holds
//! [`REDUCE_BLOCK`] values, and the entry requires exactly that many threads per block
//! (`.reqntid`): a launch with any other block size is refused by the driver.

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic as LlvmIntrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicType;
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, IntValue};
use inkwell::{AddressSpace, AtomicOrdering, AtomicRMWBinOp, IntPredicate};
use proc_macro2::Span;

use super::nvvm::{GLOBAL, SHARED, annotate_kernel, read_sreg};
use super::types::memory_type;
use super::{LResult, Weight, basic_value, internal};
use crate::abi::{FaultWord, REDUCE_BLOCK, ReduceParams};
use crate::ty::ScalarType;

/// Elements per iteration of each thread's fold.
const UNROLL: u64 = 4;

/// Adds the reduction entry `entry` for `scalar: (t, t) -> t`.
pub fn lower_reduce_entry<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    scalar: FunctionValue<'ctx>,
    t: ScalarType,
    entry: &str,
    error_flag: bool,
    weight: Weight,
) -> LResult<FunctionValue<'ctx>> {
    let global = cx.ptr_type(AddressSpace::from(GLOBAL));
    let i64t = cx.i64_type();
    let i32t = cx.i32_type();
    let mt = memory_type(cx, t);
    let slots = ReduceParams { fault_word: error_flag };
    let mut params: Vec<inkwell::types::BasicMetadataTypeEnum> = vec![global.into(); slots.count()];
    params[ReduceParams::N] = i64t.into();
    let kernel = module.add_function(entry, cx.void_type().fn_type(&params, false), None);
    let kind = Attribute::get_named_enum_kind_id;
    let input_at = AttributeLoc::Param(ReduceParams::INPUT as u32);
    kernel.add_attribute(input_at, cx.create_enum_attribute(kind("noalias"), 0));
    kernel.add_attribute(input_at, cx.create_enum_attribute(kind("readonly"), 0));
    // Shared memory below is sized for exactly this block: the driver refuses other sizes.
    annotate_kernel(cx, module, kernel, &[("reqntidx", REDUCE_BLOCK)])?;

    // Shared memory: each thread's value and whether it has one.
    let shared = AddressSpace::from(SHARED);
    let values_ty = mt.array_type(REDUCE_BLOCK);
    let values = module.add_global(values_ty, Some(shared), &format!("{entry}.values"));
    values.set_initializer(&values_ty.get_undef());
    values.set_linkage(Linkage::Internal);
    values.set_alignment(8);
    let flags_ty = cx.i8_type().array_type(REDUCE_BLOCK);
    let flags = module.add_global(flags_ty, Some(shared), &format!("{entry}.has_value"));
    flags.set_initializer(&flags_ty.get_undef());
    flags.set_linkage(Linkage::Internal);

    let b = cx.create_builder();
    let bb = |name: &str| cx.append_basic_block(kernel, name);
    b.position_at_end(bb("entry"));
    let sreg = |name: &str| read_sreg(module, &b, name);
    let tid = b.build_int_z_extend(sreg("tid.x")?, i64t, "tid")?;
    let ntid = b.build_int_z_extend(sreg("ntid.x")?, i64t, "ntid")?;
    let ctaid = b.build_int_z_extend(sreg("ctaid.x")?, i64t, "ctaid")?;
    let nctaid = b.build_int_z_extend(sreg("nctaid.x")?, i64t, "nctaid")?;
    let barrier = LlvmIntrinsic::find("llvm.nvvm.barrier0")
        .and_then(|i| i.get_declaration(module, &[]))
        .ok_or_else(|| internal("llvm.nvvm.barrier0 is missing", Span::call_site()))?;
    let param = |slot: usize| kernel.get_nth_param(slot as u32).expect("declared above");
    let n = param(ReduceParams::N).into_int_value();
    let partials = param(ReduceParams::PARTIALS).into_pointer_value();
    let input = param(ReduceParams::INPUT).into_pointer_value();
    let fault_local = if error_flag { Some(b.build_alloca(i32t, "fault")?) } else { None };
    let fault_global = slots.fault().map(|slot| param(slot).into_pointer_value());

    let acc = b.build_alloca(mt, "acc")?;
    let has = b.build_alloca(cx.bool_type(), "has")?;
    let idx = b.build_alloca(i64t, "i")?;
    b.build_store(has, cx.bool_type().const_zero())?;
    let first = b.build_int_add(b.build_int_mul(ctaid, ntid, "base")?, tid, "first")?;
    let stride = b.build_int_mul(nctaid, ntid, "stride")?;
    b.build_store(idx, first)?;

    // Applies `scalar` to two memory-typed values; records a fault for `at`.
    let combine = |x: inkwell::values::BasicValueEnum<'ctx>,
                   y: inkwell::values::BasicValueEnum<'ctx>,
                   at: IntValue<'ctx>|
     -> LResult<inkwell::values::BasicValueEnum<'ctx>> {
        let to_value = |v: inkwell::values::BasicValueEnum<'ctx>| -> LResult<BasicMetadataValueEnum<'ctx>> {
            Ok(if t == ScalarType::Bool {
                b.build_int_compare(IntPredicate::NE, v.into_int_value(), cx.i8_type().const_zero(), "b")?.into()
            } else {
                v.into()
            })
        };
        let mut args = vec![to_value(x)?, to_value(y)?];
        if let Some(f) = fault_local {
            b.build_store(f, i32t.const_zero())?;
            args.push(f.into());
        }
        let call = b.build_call(scalar, &args, "r")?;
        if weight == Weight::Heavy {
            // A reduction with a large function (libdevice math) calls it rather than
            // inlining a copy at each of the fold's steps.
            call.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(kind("noinline"), 0));
        }
        let r = basic_value(call.try_as_basic_value(), Span::call_site())?;
        if let (Some(f), Some(g)) = (fault_local, fault_global) {
            let code = b.build_load(i32t, f, "code")?.into_int_value();
            let failed = b.build_int_compare(IntPredicate::NE, code, i32t.const_zero(), "failed")?;
            let record = cx.append_basic_block(kernel, "record_fault");
            let go_on = cx.append_basic_block(kernel, "combined");
            b.build_conditional_branch(failed, record, go_on)?;
            b.position_at_end(record);
            let word = b.build_or(
                b.build_left_shift(at, i64t.const_int(FaultWord::CODE_BITS.into(), false), "at")?,
                b.build_int_z_extend(code, i64t, "c")?,
                "word",
            )?;
            b.build_atomicrmw(AtomicRMWBinOp::UMin, g, word, AtomicOrdering::Monotonic)?;
            b.build_unconditional_branch(go_on)?;
            b.position_at_end(go_on);
        }
        Ok(if t == ScalarType::Bool {
            b.build_int_z_extend(r.into_int_value(), cx.i8_type(), "byte")?.into()
        } else {
            r
        })
    };

    // Phase 1: each thread folds its grid-stride elements. Where the input is 16-byte
    // aligned and its elements are 4 or 8 bytes, it first folds whole 16-byte vectors
    // (UNROLL of them per iteration, their loads issued together), the elements of each
    // in order; then the elements after the last whole vector (all of them otherwise),
    // one at a time or UNROLL per iteration: the first one starts the value, unless the
    // vectors gave one.
    let start = bb("fold_start");
    let tiles = bb("fold_tiles");
    let tile = bb("fold_tile");
    let head = bb("fold");
    let body = bb("fold_body");
    let tree = bb("tree");
    // (A complex element is a pair and a struct a record, not a lane of a vector: one at
    // a time.)
    let vector = if t != ScalarType::Bool && !t.is_complex() && !t.is_struct() && matches!(t.size_bytes(), 4 | 8) {
        16 / u64::from(t.size_bytes())
    } else {
        1
    };
    let scalar_init = bb("scalar_init");
    // Whether a tile of UNROLL items from `i` (every `stride`th) lies below `bound`:
    // `i + (UNROLL - 1) * stride < bound`, written so that it cannot overflow.
    let tile_fits = |i: IntValue<'ctx>, bound: IntValue<'ctx>| -> LResult<IntValue<'ctx>> {
        let reach = b.build_int_mul(stride, i64t.const_int(UNROLL - 1, false), "reach")?;
        let room = b.build_int_compare(IntPredicate::ULT, reach, bound, "room")?;
        let left = b.build_int_sub(bound, reach, "left")?;
        let inside = b.build_int_compare(IntPredicate::ULT, i, left, "inside")?;
        Ok(b.build_and(room, inside, "fits")?)
    };
    // The `j`th item from `i`: `i + j * stride` (a tile's items, and the next tile at
    // `j = UNROLL`).
    let nth = |i: IntValue<'ctx>, j: u64, name: &str| -> LResult<IntValue<'ctx>> {
        Ok(b.build_int_add(i, b.build_int_mul(stride, i64t.const_int(j, false), "off")?, name)?)
    };
    // After a loop's first item (at `from`), which started `acc`: on to the loop over
    // tiles (block `tiles`), which enters a tile of items below `bound` (block `tile`,
    // where the builder is left; the tile's first item is returned) or goes on to the
    // items one at a time (block `rest`).
    let enter_tiles = |from: IntValue<'ctx>,
                       bound: IntValue<'ctx>,
                       [tiles, tile, rest]: [inkwell::basic_block::BasicBlock<'ctx>; 3]|
     -> LResult<IntValue<'ctx>> {
        b.build_store(has, cx.bool_type().const_int(1, false))?;
        b.build_store(idx, b.build_int_add(from, stride, "second")?)?;
        b.build_unconditional_branch(tiles)?;
        b.position_at_end(tiles);
        let i = b.build_load(i64t, idx, "i")?.into_int_value();
        b.build_conditional_branch(tile_fits(i, bound)?, tile, rest)?;
        b.position_at_end(tile);
        Ok(i)
    };
    // The end of the tile at `i`, folded into `cur`: back to the loop over tiles (block
    // `tiles`); once no tile fits (block `head`), the items one at a time while below
    // `bound` (block `body`, where the builder is left; the item is returned), then on to
    // block `done`.
    let leave_tile = |cur: inkwell::values::BasicValueEnum<'ctx>,
                      i: IntValue<'ctx>,
                      bound: IntValue<'ctx>,
                      [tiles, head, body, done]: [inkwell::basic_block::BasicBlock<'ctx>; 4]|
     -> LResult<IntValue<'ctx>> {
        b.build_store(acc, cur)?;
        b.build_store(idx, nth(i, UNROLL, "next")?)?;
        b.build_unconditional_branch(tiles)?;
        b.position_at_end(head);
        let i = b.build_load(i64t, idx, "i")?.into_int_value();
        let more = b.build_int_compare(IntPredicate::ULT, i, bound, "more")?;
        b.build_conditional_branch(more, body, done)?;
        b.position_at_end(body);
        Ok(i)
    };
    let scalar_first = if vector > 1 {
        let vector_ty = match mt {
            inkwell::types::BasicTypeEnum::FloatType(f) => f.vec_type(vector as u32),
            inkwell::types::BasicTypeEnum::IntType(i) => i.vec_type(vector as u32),
            _ => return Err(internal("a reduction over a type that is not a scalar", Span::call_site())),
        };
        let vstart = bb("vector_start");
        let vtiles = bb("vector_tiles");
        let vtile = bb("vector_tile");
        let vhead = bb("vector");
        let vbody = bb("vector_body");
        let addr = b.build_ptr_to_int(input, i64t, "addr")?;
        let misaligned = b.build_and(addr, i64t.const_int(15, false), "misaligned")?;
        let aligned = b.build_int_compare(IntPredicate::EQ, misaligned, i64t.const_zero(), "aligned")?;
        let whole = b.build_int_unsigned_div(n, i64t.const_int(vector, false), "whole")?;
        // Only where every thread of the grid gets a vector: the grid is sized for the
        // elements (a block per `REDUCE_BLOCK` of them, at most), and a block with no
        // element would have no value to write.
        let enough = b.build_int_compare(IntPredicate::ULE, stride, whole, "enough")?;
        let use_vectors = b.build_and(aligned, enough, "use_vectors")?;
        let nvec = b.build_select(use_vectors, whole, i64t.const_zero(), "nvec")?.into_int_value();
        let in_vectors = b.build_int_compare(IntPredicate::ULT, first, nvec, "in_vectors")?;
        b.build_conditional_branch(in_vectors, vstart, scalar_init)?;
        // The elements of vector `v`, folded into `cur` (or starting it: `None`).
        let fold_vector = |cur: Option<inkwell::values::BasicValueEnum<'ctx>>,
                           x: inkwell::values::VectorValue<'ctx>,
                           v: IntValue<'ctx>|
         -> LResult<inkwell::values::BasicValueEnum<'ctx>> {
            let base = b.build_int_mul(v, i64t.const_int(vector, false), "elem")?;
            let mut cur = cur;
            for l in 0..vector {
                let e = b.build_extract_element(x, i32t.const_int(l, false), "e")?;
                cur = Some(match cur {
                    None => e,
                    Some(c) => combine(c, e, b.build_int_add(base, i64t.const_int(l, false), "at")?)?,
                });
            }
            cur.ok_or_else(|| internal("a vector of no elements", Span::call_site()))
        };
        let load_vector = |v: IntValue<'ctx>| -> LResult<inkwell::values::VectorValue<'ctx>> {
            // SAFETY: reached only for `v < nvec`, and `input` holds `nvec` whole vectors.
            let p = unsafe { b.build_in_bounds_gep(vector_ty, input, &[v], "pv")? };
            let x = b.build_load(vector_ty, p, "xv")?;
            if let Some(i) = inkwell::values::BasicValue::as_instruction_value(&x) {
                i.set_alignment(16).map_err(|e| internal(e.to_string(), Span::call_site()))?;
            }
            Ok(x.into_vector_value())
        };
        b.position_at_end(vstart);
        let x = load_vector(first)?;
        b.build_store(acc, fold_vector(None, x, first)?)?;
        let i = enter_tiles(first, nvec, [vtiles, vtile, vhead])?;
        let mut loaded = Vec::new();
        for j in 0..UNROLL {
            let v = nth(i, j, "v")?;
            loaded.push((load_vector(v)?, v));
        }
        let mut cur = b.build_load(mt, acc, "acc")?;
        for (x, v) in loaded {
            cur = fold_vector(Some(cur), x, v)?;
        }
        let i = leave_tile(cur, i, nvec, [vtiles, vhead, vbody, scalar_init])?;
        let x = load_vector(i)?;
        let cur = b.build_load(mt, acc, "acc")?;
        b.build_store(acc, fold_vector(Some(cur), x, i)?)?;
        b.build_store(idx, b.build_int_add(i, stride, "next")?)?;
        b.build_unconditional_branch(vhead)?;
        b.position_at_end(scalar_init);
        b.build_int_add(b.build_int_mul(nvec, i64t.const_int(vector, false), "tail")?, first, "scalar_first")?
    } else {
        b.build_unconditional_branch(scalar_init)?;
        b.position_at_end(scalar_init);
        first
    };
    let has_first = b.build_int_compare(IntPredicate::ULT, scalar_first, n, "has_first")?;
    b.build_conditional_branch(has_first, start, tree)?;
    b.position_at_end(start);
    // SAFETY: the GEP is reached only when `scalar_first < n`, and `input` has `n` elements.
    let p = unsafe { b.build_in_bounds_gep(mt, input, &[scalar_first], "p")? };
    let x = b.build_load(mt, p, "x")?;
    let fold_first = bb("fold_first");
    let store_first = bb("store_first");
    let first_done = bb("first_done");
    let had = b.build_load(cx.bool_type(), has, "had")?.into_int_value();
    b.build_conditional_branch(had, fold_first, store_first)?;
    b.position_at_end(fold_first);
    let cur = b.build_load(mt, acc, "acc")?;
    b.build_store(acc, combine(cur, x, scalar_first)?)?;
    b.build_unconditional_branch(first_done)?;
    b.position_at_end(store_first);
    b.build_store(acc, x)?;
    b.build_unconditional_branch(first_done)?;
    b.position_at_end(first_done);
    let i = enter_tiles(scalar_first, n, [tiles, tile, head])?;
    let mut at = Vec::new();
    let mut xs = Vec::new();
    for j in 0..UNROLL {
        let k = nth(i, j, "k")?;
        // SAFETY: the tile is reached only when its last index is below `n`, and `input` has `n` elements.
        let p = unsafe { b.build_in_bounds_gep(mt, input, &[k], "p")? };
        xs.push(b.build_load(mt, p, "x")?);
        at.push(k);
    }
    let mut cur = b.build_load(mt, acc, "acc")?;
    for (x, k) in xs.into_iter().zip(at) {
        cur = combine(cur, x, k)?;
    }
    let i = leave_tile(cur, i, n, [tiles, head, body, tree])?;
    // SAFETY: the loop body runs only for `i < n`, and `input` has `n` elements.
    let p = unsafe { b.build_in_bounds_gep(mt, input, &[i], "p")? };
    let x = b.build_load(mt, p, "x")?;
    let cur = b.build_load(mt, acc, "acc")?;
    let r = combine(cur, x, i)?;
    b.build_store(acc, r)?;
    b.build_store(idx, b.build_int_add(i, stride, "next")?)?;
    b.build_unconditional_branch(head)?;

    // Phase 2: the block's values, folded as a tree in shared memory.
    b.position_at_end(tree);
    let zero = i64t.const_zero();
    // SAFETY: element `k < REDUCE_BLOCK` (a thread index of the required block) of a
    // shared array of `REDUCE_BLOCK` elements.
    let slot = |arr: inkwell::values::GlobalValue<'ctx>, ty: inkwell::types::ArrayType<'ctx>, k: IntValue<'ctx>| unsafe {
        b.build_in_bounds_gep(ty, arr.as_pointer_value(), &[zero, k], "slot")
    };
    b.build_store(slot(values, values_ty, tid)?, b.build_load(mt, acc, "acc")?)?;
    let had = b.build_load(cx.bool_type(), has, "had")?.into_int_value();
    b.build_store(slot(flags, flags_ty, tid)?, b.build_int_z_extend(had, cx.i8_type(), "had8")?)?;
    b.build_call(barrier, &[], "")?;
    let mut step = REDUCE_BLOCK / 2;
    while step >= 1 {
        let s = i64t.const_int(step as u64, false);
        let active = bb("tree_active");
        let take = bb("tree_take");
        let fold = bb("tree_fold");
        let move_up = bb("tree_move");
        let done = bb("tree_sync");
        let lower = b.build_int_compare(IntPredicate::ULT, tid, s, "lower")?;
        b.build_conditional_branch(lower, active, done)?;
        b.position_at_end(active);
        let other = b.build_int_add(tid, s, "other")?;
        let other_has = b.build_load(cx.i8_type(), slot(flags, flags_ty, other)?, "other_has")?.into_int_value();
        let other_has = b.build_int_compare(IntPredicate::NE, other_has, cx.i8_type().const_zero(), "oh")?;
        b.build_conditional_branch(other_has, take, done)?;
        b.position_at_end(take);
        let mine = b.build_load(cx.i8_type(), slot(flags, flags_ty, tid)?, "mine")?.into_int_value();
        let mine = b.build_int_compare(IntPredicate::NE, mine, cx.i8_type().const_zero(), "m")?;
        b.build_conditional_branch(mine, fold, move_up)?;
        b.position_at_end(fold);
        let a = b.build_load(mt, slot(values, values_ty, tid)?, "a")?;
        let c = b.build_load(mt, slot(values, values_ty, other)?, "c")?;
        let r = combine(a, c, b.build_int_add(first, s, "at")?)?;
        b.build_store(slot(values, values_ty, tid)?, r)?;
        b.build_unconditional_branch(done)?;
        b.position_at_end(move_up);
        let c = b.build_load(mt, slot(values, values_ty, other)?, "c")?;
        b.build_store(slot(values, values_ty, tid)?, c)?;
        b.build_store(slot(flags, flags_ty, tid)?, cx.i8_type().const_int(1, false))?;
        b.build_unconditional_branch(done)?;
        b.position_at_end(done);
        b.build_call(barrier, &[], "")?;
        step /= 2;
    }
    let write = bb("write");
    let exit = bb("exit");
    let is_first = b.build_int_compare(IntPredicate::EQ, tid, zero, "t0")?;
    b.build_conditional_branch(is_first, write, exit)?;
    b.position_at_end(write);
    let v = b.build_load(mt, slot(values, values_ty, zero)?, "block_value")?;
    // SAFETY: `partials` has one element per block of the launch (`kernel_abi::ReduceParams`).
    let dst = unsafe { b.build_in_bounds_gep(mt, partials, &[ctaid], "dst")? };
    b.build_store(dst, v)?;
    b.build_unconditional_branch(exit)?;
    b.position_at_end(exit);
    b.build_return(None)?;
    Ok(kernel)
}
