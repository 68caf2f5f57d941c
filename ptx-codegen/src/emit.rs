//! LLVM module → optimised LLVM IR and PTX text, through the NVPTX backend.

use std::sync::Once;

use inkwell::OptimizationLevel;
use inkwell::attributes::AttributeLoc;
use inkwell::context::Context;
use inkwell::module::{FlagBehavior, Module};
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple};

use crate::libdevice;

pub const NVPTX_TRIPLE: &str = "nvptx64-nvidia-cuda";

/// The GPU architectures LLVM 19's NVPTX backend can target, oldest first.
pub const SUPPORTED_ARCHS: &[&str] =
    &["sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"];

pub fn nvptx_target_machine(arch: &str) -> Result<TargetMachine, String> {
    nvptx_target_machine_with(arch, "")
}

/// A new module for the GPU: NVPTX's triple and data layout are set before anything is built
/// in it, so that the loads and stores the lowering builds without an explicit alignment
/// get the target's. LLVM's default layout aligns `i64` to 4 bytes, where NVPTX aligns it
/// to 8, and a 64-bit integer load or store at 4 is split into two 32-bit ones.
pub fn nvptx_module<'ctx>(cx: &'ctx Context, name: &str) -> Result<Module<'ctx>, String> {
    let tm = nvptx_target_machine("sm_70")?;
    let module = cx.create_module(name);
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    Ok(module)
}

/// [`nvptx_target_machine`] with LLVM target features (such as `+ptx63`).
pub fn nvptx_target_machine_with(arch: &str, features: &str) -> Result<TargetMachine, String> {
    static INIT: Once = Once::new();
    INIT.call_once(|| Target::initialize_nvptx(&InitializationConfig::default()));
    let triple = TargetTriple::create(NVPTX_TRIPLE);
    let target = Target::from_triple(&triple).map_err(|e| format!("LLVM has no NVPTX target: {e}"))?;
    // No FMA contraction and no fast-math options: `a * b + c` rounds twice, as on the CPU.
    target
        .create_target_machine(
            &triple,
            arch,
            features,
            OptimizationLevel::Aggressive,
            RelocMode::Default,
            CodeModel::Default,
        )
        .ok_or_else(|| format!("LLVM cannot create an NVPTX target machine for `{arch}`"))
}

/// What f32 arithmetic does with subnormal values: one choice for the whole module.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Subnormals {
    /// Kept, as IEEE arithmetic and the CPU keep them.
    Keep,
    /// Flushed to zero, as operands and as results (`fastmath`).
    Flush,
}

/// Text of a module before and after optimisation, and its PTX.
pub struct Emitted {
    pub llvm_ir_unoptimized: String,
    pub llvm_ir: String,
    pub ptx: String,
}

/// Verifies, links libdevice if the module calls into it, optimises (`default<O3>`) and
/// emits `module` as PTX for `arch`, with f32 `subnormals` in every function. `kernels` are
/// the entry symbols (all else is internal).
pub fn emit_ptx<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    arch: &str,
    subnormals: Subnormals,
    kernels: &[&str],
) -> Result<Emitted, String> {
    emit_ptx_with(cx, module, arch, "", subnormals, kernels)
}

/// [`emit_ptx`] with LLVM target `features` (e.g. `+ptx63`).
pub fn emit_ptx_with<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    arch: &str,
    features: &str,
    subnormals: Subnormals,
    kernels: &[&str],
) -> Result<Emitted, String> {
    let tm = nvptx_target_machine_with(arch, features)?;
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    if subnormals == Subnormals::Flush {
        // libdevice picks its flushing code paths by this flag (`__nvvm_reflect`).
        module.add_basic_value_flag("nvvm-reflect-ftz", FlagBehavior::Override, cx.i32_type().const_int(1, false));
    }
    set_subnormals(cx, module, subnormals);
    module.verify().map_err(|e| format!("the generated LLVM IR is invalid (a compiler bug): {e}"))?;
    let llvm_ir_unoptimized = module.print_to_string().to_string();
    if libdevice::needed(module) {
        libdevice::link(cx, module, &tm, kernels)?;
        // libdevice's functions join the module's mode, as clang's `-mlink-builtin-bitcode` does.
        set_subnormals(cx, module, subnormals);
    }
    let checks = crate::warp_uniform::has_checks(module);
    if checks {
        // Warp checks answered by earlier ones, once the program's values are SSA values
        // (their relations as written: `x` checked, then `x + 16 * ld`), and again after
        // optimisation (as LLVM rewrites them: `x + 640`).
        module
            .run_passes("always-inline,function(sroa,early-cse)", &tm, PassBuilderOptions::create())
            .map_err(|e| format!("LLVM optimisation failed: {e}"))?;
        crate::warp_uniform::drop_answered_checks(cx, module, kernels)?;
    }
    module
        .run_passes("default<O3>", &tm, PassBuilderOptions::create())
        .map_err(|e| format!("LLVM optimisation failed: {e}"))?;
    if checks && crate::warp_uniform::drop_answered_checks(cx, module, kernels)? {
        // Folds the branches on the answered checks, and the blocks they split.
        module
            .run_passes("function(instcombine,simplifycfg)", &tm, PassBuilderOptions::create())
            .map_err(|e| format!("LLVM optimisation failed: {e}"))?;
    }
    crate::wide_products::widen_products(cx, module)?;
    let llvm_ir = module.print_to_string().to_string();
    let buf =
        tm.write_to_memory_buffer(module, FileType::Assembly).map_err(|e| format!("LLVM could not emit PTX: {e}"))?;
    let ptx = renumber_call_sites(String::from_utf8_lossy(buf.as_slice()).trim_end_matches('\0'));
    let ptx = widen_narrow_negations(&ptx)?;
    Ok(Emitted { llvm_ir_unoptimized, llvm_ir, ptx })
}

/// Gives every function defined in `module` the denormal mode of `subnormals`. One mode for
/// all, entries, bodies, helpers and libdevice alike: LLVM inlines a function only into one
/// of the same mode (an entry without its body's attribute would call the body out of line
/// at every element), and an `alwaysinline` body inlined into an entry of another mode
/// computes in the entry's mode. IEEE is LLVM's default, so `Keep` needs no attribute.
fn set_subnormals(cx: &Context, module: &Module<'_>, subnormals: Subnormals) {
    if subnormals == Subnormals::Keep {
        return;
    }
    for f in module.get_functions().filter(|f| f.count_basic_blocks() > 0) {
        f.add_attribute(
            AttributeLoc::Function,
            cx.create_string_attribute("denormal-fp-math-f32", "preserve-sign,preserve-sign"),
        );
    }
}

/// The driver's PTX compiler folds a 16-bit negation or absolute value followed by a
/// widening as if it could not wrap: `(-i16::MIN) as i32` and `i16::MIN.wrapping_abs() as
/// i32` gave 32768 on an H200 (driver 580), where Rust gives -32768 (`tests/gpu_narrow.rs`
/// found these two and no other 8- or 16-bit operation). LLVM emits `neg.s16`/`abs.s16`
/// for every such operation on `i8` and `i16`, however it was written (`-t`, `0 - t`,
/// `t * -1`, `wrapping_abs`), so each is rewritten here as the 32-bit operation on the
/// sign-extended value, truncated back: the same bits, and nothing for the driver to fold
/// wrongly.
fn widen_narrow_negations(ptx: &str) -> Result<String, String> {
    const WIDENED: [(&str, &str); 2] = [("neg.s16", "neg.s32"), ("abs.s16", "abs.s32")];
    if !WIDENED.iter().any(|(narrow, _)| ptx.contains(narrow)) {
        return Ok(ptx.to_string());
    }
    let mut out = String::with_capacity(ptx.len() + 256);
    for line in ptx.lines() {
        let code = line.trim();
        let Some((narrow, wide)) = WIDENED.iter().find(|(narrow, _)| code.contains(narrow)) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let unexpected = || format!("internal compiler error: an unexpected form of `{narrow}` in the PTX: `{code}`");
        let operands = code.strip_prefix(narrow).ok_or_else(unexpected)?.trim().strip_suffix(';').unwrap_or_default();
        let (dst, src) = match operands.split(',').map(str::trim).collect::<Vec<_>>()[..] {
            [dst, src] if dst.starts_with('%') && src.starts_with('%') => (dst, src),
            _ => return Err(unexpected()),
        };
        out.push_str(&format!(
            "\t{{\n\t.reg .b32 %wide32;\n\tcvt.s32.s16 %wide32, {src};\n\t{wide} %wide32, %wide32;\n\tcvt.u16.u32 {dst}, %wide32;\n\t}}\n"
        ));
    }
    Ok(out)
}

/// NVPTX numbers the `// callseq N` comments around each call from one counter shared by
/// the whole process, so the same function would get different PTX depending on what the
/// compiler (or a test thread) emitted before it. Renumbering them from 0 in order of
/// appearance makes the PTX depend on the function alone: reproducible builds, stable
/// snapshots. The numbers are comments; nothing else reads them.
fn renumber_call_sites(ptx: &str) -> String {
    const TAG: &str = "callseq ";
    let mut seen: Vec<&str> = Vec::new();
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    while let Some(at) = rest.find(TAG) {
        let (head, tail) = rest.split_at(at + TAG.len());
        out.push_str(head);
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let (number, after) = tail.split_at(digits);
        if number.is_empty() {
            rest = after;
            continue;
        }
        let index = seen.iter().position(|n| *n == number).unwrap_or_else(|| {
            seen.push(number);
            seen.len() - 1
        });
        out.push_str(&index.to_string());
        rest = after;
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::{renumber_call_sites, widen_narrow_negations};

    #[test]
    fn sixteen_bit_negations_become_32_bit_ones() {
        let ptx = "\tld.param.u16 %rs1, [p];\n\tneg.s16 \t%rs2, %rs1;\n\tcvt.s32.s16 %r1, %rs2;\n";
        assert_eq!(
            widen_narrow_negations(ptx).unwrap(),
            "\tld.param.u16 %rs1, [p];\n\t{\n\t.reg .b32 %wide32;\n\tcvt.s32.s16 %wide32, %rs1;\n\tneg.s32 %wide32, %wide32;\n\tcvt.u16.u32 %rs2, %wide32;\n\t}\n\tcvt.s32.s16 %r1, %rs2;\n"
        );
        assert!(widen_narrow_negations("\tabs.s16 %rs3, %rs2;\n").unwrap().contains("abs.s32 %wide32, %wide32;"));
        assert_eq!(widen_narrow_negations("\tneg.s32 %r2, %r1;\n").unwrap(), "\tneg.s32 %r2, %r1;\n");
        // A form this does not know is a compile error, never left as it was.
        assert!(widen_narrow_negations("\t@%p1 neg.s16 %rs2, %rs1;\n").is_err());
    }

    #[test]
    fn call_sites_are_numbered_from_zero_in_order() {
        let ptx = "{ // callseq 41, 0\n} // callseq 41\n{ // callseq 7, 0\n} // callseq 7\ncallseq x";
        assert_eq!(
            renumber_call_sites(ptx),
            "{ // callseq 0, 0\n} // callseq 0\n{ // callseq 1, 0\n} // callseq 1\ncallseq x"
        );
    }
}
