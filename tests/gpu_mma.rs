//! Tensor cores (`gpu::mma`) and asynchronous copies (`gpu::copy_async*`) on the GPU (sm_80
//! and newer): the kernels of `tests/mma.rs` against the simulator (bit for bit where every
//! partial sum is exact, within the README's bound elsewhere), the faults with the
//! simulator's messages, the matmul example against the CPU, and the pipelines of
//! `tests/copies.rs`.

mod common;
mod mma_defs;

use common::Gen;
use gpu_runtime::{DeviceVec, Error, bf16, default_device, f16, gpu};
use mma_defs::matmul_tc::{self, THREADS, matmul_bf16, matmul_tf32};
use mma_defs::*;

fn has_tensor_cores() -> bool {
    let device = default_device().expect("a GPU");
    let (major, _) = device.compute_capability();
    assert!(major >= 8, "these tests need sm_80 or newer, found {major}.x");
    true
}

/// The bound of `c + Σ a_k b_k` summed in any order with `f32` truncation at each step.
fn within(got: &[f32], want: &[f32], a: &[f32], b: &[f32], c: &[f32], (lda, ldb, k): (usize, usize, usize)) {
    let tiles = got.len() / 128;
    for t in 0..tiles {
        let at = tile(a, t * 16 * lda, lda, 16, k);
        let bt = tile(b, t * k * ldb, ldb, k, 8);
        for i in 0..16 {
            for j in 0..8 {
                let e = t * 128 + i * 8 + j;
                let mass: f64 = f64::from(c[e]).abs()
                    + (0..k).map(|kk| f64::from(at[i * k + kk] * bt[kk * 8 + j]).abs()).sum::<f64>();
                let bound = (k as f64 + 2.0) * 2f64.powi(-22) * mass;
                let diff = (f64::from(got[e]) - f64::from(want[e])).abs();
                assert!(
                    diff <= bound,
                    "tile {t} ({i}, {j}): GPU {} against the simulator's {} (bound {bound:e})",
                    got[e],
                    want[e]
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fragments_match_the_simulator() {
    assert!(has_tensor_cores());
    let tiles = 64;
    let mut g = Gen::new(3);
    for (lda, ldb) in [(16, 8), (24, 16), (20, 12)] {
        for shared in [false, true] {
            let mut v = |n: usize| (0..n).map(|_| g.f64_in(-4.0, 4.0) as f32).collect::<Vec<f32>>();
            let (a, b, c) = (v(tiles * 16 * lda), v(tiles * 16 * ldb), v(tiles * 128));
            let (mut gpu_d, mut sim_d) = (vec![f32::NAN; tiles * 128], vec![f32::NAN; tiles * 128]);
            let a16: Vec<f16> = a.iter().map(|&v| f16::from_f32(v)).collect();
            let b16: Vec<f16> = b.iter().map(|&v| f16::from_f32(v)).collect();
            tiles_f16::launch(tiles as u32, 32u32, &a16, &b16, &c, &mut gpu_d, lda, ldb, shared).unwrap();
            tiles_f16::simulate(tiles as u32, 32u32, &a16, &b16, &c, &mut sim_d, lda, ldb, shared).unwrap();
            let (ar, br): (Vec<f32>, Vec<f32>) =
                (a16.iter().map(|v| v.to_f32()).collect(), b16.iter().map(|v| v.to_f32()).collect());
            within(&gpu_d, &sim_d, &ar, &br, &c, (lda, ldb, 16));

            let a16: Vec<bf16> = a.iter().map(|&v| bf16::from_f32(v)).collect();
            let b16: Vec<bf16> = b.iter().map(|&v| bf16::from_f32(v)).collect();
            tiles_bf16::launch(tiles as u32, 32u32, &a16, &b16, &c, &mut gpu_d, lda, ldb, shared).unwrap();
            tiles_bf16::simulate(tiles as u32, 32u32, &a16, &b16, &c, &mut sim_d, lda, ldb, shared).unwrap();
            let (ar, br): (Vec<f32>, Vec<f32>) =
                (a16.iter().map(|v| v.to_f32()).collect(), b16.iter().map(|v| v.to_f32()).collect());
            within(&gpu_d, &sim_d, &ar, &br, &c, (lda, ldb, 16));

            let (lda, ldb) = (lda / 2, ldb.max(8));
            tiles_tf32::launch(tiles as u32, 32u32, &a, &b, &c, &mut gpu_d, lda, ldb, shared).unwrap();
            tiles_tf32::simulate(tiles as u32, 32u32, &a, &b, &c, &mut sim_d, lda, ldb, shared).unwrap();
            let round = |x: &[f32]| x.iter().map(|&v| gpu::mma::tf32(v)).collect::<Vec<_>>();
            within(&gpu_d, &sim_d, &round(&a), &round(&b), &c, (lda, ldb, 8));
        }
    }
}

/// Small integers: every partial sum is exact, so the GPU and the simulator agree bit for
/// bit, whatever order the tensor cores add in.
#[test]
#[ignore = "needs a CUDA GPU"]
fn exact_sums_agree_bit_for_bit() {
    assert!(has_tensor_cores());
    let tiles = 32;
    let (lda, ldb) = (16, 8);
    let a: Vec<f16> = (0..tiles * 16 * lda).map(|i| f16::from_f32((i % 7) as f32 - 3.0)).collect();
    let b: Vec<f16> = (0..tiles * 16 * ldb).map(|i| f16::from_f32((i % 5) as f32 - 2.0)).collect();
    let c: Vec<f32> = (0..tiles * 128).map(|i| (i % 11) as f32).collect();
    for shared in [false, true] {
        let (mut gpu_d, mut sim_d) = (vec![0.0f32; tiles * 128], vec![0.0f32; tiles * 128]);
        tiles_f16::launch(tiles as u32, 32u32, &a, &b, &c, &mut gpu_d, lda, ldb, shared).unwrap();
        tiles_f16::simulate(tiles as u32, 32u32, &a, &b, &c, &mut sim_d, lda, ldb, shared).unwrap();
        common::assert_same("f16 integers", &gpu_d, &sim_d);
    }
}

fn thread_fault(r: gpu_runtime::Result<()>) -> String {
    match r {
        Err(Error::ThreadFault { message, .. }) => message,
        other => panic!("expected a thread fault, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn faults_carry_the_simulator_s_messages() {
    assert!(has_tensor_cores());
    let a = vec![f16::from_f32(1.0); 256];
    let mut d = vec![0.0f32; 128];
    let m = thread_fault(diverged::launch(1u32, 32u32, &a, &mut d, 16));
    let half = |lanes: &str| format!("needs the warp's 32 lanes together, but only lanes {lanes} made this call");
    assert!(m.contains(&half("0x0000ffff")) || m.contains(&half("0xffff0000")), "{m}");
    diverged::launch(1u32, 32u32, &a, &mut d, 32).unwrap();
    assert_eq!(d[0], 16.0);
    let m = thread_fault(diverged::launch(1u32, 48u32, &a, &mut d, 32));
    assert!(m.contains("only lanes 0x0000ffff made this call"), "{m}");

    let (a, b) = (vec![f16::ZERO; 16 * 16 - 1], vec![f16::ZERO; 16 * 8]);
    let c = vec![0.0f32; 128];
    let m = thread_fault(tiles_f16::launch(1u32, 32u32, &a, &b, &c, &mut d, 16, 8, false));
    assert!(m.contains("range end index 256 out of range for slice of length 255"), "{m}");
    let a = vec![f16::ZERO; 256];
    let m = thread_fault(tiles_f16::launch(1u32, 32u32, &a, &b, &c, &mut d, usize::MAX / 4, 8, false));
    assert!(m.contains(&format!("range end index {} out of range", usize::MAX)), "{m}");
}

/// Lanes of one warp that name different tiles (other starts, row strides, views or
/// destinations) fault with the simulator's message; a warp that agrees gets the
/// simulator's result bit for bit (small integers: every sum is exact).
#[test]
#[ignore = "needs a CUDA GPU"]
fn lanes_naming_different_tiles_fault() {
    assert!(has_tensor_cores());
    let mut g = Gen::new(9);
    let mut v = |n: usize| (0..n).map(|_| f16::from_f32(g.f64_in(-4.0, 4.0).round() as f32)).collect::<Vec<f16>>();
    let (a, b) = (v(2048), v(2048));
    let (mut gpu_d, mut sim_d) = (vec![f32::NAN; 256], vec![f32::NAN; 256]);
    lane_tiles::launch(1u32, 32u32, &a, &b, &mut gpu_d, 0, 0, 0, 0).unwrap();
    lane_tiles::simulate(1u32, 32u32, &a, &b, &mut sim_d, 0, 0, 0, 0).unwrap();
    assert_eq!(gpu_d[..128], sim_d[..128]);
    for case in [(256, 0, 0, 0), (8, 0, 0, 0), (3, 0, 0, 0), (0, 8, 0, 0), (0, 1, 0, 0), (0, 0, 16, 0), (0, 0, 0, 8)] {
        let (shift, extra, odd_end, store_shift) = case;
        let on_gpu =
            thread_fault(lane_tiles::launch(1u32, 32u32, &a, &b, &mut gpu_d, shift, extra, odd_end, store_shift));
        let on_sim =
            thread_fault(lane_tiles::simulate(1u32, 32u32, &a, &b, &mut sim_d, shift, extra, odd_end, store_shift));
        assert!(on_gpu.contains("needs the same tile in every lane of the warp"), "{case:?}: {on_gpu}");
        assert!(on_sim.contains("needs the same tile in every lane of the warp"), "{case:?}: {on_sim}");
    }
}

/// A later tile whose start differs across the lanes faults on the GPU too, though the
/// compiler answered the check of the tile between from the first one's.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_later_tile_that_differs_faults() {
    assert!(has_tensor_cores());
    let a: Vec<f16> = (0..2048).map(|i| f16::from_f32((i % 7) as f32 - 3.0)).collect();
    let b: Vec<f16> = (0..128).map(|i| f16::from_f32((i % 5) as f32 - 2.0)).collect();
    let (mut gpu_d, mut sim_d) = (vec![f32::NAN; 128], vec![f32::NAN; 128]);
    later_tile_differs::launch(1u32, 32u32, &a, &b, &mut gpu_d, 0).unwrap();
    later_tile_differs::simulate(1u32, 32u32, &a, &b, &mut sim_d, 0).unwrap();
    assert_eq!(gpu_d, sim_d);
    for shift in [8, 256, 3] {
        let on_gpu = thread_fault(later_tile_differs::launch(1u32, 32u32, &a, &b, &mut gpu_d, shift));
        assert!(on_gpu.contains("needs the same tile in every lane of the warp"), "{shift}: {on_gpu}");
    }
}

/// The example's kernels at 512 × 768 × 256 against the CPU, within the example's bound.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_matmul_example_is_within_its_bound_on_the_gpu() {
    assert!(has_tensor_cores());
    let (m, n, k) = (512, 768, 256);
    let (a, b) = (matmul_tc::random(m * k, 21), matmul_tc::random(k * n, 22));
    let a16: Vec<bf16> = a.iter().map(|&v| bf16::from_f32(v)).collect();
    let b16: Vec<bf16> = b.iter().map(|&v| bf16::from_f32(v)).collect();
    let mut c = vec![f32::NAN; m * n];
    matmul_bf16::launch(matmul_tc::grid(m, n), THREADS, &a16, &b16, &mut c, m, n, k).unwrap();
    let rounded = |x: &[bf16]| x.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
    let (want, bound) = matmul_tc::reference(&rounded(&a16), &rounded(&b16), m, n, k);
    assert_eq!(matmul_tc::outside(&c, &want, &bound), None, "bf16");

    let mut c = vec![f32::NAN; m * n];
    matmul_tf32::launch(matmul_tc::grid(m, n), THREADS, &a, &b, &mut c, m, n, k).unwrap();
    let (want, bound) = matmul_tc::reference(&matmul_tc::as_tf32(&a), &matmul_tc::as_tf32(&b), m, n, k);
    assert_eq!(matmul_tc::outside(&c, &want, &bound), None, "tf32");

    // The checked entry points on device arrays: the same product, and an error (with `c`
    // untouched) for sizes the kernels would only partly compute.
    let (da, db) = (DeviceVec::from_slice(&a).unwrap(), DeviceVec::from_slice(&b).unwrap());
    let mut dc = DeviceVec::from_slice(&vec![f32::NAN; m * n]).unwrap();
    matmul_tc::multiply_tf32(&da, &db, &mut dc, m, n, k).unwrap();
    assert_eq!(matmul_tc::outside(&dc.to_vec().unwrap(), &want, &bound), None, "tf32, checked");
    let (da16, db16) = (DeviceVec::from_slice(&a16).unwrap(), DeviceVec::from_slice(&b16).unwrap());
    let mut dc = DeviceVec::from_slice(&vec![f32::NAN; m * n]).unwrap();
    for (mm, nn, kk) in [(m, n, k - 16), (m - 64, n, k), (m, n + 64, k)] {
        assert!(matches!(matmul_tc::multiply_bf16(&da16, &db16, &mut dc, mm, nn, kk), Err(Error::LaunchConfig { .. })));
    }
    // Sizes the kernel takes, but not those of the arrays.
    assert!(matches!(matmul_tc::multiply_bf16(&da16, &db16, &mut dc, m, n, k - 32), Err(Error::LaunchConfig { .. })));
    assert!(dc.to_vec().unwrap().iter().all(|v| v.is_nan()));
    matmul_tc::multiply_bf16(&da16, &db16, &mut dc, m, n, k).unwrap();
    let (want, bound) = matmul_tc::reference(&rounded(&a16), &rounded(&b16), m, n, k);
    assert_eq!(matmul_tc::outside(&dc.to_vec().unwrap(), &want, &bound), None, "bf16, checked");
}

/// `tests/copies.rs`'s pipeline on the GPU, with the copies aligned (`cp.async`) and not
/// (the element path): the host's sums either way.
#[test]
#[ignore = "needs a CUDA GPU"]
fn asynchronous_copies_feed_a_pipeline() {
    assert!(has_tensor_cores());
    let (blocks, stages) = (64, 9);
    let x: Vec<f32> = (0..blocks * STAGE * stages + 1).map(|i| ((i * 37) % 101) as f32 - 50.0).collect();
    // A view from element 1 of device memory: every copy's source is 4 bytes past a
    // 16-byte boundary, so the 8- and 16-byte copies take the element path.
    let dx = DeviceVec::from_slice(&x).unwrap();
    for start in [0, 1] {
        let view = dx.slice(start..start + blocks * STAGE * stages).unwrap();
        let host = &x[start..start + blocks * STAGE * stages];
        let want: Vec<f32> = host.chunks(STAGE * stages).map(|c| c.iter().sum()).collect();
        for width in [1, 2, 4] {
            let mut out = vec![f32::NAN; blocks];
            staged_sums::launch(blocks as u32, STAGE as u32, view, &mut out, stages, width).unwrap();
            assert_eq!(out, want, "start {start}, width {width}");
        }
    }
    // The unchecked copies, from a view that is 16-byte aligned and one that is not (the
    // 8- and 16-byte copies take the element path): `out = x` either way.
    for start in [0, 1] {
        let view = dx.slice(start..start + 64 * STAGE).unwrap();
        for width in [1, 2, 4] {
            let mut out = vec![f32::NAN; 64 * STAGE];
            unchecked_copies::launch(64u32, STAGE as u32, view, &mut out, width).unwrap();
            assert_eq!(out, x[start..start + 64 * STAGE], "unchecked, start {start}, width {width}");
        }
    }
    let h: Vec<bf16> = (0..64 * 512).map(|i| bf16::from_f32((i % 1000) as f32 - 500.0)).collect();
    let mut out = vec![bf16::ZERO; h.len()];
    copy_halves::launch(64u32, 64u32, &h, &mut out).unwrap();
    assert_eq!(out, h);
}
