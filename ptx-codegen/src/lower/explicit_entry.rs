//! The `.entry` of an explicit kernel (`#[kernel]`): the body once per thread, and the
//! [`kernel_abi::ThreadFault`] record of the first failing thread.

use inkwell::AddressSpace;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::{BasicMetadataTypeEnum, StructType};
use inkwell::values::{BasicMetadataValueEnum, FunctionValue, IntValue};
use inkwell::{AtomicOrdering, IntPredicate};
use proc_macro2::Span;

use super::nvvm::{GLOBAL, annotate_kernel, read_sreg64};
use super::types::memory_type;
use super::{LResult, internal};
use crate::ir::Program;
use crate::options::LaunchBounds;
use crate::ty::ScalarType;

/// The per-thread fault record the kernel body writes: `{ code: i32, index: i64, len: i64 }`
/// (the code first, where the scalar functions' `i32` fault code is).
pub(super) fn fault_struct(cx: &Context) -> StructType<'_> {
    cx.struct_type(&[cx.i32_type().into(), cx.i64_type().into(), cx.i64_type().into()], false)
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
    // `launch_bounds` as `.maxntid` / `.minnctapersm` (what ptxas budgets registers by; the
    // driver refuses a larger block).
    let mut launch_bounds = Vec::new();
    if let Some(b) = bounds {
        launch_bounds.push(("maxntidx", b.max_threads));
        launch_bounds.extend(b.min_blocks.map(|m| ("minctasm", m)));
    }
    annotate_kernel(cx, module, kernel, &launch_bounds)?;

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
    let sreg = |name: &str| read_sreg64(module, &b, name);
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
