//! Tensor cores (`gpu::mma`) in the simulator: every fragment's layout against a CPU model
//! of the documented sum, bit for bit, for each input type, from global and from shared
//! memory; exact products of small integers; the matmul example within its bound; and the
//! faults (a diverged warp, a partial warp, a tile past the array) with the GPU's messages.
//! The same kernels run on the GPU in `tests/gpu_mma.rs`.

mod common;
mod mma_defs;

use common::Gen;
use gpu_runtime::{Error, LaunchConfig, bf16, f16, gpu};
use mma_defs::matmul_tc::{self, THREADS, matmul_bf16, matmul_tf32};
use mma_defs::*;

/// Inputs for `tiles` tiles: `a` with rows `lda` apart (16 rows a tile), `b` with rows `ldb`
/// apart (`kb` rows a tile), `c` packed, as `f32` values in [-4, 4).
fn inputs(tiles: usize, lda: usize, kb: usize, ldb: usize, seed: u64) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut g = Gen::new(seed);
    let mut v = |n: usize| (0..n).map(|_| g.f64_in(-4.0, 4.0) as f32).collect::<Vec<f32>>();
    (v(tiles * 16 * lda), v(tiles * kb * ldb), v(tiles * 128))
}

/// What the model gives for each tile, from the inputs as the tensor cores see them.
fn modelled(a: &[f32], b: &[f32], c: &[f32], tiles: usize, (lda, ldb, k): (usize, usize, usize)) -> Vec<f32> {
    (0..tiles)
        .flat_map(|t| {
            model(&tile(a, t * 16 * lda, lda, 16, k), &tile(b, t * k * ldb, ldb, k, 8), &tile(c, t * 128, 8, 16, 8), k)
        })
        .collect()
}

fn same_bits(what: &str, got: &[f32], want: &[f32]) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "{what}: element {i} is {g}, the model's {w}");
    }
}

/// Each input type, from global memory and through shared memory (rows there as far
/// apart as in the input: aligned for `ldmatrix` at `ld` 16 and 24, not at 20), against the
/// model bit for bit.
#[test]
fn fragments_match_the_model() {
    let tiles = 3;
    for (lda, ldb) in [(16, 8), (24, 16), (20, 12)] {
        for shared in [false, true] {
            let what = format!("lda {lda}, ldb {ldb}, shared {shared}");
            let (a, b, c) = inputs(tiles, lda, 16, ldb, lda as u64);
            let mut d = vec![f32::NAN; tiles * 128];
            let (a16, b16): (Vec<f16>, Vec<f16>) =
                (a.iter().map(|&v| f16::from_f32(v)).collect(), b.iter().map(|&v| f16::from_f32(v)).collect());
            tiles_f16::simulate(tiles as u32, 32u32, &a16, &b16, &c, &mut d, lda, ldb, shared).unwrap();
            let (ar, br): (Vec<f32>, Vec<f32>) =
                (a16.iter().map(|v| v.to_f32()).collect(), b16.iter().map(|v| v.to_f32()).collect());
            same_bits(&format!("f16, {what}"), &d, &modelled(&ar, &br, &c, tiles, (lda, ldb, 16)));

            let (a16, b16): (Vec<bf16>, Vec<bf16>) =
                (a.iter().map(|&v| bf16::from_f32(v)).collect(), b.iter().map(|&v| bf16::from_f32(v)).collect());
            tiles_bf16::simulate(tiles as u32, 32u32, &a16, &b16, &c, &mut d, lda, ldb, shared).unwrap();
            let (ar, br): (Vec<f32>, Vec<f32>) =
                (a16.iter().map(|v| v.to_f32()).collect(), b16.iter().map(|v| v.to_f32()).collect());
            same_bits(&format!("bf16, {what}"), &d, &modelled(&ar, &br, &c, tiles, (lda, ldb, 16)));

            // TF32: 16 × 8 tiles of `a`, 8 × 8 of `b`.
            let (lda, ldb) = (lda / 2, ldb.max(8));
            let (a, b, c) = inputs(tiles, lda, 8, ldb, 7 + lda as u64);
            tiles_tf32::simulate(tiles as u32, 32u32, &a, &b, &c, &mut d, lda, ldb, shared).unwrap();
            let round = |x: &[f32]| x.iter().map(|&v| gpu::mma::tf32(v)).collect::<Vec<_>>();
            same_bits(&format!("tf32, {what}"), &d, &modelled(&round(&a), &round(&b), &c, tiles, (lda, ldb, 8)));
        }
    }
}

/// Products of small integers are exact whatever the order: the tiles of a known product.
#[test]
fn integer_products_are_exact() {
    let (lda, ldb) = (16, 8);
    let a: Vec<f16> = (0..16 * lda).map(|i| f16::from_f32((i % 7) as f32 - 3.0)).collect();
    let b: Vec<f16> = (0..16 * ldb).map(|i| f16::from_f32((i % 5) as f32 - 2.0)).collect();
    let c: Vec<f32> = (0..128).map(|i| i as f32).collect();
    let mut d = vec![0.0f32; 128];
    tiles_f16::simulate(1u32, 32u32, &a, &b, &c, &mut d, lda, ldb, true).unwrap();
    for i in 0..16 {
        for j in 0..8 {
            let want: f32 =
                c[i * 8 + j] + (0..16).map(|k| a[i * lda + k].to_f32() * b[k * ldb + j].to_f32()).sum::<f32>();
            assert_eq!(d[i * 8 + j], want, "({i}, {j})");
        }
    }
}

/// TF32 rounds to nearest with ties away from zero, to 10 bits of mantissa.
#[test]
fn tf32_rounding() {
    let one = 1.0f32.to_bits();
    for (bits, want) in [
        (one, one),
        (one + 0xfff, one),           // below half of the last kept bit
        (one + 0x1000, one + 0x2000), // a tie: away from zero
        (one + 0x1fff, one + 0x2000),
        (one | 1 << 31, one | 1 << 31),
        ((one + 0x1000) | 1 << 31, (one + 0x2000) | 1 << 31), // a negative tie: away from zero too
        (f32::MAX.to_bits(), f32::INFINITY.to_bits()),
        (f32::INFINITY.to_bits(), f32::INFINITY.to_bits()),
    ] {
        assert_eq!(gpu::mma::tf32(f32::from_bits(bits)).to_bits(), want, "{bits:#x}");
    }
    assert!(gpu::mma::tf32(f32::NAN).is_nan());
}

/// The lanes of a warp name one tile for a load or a store: another start, row stride,
/// view or destination in some lane is a fault, as `ldmatrix` (whose lanes give rows for
/// each other) needs on the GPU.
#[test]
fn lanes_naming_different_tiles_fault() {
    let a: Vec<f16> = (0..2048).map(|i| f16::from_f32((i % 7) as f32 - 3.0)).collect();
    let b: Vec<f16> = (0..2048).map(|i| f16::from_f32((i % 5) as f32 - 2.0)).collect();
    let mut d = vec![f32::NAN; 256];
    lane_tiles::simulate(1u32, 32u32, &a, &b, &mut d, 0, 0, 0, 0).unwrap();
    let want = model(
        &(0..256).map(|i| a[i].to_f32()).collect::<Vec<_>>(),
        &(0..128).map(|i| b[i / 8 * 16 + i % 8].to_f32()).collect::<Vec<_>>(),
        &[0.0; 128],
        16,
    );
    assert_eq!(d[..128], want[..]);
    for case in [(256, 0, 0, 0), (3, 0, 0, 0), (0, 8, 0, 0), (0, 0, 16, 0), (0, 0, 0, 8)] {
        let (shift, extra, odd_end, store_shift) = case;
        let m = thread_fault(lane_tiles::simulate(1u32, 32u32, &a, &b, &mut d, shift, extra, odd_end, store_shift));
        assert!(m.contains("needs the same tile in every lane of the warp"), "{case:?}: {m}");
    }
}

/// A later tile whose start differs across the lanes faults, though earlier tiles of the
/// same run agreed (their checks answer only what follows from them).
#[test]
fn a_later_tile_that_differs_faults() {
    let a: Vec<f16> = (0..2048).map(|i| f16::from_f32((i % 7) as f32 - 3.0)).collect();
    let b: Vec<f16> = (0..128).map(|i| f16::from_f32((i % 5) as f32 - 2.0)).collect();
    let mut d = vec![f32::NAN; 128];
    later_tile_differs::simulate(1u32, 32u32, &a, &b, &mut d, 0).unwrap();
    let f = |x: &[f16]| x.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
    let mut want = vec![0.0; 128];
    for t in 0..3 {
        want = model(&f(&a[256 * t..256 * (t + 1)]), &f(&b), &want, 16);
    }
    assert_eq!(d, want);
    for shift in [8, 256, 3] {
        let m = thread_fault(later_tile_differs::simulate(1u32, 32u32, &a, &b, &mut d, shift));
        assert!(m.contains("needs the same tile in every lane of the warp"), "{shift}: {m}");
    }
}

/// The example's kernels on a product of two blocks by two, k of four shared tiles.
#[test]
fn the_matmul_example_is_within_its_bound() {
    let (m, n, k) = (128, 256, 64);
    let (a, b) = (matmul_tc::random(m * k, 11), matmul_tc::random(k * n, 12));
    let a16: Vec<bf16> = a.iter().map(|&v| bf16::from_f32(v)).collect();
    let b16: Vec<bf16> = b.iter().map(|&v| bf16::from_f32(v)).collect();
    let mut c = vec![f32::NAN; m * n];
    matmul_bf16::simulate(matmul_tc::grid(m, n), THREADS, &a16, &b16, &mut c, m, n, k).unwrap();
    let rounded = |x: &[bf16]| x.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
    let (want, bound) = matmul_tc::reference(&rounded(&a16), &rounded(&b16), m, n, k);
    assert_eq!(matmul_tc::outside(&c, &want, &bound), None, "bf16");

    let mut c = vec![f32::NAN; m * n];
    matmul_tf32::simulate(matmul_tc::grid(m, n), THREADS, &a, &b, &mut c, m, n, k).unwrap();
    let (want, bound) = matmul_tc::reference(&matmul_tc::as_tf32(&a), &matmul_tc::as_tf32(&b), m, n, k);
    assert_eq!(matmul_tc::outside(&c, &want, &bound), None, "tf32");
    // The bound is not vacuous: an error of one unit in the inputs' last place is outside.
    let mut off = c.clone();
    off[77] += 1e-2;
    assert!(matmul_tc::outside(&off, &want, &bound).is_some());
    assert!(matmul_tc::check_sizes(100, 128, 32, 32).is_err());
    assert!(matmul_tc::check_sizes(128, 128, 48, 32).is_err());
    assert!(matmul_tc::check_sizes(128, 128, 48, 16).is_ok());
    assert!(matmul_tc::check_sizes(1 << 17, 1 << 17, 32, 32).is_err());
    assert!(matmul_tc::check_lengths([m * k, k * n, m * n], m, n, k).is_ok());
    assert!(matmul_tc::check_lengths([m * k, k * n, m * n + 1], m, n, k).is_err());
    assert!(matmul_tc::check_lengths([m * k - 1, k * n, m * n], m, n, k).is_err());
    // Sizes whose products overflow are an error, not a panic.
    assert!(matmul_tc::check_lengths([0, 0, 0], usize::MAX, 2, 2).is_err());
}

/// What the kernel's documentation says it does on sizes it does not take, which is why the
/// example launches it through the checked `multiply_bf16`: a k of 48 multiplies only the
/// first 32 columns of `a`, and a grid of one block (for an n of 256) leaves the second
/// tile of `c` as it was.
#[test]
fn the_matmul_kernel_computes_only_whole_tiles() {
    let (m, n, k) = (128, 256, 48);
    let (a, b) = (matmul_tc::random(m * k, 13), matmul_tc::random(k * n, 14));
    let a16: Vec<bf16> = a.iter().map(|&v| bf16::from_f32(v)).collect();
    let b16: Vec<bf16> = b.iter().map(|&v| bf16::from_f32(v)).collect();
    let mut c = vec![f32::NAN; m * n];
    matmul_bf16::simulate(matmul_tc::grid(m, 128), THREADS, &a16, &b16, &mut c, m, n, k).unwrap();
    let a32: Vec<f32> = (0..m).flat_map(|i| a16[i * k..i * k + 32].iter().map(|v| v.to_f32())).collect();
    let b32: Vec<f32> = b16[..32 * n].iter().map(|v| v.to_f32()).collect();
    let (want, bound) = matmul_tc::reference(&a32, &b32, m, n, 32);
    for i in 0..m {
        let row = &c[i * n..(i + 1) * n];
        assert_eq!(
            matmul_tc::outside(&row[..128], &want[i * n..i * n + 128], &bound[i * n..i * n + 128]),
            None,
            "row {i}"
        );
        assert!(row[128..].iter().all(|v| v.is_nan()), "row {i}: the second tile was written");
    }
}

fn thread_fault(r: gpu_runtime::Result<()>) -> String {
    match r {
        Err(Error::ThreadFault { message, .. }) => message,
        other => panic!("expected a thread fault, got {other:?}"),
    }
}

/// A warp whose lanes do not all make the call, and a block whose last warp is partial,
/// fault with the lanes that did.
#[test]
fn a_partial_warp_faults() {
    let a = vec![f16::from_f32(1.0); 256];
    let mut d = vec![0.0f32; 128];
    // Either half's call is the first fault: each is made by 16 lanes.
    let m = thread_fault(diverged::simulate(1u32, 32u32, &a, &mut d, 16));
    let half = |lanes: &str| format!("needs the warp's 32 lanes together, but only lanes {lanes} made this call");
    assert!(m.contains(&half("0x0000ffff")) || m.contains(&half("0xffff0000")), "{m}");
    // All 32 lanes: no fault; none: no call.
    diverged::simulate(1u32, 32u32, &a, &mut d, 32).unwrap();
    assert_eq!(d[0], 16.0);
    diverged::simulate(1u32, 32u32, &a, &mut d, 0).unwrap();
    // A block of 48 threads: its second warp has 16 lanes.
    let m = thread_fault(diverged::simulate(1u32, 48u32, &a, &mut d, 32));
    assert!(m.contains("only lanes 0x0000ffff made this call"), "{m}");
}

/// A tile past the array's end is Rust's range error, the span counted from the tile's
/// first element.
#[test]
fn a_tile_past_the_array_faults() {
    let (a, b) = (vec![f16::ZERO; 16 * 16 - 1], vec![f16::ZERO; 16 * 8]);
    let c = vec![0.0f32; 128];
    let mut d = vec![0.0f32; 128];
    let m = thread_fault(tiles_f16::simulate(1u32, 32u32, &a, &b, &c, &mut d, 16, 8, false));
    assert!(m.contains("range end index 256 out of range for slice of length 255"), "{m}");
    // A distance between rows so large that the tile's span saturates.
    let a = vec![f16::ZERO; 256];
    let m = thread_fault(tiles_f16::simulate(1u32, 32u32, &a, &b, &c, &mut d, usize::MAX / 4, 8, false));
    assert!(m.contains(&format!("range end index {} out of range", usize::MAX)), "{m}");
}

/// Two warps storing the same tile race, as two threads writing one element do.
#[test]
fn two_warps_storing_one_tile_race() {
    let mut d = vec![0.0f32; 128];
    match same_tile::simulate_with(&LaunchConfig::new(1u32, 64u32), &mut d) {
        Err(Error::DataRace { location, .. }) => assert!(location.starts_with("`d["), "{location}"),
        other => panic!("expected a race, got {other:?}"),
    }
}
