//! Frontend tests of explicit kernels: what is accepted, and each refusal with its message.

use super::*;
use crate::ExplicitParamKind;
use crate::ir::{ArrayKind, ExprKind, visit_block};
use crate::ty::ScalarType::*;

fn check(src: &str) -> Result<Program, Vec<String>> {
    let item: syn::ItemFn = syn::parse_str(src).expect("test source parses");
    check_kernel_program(&item, &[], &[]).map_err(|e| e.into_iter().map(|e| e.to_string()).collect())
}

fn ok(src: &str) -> Program {
    check(src).unwrap_or_else(|e| panic!("expected no errors, got {e:#?}"))
}

/// The single error of `src`, which must contain `needle`.
fn error_containing(src: &str, needle: &str) {
    let e = check(src).err().unwrap_or_else(|| panic!("expected an error for {src}"));
    assert_eq!(e.len(), 1, "expected one error, got {e:#?}");
    assert!(e[0].contains(needle), "error {:?} does not contain {needle:?}", e[0]);
}

#[test]
fn a_kernel_takes_slices_and_scalars() {
    let p = ok("fn k(a: f32, x: &[f32], y: &mut [f32], on: bool) { let i = gpu::grid1(); if on { y[i] = a * x[i]; } }");
    let slices: Vec<Option<bool>> = p.entry().params.iter().map(|p| p.slice).collect();
    assert_eq!(slices, [None, Some(false), Some(true), None]);
    assert_eq!(p.arrays.len(), 2);
    assert_eq!(p.arrays[1].kind, ArrayKind::Slice { mutable: true });
    let sig: syn::ItemFn = syn::parse_str("fn k(a: f32, x: &[u8], y: &mut [f64]) { x[0] }").unwrap();
    let kinds: Vec<ExplicitParamKind> = kernel_signature(&sig.sig, &[]).unwrap().into_iter().map(|p| p.kind).collect();
    assert_eq!(
        kinds,
        [
            ExplicitParamKind::Scalar(F32),
            ExplicitParamKind::Slice { elem: U8, mutable: false },
            ExplicitParamKind::Slice { elem: F64, mutable: true },
        ]
    );
}

#[test]
fn literals_in_arrays_take_their_types_from_use() {
    let p = ok("fn k(out: &mut [f32]) { let mut a = [0.0; 4]; a[1] = out[0]; out[0] = a[1] + a.len() as f32; }");
    assert_eq!(p.arrays[1].elem, F32);
    assert_eq!(p.arrays[1].kind, ArrayKind::Local { len: 4 });
    let p = ok(
        "fn k(out: &mut [u64]) { const N: usize = 3; let a = [1, 2, 3]; let b = [0u8; N]; out[0] = a[2] + b[0] as u64; }",
    );
    assert_eq!((p.arrays[1].elem, p.arrays[2].kind.clone()), (U64, ArrayKind::Local { len: 3 }));
    // Index literals are `usize`.
    let mut found = false;
    visit_block(&p.entry().body, &mut |e| {
        if let ExprKind::Index { index, .. } = &e.kind {
            found |= index[0].ty == crate::ir::Type::Scalar(Usize);
        }
    });
    assert!(found);
}

#[test]
fn builtins_shared_arrays_and_atomics_check() {
    let p = ok("fn k(c: &mut [u32], n: u32) {
        const T: usize = 4;
        let s = gpu::shared::<u32, 64>();
        let m = gpu::shared_2d::<f32, T, 8>();
        let d = gpu::dynamic_shared::<f64>();
        let t = gpu::thread_idx();
        let i = t.x as usize;
        s[i] = gpu::atomic::add(c, 0, n);
        m[(i, 1)] = d[i] as f32;
        let old = gpu::atomic::compare_and_swap(s, i, 1, 2);
        let (x, y) = gpu::grid2();
        c[x + y] = old + gpu::WARP_SIZE + gpu::ballot_sync(gpu::active_mask(), n > 0);
        let v = unsafe { *c.get_unchecked(0) };
        c[1] = gpu::shfl_xor_sync(0xffffffff, v, 1);
        gpu::sync_threads();
    }");
    assert_eq!(p.static_shared_bytes(), 64 * 4 + 4 * 8 * 4);
    assert!(p.uses_dynamic_shared());
}

#[test]
fn a_kernel_returns_nothing() {
    error_containing(
        "fn k(x: &mut [f32]) -> f32 { x[0] }",
        "a kernel returns nothing: write results into a `&mut [T]` parameter",
    );
    error_containing("fn k(x: &mut [f32]) { x[0] }", "a kernel returns nothing");
    ok("fn k(x: &mut [f32]) { if x.len() == 0 { return; } x[0] = 1.0; }");
    error_containing("fn k<T>(x: &mut [f32]) { }", "a kernel cannot be generic");
    error_containing("fn k(x: Vec<f32>) { }", "a kernel parameter is a value");
}

#[test]
fn read_only_slices_cannot_be_written() {
    error_containing("fn k(x: &[f32]) { x[0] = 1.0; }", "cannot assign to `x[_]`, which is behind a `&` reference");
    error_containing("fn k(x: &[f32]) { x[0] += 1.0; }", "cannot assign to `x[_]`, which is behind a `&` reference");
    error_containing("fn k(x: &[i32]) { gpu::atomic::add(x, 0, 1); }", "which is behind a `&` reference");
    error_containing("fn k(x: &mut [f32]) { let a = [0.0f32; 2]; a[0] = x[0]; }", "as `a` is not declared as mutable");
}

#[test]
fn indices_are_usize() {
    error_containing("fn k(x: &mut [f32], i: i32) { x[i] = 1.0; }", "the type `[f32]` cannot be indexed by `i32`");
    error_containing(
        "fn k(x: &mut [f32]) { let a = [1u8; 3]; x[0] = a[1u32] as f32; }",
        "the type `[u8; 3]` cannot be indexed by `u32`",
    );
    error_containing(
        "fn k(x: &mut [f32]) { let m = gpu::shared_2d::<f32, 2, 2>(); x[0] = m[0]; }",
        "index it with a pair",
    );
}

#[test]
fn atomics_name_their_types() {
    ok("fn k(x: &mut [f32], y: &mut [f64]) { gpu::atomic::min(x, 0, 1.0); gpu::atomic::nanmax(y, 0, 1.0); }");
    error_containing(
        "fn k(x: &mut [i32]) { gpu::atomic::inc(x, 0, 1); }",
        "`gpu::atomic::inc` is not supported on `i32`: it supports u32, u64",
    );
    error_containing(
        "fn k(x: &mut [f32]) { gpu::atomic::xor(x, 0, 1.0); }",
        "`gpu::atomic::xor` is not supported on `f32`: it supports i32, u32, i64, u64",
    );
    error_containing(
        "fn k(x: &mut [u8]) { gpu::atomic::add(x, 0, 1); }",
        "`gpu::atomic::add` is not supported on `u8`: it supports i32, u32, i64, u64, f32, f64",
    );
    error_containing(
        "fn k(x: &mut [f64]) { gpu::atomic::compare_and_swap(x, 0, 1.0, 2.0); }",
        "is not supported on `f64`",
    );
    error_containing(
        "fn k(x: &mut [i32]) { gpu::atomic::nand(x, 0, 1); }",
        "unknown atomic operation `gpu::atomic::nand`",
    );
    error_containing("fn k(x: &mut [i32]) { let a = [0i32; 2]; gpu::atomic::add(a, 0, 1); }", "the thread's own array");
}

#[test]
fn slices_are_not_values() {
    error_containing("fn k(x: &[f32]) { let y = x; }", "`x` is a slice or array");
    error_containing(
        "fn k(x: &[f32], o: &mut [f32]) { fn h(v: f32) -> f32 { v } o[0] = h(x); }",
        "`x` is a slice or array",
    );
    error_containing("fn k(x: &[f32], o: &mut [f32]) { if x == 1.0 { o[0] = 1.0; } }", "`x` is a slice or array");
}

/// The vector accesses take a 1-D array named directly, a `usize` index and values of the
/// element type; a store needs a `&mut` array.
#[test]
fn vector_accesses_are_checked() {
    let p = ok(
        "fn k(x: &[f32], y: &mut [f32]) { let i = gpu::grid1(); let (a, b, c, d) = gpu::load4(x, i); gpu::store4(y, i, d, c, b, a); let (e, f) = gpu::load2(y, 0); y[1] = e + f; }",
    );
    let mut found = (0, 0);
    visit_block(&p.entry().body, &mut |e| match &e.kind {
        ExprKind::LoadVector { lanes, .. } => found.0 += *lanes,
        ExprKind::StoreVector { values, .. } => found.1 += values.len(),
        _ => {}
    });
    assert_eq!(found, (6, 4));
    error_containing(
        "fn k(x: &[f32]) { gpu::store2(x, 0, 1.0, 2.0); }",
        "`gpu::store2` writes `x`, which is behind a `&` reference: make it `&mut [T]`",
    );
    error_containing(
        "fn k(y: &mut [f32]) { let l = [0.0f32; 8]; let (a, b) = gpu::load2(l, 0); y[0] = a + b; }",
        "`l` is the thread's own array: index it (`l[i]`)",
    );
    error_containing(
        "fn k(y: &mut [f32]) { let s = gpu::shared_2d::<f32, 4, 4>(); let (a, b) = gpu::load2(s, 0); y[0] = a + b; }",
        "`gpu::load2` works on 1-D arrays; `s` is a 2-D shared array",
    );
    error_containing(
        "fn k(y: &mut [f32]) { gpu::store4(y, 0, 1.0, 2.0); }",
        "`gpu::store4` takes 6 arguments (the array, the index and 4 values), but 4 were given",
    );
    error_containing(
        "fn k(y: &mut [f32], i: u32) { gpu::store2(y, i, 1.0, 2.0); }",
        "takes a `usize` index, found `u32`",
    );
    error_containing("fn k(y: &mut [f32]) { gpu::store2(y, 0, 1.0, 2u8); }", "`y` holds `f32`, found `u8`");
    error_containing(
        "fn k(y: &mut [f32], v: f32) { let (a, b) = gpu::load2(v, 0); y[0] = a + b; }",
        "`gpu::load2` works on a slice parameter, a 1-D shared array or a view of one, named directly",
    );
}

/// Numba's xoroshiro calls are written out: the state's two words read and written, the
/// library's step; with the wrong arguments they say what they take.
#[test]
fn xoroshiro_calls_are_written_out() {
    let p = ok(
        "fn k(states: &mut [u64], out: &mut [f64]) { let i = gpu::grid1(); out[i] = random::xoroshiro128p_normal_float64(states, i) + random::xoroshiro128p_uniform_float64(states, i); }",
    );
    let mut found = (0, 0);
    visit_block(&p.entry().body, &mut |e| match &e.kind {
        ExprKind::Index { .. } => found.0 += 1,
        ExprKind::AssignIndex { .. } => found.1 += 1,
        _ => {}
    });
    // Three steps (two for the normal value, one for the uniform), two words each; and
    // `out[i] = …`.
    assert_eq!(found, (6, 7));
    error_containing(
        "fn k(states: &mut [u64], out: &mut [f32]) { out[0] = random::xoroshiro128p_uniform_float32(states); }",
        "takes 2 arguments (the states, a `&mut [u64]` holding state `i` at words `2i` and `2i + 1`, and the index `i`), but 1 were given",
    );
    // Read-only states: both words' writes are refused.
    let e =
        check("fn k(states: &[u64], out: &mut [f32]) { out[0] = random::xoroshiro128p_uniform_float32(states, 0); }")
            .unwrap_err();
    assert!(
        !e.is_empty() && e.iter().all(|m| m.contains("cannot assign to `states[_]`, which is behind a `&` reference")),
        "{e:#?}"
    );
}

#[test]
fn get_unchecked_needs_unsafe() {
    error_containing(
        "fn k(x: &[f32], o: &mut [f32]) { o[0] = *x.get_unchecked(0); }",
        "call to unsafe function `get_unchecked` is unsafe and requires unsafe block",
    );
    ok(
        "fn k(x: &[f32], o: &mut [f32]) { o[0] = unsafe { *x.get_unchecked(0) }; o[1] = unsafe { x.get_unchecked(1) } + 1.0; }",
    );
}

#[test]
fn unknown_builtins_are_named() {
    error_containing(
        "fn k(o: &mut [f32]) { gpu::warp_sync(); }",
        "unknown GPU built-in `gpu::warp_sync`: the built-ins are thread_idx",
    );
    error_containing("fn k(o: &mut [f32]) { o[0] = gpu::thread_idx().w as f32; }", "no field `w` on `gpu::Dim3`");
    error_containing(
        "fn k(o: &mut [f32]) { gpu::shared::<f32, 4>(); }",
        "declares a shared array: call it as the value of a `let`",
    );
    error_containing("fn k(o: &mut [f32]) { let t = gpu::shared::<f32>(); }", "takes 2 generic arguments");
    error_containing(
        "fn k(o: &mut [u32]) { o[0] = gpu::sync_threads_count(1); }",
        "takes a `bool` here, found `{integer}`",
    );
    error_containing(
        "fn k(o: &mut [u32], n: usize) { let a = [0u32; n]; }",
        "attempt to use a non-constant value in a constant: `n` is a variable; an array length must be a constant expression",
    );
}

#[test]
fn sizes_are_constant_expressions() {
    let p = ok("fn k(o: &mut [f32]) {
        const TPB: usize = 16;
        const TILE: usize = TPB * TPB;
        const NACC: usize = TPB / 4;
        const WIDE: u32 = 3;
        let a = gpu::shared::<f32, TILE>();
        let b = gpu::shared::<f32, { TPB * 2 + 1 }>();
        let c = gpu::shared_2d::<f32, { (TPB << 1) >> 2 }, { WIDE as usize % 2 }>();
        let mut acc = [0.0f32; NACC];
        let d: [f32; NACC * 2 - 1] = [1.0; { TILE / 32 - 1 }];
        let e = [0u8; 2.9f32 as usize | 4];
        acc[0] = a[0] + b[0] + c[(0, 0)] + d[0] + e[0] as f32;
        o[0] = acc[0];
    }");
    let sizes: Vec<String> = p.arrays.iter().skip(1).map(|a| format!("{:?}", a.kind)).collect();
    assert_eq!(
        sizes,
        [
            "Shared { dims: [256] }",
            "Shared { dims: [33] }",
            "Shared { dims: [8, 1] }",
            "Local { len: 4 }",
            "Local { len: 7 }",
            "Local { len: 6 }"
        ]
    );
}

#[test]
fn constant_expressions_fail_as_rust_says() {
    let k = |body: &str| format!("fn k(o: &mut [f32]) {{ {body} o[0] = 1.0; }}");
    error_containing(
        &k("const B: u8 = 200 + 100;"),
        "evaluation of `B` failed: attempt to compute `200_u8 + 100_u8`, which would overflow",
    );
    error_containing(
        &k("const N: usize = 1 << 70; let s = gpu::shared::<f32, N>();"),
        "evaluation of `N` failed: attempt to shift left by `70_i32`, which would overflow",
    );
    error_containing(
        &k("const N: usize = 4; let s = gpu::shared::<f32, { N - 5 }>();"),
        "evaluation of constant value failed: attempt to compute `4_usize - 5_usize`, which would overflow",
    );
    error_containing(&k("let a = [0.0f32; 8 / (2 - 2)];"), "attempt to divide `8_usize` by zero");
    error_containing(
        &k("const M: i32 = i32::MIN / -1;"),
        "attempt to compute `i32::MIN / -1_i32`, which would overflow",
    );
    error_containing(&k("const M: i8 = -(-128);"), "attempt to negate `i8::MIN`, which would overflow");
    error_containing(&k("const M: i64 = i64::MIN % -1;"), "attempt to compute `i64::MIN % -1_i64`");
    error_containing(&k("let a = [0.0f32; 3 % 0];"), "the remainder of `3_usize` with a divisor of zero");
    // What a constant cannot hold, with what it can.
    error_containing(
        &k("const N: usize = 8; let a = [0.0f32; N.min(4)];"),
        "a constant cannot call functions (Rust's `min` and `max` are not `const`",
    );
    error_containing(
        &k("const N: usize = 8; let s = gpu::shared::<f32, { if N > 4 { N } else { 4 } }>();"),
        "a shared array's size is fixed when the kernel is compiled: a constant expression (integer literals and `const`s",
    );
    error_containing(
        &k("const N: u32 = 8; let a = [0.0f32; N];"),
        "mismatched types: a size is a `usize`, found `u32`",
    );
    // A failed size leaves its variable declared: no "cannot find" after it.
    error_containing(&k("let n = 3; let mut acc = [0.0f32; n]; acc[0] = 1.0; o[1] = acc[0];"), "`n` is a variable");
    // A constant that failed is reported once, not again at each size it gives.
    error_containing(&k("const N: usize = usize::MAX + 1; let s = gpu::shared::<f32, N>();"), "`usize::MAX + 1_usize`");
}

#[test]
fn vectorized_functions_have_no_gpu_builtins() {
    let item: syn::ItemFn = syn::parse_str("fn f(x: f32) -> f32 { gpu::lane_id() as f32 + x }").unwrap();
    let e = check_program(&item, &[], &[]).unwrap_err().to_string();
    assert!(e.contains("is a GPU built-in of explicit kernels"), "{e}");
    let item: syn::ItemFn = syn::parse_str("fn f(x: &[f32]) -> f32 { x[0] }").unwrap();
    assert!(check_program(&item, &[], &[]).is_err());
}

#[test]
fn dims_and_local_arrays_take_type_annotations() {
    ok(
        "fn k(o: &mut [f32]) { let t: gpu::Dim3 = gpu::thread_idx(); let mut b: Dim3 = gpu::block_idx(); b = gpu::grid_dim(); o[(t.x + b.y) as usize] = 1.0; }",
    );
    ok("fn k(o: &mut [f32]) { let a: [f32; 3] = [0.0; 3]; let b: [i64; 2] = [1, 2]; o[0] = a[1] + b[0] as f32; }");
    error_containing("fn k(o: &mut [f32]) { let t: gpu::Dim3 = 1u32; }", "mismatched types");
    error_containing("fn k(o: &mut [f32]) { let t: u32 = gpu::thread_idx(); }", "mismatched types");
    error_containing("fn k(o: &mut [f32]) { let a: [f32; 3] = [0.0; 4]; }", "expected an array of 3 elements");
}

/// What `len()` and `shape()` give for each kind of array: every element, whatever the rank
/// (the simulator's `Shared2d::len` is `R * C`), and the dimensions as constants.
#[test]
fn array_lengths_and_shapes() {
    let p = ok("fn k(o: &mut [usize]) {
        let s = gpu::shared_2d::<i32, 2, 3>();
        let c = gpu::shared_3d::<u8, 2, 3, 4>();
        let (r, k) = s.shape();
        o[0] = s.len() + c.len() + r + k + s.rows() + s.cols();
        let (a, b, d) = c.shape();
        o[1] = a + b + d + c[(1, 2, 3)] as usize;
    }");
    assert_eq!(p.arrays[1].kind, ArrayKind::Shared { dims: vec![2, 3] });
    assert_eq!(p.arrays[2].kind, ArrayKind::Shared { dims: vec![2, 3, 4] });
    let mut tuples = Vec::new();
    visit_block(&p.entry().body, &mut |e| {
        if let ExprKind::Tuple(elems) = &e.kind {
            tuples.push(elems.iter().map(|e| format!("{:?}", e.kind)).collect::<Vec<_>>().join(", "));
        }
    });
    assert_eq!(tuples, ["Lit(Int(2)), Lit(Int(3))", "Lit(Int(2)), Lit(Int(3)), Lit(Int(4))"]);
    error_containing(
        "fn k(o: &mut [usize]) { o[0] = o.shape().0; }",
        "`shape()` is a method of a 2-D or 3-D shared array",
    );
    error_containing(
        "fn k(o: &mut [usize]) { let s = gpu::shared::<u8, 4>(); o[0] = s.rows(); }",
        "`rows()` is a method of a 2-D shared array",
    );
    error_containing(
        "fn k(o: &mut [u8]) { let c = gpu::shared_3d::<u8, 2, 3, 4>(); o[0] = c[(1, 2)]; }",
        "a 3-D shared array: index it with a triple",
    );
    error_containing(
        "fn k(o: &mut [u8]) { let c = gpu::shared_3d::<u8, 2, 3>(); }",
        "`gpu::shared_3d` takes 4 generic arguments",
    );
}

#[test]
fn views_of_shared_memory() {
    let p = ok("fn k(o: &mut [f32], a: usize, b: usize) {
        let s = gpu::shared::<f32, 64>();
        let d = gpu::dynamic_shared::<f32>();
        let v = s.slice(a, b);
        let w = v.slice(1, 3);
        let e = d.slice(0, a);
        w[0] = e[1];
        gpu::atomic::add(v, 2, 1.0);
        o[0] = v[0] + unsafe { *w.get_unchecked(1) } + v.len() as f32;
    }");
    let views: Vec<&ArrayKind> =
        p.arrays.iter().map(|a| &a.kind).filter(|k| matches!(k, ArrayKind::View { .. })).collect();
    assert_eq!(views, [&ArrayKind::View { base: 1 }, &ArrayKind::View { base: 3 }, &ArrayKind::View { base: 2 }]);
    error_containing(
        "fn k(o: &mut [f32]) { let v = o.slice(0, 2); }",
        "`slice(start, end)` makes a view of a 1-D shared array, of dynamic shared memory or of another view; `o` is a slice parameter",
    );
    error_containing(
        "fn k(o: &mut [f32]) { let s = gpu::shared_2d::<f32, 2, 2>(); let v = s.slice(0, 2); }",
        "`s` is a 2-D shared array",
    );
    error_containing(
        "fn k(o: &mut [f32]) { let s = gpu::shared::<f32, 8>(); o[0] = s.slice(0, 2)[0]; }",
        "a view is bound with `let`",
    );
    error_containing(
        "fn k(o: &mut [f32], a: i32) { let s = gpu::shared::<f32, 8>(); let v = s.slice(a, 4); }",
        "a view's start and end are `usize`, found `i32`",
    );
}

#[test]
fn warp_matches_masks_and_syncwarp() {
    ok("fn k(a: &[f64], b: &[u8], o: &mut [u32]) {
        let i = gpu::grid1();
        let (m, all) = gpu::match_all_sync(0xffffffff, a[i]);
        gpu::syncwarp(m);
        o[i] = gpu::match_any_sync(0xffffffff, b[i]) + gpu::lanemask_lt() + gpu::lanemask_le()
            + gpu::lanemask_eq() + gpu::lanemask_ge() + gpu::lanemask_gt() + all as u32;
    }");
    error_containing("fn k(o: &mut [u32]) { gpu::syncwarp(); }", "`gpu::syncwarp` takes 1 argument, but 0 were given");
    error_containing("fn k(o: &mut [u32]) { o[0] = gpu::match_all_sync(1u32, 2u32); }", "mismatched types");
}

#[test]
fn panics_in_a_kernel_are_named_for_a_kernel() {
    error_containing(
        "fn k(o: &mut [u32]) { if o[0] == 0 { panic!(\"zero\"); } }",
        "`panic!` cannot run on the GPU: a kernel stops a thread with an error only where Rust would panic by itself",
    );
    error_containing(
        "fn k(o: &mut [u32]) { let v = vec![1]; }",
        "macros such as `vec!` cannot run on the GPU: a kernel has no I/O",
    );
    error_containing("fn k(o: &mut [u32]) { let r = &o; }", "references are not supported in a kernel");
}

/// A device function checked by itself may use the kernel language (a kernel calls it).
#[test]
fn device_functions_may_use_shared_memory() {
    let item: syn::ItemFn = syn::parse_str(
        "fn tally(v: u32) -> u32 { let s = gpu::shared::<u32, 32>(); gpu::atomic::add(s, 0, v); gpu::sync_threads(); s[0] }",
    )
    .unwrap();
    let p = check_device_program(&item, &[], &[]).unwrap();
    assert_eq!(p.arrays[0].kind, ArrayKind::Shared { dims: vec![32] });
    let e = check_program(&item, &[], &[]).unwrap_err().to_string();
    assert!(e.contains("is a GPU built-in of explicit kernels"), "{e}");
    let item: syn::ItemFn = syn::parse_str("fn f(x: f32) -> f32 { x.frobnicate() }").unwrap();
    let e = check_device_program(&item, &[], &[]).unwrap_err().to_string();
    assert!(e.contains("a device function can call"), "{e}");
}
