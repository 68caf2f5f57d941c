//! Matrix multiplication on tensor cores (`gpu::mma`, sm_80 and newer), beside the SIMT
//! kernels of `examples/matmul.rs`: `c = a · b` with `a` (m × k) and `b` (k × n) row-major
//! in `bf16`, or in `f32` multiplied as TF32, and `c` in `f32`.
//!
//! A block of 8 warps computes a 128 × 128 tile of `c`, each warp a 64 × 32 part of it as
//! 4 × 4 accumulators of 16 × 8. The tiles of `a` and `b` go through shared memory, 32 (16
//! for TF32) columns of `a` at a time, with asynchronous copies (`gpu::copy_async8`, 16
//! bytes each) into two buffers: the next step's tiles arrive while this step's are
//! multiplied. The rows there are padded by 8 elements (4 for TF32), so that the 8 rows
//! one `ldmatrix` reads fall in different banks.
//!
//! `cargo run --release --example matmul_tc [-- sizes…]`. Without a GPU it runs the
//! kernels in the simulator on a small product instead. With `--json sizes…` it prints one
//! JSON object per kernel and size (what `bench/compare.py --tensor-cores` reads); with
//! `--ptx` it prints the kernels' PTX (for `ptxas -v`).
//!
//! **Bound.** Each element is checked against a CPU product of the same rounded inputs in
//! `f64`: the error may be at most `(k + 1) · 2⁻²² · Σ|a_ik · b_kj|`, the bound of a sum of
//! `k` products in `f32` arithmetic with truncation instead of rounding at each step (the
//! tensor cores' order and internal precision are not specified, see `gpu::mma`).

use std::time::Instant;

use gpu_runtime::bf16;
use gpu_runtime::{DeviceVec, Error, gpu, kernel};

/// Rows of `c` a block computes.
pub const BM: usize = 128;
/// Columns of `c` a block computes.
pub const BN: usize = 128;
/// Threads per block: 8 warps.
pub const THREADS: u32 = 256;

/// `c = a · b` in `bf16` with `f32` accumulation, for `m` and `n` multiples of 128 and `k`
/// of 32, each matrix under 2³² elements. The kernel does not check its sizes: on others
/// it computes only the whole tiles of `c` its grid covers, over the first `k / 32 · 32`
/// columns of `a`, and leaves the rest of `c` as it was (an `a` or `b` shorter than the
/// sizes say faults). [`multiply_bf16`] checks them, then launches it.
#[kernel(arch = "sm_80", launch_bounds(256, 2))]
pub fn matmul_bf16(a: &[bf16], b: &[bf16], c: &mut [f32], m: usize, n: usize, k: usize) {
    // Rows of the shared tiles: 32 + 8 and 128 + 8 elements (80 and 272 bytes); two of
    // each tile, one being copied into while the other is read.
    const LDA: u32 = 40;
    const LDB: u32 = 136;
    const A_TILE: u32 = 128 * LDA;
    const B_TILE: u32 = 32 * LDB;
    let sa = gpu::shared::<bf16, 10240>(); // 2 × 128 × 40
    let sb = gpu::shared::<bf16, 8704>(); // 2 × 32 × 136
    let tid = gpu::thread_idx().x;
    let warp = tid / 32;
    // The warp's 64 × 32 part of the block's tile: 4 × 4 accumulators of 16 × 8.
    let (wm, wn) = (warp / 4 * 64, warp % 4 * 32);
    let (bm, bn) = (gpu::block_idx().y * 128, gpu::block_idx().x * 128);
    // Indices in `u32` ([`check_sizes`] keeps every matrix under 2³² elements): half
    // the registers of `usize` ones, and 32-bit bounds checks.
    let (n32, k32) = (n as u32, k as u32);
    let mut c00 = gpu::mma::zeros();
    let mut c01 = gpu::mma::zeros();
    let mut c02 = gpu::mma::zeros();
    let mut c03 = gpu::mma::zeros();
    let mut c10 = gpu::mma::zeros();
    let mut c11 = gpu::mma::zeros();
    let mut c12 = gpu::mma::zeros();
    let mut c13 = gpu::mma::zeros();
    let mut c20 = gpu::mma::zeros();
    let mut c21 = gpu::mma::zeros();
    let mut c22 = gpu::mma::zeros();
    let mut c23 = gpu::mma::zeros();
    let mut c30 = gpu::mma::zeros();
    let mut c31 = gpu::mma::zeros();
    let mut c32 = gpu::mma::zeros();
    let mut c33 = gpu::mma::zeros();
    let steps = k32 / 32;
    // Round `s` copies step `s` of `a` (128 × 32) and `b` (32 × 128), each two runs of 8
    // elements a thread, into buffer `s % 2`, then multiplies step `s - 1`'s.
    for s in 0..steps + 1 {
        if s < steps {
            let (k0, buf) = (s * 32, s % 2);
            for h in 0..2 {
                let g = tid + 256 * h;
                let (r, q) = (g / 4, g % 4 * 8);
                gpu::copy_async8(sa, (buf * A_TILE + r * LDA + q) as usize, a, ((bm + r) * k32 + k0 + q) as usize);
                let (r, q) = (g / 16, g % 16 * 8);
                gpu::copy_async8(sb, (buf * B_TILE + r * LDB + q) as usize, b, ((k0 + r) * n32 + bn + q) as usize);
            }
        }
        gpu::copy_async_commit();
        if s > 0 {
            // This thread's copies of step `s - 1` are done, then every thread's.
            gpu::copy_async_wait(1);
            gpu::sync_threads();
            let (ta, tb) = ((s - 1) % 2 * A_TILE, (s - 1) % 2 * B_TILE);
            for kk in (0..32).step_by(16) {
                let a0 = gpu::mma::load_a(sa, (ta + (wm + 0) * LDA + kk) as usize, LDA as usize);
                let a1 = gpu::mma::load_a(sa, (ta + (wm + 16) * LDA + kk) as usize, LDA as usize);
                let a2 = gpu::mma::load_a(sa, (ta + (wm + 32) * LDA + kk) as usize, LDA as usize);
                let a3 = gpu::mma::load_a(sa, (ta + (wm + 48) * LDA + kk) as usize, LDA as usize);
                let b0 = gpu::mma::load_b(sb, (tb + kk * LDB + wn + 0) as usize, LDB as usize);
                let b1 = gpu::mma::load_b(sb, (tb + kk * LDB + wn + 8) as usize, LDB as usize);
                let b2 = gpu::mma::load_b(sb, (tb + kk * LDB + wn + 16) as usize, LDB as usize);
                let b3 = gpu::mma::load_b(sb, (tb + kk * LDB + wn + 24) as usize, LDB as usize);
                c00 = gpu::mma::mma(a0, b0, c00);
                c01 = gpu::mma::mma(a0, b1, c01);
                c02 = gpu::mma::mma(a0, b2, c02);
                c03 = gpu::mma::mma(a0, b3, c03);
                c10 = gpu::mma::mma(a1, b0, c10);
                c11 = gpu::mma::mma(a1, b1, c11);
                c12 = gpu::mma::mma(a1, b2, c12);
                c13 = gpu::mma::mma(a1, b3, c13);
                c20 = gpu::mma::mma(a2, b0, c20);
                c21 = gpu::mma::mma(a2, b1, c21);
                c22 = gpu::mma::mma(a2, b2, c22);
                c23 = gpu::mma::mma(a2, b3, c23);
                c30 = gpu::mma::mma(a3, b0, c30);
                c31 = gpu::mma::mma(a3, b1, c31);
                c32 = gpu::mma::mma(a3, b2, c32);
                c33 = gpu::mma::mma(a3, b3, c33);
            }
            // Every warp has read the buffer before the next round copies into it again.
            gpu::sync_threads();
        }
    }
    let top = (bm + wm) * n32 + bn + wn;
    gpu::mma::store(c, (top + 0 * n32 + 0) as usize, n, c00);
    gpu::mma::store(c, (top + 0 * n32 + 8) as usize, n, c01);
    gpu::mma::store(c, (top + 0 * n32 + 16) as usize, n, c02);
    gpu::mma::store(c, (top + 0 * n32 + 24) as usize, n, c03);
    gpu::mma::store(c, (top + 16 * n32 + 0) as usize, n, c10);
    gpu::mma::store(c, (top + 16 * n32 + 8) as usize, n, c11);
    gpu::mma::store(c, (top + 16 * n32 + 16) as usize, n, c12);
    gpu::mma::store(c, (top + 16 * n32 + 24) as usize, n, c13);
    gpu::mma::store(c, (top + 32 * n32 + 0) as usize, n, c20);
    gpu::mma::store(c, (top + 32 * n32 + 8) as usize, n, c21);
    gpu::mma::store(c, (top + 32 * n32 + 16) as usize, n, c22);
    gpu::mma::store(c, (top + 32 * n32 + 24) as usize, n, c23);
    gpu::mma::store(c, (top + 48 * n32 + 0) as usize, n, c30);
    gpu::mma::store(c, (top + 48 * n32 + 8) as usize, n, c31);
    gpu::mma::store(c, (top + 48 * n32 + 16) as usize, n, c32);
    gpu::mma::store(c, (top + 48 * n32 + 24) as usize, n, c33);
}

/// `c = a · b` with `f32` inputs multiplied as TF32 (K = 8 a product), for `m` and `n`
/// multiples of 128 and `k` of 16, each matrix under 2³² elements; the tiles of
/// [`matmul_bf16`], 16 columns of `a` at a time. Like it, the kernel does not check its
/// sizes: [`multiply_tf32`] does, then launches it.
#[kernel(arch = "sm_80", launch_bounds(256, 2))]
pub fn matmul_tf32(a: &[f32], b: &[f32], c: &mut [f32], m: usize, n: usize, k: usize) {
    // 16 + 4 and 128 + 4 elements: rows 80 and 528 bytes apart; two of each tile.
    const LDA: u32 = 20;
    const LDB: u32 = 132;
    const A_TILE: u32 = 128 * LDA;
    const B_TILE: u32 = 16 * LDB;
    let sa = gpu::shared::<f32, 5120>(); // 2 × 128 × 20
    let sb = gpu::shared::<f32, 4224>(); // 2 × 16 × 132
    let tid = gpu::thread_idx().x;
    let warp = tid / 32;
    // The warp's 64 × 32 part of the block's tile: 4 × 4 accumulators of 16 × 8.
    let (wm, wn) = (warp / 4 * 64, warp % 4 * 32);
    let (bm, bn) = (gpu::block_idx().y * 128, gpu::block_idx().x * 128);
    // Indices in `u32` ([`check_sizes`] keeps every matrix under 2³² elements): half
    // the registers of `usize` ones, and 32-bit bounds checks.
    let (n32, k32) = (n as u32, k as u32);
    let mut c00 = gpu::mma::zeros();
    let mut c01 = gpu::mma::zeros();
    let mut c02 = gpu::mma::zeros();
    let mut c03 = gpu::mma::zeros();
    let mut c10 = gpu::mma::zeros();
    let mut c11 = gpu::mma::zeros();
    let mut c12 = gpu::mma::zeros();
    let mut c13 = gpu::mma::zeros();
    let mut c20 = gpu::mma::zeros();
    let mut c21 = gpu::mma::zeros();
    let mut c22 = gpu::mma::zeros();
    let mut c23 = gpu::mma::zeros();
    let mut c30 = gpu::mma::zeros();
    let mut c31 = gpu::mma::zeros();
    let mut c32 = gpu::mma::zeros();
    let mut c33 = gpu::mma::zeros();
    let steps = k32 / 16;
    // As in `matmul_bf16`: `a` is 128 × 16 and `b` 16 × 128, two runs of 4 a thread each.
    for s in 0..steps + 1 {
        if s < steps {
            let (k0, buf) = (s * 16, s % 2);
            for h in 0..2 {
                let g = tid + 256 * h;
                let (r, q) = (g / 4, g % 4 * 4);
                gpu::copy_async4(sa, (buf * A_TILE + r * LDA + q) as usize, a, ((bm + r) * k32 + k0 + q) as usize);
                let (r, q) = (g / 32, g % 32 * 4);
                gpu::copy_async4(sb, (buf * B_TILE + r * LDB + q) as usize, b, ((k0 + r) * n32 + bn + q) as usize);
            }
        }
        gpu::copy_async_commit();
        if s > 0 {
            // This thread's copies of step `s - 1` are done, then every thread's.
            gpu::copy_async_wait(1);
            gpu::sync_threads();
            let (ta, tb) = ((s - 1) % 2 * A_TILE, (s - 1) % 2 * B_TILE);
            for kk in (0..16).step_by(8) {
                let a0 = gpu::mma::load_a(sa, (ta + (wm + 0) * LDA + kk) as usize, LDA as usize);
                let a1 = gpu::mma::load_a(sa, (ta + (wm + 16) * LDA + kk) as usize, LDA as usize);
                let a2 = gpu::mma::load_a(sa, (ta + (wm + 32) * LDA + kk) as usize, LDA as usize);
                let a3 = gpu::mma::load_a(sa, (ta + (wm + 48) * LDA + kk) as usize, LDA as usize);
                let b0 = gpu::mma::load_b(sb, (tb + kk * LDB + wn + 0) as usize, LDB as usize);
                let b1 = gpu::mma::load_b(sb, (tb + kk * LDB + wn + 8) as usize, LDB as usize);
                let b2 = gpu::mma::load_b(sb, (tb + kk * LDB + wn + 16) as usize, LDB as usize);
                let b3 = gpu::mma::load_b(sb, (tb + kk * LDB + wn + 24) as usize, LDB as usize);
                c00 = gpu::mma::mma(a0, b0, c00);
                c01 = gpu::mma::mma(a0, b1, c01);
                c02 = gpu::mma::mma(a0, b2, c02);
                c03 = gpu::mma::mma(a0, b3, c03);
                c10 = gpu::mma::mma(a1, b0, c10);
                c11 = gpu::mma::mma(a1, b1, c11);
                c12 = gpu::mma::mma(a1, b2, c12);
                c13 = gpu::mma::mma(a1, b3, c13);
                c20 = gpu::mma::mma(a2, b0, c20);
                c21 = gpu::mma::mma(a2, b1, c21);
                c22 = gpu::mma::mma(a2, b2, c22);
                c23 = gpu::mma::mma(a2, b3, c23);
                c30 = gpu::mma::mma(a3, b0, c30);
                c31 = gpu::mma::mma(a3, b1, c31);
                c32 = gpu::mma::mma(a3, b2, c32);
                c33 = gpu::mma::mma(a3, b3, c33);
            }
            // Every warp has read the buffer before the next round copies into it again.
            gpu::sync_threads();
        }
    }
    let top = (bm + wm) * n32 + bn + wn;
    gpu::mma::store(c, (top + 0 * n32 + 0) as usize, n, c00);
    gpu::mma::store(c, (top + 0 * n32 + 8) as usize, n, c01);
    gpu::mma::store(c, (top + 0 * n32 + 16) as usize, n, c02);
    gpu::mma::store(c, (top + 0 * n32 + 24) as usize, n, c03);
    gpu::mma::store(c, (top + 16 * n32 + 0) as usize, n, c10);
    gpu::mma::store(c, (top + 16 * n32 + 8) as usize, n, c11);
    gpu::mma::store(c, (top + 16 * n32 + 16) as usize, n, c12);
    gpu::mma::store(c, (top + 16 * n32 + 24) as usize, n, c13);
    gpu::mma::store(c, (top + 32 * n32 + 0) as usize, n, c20);
    gpu::mma::store(c, (top + 32 * n32 + 8) as usize, n, c21);
    gpu::mma::store(c, (top + 32 * n32 + 16) as usize, n, c22);
    gpu::mma::store(c, (top + 32 * n32 + 24) as usize, n, c23);
    gpu::mma::store(c, (top + 48 * n32 + 0) as usize, n, c30);
    gpu::mma::store(c, (top + 48 * n32 + 8) as usize, n, c31);
    gpu::mma::store(c, (top + 48 * n32 + 16) as usize, n, c32);
    gpu::mma::store(c, (top + 48 * n32 + 24) as usize, n, c33);
}

/// The blocks for an `m` × `n` product.
pub fn grid(m: usize, n: usize) -> (u32, u32) {
    ((n / BN) as u32, (m / BM) as u32)
}

/// The sizes the kernels take, or why not.
pub fn check_sizes(m: usize, n: usize, k: usize, k_step: usize) -> gpu_runtime::Result<()> {
    if m % BM != 0 || n % BN != 0 || k % k_step != 0 || m == 0 || n == 0 || k == 0 {
        return Err(Error::LaunchConfig {
            kernel: "matmul_tc",
            message: format!("these kernels take m a multiple of {BM}, n of {BN} and k of {k_step}; got {m}, {n}, {k}"),
        });
    }
    if elements(m, n, k).iter().any(|e| e.is_none_or(|e| e > u32::MAX as usize)) {
        return Err(Error::LaunchConfig {
            kernel: "matmul_tc",
            message: format!(
                "these kernels index in u32: each matrix must have under 2^32 elements; got {m}, {n}, {k}"
            ),
        });
    }
    Ok(())
}

/// The elements of `a`, `b` and `c` for an `m` × `k` by `k` × `n` product (`None` past
/// `usize`).
fn elements(m: usize, n: usize, k: usize) -> [Option<usize>; 3] {
    [m.checked_mul(k), k.checked_mul(n), m.checked_mul(n)]
}

/// The lengths of `a`, `b` and `c` for an `m` × `k` by `k` × `n` product, or why not.
pub fn check_lengths(lengths: [usize; 3], m: usize, n: usize, k: usize) -> gpu_runtime::Result<()> {
    if elements(m, n, k) != lengths.map(Some) {
        return Err(Error::LaunchConfig {
            kernel: "matmul_tc",
            message: format!(
                "a, b and c must have m·k, k·n and m·n elements for m, n, k = {m}, {n}, {k}; got {}, {} and {}",
                lengths[0], lengths[1], lengths[2]
            ),
        });
    }
    Ok(())
}

/// `c = a · b` on the GPU through [`matmul_bf16`], for the sizes it takes: any other
/// (see [`check_sizes`]), or arrays of other lengths, are an error, never a partial
/// product.
pub fn multiply_bf16(
    a: &DeviceVec<bf16>,
    b: &DeviceVec<bf16>,
    c: &mut DeviceVec<f32>,
    m: usize,
    n: usize,
    k: usize,
) -> gpu_runtime::Result<()> {
    check_sizes(m, n, k, 32)?;
    check_lengths([a.len(), b.len(), c.len()], m, n, k)?;
    matmul_bf16::launch(grid(m, n), THREADS, a, b, c, m, n, k)
}

/// `c = a · b` on the GPU through [`matmul_tf32`], checked as [`multiply_bf16`] is.
pub fn multiply_tf32(
    a: &DeviceVec<f32>,
    b: &DeviceVec<f32>,
    c: &mut DeviceVec<f32>,
    m: usize,
    n: usize,
    k: usize,
) -> gpu_runtime::Result<()> {
    check_sizes(m, n, k, 16)?;
    check_lengths([a.len(), b.len(), c.len()], m, n, k)?;
    matmul_tf32::launch(grid(m, n), THREADS, a, b, c, m, n, k)
}

/// Values in [-0.5, 0.5) from a seed (xorshift).
pub fn random(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect()
}

/// `c = a · b` in `f64` of the inputs as given (already rounded), and each element's bound
/// (see the module's documentation).
pub fn reference(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let mut c = vec![0.0f64; m * n];
    let mut bound = vec![0.0f64; m * n];
    let ulp = (k as f64 + 1.0) * 2f64.powi(-22);
    for i in 0..m {
        for kk in 0..k {
            let x = f64::from(a[i * k + kk]);
            for j in 0..n {
                let p = x * f64::from(b[kk * n + j]);
                c[i * n + j] += p;
                bound[i * n + j] += p.abs();
            }
        }
    }
    bound.iter_mut().for_each(|b| *b *= ulp);
    (c, bound)
}

/// The first element outside its bound, as `(index, got, want, bound)`.
pub fn outside(got: &[f32], want: &[f64], bound: &[f64]) -> Option<(usize, f32, f64, f64)> {
    (0..got.len()).find(|&i| (f64::from(got[i]) - want[i]).abs() > bound[i]).map(|i| (i, got[i], want[i], bound[i]))
}

/// The TF32 values a TF32 product multiplies (see `gpu::mma::tf32`).
pub fn as_tf32(x: &[f32]) -> Vec<f32> {
    x.iter().map(|&v| gpu::mma::tf32(v)).collect()
}

fn tflops(m: usize, n: usize, k: usize, seconds: f64) -> f64 {
    2.0 * m as f64 * n as f64 * k as f64 / seconds / 1e12
}

/// The median of `reps` timed runs of `run` (after one warm-up).
fn median_seconds(reps: usize, mut run: impl FnMut() -> gpu_runtime::Result<()>) -> gpu_runtime::Result<f64> {
    run()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        run()?;
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Both kernels on the GPU at `n` × `n` × `n`: checked against the CPU where `check`, and
/// timed. Gives `(kernel, seconds)` pairs.
fn on_gpu(n: usize, check: bool) -> gpu_runtime::Result<Vec<(&'static str, f64)>> {
    let (a, b) = (random(n * n, 1), random(n * n, 2));
    let (a16, b16): (Vec<bf16>, Vec<bf16>) =
        (a.iter().map(|&v| bf16::from_f32(v)).collect(), b.iter().map(|&v| bf16::from_f32(v)).collect());
    let (da16, db16) = (DeviceVec::from_slice(&a16)?, DeviceVec::from_slice(&b16)?);
    let (da, db) = (DeviceVec::from_slice(&a)?, DeviceVec::from_slice(&b)?);
    let mut dc = DeviceVec::<f32>::zeros(n * n)?;
    let mut out = Vec::new();
    let s = median_seconds(5, || multiply_bf16(&da16, &db16, &mut dc, n, n, n))?;
    if check {
        let (want, bound) = reference(
            &a16.iter().map(|v| v.to_f32()).collect::<Vec<_>>(),
            &b16.iter().map(|v| v.to_f32()).collect::<Vec<_>>(),
            n,
            n,
            n,
        );
        if let Some((i, got, want, bound)) = outside(&dc.to_vec()?, &want, &bound) {
            panic!("bf16, n = {n}: element {i} is {got}, the CPU's {want} ± {bound}");
        }
    }
    out.push(("matmul_bf16", s));
    let s = median_seconds(5, || multiply_tf32(&da, &db, &mut dc, n, n, n))?;
    if check {
        let (want, bound) = reference(&as_tf32(&a), &as_tf32(&b), n, n, n);
        if let Some((i, got, want, bound)) = outside(&dc.to_vec()?, &want, &bound) {
            panic!("tf32, n = {n}: element {i} is {got}, the CPU's {want} ± {bound}");
        }
    }
    out.push(("matmul_tf32", s));
    Ok(out)
}

fn main() -> gpu_runtime::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let json = args.iter().any(|a| a == "--json");
    if args.iter().any(|a| a == "--ptx") {
        // What the compiler made of the kernels, for `ptxas -v`.
        print!("{}{}", matmul_bf16::PTX, matmul_tf32::PTX);
        return Ok(());
    }
    match gpu_runtime::default_device() {
        Ok(device) if !json => println!("on {} (device {})", device.name(), device.ordinal()),
        Ok(_) => {}
        Err(e @ (Error::NoDriver | Error::NoDevice)) => {
            println!("no GPU found ({e}); the kernels in the simulator on a 128 × 128 × 64 product instead");
            let (m, n, k) = (128, 128, 64);
            let (a, b) = (random(m * k, 1), random(k * n, 2));
            let (a16, b16): (Vec<bf16>, Vec<bf16>) =
                (a.iter().map(|&v| bf16::from_f32(v)).collect(), b.iter().map(|&v| bf16::from_f32(v)).collect());
            let mut c = vec![0.0f32; m * n];
            matmul_bf16::simulate(grid(m, n), THREADS, &a16, &b16, &mut c, m, n, k)?;
            let rounded = |x: &[bf16]| x.iter().map(|v| v.to_f32()).collect::<Vec<_>>();
            let (want, bound) = reference(&rounded(&a16), &rounded(&b16), m, n, k);
            println!("bf16: {}", if outside(&c, &want, &bound).is_none() { "within the bound" } else { "OUTSIDE" });
            matmul_tf32::simulate(grid(m, n), THREADS, &a, &b, &mut c, m, n, k)?;
            let (want, bound) = reference(&as_tf32(&a), &as_tf32(&b), m, n, k);
            println!("tf32: {}", if outside(&c, &want, &bound).is_none() { "within the bound" } else { "OUTSIDE" });
            return Ok(());
        }
        Err(e) => return Err(e),
    }
    let sizes = if sizes.is_empty() { vec![1024, 4096, 8192] } else { sizes };
    if !json {
        println!("{:>6} {:>12} {:>10} {:>9}", "n", "kernel", "ms", "TFLOP/s");
    }
    for n in sizes {
        check_sizes(n, n, n, 32)?;
        // The CPU check costs n³ operations in f64: only the smaller sizes.
        for (kernel, s) in on_gpu(n, n <= 2048)? {
            let t = tflops(n, n, n, s);
            if json {
                println!(r#"{{"n": {n}, "kernel": "{kernel}", "ms": {:.4}, "tflops": {t:.2}}}"#, s * 1e3);
            } else {
                println!("{n:>6} {kernel:>12} {:>10.3} {t:>9.1}", s * 1e3);
            }
        }
    }
    Ok(())
}
