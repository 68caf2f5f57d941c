//! `ptx-codegen` compiles a plain scalar Rust function into a PTX elementwise kernel.
//!
//! The pipeline reads like its modules: [`frontend`] (syn → typed kernel IR, with every
//! diagnostic at its span), [`lower`] (kernel IR → LLVM IR: the scalar function and a
//! grid-stride kernel entry), [`emit`] (LLVM's NVPTX backend → PTX). [`abi`] is the contract
//! with the runtime that launches the kernel. [`cache`] keeps each function's compiled
//! kernels on disk, for the next build.
//!
//! This crate has no `proc_macro` dependency: every stage runs from plain tests.

pub mod abi;
pub mod cache;
pub mod emit;
pub mod frontend;
/// The lowering compiled for the host, for the differential tests (feature `host-jit`).
#[cfg(feature = "host-jit")]
pub mod host;
pub mod intrinsic;
pub mod ir;
pub mod libdevice;
pub mod lower;
pub mod options;
pub mod toolkit;
pub mod ty;
pub mod warp_uniform;
pub mod wide_products;

use inkwell::context::Context;
use syn::ext::IdentExt;

use lower::{EntryKind, Lowering, Weight};

pub use abi::{
    ExplicitAbi, ExplicitParam, ExplicitParamKind, Fault, GUFUNC_MAX_INPUTS, GUFUNC_MAX_OUTPUTS, KernelAbi,
    entry_symbol,
};
pub use cache::PtxCache;
pub use ir::IntOverflow;
pub use options::{LaunchBounds, Options, Target};
pub use ty::ScalarType;

/// A compiled vectorized function: its kernel's ABI, its PTX and its optimised LLVM IR.
#[derive(Clone, Debug)]
pub struct CompiledKernel {
    pub abi: KernelAbi,
    pub ptx: String,
    pub llvm_ir: String,
    /// Empty in a result read from the PTX cache (see [`compile_variants`]).
    pub llvm_ir_unoptimized: String,
}

/// Compiles `item` to PTX. Errors are the user's (at their spans) or the toolchain's (at
/// the function's name).
pub fn compile(item: &syn::ItemFn, options: &Options) -> Result<CompiledKernel, syn::Error> {
    compile_with_helpers(item, &[], &[], options)
}

/// Compiles `item` with the helper functions it calls (see [`frontend::check_program`]),
/// with integer overflow wrapping (a release build's semantics).
pub fn compile_with_helpers(
    item: &syn::ItemFn,
    callees: &[(String, String)],
    helpers: &[frontend::HelperDef],
    options: &Options,
) -> Result<CompiledKernel, syn::Error> {
    let program = frontend::check_program(item, callees, helpers)?;
    let name = item.sig.ident.unraw().to_string();
    let at_name = |msg: String| syn::Error::new(item.sig.ident.span(), msg);
    compile_ir(&program, &name, options, IntOverflow::Wrap).map_err(at_name)
}

/// A function's kernel for each overflow semantics rustc may build the rest of the crate
/// with: wrapping (release) and checked (`debug_assertions`).
#[derive(Clone, Debug)]
pub struct Variants {
    pub wrapping: CompiledKernel,
    /// `None` when nothing in the function is checked: the wrapping kernel serves both.
    pub checked: Option<CompiledKernel>,
}

/// [`compile_with_helpers`], both variants. With a `cache`, a function compiled before
/// with the same inputs (see [`cache`]) is read from it, and one compiled here is stored
/// there. A result read from the cache has what the macro uses (the ABIs, the PTX, the
/// optimised LLVM IR of `f::LLVM_IR`), not the LLVM IR before optimisation, which only
/// `GPU_VECTORIZE_DUMP` writes: with that variable set the cache is left alone.
pub fn compile_variants(
    item: &syn::ItemFn,
    callees: &[(String, String)],
    helpers: &[frontend::HelperDef],
    options: &Options,
    cache: Option<&PtxCache>,
) -> Result<Variants, syn::Error> {
    let name = item.sig.ident.unraw().to_string();
    let at_name = |msg: String| syn::Error::new(item.sig.ident.span(), msg);
    let key = cache.filter(|_| std::env::var_os(DUMP_ENV).is_none()).map(|c| {
        (c, cache::key(cache::Toolchain::current(), cache::Kind::Vectorized, item, callees, helpers, options))
    });
    if let Some(hit) = key.as_ref().and_then(|(c, k)| c.load::<Variants>(k)) {
        return Ok(hit);
    }
    let program = frontend::check_program(item, callees, helpers)?;
    let wrapping = compile_ir(&program, &name, options, IntOverflow::Wrap).map_err(at_name)?;
    let checked = match program.checks_overflow() {
        true => Some(compile_ir(&program, &name, options, IntOverflow::Panic).map_err(at_name)?),
        false => None,
    };
    let variants = Variants { wrapping, checked };
    if let Some((c, k)) = key {
        // A cache that cannot be written costs the next build a compile, not this one.
        let _ = c.store(&k, &variants);
    }
    Ok(variants)
}

/// Lowers and emits an already checked program, with integer overflow `overflow`.
pub fn compile_ir(
    program: &ir::Program,
    name: &str,
    options: &Options,
    overflow: IntOverflow,
) -> Result<CompiledKernel, String> {
    let f = program.entry();
    let inputs: Vec<ScalarType> = f.params.iter().map(|p| p.ty).collect();
    let abi = KernelAbi::new(name, inputs, &f.ret, program.may_fail_with(overflow));
    let cx = Context::create();
    let module = emit::nvptx_module(&cx, name)?;
    let how = Lowering {
        fault_code: abi.error_flag,
        fault_record: false,
        fastmath: options.fastmath,
        overflow,
        bf16_round_calls: false,
    };
    let lowered = lower::lower_program(&cx, &module, program, &format!("{name}_scalar"), how).and_then(|fns| {
        let weight = if libdevice::needed(&module) { Weight::Heavy } else { Weight::Light };
        lower::lower_kernel_entry(&cx, &module, fns[0], &abi, EntryKind::Contiguous, weight)?;
        lower::lower_kernel_entry(&cx, &module, fns[0], &abi, EntryKind::Strided, weight)?;
        if let Some(r) = &abi.reduce_entry {
            lower::lower_reduce_entry(&cx, &module, fns[0], abi.outputs[0], r, abi.error_flag, weight)?;
        }
        Ok(())
    });
    if let Err(e) = lowered {
        return Err(format!("internal compiler error while lowering `{name}`: {}", e.message));
    }
    let strided = abi.strided_entry();
    let kernels: Vec<&str> =
        [abi.entry.as_str(), strided.as_str()].into_iter().chain(abi.reduce_entry.as_deref()).collect();
    let out = emit::emit_ptx(&cx, &module, &options.arch, subnormals(options), &kernels)?;
    dump(name, &out)?;
    Ok(CompiledKernel { abi, ptx: out.ptx, llvm_ir: out.llvm_ir, llvm_ir_unoptimized: out.llvm_ir_unoptimized })
}

/// `fastmath` flushes f32 subnormals to zero; otherwise they are kept, as on the CPU.
fn subnormals(options: &Options) -> emit::Subnormals {
    if options.fastmath { emit::Subnormals::Flush } else { emit::Subnormals::Keep }
}

/// The environment variable that names a folder for the compiler's intermediate code.
pub const DUMP_ENV: &str = "GPU_VECTORIZE_DUMP";

/// With `GPU_VECTORIZE_DUMP=<folder>` set while building, writes `<name>.ll` (LLVM IR before
/// optimisation), `<name>.opt.ll` (after) and `<name>.ptx` for every kernel compiled.
fn dump(name: &str, out: &emit::Emitted) -> Result<(), String> {
    let Some(dir) = std::env::var_os(DUMP_ENV) else { return Ok(()) };
    let dir = std::path::PathBuf::from(dir);
    let write = |ext: &str, text: &str| {
        let path = dir.join(format!("{name}.{ext}"));
        std::fs::write(&path, text).map_err(|e| format!("{DUMP_ENV}: cannot write {}: {e}", path.display()))
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("{DUMP_ENV}: cannot create {}: {e}", dir.display()))?;
    write("ll", &out.llvm_ir_unoptimized)?;
    write("opt.ll", &out.llvm_ir)?;
    write("ptx", &out.ptx)
}

/// A compiled explicit kernel (`#[kernel]`): its ABI, its PTX and its LLVM IR.
#[derive(Clone, Debug)]
pub struct CompiledExplicit {
    pub abi: ExplicitAbi,
    pub ptx: String,
    /// The LLVM IR after and before optimisation: empty in a result read from the PTX
    /// cache (see [`compile_kernel_variants`]).
    pub llvm_ir: String,
    pub llvm_ir_unoptimized: String,
}

/// An explicit kernel for each overflow semantics (see [`Variants`]).
#[derive(Clone, Debug)]
pub struct KernelVariants {
    pub wrapping: CompiledExplicit,
    /// `None` when nothing in the kernel is overflow-checked: the wrapping kernel serves both.
    pub checked: Option<CompiledExplicit>,
}

/// Compiles an explicit kernel (`#[kernel]`) with the helpers it calls, both overflow
/// variants, through `cache` as [`compile_variants`] does. A result read from the cache
/// has the ABIs and the PTX, what the macro uses, and no LLVM IR.
pub fn compile_kernel_variants(
    item: &syn::ItemFn,
    callees: &[(String, String)],
    helpers: &[frontend::HelperDef],
    options: &Options,
    cache: Option<&PtxCache>,
) -> Result<KernelVariants, syn::Error> {
    let at_name = |msg: String| syn::Error::new(item.sig.ident.span(), msg);
    let key = cache
        .filter(|_| std::env::var_os(DUMP_ENV).is_none())
        .map(|c| (c, cache::key(cache::Toolchain::current(), cache::Kind::Explicit, item, callees, helpers, options)));
    if let Some(hit) = key.as_ref().and_then(|(c, k)| c.load::<KernelVariants>(k)) {
        return Ok(hit);
    }
    let program = frontend::check_kernel_program(item, callees, helpers)?;
    check_arch(&program, &options.arch)?;
    let name = item.sig.ident.unraw().to_string();
    let wrapping = compile_kernel_ir(&program, &name, options, IntOverflow::Wrap).map_err(at_name)?;
    let checked = match program.checks_overflow() {
        true => Some(compile_kernel_ir(&program, &name, options, IntOverflow::Panic).map_err(at_name)?),
        false => None,
    };
    let variants = KernelVariants { wrapping, checked };
    if let Some((c, k)) = key {
        let _ = c.store(&k, &variants);
    }
    Ok(variants)
}

/// Parses `src` as a kernel and compiles it with wrapping overflow (for tests and tools).
pub fn compile_kernel_str(src: &str, options: &Options) -> Result<CompiledExplicit, syn::Error> {
    let item: syn::ItemFn = syn::parse_str(src)?;
    let program = frontend::check_kernel_program(&item, &[], &[])?;
    check_arch(&program, &options.arch)?;
    let name = item.sig.ident.unraw().to_string();
    compile_kernel_ir(&program, &name, options, IntOverflow::Wrap)
        .map_err(|m| syn::Error::new(item.sig.ident.span(), m))
}

/// The oldest target with the tensor cores `gpu::mma` uses (`mma.sync` of bf16 and TF32,
/// `ldmatrix`) and the asynchronous copies (`cp.async`).
pub const MMA_MIN_ARCH: u32 = 80;

/// An error at every `gpu::mma` operation (but `zeros`, which needs no tensor core) and
/// every asynchronous copy of a program compiled for an older target than
/// [`MMA_MIN_ARCH`].
fn check_arch(program: &ir::Program, arch: &str) -> Result<(), syn::Error> {
    let number: u32 = arch.trim_start_matches("sm_").trim_end_matches('a').parse().unwrap_or(0);
    if number >= MMA_MIN_ARCH {
        return Ok(());
    }
    let mut spans = Vec::new();
    for f in &program.functions {
        ir::visit_block(&f.body, &mut |e| {
            let needs = match &e.kind {
                ir::ExprKind::Mma(op, _) => *op != ir::MmaOp::Zeros,
                ir::ExprKind::CopyAsync { .. } => true,
                ir::ExprKind::Gpu(op, _) => {
                    matches!(op, ir::GpuOp::CopyAsyncCommit | ir::GpuOp::CopyAsyncWait(_) | ir::GpuOp::CopyAsyncWaitAll)
                }
                _ => false,
            };
            if needs {
                spans.push(e.span);
            }
        });
    }
    let message = format!(
        "tensor cores (`gpu::mma`) and asynchronous copies (`gpu::copy_async*`) need sm_{MMA_MIN_ARCH} or newer, \
         and this kernel is compiled for {arch}: write `#[kernel(arch = \"sm_{MMA_MIN_ARCH}\")]` (or the GPU's own, \
         such as \"sm_90\")"
    );
    let mut errors = spans.into_iter().map(|s| syn::Error::new(s, &message));
    let Some(mut first) = errors.next() else { return Ok(()) };
    errors.for_each(|e| first.combine(e));
    Err(first)
}

/// Lowers and emits a checked kernel program, with integer overflow `overflow`.
pub fn compile_kernel_ir(
    program: &ir::Program,
    name: &str,
    options: &Options,
    overflow: IntOverflow,
) -> Result<CompiledExplicit, String> {
    let abi = ExplicitAbi {
        symbol: kernel_abi::kernel_symbol(name),
        params: program.entry().params.iter().map(ExplicitParam::of).collect(),
        static_shared_bytes: program.static_shared_bytes(),
        dynamic_shared: program.uses_dynamic_shared(),
    };
    let cx = Context::create();
    let module = emit::nvptx_module(&cx, name)?;
    // A kernel always takes the fault record: an index can miss in any kernel.
    let how = Lowering {
        fault_code: true,
        fault_record: true,
        fastmath: options.fastmath,
        overflow,
        bf16_round_calls: false,
    };
    let lowered = lower::lower_program(&cx, &module, program, &format!("{name}_body"), how).and_then(|fns| {
        lower::mark_convergent(&cx, &fns);
        lower::lower_explicit_entry(&cx, &module, fns[0], program, &abi.symbol, options.launch_bounds)
    });
    if let Err(e) = lowered {
        return Err(format!("internal compiler error while lowering `{name}`: {}", e.message));
    }
    // `activemask` needs PTX 6.2 (LLVM asks 6.3 of sm_70 and sm_72 for it), more than
    // LLVM's default (6.0) for those; newer targets' defaults are above it.
    let features = if matches!(options.arch.as_str(), "sm_70" | "sm_72") { "+ptx63" } else { "" };
    let out = emit::emit_ptx_with(&cx, &module, &options.arch, features, subnormals(options), &[abi.symbol.as_str()])?;
    dump(&abi.symbol, &out)?;
    Ok(CompiledExplicit { abi, ptx: out.ptx, llvm_ir: out.llvm_ir, llvm_ir_unoptimized: out.llvm_ir_unoptimized })
}

/// Parses `src` as a function and compiles it (for tests and tools).
pub fn compile_str(src: &str, options: &Options) -> Result<CompiledKernel, syn::Error> {
    let item: syn::ItemFn = syn::parse_str(src)?;
    compile(&item, options)
}
