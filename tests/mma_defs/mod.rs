//! Tensor-core kernels (`gpu::mma`) shared by the simulator tests (`tests/mma.rs`, in CI)
//! and the GPU tests (`tests/gpu_mma.rs`), with the CPU model they are checked against.
#![allow(dead_code)]

use gpu_runtime::{bf16, f16};
use gpu_runtime::{gpu, kernel};

// The tensor-core matmul example's kernels, from its own source.
#[path = "../../examples/matmul_tc.rs"]
pub mod matmul_tc;

/// One tile kernel per input type `$t` (`$k`: the depth of a product, 16 or 8; `$sa`, `$sb`:
/// the shared tiles' sizes): one tile a block (one warp), `d[t] = a[t] · b[t] + c[t]` for
/// the `t`-th 16 × `$k` tile of `a` (rows `lda` apart, tiles `16 * lda` apart), `$k` × 8 tile
/// of `b` (rows `ldb` apart) and 16 × 8 tile of `c` and `d` (rows 8 apart), read from global
/// memory, or first copied into shared memory (rows as far apart there) when `shared`.
macro_rules! tiles {
    ($name:ident, $t:ident, $k:tt, $sa:tt, $sb:tt) => {
        #[kernel(arch = "sm_80")]
        pub fn $name(a: &[$t], b: &[$t], c: &[f32], d: &mut [f32], lda: usize, ldb: usize, shared: bool) {
            let t = gpu::block_idx().x as usize;
            let lane = gpu::thread_idx().x as usize;
            let (a0, b0, c0) = (t * 16 * lda, t * $k * ldb, t * 128);
            let acc = gpu::mma::load_acc(c, c0, 8);
            let acc = if shared {
                let sa = gpu::shared::<$t, $sa>();
                let sb = gpu::shared::<$t, $sb>();
                let mut i = lane;
                while i < 16 * lda {
                    sa[i] = a[a0 + i];
                    i += 32;
                }
                let mut i = lane;
                while i < $k * ldb {
                    sb[i] = b[b0 + i];
                    i += 32;
                }
                gpu::sync_threads();
                gpu::mma::mma(gpu::mma::load_a(sa, 0, lda), gpu::mma::load_b(sb, 0, ldb), acc)
            } else {
                gpu::mma::mma(gpu::mma::load_a(a, a0, lda), gpu::mma::load_b(b, b0, ldb), acc)
            };
            gpu::mma::store(d, c0, 8, acc);
        }
    };
}

tiles!(tiles_f16, f16, 16, 1024, 512);
tiles!(tiles_bf16, bf16, 16, 1024, 512);
tiles!(tiles_tf32, f32, 8, 512, 256);

/// Lanes that may name different tiles, a fault: the odd lanes' tiles of `a` and `b`
/// start `shift` elements further in and have rows `extra` further apart, the odd lanes
/// read `a` through a view `odd_end` elements shorter, and store `d` `store_shift` further
/// in. With all four 0 the warp agrees: `d[..128]` is the product of the 16 × 16 tile at
/// `a[0]` and the 16 × 8 tile at `b[0]`, rows 16 apart in both.
#[kernel(arch = "sm_80")]
pub fn lane_tiles(a: &[f16], b: &[f16], d: &mut [f32], shift: usize, extra: usize, odd_end: usize, store_shift: usize) {
    let sa = gpu::shared::<f16, 2048>();
    let sb = gpu::shared::<f16, 2048>();
    let lane = gpu::thread_idx().x as usize;
    let mut i = lane;
    while i < 2048 {
        sa[i] = a[i];
        sb[i] = b[i];
        i += 32;
    }
    gpu::sync_threads();
    let odd = lane % 2;
    let (base, ld) = (odd * shift, 16 + odd * extra);
    let va = sa.slice(0, 2048 - odd * odd_end);
    let acc = gpu::mma::mma(gpu::mma::load_a(va, base, ld), gpu::mma::load_b(sb, base, ld), gpu::mma::zeros());
    gpu::mma::store(d, odd * store_shift, 8, acc);
}

/// Three tiles of `a` copied to shared memory, each 256 elements past the one before, the
/// third `shift` further in on the odd lanes. The compiler checks that the lanes agree on
/// the first start, knows they agree on the second (the first plus 256) and checks the
/// third, which depends on the lane too. With `shift` 0, `d[..128]` is the sum of the
/// three tiles' products with the 16 × 8 tile at `b[0]` (rows 8 apart).
#[kernel(arch = "sm_80")]
pub fn later_tile_differs(a: &[f16], b: &[f16], d: &mut [f32], shift: usize) {
    let sa = gpu::shared::<f16, 2048>();
    let lane = gpu::thread_idx().x as usize;
    let mut i = lane;
    while i < 2048 {
        sa[i] = a[i];
        i += 32;
    }
    gpu::sync_threads();
    // 0 in a block of one warp, which the compiler cannot know.
    let first = lane / 32 * 512;
    let fb = gpu::mma::load_b(b, 0, 8);
    let x = gpu::mma::load_a(sa, first, 16);
    let y = gpu::mma::load_a(sa, first + 256, 16);
    let z = gpu::mma::load_a(sa, first + 512 + lane % 2 * shift, 16);
    let acc = gpu::mma::mma(x, fb, gpu::mma::zeros());
    let acc = gpu::mma::mma(y, fb, acc);
    let acc = gpu::mma::mma(z, fb, acc);
    gpu::mma::store(d, 0, 8, acc);
}

/// A warp whose lanes below `split` load a tile and the others do not: a fault.
#[kernel(arch = "sm_80")]
pub fn diverged(a: &[f16], d: &mut [f32], split: u32) {
    let mut acc = gpu::mma::zeros();
    if gpu::lane_id() < split {
        let x = gpu::mma::load_a(a, 0, 16);
        acc = gpu::mma::mma(x, gpu::mma::load_b(a, 0, 8), acc);
    }
    gpu::mma::store(d, 0, 8, acc);
}

/// Every warp of the block stores its accumulator to the same tile: a race.
#[kernel(arch = "sm_80")]
pub fn same_tile(d: &mut [f32]) {
    let acc = gpu::mma::zeros();
    gpu::mma::store(d, 0, 8, acc);
}

/// The CPU model of `mma`: `d = c + a · b` with the products summed in `k` order, one
/// fused multiply-add each (the simulator's documented order). `a` is 16 × k and `b` k ×
/// 8 as `f32` values (already rounded to the input type), both row-major and packed.
pub fn model(a: &[f32], b: &[f32], c: &[f32], k: usize) -> Vec<f32> {
    let mut d = c.to_vec();
    for i in 0..16 {
        for j in 0..8 {
            for kk in 0..k {
                d[i * 8 + j] = a[i * k + kk].mul_add(b[kk * 8 + j], d[i * 8 + j]);
            }
        }
    }
    d
}

/// The `rows` × `cols` tile at `base`, rows `ld` apart, packed.
pub fn tile<T: Copy>(x: &[T], base: usize, ld: usize, rows: usize, cols: usize) -> Vec<T> {
    (0..rows).flat_map(|r| (0..cols).map(move |c| (r, c))).map(|(r, c)| x[base + r * ld + c]).collect()
}

/// Threads per block of [`staged_sums`].
pub const STAGE: usize = 128;

/// Each block sums its `STAGE * stages` elements of `x` (integers in `f32`, so the sum is
/// exact) into `out[block]`, staging them through two shared buffers with asynchronous
/// copies: the copy of stage `s + 1` runs while stage `s` is summed. `width` elements a
/// copy (1, 2 or 4), each thread copying `STAGE / width`… of every stage.
#[kernel(arch = "sm_80")]
pub fn staged_sums(x: &[f32], out: &mut [f32], stages: usize, width: usize) {
    let buf = gpu::shared::<f32, 256>();
    let t = gpu::thread_idx().x as usize;
    let base = gpu::block_idx().x as usize * STAGE * stages;
    let mut total = 0.0f32;
    // Round `r` issues the copies of stage `r` into buffer `r % 2`, then sums stage `r - 1`.
    for r in 0..stages + 1 {
        if r < stages && t * width < STAGE {
            let (d, s) = (r % 2 * STAGE + t * width, base + r * STAGE + t * width);
            if width == 4 {
                gpu::copy_async4(buf, d, x, s);
            } else if width == 2 {
                gpu::copy_async2(buf, d, x, s);
            } else {
                gpu::copy_async1(buf, d, x, s);
            }
        }
        gpu::copy_async_commit();
        if r > 0 {
            // Every group but the newest (stage `r`'s) is complete, then every thread's.
            gpu::copy_async_wait(1);
            gpu::sync_threads();
            if t == 0 {
                for i in 0..STAGE {
                    total += buf[(r - 1) % 2 * STAGE + i];
                }
            }
            // The buffer is read before the copy of the round after next writes it again.
            gpu::sync_threads();
        }
    }
    if t == 0 {
        out[gpu::block_idx().x as usize] = total;
    }
}

/// `bf16` tiles copied 8 at a time (16 bytes), waited for with `copy_async_wait_all`, then
/// copied out: `out = x`.
#[kernel(arch = "sm_80")]
pub fn copy_halves(x: &[bf16], out: &mut [bf16]) {
    let buf = gpu::shared::<bf16, 512>();
    let t = gpu::thread_idx().x as usize;
    let base = gpu::block_idx().x as usize * 512;
    gpu::copy_async8(buf, t * 8, x, base + t * 8);
    gpu::copy_async_wait_all();
    gpu::sync_threads();
    for k in 0..8 {
        out[base + t * 8 + k] = buf[t * 8 + k];
    }
}

/// Reads its own copy's destination before waiting (`wait` false), or another thread's
/// without a barrier between (`wait` true): the first is a panic in the simulator, the
/// second a data race.
#[kernel(arch = "sm_80")]
pub fn early_read(x: &[f32], out: &mut [f32], wait: bool) {
    let buf = gpu::shared::<f32, 64>();
    let t = gpu::thread_idx().x as usize;
    gpu::copy_async1(buf, t, x, t);
    gpu::copy_async_commit();
    if wait {
        gpu::copy_async_wait(0);
        out[t] = buf[(t + 1) % 64];
    } else {
        out[t] = buf[t];
        gpu::copy_async_wait(0);
    }
}

/// `out = x`, each block's `STAGE` elements through shared memory, copied `width` (1, 2
/// or 4) at a time with `gpu::copy_asyncN_unchecked` where the block's part of both
/// arrays is whole, and with the checked copies (and `out`'s checks) elsewhere.
#[kernel(arch = "sm_80")]
pub fn unchecked_copies(x: &[f32], out: &mut [f32], width: usize) {
    let buf = gpu::shared::<f32, 256>();
    let t = gpu::thread_idx().x as usize;
    let base = gpu::block_idx().x as usize * STAGE;
    let whole = base + STAGE <= x.len() && (width == 1 || width == 2 || width == 4);
    if t * width < STAGE {
        let (d, s) = (t * width, base + t * width);
        if whole {
            // SAFETY: `d + width <= STAGE` (256, the buffer's length) and
            // `s + width <= base + STAGE <= x.len()`.
            unsafe {
                if width == 4 {
                    gpu::copy_async4_unchecked(buf, d, x, s);
                } else if width == 2 {
                    gpu::copy_async2_unchecked(buf, d, x, s);
                } else {
                    gpu::copy_async1_unchecked(buf, d, x, s);
                }
            }
        } else {
            gpu::copy_async1(buf, d, x, s);
        }
    }
    gpu::copy_async_wait_all();
    gpu::sync_threads();
    out[base + t] = buf[t];
}

/// An unchecked copy past the end of `x` (thread 0 of a block of one): undefined
/// behaviour on a GPU, so only ever simulated, where it is checked as `get_unchecked` is.
#[kernel(arch = "sm_80")]
pub fn unchecked_past_the_end(x: &[f32]) {
    let buf = gpu::shared::<f32, 8>();
    // SAFETY: none; the simulator's check is what is under test.
    unsafe { gpu::copy_async4_unchecked(buf, 0, x, x.len() - 2) };
    gpu::copy_async_wait_all();
}
