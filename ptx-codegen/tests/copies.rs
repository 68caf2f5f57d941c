//! Asynchronous copies (`gpu::copy_async*`): each size reaches its `cp.async` (beside the
//! element path for misaligned addresses), the groups reach `commit_group`/`wait_group`,
//! `ptxas` accepts them for sm_80 and sm_90, an older target is refused, and the checks say
//! what is wrong.

use std::path::PathBuf;

use ptx_codegen::{CompiledExplicit, Options, compile_kernel_str, toolkit};

const KERNEL: &str = "fn copies(x: &[f32], h: &[bf16], d: &[f64], out: &mut [f32], at: usize) {
    let s = gpu::shared::<f32, 512>();
    let sh = gpu::shared::<bf16, 512>();
    let sd = gpu::dynamic_shared::<f64>();
    let t = gpu::thread_idx().x as usize;
    gpu::copy_async4(s, t * 4, x, at + t * 4);
    gpu::copy_async2(s, 256 + t * 2, x, at + t * 2);
    gpu::copy_async1(s, 384 + t, x, at + t);
    gpu::copy_async8(sh, t * 8, h, at + t * 8);
    gpu::copy_async4(sd, t * 4, d, at + t * 4);
    gpu::copy_async_commit();
    gpu::copy_async_wait(1);
    gpu::copy_async_wait_all();
    gpu::sync_threads();
    out[t] = s[t] + sh[t].to_f32() + sd[t] as f32;
}";

fn compile(src: &str, arch: &str) -> Result<CompiledExplicit, String> {
    compile_kernel_str(src, &Options { arch: arch.into(), ..Options::default() }).map_err(|e| e.to_string())
}

#[test]
fn each_size_reaches_its_instruction() {
    let k = compile(KERNEL, "sm_80").unwrap();
    let ptx = &k.ptx;
    // 16 bytes bypass L1 (`.cg`); 4 and 8 bytes go through it (`.ca`, the only choice);
    // four `f64` are two copies of 16.
    assert_eq!(ptx.matches("cp.async.cg.shared.global").count(), 4, "{ptx}");
    assert!(ptx.contains("cp.async.ca.shared.global") && ptx.contains(", 8;") && ptx.contains(", 4;"), "{ptx}");
    assert!(ptx.contains("cp.async.commit_group;"), "{ptx}");
    assert!(ptx.contains("cp.async.wait_group 1;"), "{ptx}");
    assert!(ptx.contains("cp.async.wait_all;"), "{ptx}");
    // The element path beside each copy of more than its element's alignment, for
    // addresses not aligned to the copy's size: a loop ptxas must not unroll (unrolled,
    // it was predicated, and every aligned copy issued its loads and stores too).
    assert!(ptx.contains("ld.global.nc.f32") && ptx.contains("st.shared.f32"), "{ptx}");
    assert!(ptx.contains(".pragma \"nounroll\";"), "{ptx}");
}

/// A copy of one element at a time needs no element path: slices and shared arrays are
/// aligned to their element type, so its address always is.
#[test]
fn copies_of_single_elements_test_no_alignment() {
    let k = compile(
        "fn ones(x: &[f32], d: &[f64], out: &mut [f32]) {
            let s = gpu::shared::<f32, 256>();
            let sd = gpu::shared::<f64, 256>();
            let t = gpu::thread_idx().x as usize;
            gpu::copy_async1(s, t, x, t + 1);
            gpu::copy_async1(sd, t, d, t + 3);
            gpu::copy_async_wait_all();
            gpu::sync_threads();
            out[t] = s[t] + sd[t] as f32;
        }",
        "sm_80",
    )
    .unwrap();
    let ptx = &k.ptx;
    assert!(ptx.contains("cp.async.ca.shared.global") && ptx.contains(", 4;") && ptx.contains(", 8;"), "{ptx}");
    assert!(!ptx.contains("ld.global"), "a copy of single elements tested their alignment:\n{ptx}");
}

/// `copy_asyncN_unchecked` (in `unsafe`) leaves out the window checks: with single
/// elements (no alignment test either) the copy is the kernel's only work, without a
/// comparison; its checked sibling compares each index with its array's length.
#[test]
fn unchecked_copies_leave_the_checks_out() {
    let kernel = |copy: &str| {
        let src = format!(
            "fn k(x: &[f32], at: usize) {{
                let s = gpu::shared::<f32, 256>();
                let t = gpu::thread_idx().x as usize;
                {copy}
                gpu::copy_async_wait_all();
            }}"
        );
        compile(&src, "sm_80").unwrap().ptx
    };
    let unchecked = kernel("unsafe { gpu::copy_async1_unchecked(s, t, x, at + t) };");
    assert!(unchecked.contains("cp.async.ca.shared.global") && unchecked.contains(", 4;"), "{unchecked}");
    assert!(!unchecked.contains("setp"), "an unchecked copy compared something:\n{unchecked}");
    let checked = kernel("gpu::copy_async1(s, t, x, at + t);");
    assert!(checked.contains("setp"), "{checked}");
    // The 16-byte copies keep their alignment test, which picks the instruction, not a check.
    let four = kernel("unsafe { gpu::copy_async4_unchecked(s, t * 4, x, at + t * 4) };");
    assert!(four.contains("cp.async.cg.shared.global") && four.contains("ld.global.nc"), "{four}");
}

#[test]
fn ptxas_accepts_them_for_sm_80_and_sm_90() {
    for arch in ["sm_80", "sm_90"] {
        let ptxas = toolkit::find_ptxas(arch).unwrap_or_else(|| panic!("no ptxas for {arch}: run scripts/setup"));
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ptxas-copies-{arch}"));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("copies.ptx");
        std::fs::write(&file, compile(KERNEL, arch).unwrap().ptx).unwrap();
        let rejected = toolkit::assemble(&ptxas, arch, &[file]);
        assert!(rejected.is_empty(), "ptxas rejected for {arch}: {rejected:?}");
    }
}

#[test]
fn an_older_target_is_refused() {
    let e = compile(KERNEL, "sm_75").unwrap_err();
    assert!(e.contains("asynchronous copies (`gpu::copy_async*`) need sm_80 or newer"), "{e}");
}

#[test]
fn the_checks_say_what_is_wrong() {
    let error = |body: &str| {
        let src = format!(
            "fn k(x: &[f32], b: &[u8], i: &[i32], o: &mut [f32]) {{ let s = gpu::shared::<f32, 64>(); let sb = gpu::shared::<u8, 64>(); {body} }}"
        );
        compile(&src, "sm_80").expect_err(body)
    };
    for (body, message) in [
        ("gpu::copy_async4(o, 0, x, 0);", "copies into shared memory"),
        ("gpu::copy_async4(s, 0, s, 0);", "copies from global memory, a slice parameter"),
        ("gpu::copy_async4(s, 0, i, 0);", "mismatched types: `gpu::copy_async4` copies `i32` into an array of `f32`"),
        ("gpu::copy_async1(sb, 0, b, 0);", "copies 1 byte; an asynchronous copy moves 4, 8 or 16 bytes"),
        ("gpu::copy_async4(s, 0u32, x, 0);", "takes a `usize` index, found `u32`"),
        ("gpu::copy_async4(s, 0, x);", "takes 4 arguments"),
        (
            "gpu::copy_async4_unchecked(s, 0, x, 0);",
            "call to unsafe function `gpu::copy_async4_unchecked` is unsafe and requires unsafe block",
        ),
        ("unsafe { gpu::copy_async1_unchecked(sb, 0, b, 0) };", "copies 1 byte"),
        ("let n = 1; gpu::copy_async_wait(n);", "as an integer literal below 64"),
        ("gpu::copy_async_wait(64);", "as an integer literal below 64"),
        ("let t = gpu::shared_2d::<f32, 8, 8>(); gpu::copy_async4(t, 0, x, 0);", "copies into 1-D shared arrays"),
    ] {
        let e = error(body);
        assert!(e.contains(message), "{body}: {e}");
    }
}
