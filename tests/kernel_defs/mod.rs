//! Explicit kernels shared by the simulator tests (`tests/kernels.rs`, in CI) and the GPU
//! tests (`tests/gpu_kernels.rs`), with the plain loops they are checked against.
#![allow(dead_code)]

use gpu_runtime::{device, gpu, kernel, random, vectorize};

// The examples' kernels, from the examples' own source (`examples/matmul.rs` tests its
// own, beside its benchmark).
#[path = "../../examples/block_reduce.rs"]
pub mod block_reduce;
#[path = "../../examples/heat.rs"]
pub mod heat;
#[path = "../../examples/histogram.rs"]
pub mod histogram_example;
#[path = "../../examples/mixed_precision.rs"]
pub mod mixed_precision;
#[path = "../../examples/monte_carlo_pi.rs"]
pub mod monte_carlo_pi;
#[path = "../../examples/pick_device.rs"]
pub mod pick_device;

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

/// Random numbers drawn from each element's index in a grid-stride loop, so that the
/// streams do not depend on the launch shape: `u[i]` is word `i` of subsequence 7, `f[i]`
/// a uniform float of subsequence 0 and `d[i]` a uniform double at offset 3 of
/// subsequence `i`.
#[kernel]
pub fn random_streams(seed: u64, u: &mut [u32], f: &mut [f32], d: &mut [f64]) {
    let mut i = gpu::grid1();
    while i < u.len() {
        u[i] = random::uniform_u32(seed, 7, i as u64);
        f[i] = gpu_runtime::random::uniform_f32(seed, 0, i as u64);
        d[i] = random::uniform_f64(seed, i as u64, 3);
        i += gpu::gridsize1();
    }
}

/// Standard normals through a device function: `n32[i]` and `n64[i]` from offset `i`.
#[kernel]
pub fn random_normals(seed: u64, n32: &mut [f32], n64: &mut [f64]) {
    let i = gpu::grid1();
    if i < n32.len() {
        let (a, b) = normal_pair(seed, i as u64);
        n32[i] = a;
        n64[i] = b;
    }
}

/// The normal float of subsequence 1 and the normal double of subsequence 2 at `offset`.
#[device]
pub fn normal_pair(seed: u64, offset: u64) -> (f32, f64) {
    (random::normal_f32(seed, 1, offset), random::normal_f64(seed, 2, offset))
}

/// A vectorized function of `(seed, index)`: a uniform float of subsequence 5.
#[vectorize]
pub fn uniform_at(seed: u64, index: u64) -> f32 {
    random::uniform_f32(seed, 5, index)
}

/// A word as the random floats make them: the GPU fuses its exact product into the
/// addition (`lower::arith::exact_contract`), which must change no bit.
#[vectorize]
pub fn unit_floats(x: u32, y: u32) -> (f32, f64) {
    (random::unit_f32(x), random::unit_f64(x, y))
}

/// Writes `y[i] = i` and then, at the last element, divides by `d`: with `d = 0` every
/// element but the last is written before the fault.
#[kernel]
pub fn fault_at_last(y: &mut [u32], d: u32) {
    let i = gpu::grid1();
    if i < y.len() {
        y[i] = i as u32;
        if i == y.len() - 1 {
            y[i] = 1 / d;
        }
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

/// The side of a transposed tile, and the rows of threads that move it (each thread moves
/// `TDIM / TROWS` elements).
pub const TDIM: usize = 32;
pub const TROWS: usize = TDIM / 4;

/// `out = aᵀ` through a shared tile padded by one column (`{ TDIM + 1 }`), so that a warp
/// reading a column of it touches 32 banks: sizes written as constant expressions, as
/// Numba users write `cuda.shared.array((TDIM, TDIM + 1), …)`. Blocks of `(TDIM, TROWS)`
/// threads, a grid of `(cols, rows)` over `TDIM`.
#[kernel]
pub fn transpose(a: &[f32], rows: usize, cols: usize, out: &mut [f32]) {
    let tile = gpu::shared_2d::<f32, TDIM, { TDIM + 1 }>();
    let (tx, ty) = (gpu::thread_idx().x as usize, gpu::thread_idx().y as usize);
    let (bx, by) = (gpu::block_idx().x as usize * TDIM, gpu::block_idx().y as usize * TDIM);
    let mut held = [0.0f32; TDIM / TROWS];
    for k in 0..TDIM / TROWS {
        let (r, c) = (by + ty + k * TROWS, bx + tx);
        if r < rows && c < cols {
            held[k] = a[r * cols + c];
        }
    }
    for k in 0..TDIM / TROWS {
        tile[(ty + k * TROWS, tx)] = held[k];
    }
    gpu::sync_threads();
    for k in 0..TDIM / TROWS {
        let (r, c) = (bx + ty + k * TROWS, by + tx);
        if r < cols && c < rows {
            out[r * rows + c] = tile[(tx, ty + k * TROWS)];
        }
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

/// Type annotations a kernel may write: `gpu::Dim3` and `[T; N]`.
#[gpu_runtime::kernel]
pub fn annotated(y: &mut [u32]) {
    let t: gpu_runtime::gpu::Dim3 = gpu_runtime::gpu::thread_idx();
    let w: [u32; 2] = [10, 20];
    let i = t.x as usize;
    if i < y.len() {
        y[i] = w[i % 2] + t.x;
    }
}

/// Plain loops the kernels are checked against.
pub mod reference {
    /// `aᵀ` of a row-major `rows × cols` matrix.
    pub fn transpose(a: &[f32], rows: usize, cols: usize) -> Vec<f32> {
        (0..cols * rows).map(|k| a[(k % rows) * cols + k / rows]).collect()
    }

    /// The lanes of `i`'s parity in its warp, of a launch of `block` threads per block (the
    /// lanes that run an arm of the divergent kernels together), and the first thread of
    /// the warp.
    pub fn parity_group(i: usize, block: usize) -> (u32, usize) {
        let t = i % block;
        let base = i - t % 32;
        let lanes = (block - (t - t % 32)).min(32);
        let exist = if lanes == 32 { u32::MAX } else { (1u32 << lanes) - 1 };
        let parity = if t % 2 == 0 { 0x5555_5555 } else { 0xaaaa_aaaa };
        (exist & parity, base)
    }

    /// The lanes of `mask` (bits) for which `f(lane)` holds.
    fn lanes_where(mask: u32, f: impl Fn(usize) -> bool) -> u32 {
        (0..32).filter(|&l| mask & (1 << l) != 0 && f(l)).fold(0, |m, l| m | 1 << l)
    }

    /// What the divergent kernel `name` writes for input `x` in blocks of `block` threads.
    pub fn divergent(name: &str, x: &[u32], block: usize) -> Vec<u32> {
        let mut out = Vec::new();
        for i in 0..x.len() {
            let (group, base) = parity_group(i, block);
            let lane = i - base;
            let at = |l: usize| x[base + l];
            match name {
                "diverge_active_mask" => out.push(group),
                "diverge_ballot" => out.push(lanes_where(group, |l| at(l) % 3 == 0)),
                "diverge_all_any" => {
                    let all = lanes_where(group, |l| at(l) > 40) == group;
                    let any = lanes_where(group, |l| at(l) > 90) != 0;
                    out.push(all as u32 | (any as u32) << 1);
                }
                "diverge_shfl" => out.push(at(lane ^ 2)),
                "diverge_shfl_up_xor" => {
                    let up = if lane >= 2 { at(lane - 2) } else { x[i] };
                    out.push(up.wrapping_mul(1000).wrapping_add(at(lane ^ 2)));
                }
                "diverge_shfl_down" => out.push(if lane + 4 < 32 { at(lane + 4) } else { x[i] }),
                "diverge_match" => {
                    out.push(lanes_where(group, |l| at(l) % 4 == x[i] % 4));
                    let same = lanes_where(group, |l| at(l) / 64 == x[i] / 64) == group;
                    out.push(if same { group } else { 7 });
                }
                "diverge_syncwarp" => out.push(at(lane ^ 2)),
                _ => panic!("no reference for {name}"),
            }
        }
        out
    }

    /// The panic of `clamp_bounds`'s thread 3: Rust's own message for its type's `clamp`.
    pub fn clamp_panic(which: u32, lo: f64, hi: f64) -> String {
        use std::hint::black_box as b;
        let panic = std::panic::catch_unwind(|| match which {
            0 => _ = b(3i8).clamp(b(lo as i8), b(hi as i8)),
            1 => _ = b(3u64).clamp(b(lo as u64), b(hi as u64)),
            2 => _ = b(3isize).clamp(b(lo as isize), b(hi as isize)),
            3 => _ = b(3f32).clamp(b(lo as f32), b(hi as f32)),
            _ => _ = b(3f64).clamp(b(lo), b(hi)),
        });
        let p = panic.expect_err("the bounds are out of order");
        p.downcast_ref::<String>().cloned().unwrap_or_default()
    }

    /// What `vector_lanes` writes with offset `off` over one block of `n` threads.
    pub fn vector_lanes(off: usize, n: usize, x: &[f32], w: &[f64]) -> (Vec<f32>, Vec<f64>) {
        let four = |t: usize| [x[t + off], x[t + off + 1], x[t + off + 2], x[t + off + 3]];
        let mut out = Vec::new();
        let mut wout = Vec::new();
        for t in 0..n {
            let ([a, b, c, d], [e, f, g, h]) = (four(t), four((t + 1) % n));
            out.extend([d + e, c + f, b + g, a + h]);
            wout.extend([w[t + off + 1], w[t + off]]);
        }
        (out, wout)
    }

    /// What `shuffle_offsets` writes with offset `d` over `threads` threads (whole warps).
    pub fn shuffle_offsets(d: u32, threads: usize) -> Vec<u32> {
        let value = |lane: u32| lane * 3 + 1;
        (0..threads)
            .flat_map(|i| {
                let l = (i % 32) as u32;
                let own = value(l);
                let at = |src: Option<u32>| src.filter(|&s| s < 32).map_or(own, value);
                [at(l.checked_sub(d)), at(l.checked_add(d)), at(Some(l ^ d)), value(d % 32)]
            })
            .collect()
    }

    /// `lanemask_lt`, `le`, `eq`, `ge`, `gt` of `threads` threads (whole warps).
    pub fn lane_masks(threads: usize) -> Vec<u32> {
        (0..threads)
            .flat_map(|i| {
                let l = (i % 32) as u32;
                let lt = (1u32 << l) - 1;
                let le = lt | 1 << l;
                [lt, le, 1 << l, !lt, !le]
            })
            .collect()
    }

    /// Numba's rules for float atomic `min` (`k = 0`), `max`, `nanmin`, `nanmax` (3): the new
    /// value of an element `m` given `v`.
    pub fn nan_rule(k: usize, m: f32, v: f32) -> f32 {
        match k {
            0 if v < m => v,
            1 if v > m => v,
            2 if !v.is_nan() && (m.is_nan() || v < m) => v,
            3 if !v.is_nan() && (m.is_nan() || v > m) => v,
            _ => m,
        }
    }

    /// CUDA's `atomicInc` and `atomicDec`: the new value of `old` against `c`.
    pub fn inc(old: u32, c: u32) -> u32 {
        if old >= c { 0 } else { old + 1 }
    }

    pub fn dec(old: u32, c: u32) -> u32 {
        if old == 0 || old > c { c } else { old - 1 }
    }

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

    /// What `random_streams` writes into `n` elements.
    pub fn random_streams(seed: u64, n: usize) -> (Vec<u32>, Vec<f32>, Vec<f64>) {
        use gpu_runtime::random::*;
        let i = 0..n as u64;
        (
            i.clone().map(|i| uniform_u32(seed, 7, i)).collect(),
            i.clone().map(|i| uniform_f32(seed, 0, i)).collect(),
            i.map(|i| uniform_f64(seed, i, 3)).collect(),
        )
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

    /// What `atomic_argument_order` leaves for `threads` threads, from zeros: thread `t`'s
    /// four elements are `[5, 100, 4t + 12, 4t + 13]`.
    pub fn argument_order(threads: u32) -> Vec<u32> {
        (0..threads).flat_map(|t| [5, 100, 4 * t + 12, 4 * t + 13]).collect()
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

    /// One step of `examples/heat.rs`'s stencil, as its own CPU loop computes it.
    pub fn heat_step(u: &[f32], h: usize, w: usize, k: f32) -> Vec<f32> {
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

/// The order in which an atomic's arguments are evaluated: a call's, left to right, so the
/// index is read before a value that changes what it is made of. Each thread `t` works on
/// its own four elements `4t..4t + 4`.
#[kernel]
pub fn atomic_argument_order(out: &mut [u32]) {
    let t = gpu::grid1();
    if t * 4 + 3 < out.len() {
        let mut k = t * 4;
        // The index is `4t`: `k` changes only in the value.
        gpu::atomic::add(out, k, {
            k += 1;
            5u32
        });
        // The index is `4t + 2`, the value `4t + 12`.
        gpu::atomic::xor(
            out,
            {
                k += 1;
                k
            },
            {
                k += 10;
                k as u32
            },
        );
        // Expected and new read `k` after the index has: the index is `4t + 3`.
        let old = gpu::atomic::compare_and_swap(out, k - 9, 0u32, {
            k += 1;
            k as u32
        });
        out[t * 4 + 1] = old + 100;
    }
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

// ---- The warp's built-ins in divergent branches ---------------------------------------
//
// Each kernel calls one built-in in both arms of an `if` on the lane's parity, so the even
// and the odd lanes of a warp run it apart. Launched with blocks of 48 threads, the second
// warp of each block is partial (16 lanes), except where a lane would read a lane that
// does not exist (`shfl_down_sync`: 64 threads). `reference::divergent` is what each gives.

/// Numba's `test_activemask`: the even lanes see 0x55555555, the odd ones 0xAAAAAAAA (of
/// the lanes that exist).
#[kernel]
pub fn diverge_active_mask(out: &mut [u32]) {
    let i = gpu::grid1();
    if gpu::lane_id() % 2 == 0 {
        out[i] = gpu::active_mask();
    } else {
        out[i] = gpu::active_mask();
    }
}

#[kernel]
pub fn diverge_ballot(x: &[u32], out: &mut [u32]) {
    let i = gpu::grid1();
    let v = x[i];
    if gpu::lane_id() % 2 == 0 {
        out[i] = gpu::ballot_sync(gpu::active_mask(), v % 3 == 0);
    } else {
        out[i] = gpu::ballot_sync(gpu::active_mask(), v % 3 == 0);
    }
}

#[kernel]
pub fn diverge_all_any(x: &[u32], out: &mut [u32]) {
    let i = gpu::grid1();
    let v = x[i];
    if gpu::lane_id() % 2 == 0 {
        let m = gpu::active_mask();
        out[i] = gpu::all_sync(m, v > 40) as u32 | (gpu::any_sync(m, v > 90) as u32) << 1;
    } else {
        let m = gpu::active_mask();
        out[i] = gpu::all_sync(m, v > 40) as u32 | (gpu::any_sync(m, v > 90) as u32) << 1;
    }
}

#[kernel]
pub fn diverge_shfl(x: &[u32], out: &mut [u32]) {
    let i = gpu::grid1();
    let (v, lane) = (x[i], gpu::lane_id());
    if lane % 2 == 0 {
        out[i] = gpu::shfl_sync(gpu::active_mask(), v, lane ^ 2);
    } else {
        out[i] = gpu::shfl_sync(gpu::active_mask(), v, lane ^ 2);
    }
}

#[kernel]
pub fn diverge_shfl_up_xor(x: &[u32], out: &mut [u32]) {
    let i = gpu::grid1();
    let v = x[i];
    if gpu::lane_id() % 2 == 0 {
        let m = gpu::active_mask();
        out[i] = gpu::shfl_up_sync(m, v, 2) * 1000 + gpu::shfl_xor_sync(m, v, 2);
    } else {
        let m = gpu::active_mask();
        out[i] = gpu::shfl_up_sync(m, v, 2) * 1000 + gpu::shfl_xor_sync(m, v, 2);
    }
}

/// Launched with whole warps: a lane near the end of a partial warp would read a lane that
/// does not exist (undefined on the GPU, a panic in the simulator).
#[kernel]
pub fn diverge_shfl_down(x: &[u32], out: &mut [u32]) {
    let i = gpu::grid1();
    let v = x[i];
    if gpu::lane_id() % 2 == 0 {
        out[i] = gpu::shfl_down_sync(gpu::active_mask(), v, 4);
    } else {
        out[i] = gpu::shfl_down_sync(gpu::active_mask(), v, 4);
    }
}

/// `out[2i]`: the lanes with the same `v % 4`; `out[2i + 1]`: whether the group's `v / 64`
/// all agree (the mask if so).
#[kernel]
pub fn diverge_match(x: &[u32], out: &mut [u32]) {
    let i = gpu::grid1();
    let v = x[i];
    if gpu::lane_id() % 2 == 0 {
        let m = gpu::active_mask();
        out[2 * i] = gpu::match_any_sync(m, v % 4);
        let (same, all) = gpu::match_all_sync(m, v / 64);
        out[2 * i + 1] = if all { same } else { 7 };
    } else {
        let m = gpu::active_mask();
        out[2 * i] = gpu::match_any_sync(m, v % 4);
        let (same, all) = gpu::match_all_sync(m, v / 64);
        out[2 * i + 1] = if all { same } else { 7 };
    }
}

/// Numba's `test_useful_syncwarp`, per parity: each lane writes shared memory, the group
/// waits at `syncwarp`, then reads its partner's value.
#[kernel]
pub fn diverge_syncwarp(x: &[u32], out: &mut [u32]) {
    let s = gpu::shared::<u32, 64>();
    let i = gpu::grid1();
    let t = gpu::thread_idx().x as usize;
    s[t] = x[i];
    if gpu::lane_id() % 2 == 0 {
        gpu::syncwarp(gpu::active_mask());
        out[i] = s[t ^ 2];
    } else {
        gpu::syncwarp(gpu::active_mask());
        out[i] = s[t ^ 2];
    }
}

/// `lanemask_lt`, `le`, `eq`, `ge`, `gt` of each thread (five words).
#[kernel]
pub fn lane_masks(out: &mut [u32]) {
    let i = 5 * gpu::grid1();
    out[i] = gpu::lanemask_lt();
    out[i + 1] = gpu::lanemask_le();
    out[i + 2] = gpu::lanemask_eq();
    out[i + 3] = gpu::lanemask_ge();
    out[i + 4] = gpu::lanemask_gt();
}

/// Shuffles of each thread's `lane * 3 + 1` by a run-time offset `d` (four words: up, down,
/// xor, and `shfl_sync` from lane `d`): an offset of a warp or more names no lane, so each
/// lane keeps its own value (`shfl_sync` takes its lane modulo 32). The GPU's `shfl.sync`
/// reads only an offset's low 5 bits, so `d = 33` once read lane ± 1 there.
#[kernel]
pub fn shuffle_offsets(d: u32, out: &mut [u32]) {
    let i = 4 * gpu::grid1();
    let v = gpu::lane_id() * 3 + 1;
    out[i] = gpu::shfl_up_sync(u32::MAX, v, d);
    out[i + 1] = gpu::shfl_down_sync(u32::MAX, v, d);
    out[i + 2] = gpu::shfl_xor_sync(u32::MAX, v, d);
    out[i + 3] = gpu::shfl_sync(u32::MAX, v, d);
}

/// The vector accesses at every alignment, over one block of up to 128 threads: thread `t`
/// reads `x[t + off..][..4]` with `gpu::load4` (one vector load where `t + off` is a
/// multiple of 4, element by element elsewhere) and keeps it in shared memory with
/// `gpu::store4`; reads `w[t + off..][..2]` with `gpu::load2` and writes it swapped to
/// `wout[2 t..]` with `gpu::store2`; after a barrier reads its neighbour's four from shared
/// memory with `gpu::load4` and writes sums to `out[4 t..][..4]` with `gpu::store4`.
#[kernel]
pub fn vector_lanes(off: usize, x: &[f32], w: &[f64], out: &mut [f32], wout: &mut [f64]) {
    let t = gpu::thread_idx().x as usize;
    let n = gpu::block_dim().x as usize;
    let s = gpu::shared::<f32, 512>();
    let (a, b, c, d) = gpu::load4(x, t + off);
    gpu::store4(s, 4 * t, a, b, c, d);
    let (p, q) = gpu::load2(w, t + off);
    gpu::store2(wout, 2 * t, q, p);
    gpu::sync_threads();
    let (e, f, g, h) = gpu::load4(s, 4 * ((t + 1) % n));
    gpu::store4(out, 4 * t, d + e, c + f, b + g, a + h);
}

/// A vector access past the end: thread 0 loads `x[i..][..4]` and stores it reversed to
/// `out[i..][..4]`; either fails with the message of that slice in Rust.
#[kernel]
pub fn vector_window(i: usize, x: &[u32], out: &mut [u32]) {
    if gpu::grid1() == 0 {
        let (a, b, c, d) = gpu::load4(x, i);
        gpu::store4(out, i, d, c, b, a);
    }
}

/// `clamp` with bounds out of order in thread 3 only (the others clamp into `0..=9`): the
/// fault's message names the bounds as Rust's panic does (`min > max. min = 9, max = 2`),
/// on the GPU as in the simulator. `which` picks the type: `i8`, `u64`, `isize`, `f32`,
/// `f64`.
#[kernel]
pub fn clamp_bounds(which: u32, lo: f64, hi: f64, out: &mut [f64]) {
    let i = gpu::grid1();
    if i < out.len() {
        let (lo, hi) = if i == 3 { (lo, hi) } else { (0.0, 9.0) };
        let v = i as f64;
        out[i] = match which {
            0 => (v as i8).clamp(lo as i8, hi as i8) as f64,
            1 => (v as u64).clamp(lo as u64, hi as u64) as f64,
            2 => (v as isize).clamp(lo as isize, hi as isize) as f64,
            3 => (v as f32).clamp(lo as f32, hi as f32) as f64,
            _ => v.clamp(lo, hi),
        };
    }
}

// ---- The length and shape of every kind of array ------------------------------------

/// Numba's `test_issue_1051_shared_size_broken_2d`: a 2-D shared array's `len()` is every
/// element (6), then its shape.
#[kernel]
pub fn len_shared_2d(out: &mut [usize]) {
    let s = gpu::shared_2d::<i32, 2, 3>();
    let (r, c) = s.shape();
    out[0] = s.len();
    out[1] = r;
    out[2] = c;
    out[3] = s.rows();
    out[4] = s.cols();
}

#[kernel]
pub fn len_shared_3d(out: &mut [usize]) {
    let s = gpu::shared_3d::<u8, 2, 3, 4>();
    let (a, b, c) = s.shape();
    out[0] = s.len();
    out[1] = a;
    out[2] = b;
    out[3] = c;
}

#[kernel]
pub fn len_shared(out: &mut [usize]) {
    let s = gpu::shared::<f64, 5>();
    out[0] = s.len();
    out[1] = s.is_empty() as usize;
}

/// The dynamic shared memory, as `f32` and as `f64` (`bytes / size`).
#[kernel]
pub fn len_dynamic_shared(out: &mut [usize]) {
    let f = gpu::dynamic_shared::<f32>();
    let d = gpu::dynamic_shared::<f64>();
    out[0] = f.len();
    out[1] = d.len();
}

/// Views of a shared array and of a view: `end - start` elements each.
#[kernel]
pub fn len_view(out: &mut [usize], start: usize, end: usize) {
    let s = gpu::shared::<u16, 40>();
    let v = s.slice(start, end);
    let w = v.slice(1, v.len() - 1);
    out[0] = v.len();
    out[1] = w.len();
    out[2] = w.is_empty() as usize;
}

/// A local array, a read-only and a written slice.
#[kernel]
pub fn len_local_and_slices(x: &[u8], out: &mut [usize]) {
    let a = [0i64; 7];
    out[0] = a.len();
    out[1] = x.len();
    out[2] = out.len();
    out[3] = x.is_empty() as usize;
}

// ---- Shared memory: 3-D arrays, views, arrays in nested and device functions -----------

/// Each block of 4×8×8 threads writes its values into a 3-D shared array and reads them
/// back mirrored along all three axes.
#[kernel]
pub fn mirror_3d(x: &[i64], out: &mut [i64]) {
    let s = gpu::shared_3d::<i64, 4, 8, 8>();
    let t = gpu::thread_idx();
    let (i, j, k) = (t.z as usize, t.y as usize, t.x as usize);
    let g = gpu::block_idx().x as usize * 256 + (i * 8 + j) * 8 + k;
    s[(i, j, k)] = x[g];
    gpu::sync_threads();
    out[g] = s[(3 - i, 7 - j, 7 - k)];
}

/// Each block stages its 64 values in shared memory, then thread t adds the t-th value of
/// the view `start..end` (and of the same view of the dynamic shared memory); past the view,
/// -1. A bad range faults as `&s[start..end]` panics.
#[kernel]
pub fn view_window(x: &[f32], out: &mut [f32], start: usize, end: usize) {
    let s = gpu::shared::<f32, 64>();
    let d = gpu::dynamic_shared::<f32>();
    let t = gpu::thread_idx().x as usize;
    let i = gpu::grid1();
    s[t] = x[i];
    d[t] = 2.0 * x[i];
    gpu::sync_threads();
    let v = s.slice(start, end);
    let w = d.slice(start, end);
    out[i] = if t < v.len() { v[t] + w[t] } else { -1.0 };
}

/// A shared array declared in a function nested in the kernel: the block's running count
/// of nonzero inputs.
#[kernel]
pub fn nested_shared(x: &[u32], out: &mut [u32]) {
    fn count(v: u32) -> u32 {
        let c = gpu::shared::<u32, 1>();
        if gpu::thread_idx().x == 0 {
            c[0] = 0;
        }
        gpu::sync_threads();
        if v != 0 {
            gpu::atomic::add(c, 0, 1u32);
        }
        gpu::sync_threads();
        c[0]
    }
    let i = gpu::grid1();
    out[i] = count(x[i]);
}

/// A device function with a shared array: the block's largest input.
#[device]
pub fn block_max(v: i32) -> i32 {
    let m = gpu::shared::<i32, 1>();
    if gpu::thread_idx().x == 0 {
        m[0] = i32::MIN;
    }
    gpu::sync_threads();
    gpu::atomic::max(m, 0, v);
    gpu::sync_threads();
    m[0]
}

#[kernel]
pub fn device_shared(x: &[i32], out: &mut [i32]) {
    let i = gpu::grid1();
    out[i] = block_max(x[i]);
}

// ---- Numba's atomics: NaN rules, counters ---------------------------------------------

/// Thread i applies `min`, `max`, `nanmin`, `nanmax` (by `i % 4`) to `mem[i]` with `v[i]`,
/// and keeps the old value; one thread per element (see `reference::nan_rules`).
#[kernel]
pub fn nan_rules(v: &[f32], mem: &mut [f32], old: &mut [f32]) {
    let i = gpu::grid1();
    if i < v.len() {
        old[i] = match i % 4 {
            0 => gpu::atomic::min(mem, i, v[i]),
            1 => gpu::atomic::max(mem, i, v[i]),
            2 => gpu::atomic::nanmin(mem, i, v[i]),
            _ => gpu::atomic::nanmax(mem, i, v[i]),
        };
    }
}

/// Numba's bulk `nanmax`/`nanmin` tests: every thread into one element (`ext[0]` the
/// largest, `ext[1]` the smallest), a global and a shared one, with NaNs among the values.
#[kernel]
pub fn nan_extremes(v: &[f64], ext: &mut [f64]) {
    let s = gpu::shared::<f64, 2>();
    let t = gpu::thread_idx().x as usize;
    if t == 0 {
        s[0] = f64::NEG_INFINITY;
        s[1] = f64::INFINITY;
    }
    gpu::sync_threads();
    let mut i = gpu::grid1();
    while i < v.len() {
        gpu::atomic::nanmax(ext, 0, v[i]);
        gpu::atomic::nanmin(ext, 1, v[i]);
        gpu::atomic::nanmax(s, 0, v[i]);
        gpu::atomic::nanmin(s, 1, v[i]);
        i += gpu::gridsize1();
    }
    gpu::sync_threads();
    if t == 0 {
        gpu::atomic::nanmax(ext, 2, s[0]);
        gpu::atomic::nanmin(ext, 3, s[1]);
    }
}

/// Numba's `atomic.inc`/`dec` tests: thread i counts `mem[i]` up (even i) or down (odd i)
/// against `c[i]`, keeping the old value; the last two threads count `counters` (u64) up
/// and down against 9 as many times as `rounds` says.
#[kernel]
pub fn counters(c: &[u32], mem: &mut [u32], old: &mut [u32], counters: &mut [u64], rounds: usize) {
    let i = gpu::grid1();
    if i < c.len() {
        old[i] = if i % 2 == 0 { gpu::atomic::inc(mem, i, c[i]) } else { gpu::atomic::dec(mem, i, c[i]) };
    }
    for _ in 0..rounds {
        gpu::atomic::inc(counters, 0, 9u64);
        gpu::atomic::dec(counters, 1, 9u64);
    }
}
