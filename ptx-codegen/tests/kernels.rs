//! Explicit kernels (`#[kernel]`): every kernel of the corpus compiles, both overflow
//! variants are accepted by `ptxas` for sm_70 and sm_90, and the PTX/IR has what the
//! language promises (bounds checks, barriers, atomics, shuffles, shared arrays).

mod kernel_corpus;

use std::path::PathBuf;

use ptx_codegen::{
    CompiledExplicit, ExplicitParamKind, Options, ScalarType, compile_kernel_str, compile_kernel_variants, toolkit,
};

fn compile(src: &str) -> CompiledExplicit {
    compile_kernel_str(src, &Options::default()).unwrap_or_else(|e| panic!("does not compile: {e}\n{src}"))
}

fn corpus_kernel(name: &str) -> CompiledExplicit {
    let (_, src) = kernel_corpus::corpus().into_iter().find(|(n, _)| n == name).expect("in the corpus");
    compile(&src)
}

fn assemble_all(arch: &str) {
    let ptxas = toolkit::find_ptxas(arch).unwrap_or_else(|| panic!("no ptxas for {arch}: run scripts/setup"));
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ptxas-kernels-{arch}"));
    std::fs::create_dir_all(&dir).unwrap();
    let options = Options { arch: arch.to_string(), ..Options::default() };
    let mut files = Vec::new();
    let mut checked = 0;
    for (name, src) in kernel_corpus::corpus() {
        let item: syn::ItemFn = syn::parse_str(&src).unwrap();
        let v = compile_kernel_variants(&item, &[], &[], &options, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut all = vec![(name.clone(), v.wrapping)];
        if let Some(c) = v.checked {
            checked += 1;
            all.push((format!("{name}.checked"), c));
        }
        for (name, k) in all {
            assert!(k.ptx.contains(&format!(".visible .entry {}(", k.abi.symbol)), "{name}");
            assert!(k.ptx.contains(&format!(".target {arch}")), "{name}");
            let file = dir.join(format!("{name}.ptx"));
            std::fs::write(&file, &k.ptx).unwrap();
            files.push(file);
        }
    }
    assert!(checked >= 3, "the corpus has overflow-checked kernels");
    // A kernel and its checked twin define the same entry: separate runs of `ptxas`.
    let (checked, wrapping): (Vec<PathBuf>, Vec<PathBuf>) =
        files.into_iter().partition(|f| f.to_string_lossy().ends_with(".checked.ptx"));
    let rejected = [toolkit::assemble(&ptxas, arch, &wrapping), toolkit::assemble(&ptxas, arch, &checked)].concat();
    let failures: Vec<String> = rejected.iter().map(|(f, e)| format!("{}: {e}", f.display())).collect();
    assert!(failures.is_empty(), "ptxas rejected:\n{}", failures.join("\n"));
}

#[test]
fn ptxas_accepts_the_kernels_for_sm_70() {
    assemble_all("sm_70");
}

#[test]
fn ptxas_accepts_the_kernels_for_sm_90() {
    assemble_all("sm_90");
}

#[test]
fn the_abi_lists_the_parameters_and_shared_memory() {
    let k = corpus_kernel("axpy");
    assert_eq!(k.abi.symbol, "kernel_axpy");
    let kinds: Vec<_> = k.abi.params.iter().map(|p| (p.name.as_str(), p.kind.clone())).collect();
    assert_eq!(
        kinds,
        [
            ("a", ExplicitParamKind::Scalar(ScalarType::F32)),
            ("x", ExplicitParamKind::Slice { elem: ScalarType::F32, mutable: false }),
            ("y", ExplicitParamKind::Slice { elem: ScalarType::F32, mutable: true }),
        ]
    );
    let slots = k.abi.kernel_params();
    assert_eq!((slots.slot(2), slots.len_slot(2), slots.fault(), slots.count()), (3, Some(4), 5, 6));
    assert_eq!((k.abi.static_shared_bytes, k.abi.dynamic_shared), (0, false));
    let m = corpus_kernel("fast_matmul");
    assert_eq!((m.abi.static_shared_bytes, m.abi.dynamic_shared), (2 * 16 * 16 * 4, false));
    let r = corpus_kernel("reduce_shared");
    assert_eq!(r.abi.static_shared_bytes, 256 * 4 + 256);
    let d = corpus_kernel("dynamic");
    assert_eq!((d.abi.static_shared_bytes, d.abi.dynamic_shared), (0, true));
    // The entry's parameters: one per slot, the fault record last.
    assert!(k.ptx.contains(".param .f32 kernel_axpy_param_0"), "{}", k.ptx);
    assert!(k.ptx.contains(".param .u64 kernel_axpy_param_5"), "{}", k.ptx);
}

#[test]
fn every_index_is_bounds_checked_and_faults_are_recorded() {
    let k = corpus_kernel("axpy");
    // The checks compare with the length parameters, the fault record is won by CAS.
    assert!(k.llvm_ir_unoptimized.contains("icmp uge i64"), "{}", k.llvm_ir_unoptimized);
    assert_eq!(k.llvm_ir_unoptimized.matches("= icmp uge i64").count(), 3, "{}", k.llvm_ir_unoptimized);
    assert!(k.ptx.contains("st.global.u64"), "{}", k.ptx);
    assert!(k.ptx.contains("atom.global.cas.b64"), "{}", k.ptx);
    assert!(!k.ptx.contains("trap"), "{}", k.ptx);
    // Code 14 (IndexOutOfBounds) is written.
    assert!(k.llvm_ir_unoptimized.contains("store i32 14"), "{}", k.llvm_ir_unoptimized);
    // Unchecked reads compare nothing against the length.
    let u =
        compile("fn u(x: &[f32], out: &mut [f32]) { let i = gpu::grid1(); out[0] = unsafe { *x.get_unchecked(i) }; }");
    assert_eq!(u.llvm_ir_unoptimized.matches("= icmp uge i64").count(), 1, "{}", u.llvm_ir_unoptimized);
    // Unchecked writes (and read-modify-writes) neither: no check, so no fault record.
    let w = compile(
        "fn w(x: &[f32], out: &mut [f32]) {
            let i = gpu::grid1();
            unsafe { *out.get_unchecked_mut(i) = *x.get_unchecked(i); }
            unsafe { *out.get_unchecked_mut(i + 1) *= 2.0; }
        }",
    );
    assert_eq!(w.llvm_ir_unoptimized.matches("= icmp uge i64").count(), 0, "{}", w.llvm_ir_unoptimized);
    assert!(!w.ptx.contains("atom.global.cas"), "{}", w.ptx);
    assert_eq!(w.ptx.matches("st.global.f32").count(), 2, "{}", w.ptx);
}

#[test]
fn check_index_is_a_bounds_check_against_its_length() {
    let k = corpus_kernel("check_index");
    // `t < y.len()` is a branch, not a check; `check_index` against `n`, then the reads of
    // `x` and the write of `y` against their lengths: three checks, each raising code 14.
    assert_eq!(k.llvm_ir_unoptimized.matches("= icmp uge i64").count(), 3, "{}", k.llvm_ir_unoptimized);
    assert!(k.llvm_ir_unoptimized.contains("store i32 14"), "{}", k.llvm_ir_unoptimized);
    let Err(e) =
        compile_kernel_str("fn k(y: &mut [f32]) { y[0] = gpu::check_index(1.0, 2) as f32; }", &Options::default())
    else {
        panic!("a float index is refused")
    };
    assert!(e.to_string().contains("`gpu::check_index` takes a `usize` here"), "{e}");
}

#[test]
fn read_only_slices_use_the_non_coherent_cache() {
    let k = corpus_kernel("axpy");
    assert!(k.ptx.contains("ld.global.nc.f32"), "{}", k.ptx);
    assert!(k.llvm_ir.contains("noalias nocapture readonly"), "{}", k.llvm_ir);
    // A written slice is read through the coherent path.
    assert!(k.ptx.contains("ld.global.f32"), "{}", k.ptx);
}

#[test]
fn builtins_reach_the_ptx() {
    let b = corpus_kernel("barriers");
    for needle in [
        "bar.sync",
        "bar.red.popc",
        "bar.red.and",
        "bar.red.or",
        "membar.gl",
        "membar.cta",
        "membar.sys",
        "vote.sync.ballot",
        "vote.sync.all",
        "vote.sync.any",
        "activemask",
        "%laneid",
    ] {
        assert!(b.ptx.contains(needle), "{needle}:\n{}", b.ptx);
    }
    let s = corpus_kernel("shuffles_f32");
    for needle in ["shfl.sync.idx.b32", "shfl.sync.up.b32", "shfl.sync.down.b32", "shfl.sync.bfly.b32"] {
        assert!(s.ptx.contains(needle), "{needle}:\n{}", s.ptx);
    }
    // A 64-bit value is shuffled as two halves.
    let s64 = corpus_kernel("shuffles_f64");
    assert_eq!(s64.ptx.matches("shfl.sync.bfly.b32").count(), 2, "{}", s64.ptx);
    let a = corpus_kernel("atomic_add_f32");
    assert!(a.ptx.contains("atom.global.add.f32"), "{}", a.ptx);
    assert!(a.ptx.contains("atom.shared.add.f32"), "{}", a.ptx);
    let m = corpus_kernel("atomic_min_i64");
    assert!(m.ptx.contains("atom.global.min.s64"), "{}", m.ptx);
    let c = corpus_kernel("atomic_compare_and_swap_u32");
    assert!(c.ptx.contains("atom.global.cas.b32"), "{}", c.ptx);
}

/// A 64-bit integer element is loaded and stored whole. The module's data layout is
/// NVPTX's from the start: under LLVM's default one an `i64` is 4-byte aligned, and every
/// `u64`/`i64`/`usize` access of a kernel was two 32-bit ones.
#[test]
fn wide_integers_move_whole() {
    for t in ["u64", "i64", "usize", "isize"] {
        let k = compile(&format!("fn k(x: &[{t}], y: &mut [{t}]) {{ let i = gpu::grid1(); y[i] = x[i] ^ y[i + 1]; }}"));
        let accesses: Vec<&str> =
            k.ptx.lines().filter(|l| l.contains("ld.global") || l.contains("st.global.u")).map(str::trim).collect();
        assert!(accesses.iter().any(|l| l.starts_with("ld.global.nc.u64")), "{t}: {accesses:#?}");
        assert!(accesses.iter().any(|l| l.starts_with("st.global.u64")), "{t}: {accesses:#?}");
        assert!(!accesses.iter().any(|l| l.contains(".u32")), "{t}: 32-bit pieces: {accesses:#?}");
        let under_aligned = |l: &&str| (l.contains("load i64") || l.contains("store i64")) && l.ends_with("align 4");
        assert!(!k.llvm_ir_unoptimized.lines().any(|l| under_aligned(&l)), "{t}:\n{}", k.llvm_ir_unoptimized);
    }
}

/// `gpu::load4`/`store4`/`load2`/`store2`: one vector instruction where the address is
/// aligned (a branch on it), element accesses otherwise, and the checks of `a[i..][..n]`.
#[test]
fn vector_accesses_reach_the_ptx() {
    let k = corpus_kernel("vector_access");
    // Read-only slices load through the non-coherent cache (`.nc`); four bytes or two
    // halves move as one 32-bit word.
    for instruction in [
        "ld.global.nc.v4.f32",
        "st.global.v4.f32",
        "ld.global.nc.v2.f64",
        "st.global.v2.f64",
        "ld.global.nc.u32",
        "st.global.u32",
        "st.shared.v4.f32",
        "ld.shared.v2.f32",
        "st.shared.u32",
        "ld.shared.v4.u16",
    ] {
        assert!(k.ptx.contains(instruction), "no {instruction}:\n{}", k.ptx);
    }
    // The element path beside each vector one.
    assert!(k.ptx.contains("ld.global.nc.f32") && k.ptx.contains("st.global.f32"), "{}", k.ptx);
    let ir = &k.llvm_ir_unoptimized;
    assert!(ir.contains("load <4 x float>, ptr") && ir.contains("align 16"), "{ir}");
    assert!(ir.contains("store <2 x double>"), "{ir}");
    use ptx_codegen::abi::Fault;
    for fault in [Fault::SliceStartOutOfRange, Fault::SliceEndOutOfRange] {
        assert!(ir.contains(&format!("store i32 {}, ptr", fault.code())), "{fault:?}:\n{ir}");
    }
}

/// A `clamp` whose bounds are out of order fills the kernel's fault record with the bounds
/// and their type, so that the runtime's message names them as Rust's panic does.
#[test]
fn clamp_faults_record_their_bounds() {
    use ptx_codegen::abi::{BoundsType, Fault, ThreadFault};
    for (ty, bounds, fault) in [
        ("i16", BoundsType::I16, Fault::IntClampBounds),
        ("usize", BoundsType::U64, Fault::IntClampBounds),
        ("f64", BoundsType::F64, Fault::FloatClampBounds),
    ] {
        let k = compile(&format!(
            "fn k(lo: {ty}, hi: {ty}, x: &[{ty}], out: &mut [{ty}]) {{ let i = gpu::grid1(); out[i] = x[i].clamp(lo, hi); }}"
        ));
        let code = fault.code() | bounds.code() << ThreadFault::BOUNDS_SHIFT;
        assert!(k.llvm_ir_unoptimized.contains(&format!("store i32 {code}, ptr")), "{ty}:\n{}", k.llvm_ir_unoptimized);
    }
}

/// `shfl.sync` reads only the low 5 bits of an offset (`shfl_down_sync(m, v, 33)` would read
/// lane + 1): a shuffle by a run-time offset keeps the lane's own value for offsets of 32 or
/// more (a compare and a select after it), one by a constant offset below 32 needs neither,
/// and `shfl_sync`, whose lane is taken modulo 32 everywhere, has none.
#[test]
fn shuffle_offsets_past_the_warp_keep_the_own_value() {
    for op in ["shfl_up_sync", "shfl_down_sync", "shfl_xor_sync"] {
        let k = compile(&format!(
            "fn k(d: u32, out: &mut [u32]) {{ let i = gpu::grid1(); out[i] = gpu::{op}(u32::MAX, i as u32, d); }}"
        ));
        let select = k.llvm_ir.lines().find(|l| l.contains("= icmp ult i32") && l.ends_with(", 32"));
        assert!(select.is_some() && k.llvm_ir.contains("select i1 %in_warp"), "{op}:\n{}", k.llvm_ir);
        let c = compile(&format!(
            "fn k(out: &mut [u32]) {{ let i = gpu::grid1(); out[i] = gpu::{op}(u32::MAX, i as u32, 5); }}"
        ));
        assert!(!c.llvm_ir.contains("select i1"), "{op} by 5:\n{}", c.llvm_ir);
    }
    let k = compile(
        "fn k(d: u32, out: &mut [u32]) { let i = gpu::grid1(); out[i] = gpu::shfl_sync(u32::MAX, i as u32, d); }",
    );
    assert!(!k.llvm_ir.contains("select i1"), "{}", k.llvm_ir);
}

#[test]
fn shared_arrays_are_declared_with_their_sizes() {
    let m = corpus_kernel("fast_matmul");
    assert_eq!(m.ptx.matches(".shared .align 16 .b8").count(), 2, "{}", m.ptx);
    assert!(m.ptx.contains("[1024]"), "{}", m.ptx);
    let d = corpus_kernel("dynamic");
    assert!(d.ptx.contains(".extern .shared .align 16 .b8 dynamic_shared[]"), "{}", d.ptx);
    assert!(d.ptx.contains("%dynamic_smem_size"), "{}", d.ptx);
    // One array per call site, even in a loop.
    let l = compile(
        "fn l(out: &mut [f32]) {
            let i = gpu::thread_idx().x as usize;
            for _ in 0..4 { let t = gpu::shared::<f32, 8>(); t[i] = out[i]; gpu::sync_threads(); out[i] = t[7 - i]; }
        }",
    );
    assert_eq!(l.ptx.matches(".shared .align 16 .b8").count(), 1, "{}", l.ptx);
    assert_eq!(l.abi.static_shared_bytes, 32);
}

#[test]
fn local_arrays_live_in_the_thread() {
    let k = corpus_kernel("local_arrays");
    assert!(k.llvm_ir_unoptimized.contains("alloca [8 x double]"), "{}", k.llvm_ir_unoptimized);
    assert!(k.llvm_ir_unoptimized.contains("alloca [100 x i32]"), "{}", k.llvm_ir_unoptimized);
}

#[test]
fn overflow_checks_make_a_checked_variant() {
    let item: syn::ItemFn = syn::parse_str("fn k(a: &mut [i32]) { a[0] += 1; }").unwrap();
    let v = compile_kernel_variants(&item, &[], &[], &Options::default(), None).unwrap();
    let c = v.checked.expect("`+=` on an integer is checked");
    assert!(c.llvm_ir_unoptimized.contains("sadd.with.overflow"), "{}", c.llvm_ir_unoptimized);
    assert!(!v.wrapping.llvm_ir_unoptimized.contains("sadd.with.overflow"));
    let item: syn::ItemFn = syn::parse_str("fn k(a: &mut [f32]) { a[0] += 1.0; }").unwrap();
    assert!(compile_kernel_variants(&item, &[], &[], &Options::default(), None).unwrap().checked.is_none());
}

#[test]
fn device_helpers_are_called_from_kernels() {
    let helper: syn::ItemFn = syn::parse_str("fn safe_div(a: i32, b: i32) -> i32 { a / b + 1 }").unwrap();
    let helpers = [ptx_codegen::frontend::HelperDef { id: "h".into(), item: helper, callees: vec![] }];
    let item: syn::ItemFn =
        syn::parse_str("fn k(a: &[i32], out: &mut [i32]) { let i = gpu::grid1(); out[i] = safe_div(a[i], 3 - a[0]); }")
            .unwrap();
    let v = compile_kernel_variants(&item, &[("safe_div".into(), "h".into())], &helpers, &Options::default(), None)
        .unwrap();
    // The helper checks its divisor, and its fault propagates to the kernel's record.
    let ir = &v.wrapping.llvm_ir_unoptimized;
    assert!(ir.contains("by_zero") && ir.contains("propagate"), "{ir}");
    assert!(v.checked.is_some());
}

/// A register tile: a local array indexed by the variables of counted loops is unrolled
/// into registers: no local memory in the PTX (it used to be copied to and from local
/// memory around every step of the outer loop).
#[test]
fn local_arrays_indexed_by_counted_loops_stay_in_registers() {
    let k = compile(
        "fn tile(x: &[f32], y: &[f32], out: &mut [f32], n: usize) {
            let mut acc = [0.0f32; 64];
            for t in 0..n {
                let mut xr = [0.0f32; 8];
                let mut yr = [0.0f32; 8];
                for i in 0..8 {
                    xr[i] = x[t * 8 + i];
                    yr[i] = y[t * 8 + i];
                }
                for i in 0..8 {
                    for j in 0..8 {
                        acc[i * 8 + j] = xr[i].mul_add(yr[j], acc[i * 8 + j]);
                    }
                }
            }
            for i in 0..8 {
                for j in 0..8 {
                    let (r, c) = (i * n + j, j * 3);
                    if c < n {
                        out[r] = acc[i * 8 + j];
                    }
                }
            }
        }",
    );
    assert!(!k.ptx.contains(".local"), "{}", k.ptx);
    assert_eq!(k.ptx.matches("fma.rn.f32").count(), 64, "{}", k.ptx);
}

/// A local array indexed through a tuple `let` of the loop's variable
/// (`let (fa, fb) = (k % 2 * 4, k % 2 * 8)`) is unrolled as one indexed through a plain
/// `let`: such a loop used to stay a loop, its arrays indexed at run time.
#[test]
fn local_arrays_indexed_through_a_tuple_let_are_unrolled() {
    let k = compile(
        "fn tile(x: &[f32], out: &mut [f32], n: usize) {
            let mut a = [0.0f32; 8];
            let mut b = [0.0f32; 16];
            let mut acc = [0.0f32; 32];
            for t in 0..n {
                for k in 0..4 {
                    let (fa, fb) = (k % 2 * 4, k % 2 * 8);
                    for i in 0..4 {
                        a[fa + i] = x[t * 16 + k * 4 + i];
                    }
                    for j in 0..8 {
                        b[fb + j] = x[t * 16 + k * 2 + j];
                    }
                    for i in 0..4 {
                        for j in 0..8 {
                            acc[i * 8 + j] = a[fa + i].mul_add(b[fb + j], acc[i * 8 + j]);
                        }
                    }
                }
            }
            for i in 0..32 {
                out[i] = acc[i];
            }
        }",
    );
    assert!(!k.ptx.contains(".local"), "{}", k.ptx);
    assert_eq!(k.ptx.matches("fma.rn.f32").count(), 128, "{}", k.ptx);
}

/// `launch_bounds(threads, blocks)` reaches the PTX as `.maxntid` and `.minnctapersm`.
#[test]
fn launch_bounds_reach_the_ptx() {
    let src = "fn k(y: &mut [f32]) { y[0] = 1.0; }";
    let item: syn::ItemFn = syn::parse_str(src).unwrap();
    let bounded = |args: &str| {
        let options = Options::parse(args.parse().unwrap()).unwrap();
        compile_kernel_variants(&item, &[], &[], &options, None).unwrap().wrapping.ptx
    };
    let ptx = bounded("launch_bounds(256, 2)");
    assert!(ptx.contains(".maxntid 256, 1, 1") && ptx.contains(".minnctapersm 2"), "{ptx}");
    let ptx = bounded("launch_bounds(128)");
    assert!(ptx.contains(".maxntid 128, 1, 1") && !ptx.contains(".minnctapersm"), "{ptx}");
    assert!(!bounded("").contains(".maxntid"));
    for bad in [
        "launch_bounds(0)",
        "launch_bounds(2048)",
        "launch_bounds(256, 0)",
        "launch_bounds()",
        "launch_bounds(1, 2, 3)",
    ] {
        let e = Options::parse(bad.parse().unwrap()).unwrap_err().to_string();
        assert!(e.contains("launch_bounds") || e.contains("from 1 to"), "{bad}: {e}");
    }
}
