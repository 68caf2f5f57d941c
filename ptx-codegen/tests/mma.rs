//! Tensor cores (`gpu::mma`): each input type reaches its `mma.sync` instruction, tiles in
//! shared memory load with `ldmatrix` where it can (beside the element path), TF32 is rounded
//! with `cvt.rna`, `ptxas` accepts the kernels for sm_80 and sm_90, an older target is
//! refused at each call, and the checks name what is wrong.

use std::path::PathBuf;

use ptx_codegen::{CompiledExplicit, Options, compile_kernel_str, toolkit};

/// A kernel that loads one tile of each fragment from shared and from global memory,
/// multiplies twice and stores the accumulator: `t` is the input type. The shared tiles
/// start at `at`, known only at run time, so that both ways of loading them stay.
fn kernel(t: &str) -> String {
    // Twice the tiles' size, so that `at` may be other than 0.
    let (ka, kb) = if t == "f32" { (256, 128) } else { (512, 256) };
    let (k, n) = if t == "f32" { (8, 8) } else { (16, 8) };
    format!(
        "fn product_{t}(a: &[{t}], b: &[{t}], c: &mut [f32], at: usize) {{
            let sa = gpu::shared::<{t}, {ka}>();
            let sb = gpu::shared::<{t}, {kb}>();
            let l = gpu::thread_idx().x as usize;
            for i in (l..{ka}).step_by(32) {{ sa[i] = a[i]; }}
            for i in (l..{kb}).step_by(32) {{ sb[i] = b[i]; }}
            gpu::sync_threads();
            let fa = gpu::mma::load_a(sa, at, {k});
            let fb: gpu::mma::B<{t}> = gpu::mma::load_b(sb, at, {n});
            let ga = gpu::mma::load_a(a, 0, {k});
            let gb = gpu::mma::load_b(b, 0, {n});
            let mut acc: gpu::mma::Acc = gpu::mma::load_acc(c, 0, 8);
            acc = gpu::mma::mma(fa, fb, acc);
            acc = gpu::mma::mma(ga, gb, acc);
            gpu::mma::store(c, 0, 8, acc);
        }}"
    )
}

fn compile(src: &str, arch: &str) -> Result<CompiledExplicit, String> {
    compile_kernel_str(src, &Options { arch: arch.into(), ..Options::default() }).map_err(|e| e.to_string())
}

const INPUTS: [&str; 3] = ["f16", "bf16", "f32"];

#[test]
fn each_input_reaches_its_instruction() {
    for (t, instruction) in [
        ("f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
        ("bf16", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"),
        ("f32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
    ] {
        let k = compile(&kernel(t), "sm_80").unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(k.ptx.matches(instruction).count(), 2, "{t}:\n{}", k.ptx);
        // Every call but `zeros` checks that the warp is whole.
        assert!(k.ptx.contains("activemask.b32"), "{t}");
        let ir = &k.llvm_ir_unoptimized;
        assert!(ir.contains(&format!("store i32 {}, ptr", ptx_codegen::abi::Fault::MmaDiverged.code())), "{t}:\n{ir}");
        if t == "f32" {
            assert!(k.ptx.contains("cvt.rna.tf32.f32"), "{t}:\n{}", k.ptx);
            // TF32's `A` from shared memory with `ldmatrix` (its pairs of 16 bits); `B`
            // needs a transpose of 32-bit elements, so it loads one element at a time.
            assert!(k.ptx.contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"), "{t}:\n{}", k.ptx);
            assert!(!k.ptx.contains(".trans"), "{t}:\n{}", k.ptx);
        } else {
            // From shared memory: `ldmatrix` where the rows are aligned, elements elsewhere.
            assert!(k.ptx.contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"), "{t}:\n{}", k.ptx);
            assert!(k.ptx.contains("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16"), "{t}:\n{}", k.ptx);
            assert!(k.ptx.contains("ld.shared.u16") || k.ptx.contains("ld.shared.b16"), "{t}:\n{}", k.ptx);
        }
        // The lanes must name one tile (`ldmatrix`'s lanes give rows for each other), but
        // every start here is a constant or the kernel's parameter `at`, which all lanes
        // have alike: no check is left (`warp_checks_already_answered_are_dropped`).
        assert_eq!(k.ptx.matches("match.all.sync").count(), 0, "{t}:\n{}", k.ptx);
        let differs = ptx_codegen::abi::Fault::MmaTileDiffers.code();
        assert!(ir.contains(&format!("store i32 {differs}, ptr")), "{t}:\n{ir}");
    }
}

/// Tiles at `first`, `first + 16 * apart` and `first + 512 + lane % 2 * shift`, with
/// `first` built from the thread index: the lanes' agreement on the first start is
/// checked, the second follows from it and the parameter `apart`, the third is checked
/// again. The whole warp is checked once: the branch on `apart` ends the run of calls the
/// lowering checks it for, but no lane leaves there without the others.
const THREE_TILES: &str = "fn three(a: &[f16], b: &[f16], d: &mut [f32], shift: usize, apart: u32) {
    let sa = gpu::shared::<f16, 2048>();
    let lane = gpu::thread_idx().x as usize;
    let mut i = lane;
    while i < 2048 { sa[i] = a[i]; i += 32; }
    gpu::sync_threads();
    let first = lane as u32 / 32 * 512;
    let fb = gpu::mma::load_b(b, 0, 8);
    let x = gpu::mma::load_a(sa, first as usize, 16);
    if apart > 1000 { return; }
    let y = gpu::mma::load_a(sa, (first + apart * 16) as usize, 16);
    let z = gpu::mma::load_a(sa, first as usize + 512 + lane % 2 * shift, 16);
    let acc = gpu::mma::mma(x, fb, gpu::mma::zeros());
    let acc = gpu::mma::mma(y, fb, acc);
    let acc = gpu::mma::mma(z, fb, acc);
    gpu::mma::store(d, 0, 8, acc);
}";

#[test]
fn warp_checks_already_answered_are_dropped() {
    let k = compile(THREE_TILES, "sm_80").unwrap();
    // Before optimisation: the warp is checked before the first call and after the branch,
    // each load of a shared tile checks its start.
    let calls = k.llvm_ir_unoptimized.matches("call i32 @llvm.nvvm.activemask()").count();
    assert_eq!(calls, 2, "{}", k.llvm_ir_unoptimized);
    let matches = k.llvm_ir_unoptimized.matches("call { i32, i1 } @llvm.nvvm.match.all.sync").count();
    assert_eq!(matches, 3, "{}", k.llvm_ir_unoptimized);
    // After: the first start (a `u32`) and the third, once the whole warp.
    assert_eq!(k.ptx.matches("match.all.sync.b32").count(), 1, "{}", k.ptx);
    assert_eq!(k.ptx.matches("match.all.sync.b64").count(), 1, "{}", k.ptx);
    assert_eq!(k.ptx.matches("activemask.b32").count(), 1, "{}", k.ptx);
    // With a call between the first and second load of a function where the even lanes
    // take a branch the odd ones do not, the warp is checked again after it.
    let step = "fn step(n: u32) -> u32 { if gpu::thread_idx().x % 2 == 0 { gpu::thread_fence_block(); } n }";
    let item: syn::ItemFn = syn::parse_str(step).unwrap();
    let helper = ptx_codegen::frontend::HelperDef { id: "step_tests_mma".into(), item, callees: vec![] };
    let src = THREE_TILES.replace("if apart > 1000 { return; }", "if step(apart) == 7 { return; }");
    let item: syn::ItemFn = syn::parse_str(&src).unwrap();
    let callees = [("step".to_string(), "step_tests_mma".to_string())];
    let options = Options { arch: "sm_80".into(), ..Options::default() };
    let k = ptx_codegen::compile_kernel_variants(&item, &callees, &[helper], &options, None).unwrap().wrapping;
    assert_eq!(k.ptx.matches("activemask.b32").count(), 2, "{}", k.ptx);
    // A program's own `match_all_sync` stays, though its value is the same in every lane.
    let own = THREE_TILES.replace(
        "if apart > 1000 { return; }",
        "let (m, all) = gpu::match_all_sync(0xffffffff, apart); if !all || m == 0 { return; }",
    );
    let k = compile(&own, "sm_80").unwrap();
    assert_eq!(k.ptx.matches("match.all.sync.b32").count(), 2, "{}", k.ptx);
}

#[test]
fn ptxas_accepts_them_for_sm_80_and_sm_90() {
    for arch in ["sm_80", "sm_90"] {
        let ptxas = toolkit::find_ptxas(arch).unwrap_or_else(|| panic!("no ptxas for {arch}: run scripts/setup"));
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ptxas-mma-{arch}"));
        std::fs::create_dir_all(&dir).unwrap();
        let files: Vec<PathBuf> = INPUTS
            .iter()
            .map(|t| {
                let k = compile(&kernel(t), arch).unwrap_or_else(|e| panic!("{t}: {e}"));
                assert!(k.ptx.contains(&format!(".target {arch}")));
                let file = dir.join(format!("{t}.ptx"));
                std::fs::write(&file, &k.ptx).unwrap();
                file
            })
            .collect();
        let rejected = toolkit::assemble(&ptxas, arch, &files);
        assert!(rejected.is_empty(), "ptxas rejected for {arch}: {rejected:?}");
    }
}

#[test]
fn an_older_target_is_refused_at_each_call() {
    for arch in ["sm_70", "sm_75"] {
        let e = compile(&kernel("f16"), arch).unwrap_err();
        assert!(e.contains("need sm_80 or newer"), "{arch}: {e}");
        assert!(e.contains(&format!("compiled for {arch}")), "{e}");
        assert!(e.contains("#[kernel(arch = \"sm_80\")]"), "{e}");
    }
    let item: syn::ItemFn = syn::parse_str(&kernel("bf16")).unwrap();
    let program = ptx_codegen::frontend::check_kernel_program(&item, &[], &[]).unwrap();
    let options = Options::default();
    let e = ptx_codegen::compile_kernel_variants(&item, &[], &[], &options, None).unwrap_err();
    // One error per call (five loads, two products, one store), each at its call.
    assert_eq!(e.into_iter().count(), 8);
    drop(program);
    // `zeros` needs no tensor core.
    let zeros = "fn k(o: &mut [f32]) { let z = gpu::mma::zeros(); let w = z; o[0] = 1.0; }";
    compile(zeros, "sm_70").unwrap();
}

/// Each check, with its message.
#[test]
fn the_checks_say_what_is_wrong() {
    let error = |body: &str| {
        let src = format!("fn k(a: &[f16], h: &[bf16], x: &[f32], i: &[i32], o: &mut [f32]) {{ {body} }}");
        compile(&src, "sm_80").expect_err(body)
    };
    for (body, message) in [
        ("let f = gpu::mma::load_a(i, 0, 16);", "loads `f16`, `bf16` or `f32` (as TF32) elements; `i` holds `i32`"),
        ("let f = gpu::mma::load_acc(a, 0, 8);", "the accumulator holds `f32`s"),
        ("gpu::mma::store(x, 0, 8, gpu::mma::zeros());", "writes `x`, which is behind a `&` reference"),
        ("let f = gpu::mma::load_a(a, 0);", "takes 3 arguments"),
        ("let f = gpu::mma::load_a(a, 0u32, 16);", "takes the tile's first element as a `usize`, found `u32`"),
        (
            "let p = gpu::mma::mma(gpu::mma::load_a(a, 0, 16), gpu::mma::load_b(h, 0, 8), gpu::mma::zeros());",
            "takes a `gpu::mma::B<f16>` here, found `gpu::mma::B<bf16>`",
        ),
        ("let p = gpu::mma::mma(gpu::mma::zeros(), 1.0, 2.0);", "takes an `A` fragment first"),
        ("let s = gpu::shared_2d::<f16, 16, 16>(); let f = gpu::mma::load_a(s, 0, 16);", "works on 1-D arrays"),
        ("let l = [1.0f32; 128]; let f = gpu::mma::load_a(l, 0, 8);", "is the thread's own array"),
        ("let f: gpu::mma::A<i32> = gpu::mma::load_a(a, 0, 16);", "a fragment of `f16`, `bf16` or `f32`"),
        ("let f: gpu::mma::Acc = gpu::mma::load_a(a, 0, 16);", "expected `gpu::mma::Acc`, found `gpu::mma::A<f16>`"),
        ("let f = gpu::mma::transpose(a);", "unknown tensor-core operation `gpu::mma::transpose`"),
        ("let f = gpu::mma::zeros(); let g = f + f;", "does not apply to the tensor-core fragment `gpu::mma::Acc`"),
        ("let f = gpu::mma::zeros(); let g = f < f;", "does not apply to the tensor-core fragment `gpu::mma::Acc`"),
        ("let f = gpu::mma::zeros(); let g = f as f32;", "gpu::mma::Acc"),
        ("let f = gpu::mma::zeros(); let g = (f, 1.0f32);", "gpu::mma::Acc"),
        ("let f = gpu::mma::zeros(); let g = gpu::shfl_sync(0xffffffff, f, 0);", "shuffles a scalar"),
        ("let t = gpu::thread_idx(); let u = t + t;", "does not apply to `gpu::Dim3`"),
    ] {
        let e = error(body);
        assert!(e.contains(message), "{body}: {e}");
    }
}
