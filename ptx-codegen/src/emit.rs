//! LLVM module → optimised LLVM IR and PTX text, through the NVPTX backend.

use std::sync::Once;

use inkwell::OptimizationLevel;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple};

use crate::libdevice;

pub const NVPTX_TRIPLE: &str = "nvptx64-nvidia-cuda";

/// The GPU architectures LLVM 19's NVPTX backend can target, oldest first.
pub const SUPPORTED_ARCHS: &[&str] =
    &["sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a"];

pub fn nvptx_target_machine(arch: &str) -> Result<TargetMachine, String> {
    static INIT: Once = Once::new();
    INIT.call_once(|| Target::initialize_nvptx(&InitializationConfig::default()));
    let triple = TargetTriple::create(NVPTX_TRIPLE);
    let target = Target::from_triple(&triple).map_err(|e| format!("LLVM has no NVPTX target: {e}"))?;
    // No FMA contraction and no fast-math options: `a * b + c` rounds twice, as on the CPU.
    target
        .create_target_machine(&triple, arch, "", OptimizationLevel::Aggressive, RelocMode::Default, CodeModel::Default)
        .ok_or_else(|| format!("LLVM cannot create an NVPTX target machine for `{arch}`"))
}

/// Text of a module before and after optimisation, and its PTX.
pub struct Emitted {
    pub llvm_ir_unoptimized: String,
    pub llvm_ir: String,
    pub ptx: String,
}

/// Verifies, links libdevice if the module calls into it, optimises (`default<O3>`) and
/// emits `module` as PTX for `arch`. `kernels` are the entry symbols (all else is internal).
pub fn emit_ptx<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    arch: &str,
    kernels: &[&str],
) -> Result<Emitted, String> {
    let tm = nvptx_target_machine(arch)?;
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    module.verify().map_err(|e| format!("the generated LLVM IR is invalid (a compiler bug): {e}"))?;
    let llvm_ir_unoptimized = module.print_to_string().to_string();
    if libdevice::needed(module) {
        libdevice::link(cx, module, &tm, kernels)?;
    }
    module
        .run_passes("default<O3>", &tm, PassBuilderOptions::create())
        .map_err(|e| format!("LLVM optimisation failed: {e}"))?;
    let llvm_ir = module.print_to_string().to_string();
    let buf =
        tm.write_to_memory_buffer(module, FileType::Assembly).map_err(|e| format!("LLVM could not emit PTX: {e}"))?;
    let ptx = renumber_call_sites(String::from_utf8_lossy(buf.as_slice()).trim_end_matches('\0'));
    Ok(Emitted { llvm_ir_unoptimized, llvm_ir, ptx })
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
    use super::renumber_call_sites;

    #[test]
    fn call_sites_are_numbered_from_zero_in_order() {
        let ptx = "{ // callseq 41, 0\n} // callseq 41\n{ // callseq 7, 0\n} // callseq 7\ncallseq x";
        assert_eq!(
            renumber_call_sites(ptx),
            "{ // callseq 0, 0\n} // callseq 0\n{ // callseq 1, 0\n} // callseq 1\ncallseq x"
        );
    }
}
