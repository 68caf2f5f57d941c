//! Explicit kernels shared by the simulator tests (`tests/kernels.rs`, in CI) and the GPU
//! tests (`tests/gpu_kernels.rs`), with the plain loops they are checked against.
#![allow(dead_code)]

use gpu_runtime::{gpu, kernel, vectorize};

/// Threads per block of the tiled kernels (and the side of a tile).
pub const TPB: usize = 16;
/// Threads per block of the reductions.
pub const RBLOCK: usize = 256;

/// `y = a * x + y`, one element per thread of a grid-stride loop.
#[kernel]
pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    let mut i = gpu::grid1();
    while i < y.len() {
        y[i] = a * x[i] + y[i];
        i += gpu::gridsize1();
    }
}

/// Each block sums its 256 elements in shared memory: `partial[block] = sum`.
#[kernel]
pub fn block_sum(x: &[f32], partial: &mut [f32]) {
    const RBLOCK: usize = 256;
    let cache = gpu::shared::<f32, 256>();
    let t = gpu::thread_idx().x as usize;
    let i = gpu::grid1();
    cache[t] = if i < x.len() { x[i] } else { 0.0 };
    gpu::sync_threads();
    let mut s = RBLOCK / 2;
    while s > 0 {
        if t < s {
            cache[t] += cache[t + s];
        }
        gpu::sync_threads();
        s /= 2;
    }
    if t == 0 {
        partial[gpu::block_idx().x as usize] = cache[0];
    }
}

/// The same with warp shuffles for the last 32 values.
#[kernel]
pub fn warp_sum(x: &[i64], partial: &mut [i64]) {
    const RBLOCK: usize = 256;
    let cache = gpu::shared::<i64, 256>();
    let t = gpu::thread_idx().x as usize;
    let mut i = gpu::grid1();
    let mut acc = 0i64;
    while i < x.len() {
        acc += x[i];
        i += gpu::gridsize1();
    }
    cache[t] = acc;
    gpu::sync_threads();
    let mut s = RBLOCK / 2;
    while s >= 32 {
        if t < s {
            cache[t] += cache[t + s];
        }
        gpu::sync_threads();
        s /= 2;
    }
    if t < 32 {
        let mut v = cache[t];
        let mut d = 16u32;
        while d > 0 {
            v += gpu::shfl_down_sync(0xffff_ffff, v, d);
            d /= 2;
        }
        if t == 0 {
            partial[gpu::block_idx().x as usize] = v;
        }
    }
}

/// A histogram of bytes with atomics in global memory.
#[kernel]
pub fn histogram(data: &[u8], bins: &mut [u32]) {
    let mut i = gpu::grid1();
    while i < data.len() {
        gpu::atomic::add(bins, data[i] as usize, 1u32);
        i += gpu::gridsize1();
    }
}

/// Constants of the module, which the macros copy into the kernels that name them (and
/// check against what rustc compiled).
const TILE: usize = 32;
const HALF: f32 = 0.5;
const SHIFT: i32 = TILE as i32 - 30;

/// A vectorized function with a module constant (`#[vectorize]` copies them as `#[kernel]`
/// does).
#[vectorize]
pub fn add_half(x: f32) -> f32 {
    x + HALF * TILE as f32
}

/// Per block of `TILE` threads: each element plus half its neighbour's, through shared
/// memory sized by a module constant; `SHIFT` in a pattern.
#[kernel]
pub fn module_constants(x: &[f32], y: &mut [f32]) {
    let s = gpu::shared::<f32, TILE>();
    let t = gpu::thread_idx().x as usize % TILE;
    let i = gpu::block_idx().x as usize * TILE + t;
    s[t] = if i < x.len() { x[i] } else { 0.0 };
    gpu::sync_threads();
    let k = match (t % 4) as i32 {
        SHIFT => 2.0,
        _ => 1.0,
    };
    if i < y.len() {
        y[i] = k * s[t] + HALF * s[(t + 1) % TILE];
    }
}

/// Reads and writes without bounds checks (`get_unchecked`, `get_unchecked_mut`) on a
/// `&mut` slice, a shared array and a local array, the indices proven by the `if`.
#[kernel]
pub fn unchecked_access(x: &[f32], y: &mut [f32]) {
    let s = gpu::shared::<f32, 64>();
    let t = gpu::thread_idx().x as usize % 64;
    let i = gpu::grid1();
    let mut local = [1.0f32; 4];
    if i < x.len() && i < y.len() {
        // SAFETY: `t < 64` (the remainder), `i` is below both lengths (the `if`), and
        // `i % 4 < 4`.
        unsafe {
            *s.get_unchecked_mut(t) = *x.get_unchecked(i);
            *local.get_unchecked_mut(i % 4) += 2.0;
            *y.get_unchecked_mut(i) *= *local.get_unchecked(i % 4);
        }
    }
    gpu::sync_threads();
    if i < y.len() {
        // SAFETY: `i < y.len()`, and `t ^ 1 < 64` as `t < 64`.
        unsafe { *y.get_unchecked_mut(i) += *s.get_unchecked(t ^ 1) };
    }
}

/// Counted loops over local arrays, which the compiler unrolls (so that the arrays stay in
/// registers): forwards, `.rev()`, `.step_by`, inclusive, with `continue` and `break`, and
/// nested. Eight values per thread.
#[kernel]
pub fn unrolled_loops(x: &[i32], out: &mut [i32]) {
    let i = gpu::grid1();
    if i >= x.len() || 8 * i + 8 > out.len() {
        return;
    }
    let v = x[i];
    let mut a = [0i32; 8];
    for k in 0..8 {
        a[k] = v * k as i32 + 1;
    }
    for k in (0..8).rev() {
        if k % 3 == 0 {
            continue;
        }
        a[k] += a[7 - k];
    }
    for k in (1..8).step_by(3) {
        a[k] ^= v;
    }
    for k in 0..=3 {
        if a[k] > 1000 * (k as i32 + 1) {
            break;
        }
        a[k + 4] -= a[k];
    }
    let mut m = [0i32; 16];
    for r in 0..4 {
        for c in 0..4 {
            m[r * 4 + c] = a[r] * a[c + 4] - r as i32;
        }
    }
    for k in 0..8 {
        out[8 * i + k] = a[k] + m[2 * k] - m[15 - k];
    }
}

/// `y[i] = 2 x[i]`, promising blocks of at most 64 threads (CUDA's `__launch_bounds__`).
#[kernel(launch_bounds(64, 4))]
pub fn twice_bounded(x: &[f32], y: &mut [f32]) {
    let i = gpu::grid1();
    if i < x.len() {
        y[i] = 2.0 * x[i];
    }
}

/// A histogram privatised per block in shared memory, merged with atomics.
#[kernel]
pub fn histogram_shared(data: &[u8], bins: &mut [u32]) {
    let local = gpu::shared::<u32, 256>();
    let t = gpu::thread_idx().x as usize;
    let mut k = t;
    while k < 256 {
        local[k] = 0;
        k += gpu::block_dim().x as usize;
    }
    gpu::sync_threads();
    let mut i = gpu::grid1();
    while i < data.len() {
        gpu::atomic::add(local, data[i] as usize, 1u32);
        i += gpu::gridsize1();
    }
    gpu::sync_threads();
    let mut k = t;
    while k < 256 {
        gpu::atomic::add(bins, k, local[k]);
        k += gpu::block_dim().x as usize;
    }
}

/// `c = a · b` for n×n row-major matrices, one thread per element.
#[kernel]
pub fn matmul_naive(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    let (col, row) = gpu::grid2();
    if row < n && col < n {
        let mut acc = 0.0f32;
        for k in 0..n {
            acc += a[row * n + k] * b[k * n + col];
        }
        c[row * n + col] = acc;
    }
}

/// `c = a · b` with 16×16 tiles in shared memory (Numba's documented `fast_matmul`).
#[kernel]
pub fn matmul_tiled(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    const TPB: usize = 16;
    let sa = gpu::shared_2d::<f32, 16, 16>();
    let sb = gpu::shared_2d::<f32, 16, 16>();
    let (col, row) = gpu::grid2();
    let tx = gpu::thread_idx().x as usize;
    let ty = gpu::thread_idx().y as usize;
    let mut acc = 0.0f32;
    let tiles = (n + TPB - 1) / TPB;
    for t in 0..tiles {
        let ac = t * TPB + tx;
        let br = t * TPB + ty;
        sa[(ty, tx)] = if row < n && ac < n { a[row * n + ac] } else { 0.0 };
        sb[(ty, tx)] = if br < n && col < n { b[br * n + col] } else { 0.0 };
        gpu::sync_threads();
        for k in 0..TPB {
            acc += sa[(ty, k)] * sb[(k, tx)];
        }
        gpu::sync_threads();
    }
    if row < n && col < n {
        c[row * n + col] = acc;
    }
}

/// One step of the heat equation on an h×w grid (a 5-point stencil; the border is kept).
#[kernel]
pub fn heat_step(u: &[f64], next: &mut [f64], h: usize, w: usize, k: f64) {
    let (x, y) = gpu::grid2();
    if y < h && x < w {
        let i = y * w + x;
        if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
            next[i] = u[i];
        } else {
            let lap = u[i - 1] + u[i + 1] + u[i - w] + u[i + w] - 4.0 * u[i];
            next[i] = u[i] + k * lap;
        }
    }
}

/// Per thread, a local array: the four powers of x[i].
#[kernel]
pub fn powers(x: &[f64], out: &mut [f64]) {
    let i = gpu::grid1();
    if i < x.len() {
        let mut p = [1.0f64; 4];
        for k in 1..4 {
            p[k] = p[k - 1] * x[i];
        }
        out[i] = p[0] + p[1] + p[2] + p[3];
    }
}

/// Writes one element past the end from the thread that owns the last element.
#[kernel]
pub fn off_by_one(y: &mut [i32]) {
    let i = gpu::grid1();
    if i <= y.len() {
        y[i] = i as i32;
    }
}

/// Divides by an element that may be zero.
#[kernel]
pub fn divide(x: &[i32], d: &[i32], out: &mut [i32]) {
    let i = gpu::grid1();
    if i < x.len() {
        out[i] = x[i] / d[i];
    }
}

/// Plain loops the kernels are checked against.
pub mod reference {
    /// The host copy of `unrolled_loops`, by hand (what the GPU must match).
    pub fn unrolled(v: i32) -> [i32; 8] {
        let mut a = [0i32; 8];
        for (k, e) in a.iter_mut().enumerate() {
            *e = v * k as i32 + 1;
        }
        for k in (0..8).rev().filter(|k| k % 3 != 0) {
            a[k] += a[7 - k];
        }
        for k in [1, 4, 7] {
            a[k] ^= v;
        }
        for k in 0..=3 {
            if a[k] > 1000 * (k as i32 + 1) {
                break;
            }
            a[k + 4] -= a[k];
        }
        let m: Vec<i32> = (0..16).map(|e| a[e / 4] * a[e % 4 + 4] - (e / 4) as i32).collect();
        std::array::from_fn(|k| a[k] + m[2 * k] - m[15 - k])
    }

    /// What `module_constants` computes, from Rust's loops.
    pub fn module_constants(x: &[f32]) -> Vec<f32> {
        (0..x.len())
            .map(|i| {
                let (b, t) = (i / 32, i % 32);
                let next = b * 32 + (t + 1) % 32;
                let k = if t % 4 == 2 { 2.0 } else { 1.0 };
                k * x[i] + 0.5 * x.get(next).copied().unwrap_or(0.0)
            })
            .collect()
    }

    /// Checks what `atomics_contention` left over `n` iterations (started from
    /// `[0, n]`, `[0.0]`, `[i32::MAX, i32::MIN]`, `[0, 0, u32::MAX]`).
    pub fn contention(n: usize, sums: &[u64], fsum: &[f64], extremes: &[i32], bits: &[u32]) {
        assert_eq!(sums[0], (0..n as u64).map(|i| i % 7).sum::<u64>());
        assert_eq!(sums[1], 0);
        let want: f64 = (0..n).map(|i| (i % 100) as f64 * 0.01).sum();
        assert!((fsum[0] - want).abs() < 1e-9 * want, "{} vs {want}", fsum[0]);
        let vals = (0..n).map(|i| ((i * 7919) % 1_000_003) as i32 - 500_000);
        assert_eq!(extremes, [vals.clone().min().unwrap(), vals.max().unwrap()]);
        let xor = (0..n).fold(0u32, |a, i| a ^ (1 << (i % 32)));
        let or = (0..n).fold(0u32, |a, i| a | (1 << (i % 29)));
        let and = (0..n).fold(u32::MAX, |a, i| a & !(1 << (i % 31)));
        assert_eq!(bits, [xor, or, and]);
    }

    pub fn matmul(a: &[f32], b: &[f32], n: usize) -> Vec<f64> {
        let mut c = vec![0.0f64; n * n];
        for r in 0..n {
            for k in 0..n {
                let av = a[r * n + k] as f64;
                for col in 0..n {
                    c[r * n + col] += av * b[k * n + col] as f64;
                }
            }
        }
        c
    }

    pub fn heat_step(u: &[f64], h: usize, w: usize, k: f64) -> Vec<f64> {
        let mut next = u.to_vec();
        for y in 1..h.saturating_sub(1) {
            for x in 1..w.saturating_sub(1) {
                let i = y * w + x;
                let lap = u[i - 1] + u[i + 1] + u[i - w] + u[i + w] - 4.0 * u[i];
                next[i] = u[i] + k * lap;
            }
        }
        next
    }

    pub fn histogram(data: &[u8]) -> Vec<u32> {
        let mut bins = vec![0u32; 256];
        for &b in data {
            bins[b as usize] += 1;
        }
        bins
    }
}

/// Reverses each block's chunk through dynamic shared memory (one `f32` per thread).
#[kernel]
pub fn reverse_blocks(x: &[f32], out: &mut [f32]) {
    let buf = gpu::dynamic_shared::<f32>();
    let t = gpu::thread_idx().x as usize;
    let i = gpu::grid1();
    let n = gpu::block_dim().x as usize;
    buf[t] = x[i];
    gpu::sync_threads();
    out[i] = buf[n - 1 - t];
}

/// One thread divides by zero before a barrier the others wait at.
#[kernel]
pub fn fault_before_barrier(x: &[i32], out: &mut [i32]) {
    let t = gpu::thread_idx().x as usize;
    let v = 100 / x[t];
    let s = gpu::shared::<i32, 256>();
    s[t] = v;
    gpu::sync_threads();
    out[t] = s[255 - t];
}

/// Every index built-in and warp operation of each thread, in 24 `u32` per thread (the
/// thread's linear index in the grid picks the row): what the GPU and the simulator must
/// agree on.
#[kernel]
pub fn builtins_probe(out: &mut [u32]) {
    let t = gpu::thread_idx();
    let b = gpu::block_idx();
    let bd = gpu::block_dim();
    let gd = gpu::grid_dim();
    let local = (t.z * bd.y + t.y) * bd.x + t.x;
    let block = (b.z * gd.y + b.y) * gd.x + b.x;
    let row = (block * bd.x * bd.y * bd.z + local) as usize * 24;
    let (gx, gy, gz) = gpu::grid3();
    let (sx, sy, sz) = gpu::gridsize3();
    let lane = gpu::lane_id();
    let v = local * 3 + 1;
    out[row] = t.x;
    out[row + 1] = t.y;
    out[row + 2] = t.z;
    out[row + 3] = b.x;
    out[row + 4] = b.y;
    out[row + 5] = b.z;
    out[row + 6] = gx as u32;
    out[row + 7] = gy as u32;
    out[row + 8] = gz as u32;
    out[row + 9] = (sx + sy + sz) as u32;
    out[row + 10] = lane;
    out[row + 11] = gpu::active_mask();
    out[row + 12] = gpu::shfl_sync(0xffff_ffff, v, (lane + 5) % 32);
    out[row + 13] = gpu::shfl_up_sync(0xffff_ffff, v, 3);
    out[row + 14] = gpu::shfl_down_sync(0xffff_ffff, v, 7);
    out[row + 15] = gpu::shfl_xor_sync(0xffff_ffff, v, 9);
    out[row + 16] = gpu::ballot_sync(0xffff_ffff, lane % 3 == 0);
    out[row + 17] = gpu::all_sync(0xffff_ffff, v > 0) as u32;
    out[row + 18] = gpu::any_sync(0xffff_ffff, lane == 31) as u32;
    out[row + 19] = gpu::sync_threads_count(local % 5 == 0);
    out[row + 20] = gpu::sync_threads_and(local < 1000) as u32;
    out[row + 21] = gpu::sync_threads_or(local == 3) as u32;
    let f = gpu::shfl_xor_sync(0xffff_ffff, v as f64 * 0.5, 1);
    out[row + 22] = (f * 2.0) as u32;
    let w = gpu::shfl_down_sync(0xffff_ffff, (v as i64) << 33, 1);
    out[row + 23] = (w >> 33) as u32;
}

/// Atomics under contention: every thread of a grid-stride loop over `n` adds, takes the
/// minimum and maximum, and flips bits into one element each.
#[kernel]
pub fn atomics_contention(n: usize, sums: &mut [u64], fsum: &mut [f64], extremes: &mut [i32], bits: &mut [u32]) {
    let mut i = gpu::grid1();
    while i < n {
        gpu::atomic::add(sums, 0, (i % 7) as u64);
        gpu::atomic::sub(sums, 1, 1u64);
        gpu::atomic::add(fsum, 0, (i % 100) as f64 * 0.01);
        let v = ((i * 7919) % 1_000_003) as i32 - 500_000;
        gpu::atomic::min(extremes, 0, v);
        gpu::atomic::max(extremes, 1, v);
        gpu::atomic::xor(bits, 0, 1u32 << (i % 32));
        gpu::atomic::or(bits, 1, 1u32 << (i % 29));
        gpu::atomic::and(bits, 2, !(1u32 << (i % 31)));
        i += gpu::gridsize1();
    }
}

/// Doubles every element, printing from the first thread: `println!` prints in the
/// simulator and compiles to nothing on the GPU.
#[kernel]
pub fn double_traced(y: &mut [f32]) {
    let i = gpu::grid1();
    if i == 0 {
        println!("double_traced: {} elements", y.len());
    }
    if i < y.len() {
        y[i] *= 2.0;
    }
}

/// A kernel without parameters (only its shared memory and barrier).
#[kernel]
pub fn no_params() {
    let s = gpu::shared::<u32, 32>();
    let t = gpu::thread_idx().x as usize;
    s[t] = t as u32;
    gpu::sync_threads();
}
