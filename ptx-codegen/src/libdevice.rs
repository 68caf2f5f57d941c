//! NVIDIA's libdevice: the CUDA math library as LLVM bitcode (`__nv_sinf`, `__nv_fmod`, …).
//!
//! The lowering only declares the `__nv_*` functions it calls; [`link`] then brings in
//! libdevice, keeps the kernels external and makes everything else internal, so that the
//! optimiser inlines what is used (up to [`INLINED_CALLS_MAX`] calls) and drops the rest.
//! A kernel that calls no `__nv_*` function never touches libdevice.
//!
//! libdevice is read and parsed once per process (the macro compiles every kernel of a
//! crate in one compiler process), where its call graph is recorded. Each kernel then opens
//! the bitcode lazily in its own LLVM context: only the module's header is read, the
//! functions the kernel does not reach are dropped unread, and linking decodes the bodies
//! of the few that remain.

use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, CString};
use std::path::PathBuf;
use std::sync::OnceLock;

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::llvm_sys;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::{Linkage, Module};
use inkwell::targets::TargetMachine;
use inkwell::values::{BasicValue, FunctionValue, Operand};

use crate::toolkit;

/// Whether `module` calls into libdevice.
pub fn needed(module: &Module<'_>) -> bool {
    module.get_functions().any(|f| f.count_basic_blocks() == 0 && f.get_name().to_bytes().starts_with(b"__nv_"))
}

/// libdevice as this process knows it: the bitcode and, for each function it defines,
/// the functions that function calls.
struct Library {
    bitcode: &'static [u8],
    calls: HashMap<String, Vec<String>>,
}

/// libdevice's file as this process read it, once: its path and bytes, or why there are
/// none. The PTX cache's key names these very bytes ([`identity`]), so what a cached
/// kernel was linked with is what the key says.
fn bitcode() -> Result<&'static (PathBuf, Vec<u8>), String> {
    static BITCODE: OnceLock<Result<(PathBuf, Vec<u8>), String>> = OnceLock::new();
    BITCODE
        .get_or_init(|| {
            let path = toolkit::find_libdevice().ok_or_else(|| {
                "this function needs NVIDIA's libdevice (libdevice.10.bc) for its math, and none was found: \
                 run `scripts/setup` (it installs the PyPI wheel `nvidia-nvvm`), install the CUDA toolkit, \
                 or point GPU_LIBDEVICE at libdevice.10.bc"
                    .to_string()
            })?;
            let bytes =
                std::fs::read(&path).map_err(|e| format!("cannot read libdevice at {}: {e}", path.display()))?;
            Ok((path, bytes))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Which libdevice this process links: the BLAKE3 hash of its bytes, or why there is none.
pub fn identity() -> String {
    match bitcode() {
        Ok((_, bytes)) => blake3::hash(bytes).to_hex().to_string(),
        Err(why) => format!("none: {why}"),
    }
}

/// Reads and parses libdevice, once per process.
fn library() -> Result<&'static Library, String> {
    static LIBRARY: OnceLock<Result<Library, String>> = OnceLock::new();
    LIBRARY
        .get_or_init(|| {
            let (path, bitcode) = bitcode()?;
            let calls = {
                let cx = Context::create();
                let buf = MemoryBuffer::create_from_memory_range(bitcode, "libdevice");
                let lib = Module::parse_bitcode_from_buffer(&buf, &cx)
                    .map_err(|e| format!("cannot parse libdevice at {}: {e}", path.display()))?;
                lib.get_functions()
                    .filter(|f| f.count_basic_blocks() > 0)
                    .map(|f| (name_of(f), callees(&lib, f)))
                    .collect()
            };
            Ok(Library { bitcode, calls })
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn name_of(f: FunctionValue<'_>) -> String {
    f.get_name().to_string_lossy().into_owned()
}

/// The functions `f` refers to (calls, or any other operand that names a function).
fn callees<'ctx>(lib: &Module<'ctx>, f: FunctionValue<'ctx>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for bb in f.get_basic_block_iter() {
        let mut inst = bb.get_first_instruction();
        while let Some(i) = inst {
            for k in 0..i.get_num_operands() {
                let Some(Operand::Value(v)) = i.get_operand(k) else { continue };
                let name = v.get_name().to_string_lossy();
                let is_function = !name.is_empty() && lib.get_function(&name).is_some();
                if is_function && !out.iter().any(|n| *n == name) {
                    out.push(name.into_owned());
                }
            }
            inst = i.get_next_instruction();
        }
    }
    out
}

/// Opens libdevice in `cx` without decoding any function body.
fn open_lazily<'ctx>(cx: &'ctx Context, bitcode: &'static [u8]) -> Result<Module<'ctx>, String> {
    #[allow(deprecated)] // the newer entry point reports errors by exiting the process
    use llvm_sys::bit_reader::LLVMGetBitcodeModuleInContext;
    use llvm_sys::core::{LLVMCreateMemoryBufferWithMemoryRange, LLVMDisposeMemoryBuffer, LLVMDisposeMessage};
    let name = CString::new("libdevice").expect("no NUL in the name");
    let mut module = std::ptr::null_mut();
    let mut message = std::ptr::null_mut();
    // SAFETY: the buffer refers to bytes that live as long as the process and is not
    // copied. On success the lazily read module owns the buffer (it reads bodies from it
    // on demand); on failure the buffer stays ours and is disposed here. The message, if
    // any, is LLVM's to free.
    unsafe {
        let buf = LLVMCreateMemoryBufferWithMemoryRange(bitcode.as_ptr().cast(), bitcode.len(), name.as_ptr(), 0);
        #[allow(deprecated)]
        let failed = LLVMGetBitcodeModuleInContext(cx.raw(), buf, &mut module, &mut message) != 0;
        if failed {
            LLVMDisposeMemoryBuffer(buf);
            let text = if message.is_null() {
                "unknown error".to_string()
            } else {
                let text = CStr::from_ptr(message).to_string_lossy().into_owned();
                LLVMDisposeMessage(message);
                text
            };
            return Err(format!("cannot read libdevice: {text}"));
        }
        Ok(Module::new(module))
    }
}

/// Up to this many calls to libdevice in a module, every call is inlined (libdevice's
/// functions are `alwaysinline`: no call overhead, and the optimiser sees through them).
/// Beyond it, each function the module calls is compiled once and called: a body of
/// thousands of math calls would otherwise become as many inlined copies, megabytes of PTX
/// for the driver to compile when it loads the module, optimised and emitted by LLVM in
/// time that grows with the square of the copies (loop rotation of each copy's loops
/// updates the dominator tree of everything after it; machine CSE merges the constants
/// every copy materialises, clearing the kill flags of all the uses at each merge).
pub const INLINED_CALLS_MAX: usize = 64;

/// The libdevice functions `module` declares, and how many calls it makes to them.
fn calls(module: &Module<'_>) -> (Vec<String>, usize) {
    let mut n = 0;
    let mut called = Vec::new();
    for f in module.get_functions().filter(|f| f.count_basic_blocks() == 0 && name_of(*f).starts_with("__nv_")) {
        let mut call = f.as_global_value().as_pointer_value().get_first_use();
        while let Some(c) = call {
            n += 1;
            call = c.get_next_use();
        }
        called.push(name_of(f));
    }
    (called, n)
}

/// Links libdevice into `module` and internalises every function except `keep` (the
/// kernel entries). Past [`INLINED_CALLS_MAX`] calls, the functions `module` calls are
/// kept out of line.
pub fn link<'ctx>(cx: &'ctx Context, module: &Module<'ctx>, tm: &TargetMachine, keep: &[&str]) -> Result<(), String> {
    let library = library()?;
    let lib = open_lazily(cx, library.bitcode)?;
    prune(module, &lib, &library.calls);
    let (called, n) = calls(module);
    // libdevice says `nvptx64-nvidia-gpulibs`; take the module's triple and layout to link quietly.
    lib.set_triple(&tm.get_triple());
    lib.set_data_layout(&tm.get_target_data().get_data_layout());
    module.link_in_module(lib).map_err(|e| format!("cannot link libdevice: {e}"))?;
    if n > INLINED_CALLS_MAX {
        let kind = Attribute::get_named_enum_kind_id;
        for f in called.iter().filter_map(|name| module.get_function(name)).filter(|f| f.count_basic_blocks() > 0) {
            f.remove_enum_attribute(AttributeLoc::Function, kind("alwaysinline"));
            f.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(kind("noinline"), 0));
        }
    }
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
/// other libdevice functions), before any of their bodies is read. Declarations stay: the
/// lazy reader keeps pointers to the intrinsics it upgrades, and the linker copies a
/// declaration only where something refers to it.
fn prune(module: &Module<'_>, lib: &Module<'_>, calls: &HashMap<String, Vec<String>>) {
    let mut reached: HashSet<&str> = HashSet::new();
    let declared: Vec<String> = module.get_functions().filter(|f| f.count_basic_blocks() == 0).map(name_of).collect();
    let mut work: Vec<&str> = declared.iter().map(String::as_str).collect();
    while let Some(name) = work.pop() {
        if reached.insert(name) {
            work.extend(calls.get(name).into_iter().flatten().map(String::as_str));
        }
    }
    let unused: Vec<_> = lib
        .get_functions()
        .filter(|f| !f.as_global_value().is_declaration() && !reached.contains(name_of(*f).as_str()))
        .collect();
    for f in unused {
        // SAFETY: nothing that stays refers to it (the call graph holds every reference
        // one function makes to another), and a body not yet read has no uses.
        unsafe { f.delete() };
    }
}
