//! NVIDIA's libdevice: the CUDA math library as LLVM bitcode (`__nv_sinf`, `__nv_fmod`, …).
//!
//! The lowering only declares the `__nv_*` functions it calls; [`link`] then brings in
//! libdevice, keeps the kernels external and makes everything else internal, so that the
//! optimiser inlines what is used and drops the rest. A kernel that calls no `__nv_*`
//! function never touches libdevice.

use std::path::PathBuf;
use std::sync::OnceLock;

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::{Linkage, Module};
use inkwell::targets::TargetMachine;

use crate::toolkit;

/// Whether `module` calls into libdevice.
pub fn needed(module: &Module<'_>) -> bool {
    module.get_functions().any(|f| f.count_basic_blocks() == 0 && f.get_name().to_bytes().starts_with(b"__nv_"))
}

/// The libdevice bitcode, read once per process.
fn bitcode() -> Result<&'static [u8], String> {
    static BYTES: OnceLock<Result<(PathBuf, Vec<u8>), String>> = OnceLock::new();
    let loaded = BYTES.get_or_init(|| {
        let path = toolkit::find_libdevice().ok_or_else(|| {
            "this function needs NVIDIA's libdevice (libdevice.10.bc) for its math, and none was found: \
             run `scripts/setup` (it installs the PyPI wheel `nvidia-nvvm`), install the CUDA toolkit, \
             or point GPU_LIBDEVICE at libdevice.10.bc"
                .to_string()
        })?;
        let bytes = std::fs::read(&path).map_err(|e| format!("cannot read libdevice at {}: {e}", path.display()))?;
        Ok((path, bytes))
    });
    loaded.as_ref().map(|(_, b)| b.as_slice()).map_err(Clone::clone)
}

/// Links libdevice into `module` and internalises every function except `keep` (the
/// kernel entries).
pub fn link<'ctx>(cx: &'ctx Context, module: &Module<'ctx>, tm: &TargetMachine, keep: &[&str]) -> Result<(), String> {
    let bytes = bitcode()?;
    let buf = MemoryBuffer::create_from_memory_range(bytes, "libdevice");
    let lib = Module::parse_bitcode_from_buffer(&buf, cx).map_err(|e| format!("cannot parse libdevice: {e}"))?;
    prune(module, &lib);
    // libdevice says `nvptx64-nvidia-gpulibs`; take the module's triple and layout to link quietly.
    lib.set_triple(&tm.get_triple());
    lib.set_data_layout(&tm.get_target_data().get_data_layout());
    module.link_in_module(lib).map_err(|e| format!("cannot link libdevice: {e}"))?;
    for f in module.get_functions() {
        let name = f.get_name().to_string_lossy();
        if f.count_basic_blocks() > 0 && !keep.contains(&name.as_ref()) {
            f.set_linkage(Linkage::Internal);
        }
    }
    for g in module.get_globals() {
        if g.get_initializer().is_some() {
            g.set_linkage(Linkage::Internal);
        }
    }
    Ok(())
}

/// Deletes from `lib` every function that `module` does not reach (directly or through
/// other libdevice functions), so that linking and optimising see only what is used.
fn prune(module: &Module<'_>, lib: &Module<'_>) {
    use inkwell::values::InstructionOpcode;
    use std::collections::HashSet;
    let mut needed: HashSet<String> = module
        .get_functions()
        .filter(|f| f.count_basic_blocks() == 0)
        .map(|f| f.get_name().to_string_lossy().into_owned())
        .collect();
    let mut work: Vec<String> = needed.iter().cloned().collect();
    while let Some(name) = work.pop() {
        let Some(f) = lib.get_function(&name) else { continue };
        for bb in f.get_basic_block_iter() {
            let mut inst = bb.get_first_instruction();
            while let Some(i) = inst {
                if i.get_opcode() == InstructionOpcode::Call {
                    let callee = i.get_num_operands().checked_sub(1).and_then(|k| i.get_operand(k)).and_then(|o| if let inkwell::values::Operand::Value(v) = o { Some(v) } else { None });
                    if let Some(c) = callee {
                        let callee_name = c.get_name().to_string_lossy().into_owned();
                        if !callee_name.is_empty() && needed.insert(callee_name.clone()) {
                            work.push(callee_name);
                        }
                    }
                }
                inst = i.get_next_instruction();
            }
        }
    }
    let unused: Vec<_> = lib.get_functions().filter(|f| !needed.contains(f.get_name().to_string_lossy().as_ref())).collect();
    for f in unused {
        // SAFETY: nothing that stays refers to it (the walk above found every call).
        unsafe { f.delete() };
    }
}
