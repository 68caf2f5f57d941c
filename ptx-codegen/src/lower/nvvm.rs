//! What NVVM (LLVM's NVPTX target) reads beyond plain IR: the address spaces, the
//! `nvvm.annotations` that make a function a `.entry` with launch bounds, and the reads of
//! PTX's special registers (`%tid`, `%ctaid`, `%laneid`, ...).

use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic as LlvmIntrinsic;
use inkwell::module::Module;
use inkwell::values::{FunctionValue, IntValue};
use proc_macro2::Span;

use super::{LResult, basic_value, internal};

/// The global address space (slices, the entries' arrays) and the shared one.
pub(super) const GLOBAL: u16 = 1;
pub(super) const SHARED: u16 = 3;

/// Marks `kernel` as a `.entry`, then adds each of `bounds` (`maxntidx`, `minctasm`,
/// `reqntidx`: PTX's `.maxntid`, `.minnctapersm`, `.reqntid`) to it.
pub(super) fn annotate_kernel<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    kernel: FunctionValue<'ctx>,
    bounds: &[(&str, u32)],
) -> LResult<()> {
    for &(key, value) in [("kernel", 1)].iter().chain(bounds) {
        let annotation = cx.metadata_node(&[
            kernel.as_global_value().as_pointer_value().into(),
            cx.metadata_string(key).into(),
            cx.i32_type().const_int(u64::from(value), false).into(),
        ]);
        module
            .add_global_metadata("nvvm.annotations", &annotation)
            .map_err(|e| internal(format!("cannot annotate the kernel: {e}"), Span::call_site()))?;
    }
    Ok(())
}

/// The special register `%name` (`tid.x`, `ctaid.y`, `laneid`, `lanemask.lt`, ...), a `u32`.
pub(super) fn read_sreg<'ctx>(module: &Module<'ctx>, b: &Builder<'ctx>, name: &str) -> LResult<IntValue<'ctx>> {
    let full = format!("llvm.nvvm.read.ptx.sreg.{name}");
    let f = LlvmIntrinsic::find(&full)
        .and_then(|i| i.get_declaration(module, &[]))
        .ok_or_else(|| internal(format!("{full} is missing"), Span::call_site()))?;
    Ok(basic_value(b.build_call(f, &[], "sreg")?.try_as_basic_value(), Span::call_site())?.into_int_value())
}

/// [`read_sreg`] widened to the entries' 64-bit indices.
pub(super) fn read_sreg64<'ctx>(module: &Module<'ctx>, b: &Builder<'ctx>, name: &str) -> LResult<IntValue<'ctx>> {
    let v = read_sreg(module, b, name)?;
    Ok(b.build_int_z_extend(v, module.get_context().i64_type(), "sreg64")?)
}

/// The bytes of dynamic shared memory this launch has (`%dynamic_smem_size`), through
/// inline assembly: LLVM 19 has no intrinsic for this special register. The value is the
/// same wherever in the kernel it is read (LLVM may merge or move it).
pub(super) fn read_dynamic_smem_size<'ctx>(cx: &'ctx Context, b: &Builder<'ctx>) -> LResult<IntValue<'ctx>> {
    let ty = cx.i32_type().fn_type(&[], false);
    let asm = "mov.u32 $0, %dynamic_smem_size;".to_string();
    let f = cx.create_inline_asm(ty, asm, "=r".to_string(), false, false, None, false);
    let call = b.build_indirect_call(ty, f, &[], "asm")?;
    Ok(basic_value(call.try_as_basic_value(), Span::call_site())?.into_int_value())
}
