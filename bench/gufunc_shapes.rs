//! Kernel shapes for a `#[guvectorize]` function over many short cores, timed on one GPU:
//! a dot product per row of (1 000 000, 64) f32 device arrays, the work
//! `bench/gufunc_compare.py` gives Numba and CuPy. Each shape is an explicit kernel:
//!
//! - `checked`: one thread per row, each element read with a bounds check (a branch to
//!   the fault path per load);
//! - `first_generated`: the first generated kernel's shape (each index checked against
//!   its view's core and against the data);
//! - `unchecked`: one thread per row, reads unchecked behind a check on entry that
//!   returns; `unchecked_steps` the same with a stride per input (the generated kernel's
//!   shape now); `unchecked_entry` with a check on entry that faults instead;
//! - `staged`: a block of rows copied by the whole block into shared memory first (loads
//!   of consecutive addresses by consecutive threads), then one thread per row reading
//!   its row there (rows padded by one element against bank conflicts);
//! - `warp`: a warp per row, lanes taking every 32nd element and adding with shuffles (a
//!   reduction's shape, not a general function's: the reference for the memory system).
//!
//! Then the `#[guvectorize]` call itself. `cargo run --release --bin gufunc_shapes` (needs
//! a GPU); prints the best of 20 per shape.
//!
//! On an H200 (2026-12-02): checked 2.57 ms, first_generated 1.50, unchecked 0.56,
//! unchecked_steps 0.53, unchecked_entry 0.96, staged 1.24, warp 0.19; the gufunc 1.07
//! (Numba's `@guvectorize` 1.0-1.2 ms, CuPy's `(a * b).sum(axis=1)` 0.44 ms on the same
//! data). A fault path anywhere in the loop costs more than the loads it guards.
//!
//! Then few long cores, (16 000, 4096): `unchecked` in blocks of 256 down to 32 threads,
//! and a block per row (`row_staged`, `row_async`), against the gufunc, each shape's sums
//! checked bit for bit against the gufunc's. On an H100 (2026-12-07): `unchecked` 1.09 ms
//! in blocks of 256 (63 blocks), 0.60 in blocks of 32-128; `row_staged` 0.88; `row_async`
//! 0.34-0.48 (best at 128 threads); the gufunc 0.60 (blocks of 64).

use gpu_runtime::{DeviceArray, DeviceVec, LaunchConfig, gpu, guvectorize, kernel};

const ROWS: usize = 1_000_000;
const N: usize = 64;
/// Rows a block stages at once in the `staged` shape.
const TILE: usize = 128;

#[kernel]
fn checked(a: &[f32], b: &[f32], n: usize, out: &mut [f32]) {
    let mut t = gpu::grid1();
    while t < out.len() {
        let mut s = 0.0f32;
        for i in 0..n {
            s += a[t * n + i] * b[t * n + i];
        }
        out[t] = s;
        t += gpu::gridsize1();
    }
}

#[kernel]
fn unchecked(a: &[f32], b: &[f32], n: usize, out: &mut [f32]) {
    if out.len() * n > a.len() || out.len() * n > b.len() {
        return;
    }
    let mut t = gpu::grid1();
    while t < out.len() {
        let mut s = 0.0f32;
        for i in 0..n {
            // SAFETY: `t * n + i < out.len() * n`, at most the length of `a` and `b`
            // (checked above).
            let (x, y) = unsafe { (*a.get_unchecked(t * n + i), *b.get_unchecked(t * n + i)) };
            s += x * y;
        }
        out[t] = s;
        t += gpu::gridsize1();
    }
}

/// `unchecked` with a stride of its own for each input.
#[kernel]
fn unchecked_steps(loops: usize, a: &[f32], n: usize, a_step: usize, b: &[f32], b_step: usize, ret: &mut [f32]) {
    if loops > ret.len() || loops * a_step > a.len() || loops * b_step > b.len() || n > a_step || n > b_step {
        return;
    }
    let mut t = gpu::grid1();
    while t < loops {
        let mut s = 0.0f32;
        for i in 0..n {
            // SAFETY: checked above.
            let (x, y) = unsafe { (*a.get_unchecked(t * a_step + i), *b.get_unchecked(t * b_step + i)) };
            s += x * y;
        }
        ret[t] = s;
        t += gpu::gridsize1();
    }
}

/// `unchecked` with the generated kernel's entry checks (a fault, not a return).
#[kernel]
fn unchecked_entry(a: &[f32], b: &[f32], n: usize, out: &mut [f32]) {
    if out.len() * n > 0 {
        gpu::check_index(out.len() * n - 1, a.len());
        gpu::check_index(out.len() * n - 1, b.len());
    }
    let mut t = gpu::grid1();
    while t < out.len() {
        let mut s = 0.0f32;
        for i in 0..n {
            // SAFETY: checked above.
            let (x, y) = unsafe { (*a.get_unchecked(t * n + i), *b.get_unchecked(t * n + i)) };
            s += x * y;
        }
        out[t] = s;
        t += gpu::gridsize1();
    }
}

/// The first generated kernel: each index checked against its view's own core size and
/// against the data.
#[kernel]
fn first_generated(
    loops: usize,
    a: &[f32],
    a_n: usize,
    a_step: usize,
    b: &[f32],
    b_n: usize,
    b_step: usize,
    ret: &mut [f32],
) {
    let mut t = gpu::grid1();
    while t < loops {
        let (a_base, b_base) = (t * a_step, t * b_step);
        let mut s = 0.0f32;
        for i in 0..a_n {
            s += a[a_base + gpu::check_index(i, a_n)] * b[b_base + gpu::check_index(i, b_n)];
        }
        ret[t] = s;
        t += gpu::gridsize1();
    }
}

#[kernel]
fn staged(a: &[f32], b: &[f32], n: usize, out: &mut [f32]) {
    let sh = gpu::dynamic_shared::<f32>();
    let tid = gpu::thread_idx().x as usize;
    let threads = gpu::block_dim().x as usize;
    let pitch = n + 1;
    let mut first = gpu::block_idx().x as usize * TILE;
    while first < out.len() {
        let rows = if out.len() - first < TILE { out.len() - first } else { TILE };
        let mut k = tid;
        while k < rows * n {
            let (r, i) = (k / n, k % n);
            sh[r * pitch + i] = a[first * n + k];
            sh[(TILE + r) * pitch + i] = b[first * n + k];
            k += threads;
        }
        gpu::sync_threads();
        if tid < rows {
            let mut s = 0.0f32;
            for i in 0..n {
                s += sh[tid * pitch + i] * sh[(TILE + tid) * pitch + i];
            }
            out[first + tid] = s;
        }
        gpu::sync_threads();
        first += gpu::grid_dim().x as usize * TILE;
    }
}

#[kernel]
fn warp(a: &[f32], b: &[f32], n: usize, out: &mut [f32]) {
    let lane = gpu::lane_id() as usize;
    let mut row = gpu::grid1() / 32;
    let warps = gpu::gridsize1() / 32;
    while row < out.len() {
        let mut s = 0.0f32;
        let mut i = lane;
        while i < n {
            s += a[row * n + i] * b[row * n + i];
            i += 32;
        }
        let mut d = 16u32;
        while d > 0 {
            s += gpu::shfl_down_sync(0xffff_ffff, s, d);
            d /= 2;
        }
        if lane == 0 {
            out[row] = s;
        }
        row += warps;
    }
}

/// Elements of each input a block stages at once for a long core: four a thread.
const CHUNK: usize = 1024;

/// Few long cores, a block per row: the block's threads copy the row's next `CHUNK`
/// elements of `a` and `b` into shared memory (consecutive threads, consecutive
/// addresses), then thread 0 adds them in order, as one thread of the generated kernel
/// does, so the sums are the same bits.
#[kernel]
fn row_staged(a: &[f32], b: &[f32], n: usize, out: &mut [f32]) {
    let sa = gpu::shared::<f32, 1024>();
    let sb = gpu::shared::<f32, 1024>();
    let tid = gpu::thread_idx().x as usize;
    let threads = gpu::block_dim().x as usize;
    let mut row = gpu::block_idx().x as usize;
    while row < out.len() {
        let mut s = 0.0f32;
        let mut k0 = 0;
        while k0 < n {
            let len = (n - k0).min(CHUNK);
            let mut k = tid;
            while k < len {
                sa[k] = a[row * n + k0 + k];
                sb[k] = b[row * n + k0 + k];
                k += threads;
            }
            gpu::sync_threads();
            if tid == 0 {
                for i in 0..len {
                    s += sa[i] * sb[i];
                }
            }
            gpu::sync_threads();
            k0 += CHUNK;
        }
        if tid == 0 {
            out[row] = s;
        }
        row += gpu::grid_dim().x as usize;
    }
}

/// `row_staged` with the chunks copied asynchronously into two buffers
/// (`gpu::copy_async4`): the next chunk arrives while thread 0 adds this one. For `n` a
/// multiple of `CHUNK`, each row 16-byte aligned.
#[kernel(arch = "sm_80")]
fn row_async(a: &[f32], b: &[f32], n: usize, out: &mut [f32]) {
    let sa = gpu::shared::<f32, 2048>();
    let sb = gpu::shared::<f32, 2048>();
    let tid = gpu::thread_idx().x as usize;
    let threads = gpu::block_dim().x as usize;
    let mut row = gpu::block_idx().x as usize;
    let chunks = n / CHUNK;
    while row < out.len() {
        let mut s = 0.0f32;
        // Round `c` copies chunk `c` into buffer `c % 2`, then adds chunk `c - 1`.
        for c in 0..chunks + 1 {
            // Four elements a copy, however many threads the block has.
            let mut q = tid;
            while c < chunks && q < CHUNK / 4 {
                let (d, g) = (c % 2 * CHUNK + q * 4, row * n + c * CHUNK + q * 4);
                gpu::copy_async4(sa, d, a, g);
                gpu::copy_async4(sb, d, b, g);
                q += threads;
            }
            gpu::copy_async_commit();
            if c > 0 {
                gpu::copy_async_wait(1);
                gpu::sync_threads();
                if tid == 0 {
                    let q = (c - 1) % 2 * CHUNK;
                    for i in 0..CHUNK {
                        s += sa[q + i] * sb[q + i];
                    }
                }
                gpu::sync_threads();
            }
        }
        if tid == 0 {
            out[row] = s;
        }
        row += gpu::grid_dim().x as usize;
    }
}

/// The generated kernel's shape, through the whole `#[guvectorize]` call.
#[guvectorize("(n),(n)->()")]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i] * b[i];
    }
    s
}

fn best_ms(mut f: impl FnMut() -> gpu_runtime::Result<()>) -> gpu_runtime::Result<f64> {
    f()?;
    let mut best = f64::INFINITY;
    for _ in 0..20 {
        let t = std::time::Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(best)
}

fn main() -> gpu_runtime::Result<()> {
    let ha: Vec<f32> = (0..ROWS * N).map(|k| ((k / N + k % N) % 13) as f32).collect();
    let hb: Vec<f32> = (0..ROWS * N).map(|k| (((k / N) * 3 + k % N) % 7) as f32).collect();
    let (a, b) = (DeviceVec::from_slice(&ha)?, DeviceVec::from_slice(&hb)?);
    let mut out = DeviceVec::<f32>::zeros(ROWS)?;
    let want: f32 = (0..N).map(|i| ha[7 * N + i] * hb[7 * N + i]).sum();
    let rows_grid = (ROWS.div_ceil(256).min(65_535) as u32, 256u32);
    let shapes: [(&str, LaunchConfig); 7] = [
        ("unchecked_steps", LaunchConfig::new(rows_grid.0, rows_grid.1)),
        ("unchecked_entry", LaunchConfig::new(rows_grid.0, rows_grid.1)),
        ("first_generated", LaunchConfig::new(rows_grid.0, rows_grid.1)),
        ("checked", LaunchConfig::new(rows_grid.0, rows_grid.1)),
        ("unchecked", LaunchConfig::new(rows_grid.0, rows_grid.1)),
        ("staged", LaunchConfig::new(4096u32, 128u32).shared_bytes(2 * TILE * (N + 1) * 4)),
        ("warp", LaunchConfig::new(8192u32, 256u32)),
    ];
    for (name, config) in shapes {
        out.copy_from(&vec![0.0; ROWS])?;
        let ms = best_ms(|| match name {
            "checked" => checked::launch_with(&config, &a, &b, N, &mut out)?.wait(),
            "unchecked" => unchecked::launch_with(&config, &a, &b, N, &mut out)?.wait(),
            "staged" => staged::launch_with(&config, &a, &b, N, &mut out)?.wait(),
            "unchecked_steps" => unchecked_steps::launch_with(&config, ROWS, &a, N, N, &b, N, &mut out)?.wait(),
            "unchecked_entry" => unchecked_entry::launch_with(&config, &a, &b, N, &mut out)?.wait(),
            "first_generated" => first_generated::launch_with(&config, ROWS, &a, N, N, &b, N, N, &mut out)?.wait(),
            _ => warp::launch_with(&config, &a, &b, N, &mut out)?.wait(),
        })?;
        let got = out.to_vec()?;
        assert_eq!(got[7], want, "{name}");
        assert_eq!(got[ROWS - 1], (0..N).map(|i| ha[(ROWS - 1) * N + i] * hb[(ROWS - 1) * N + i]).sum::<f32>());
        println!("{name:>10}: {ms:.3} ms");
    }
    let (da, db) = (DeviceArray::from_vec(a, &[ROWS, N])?, DeviceArray::from_vec(b, &[ROWS, N])?);
    let mut r = dot::device(&da, &db)?;
    let ms = best_ms(|| {
        r = dot::device(&da, &db)?;
        Ok(())
    })?;
    assert_eq!(r.to_array()?[[7]], want);
    println!("{:>10}: {ms:.3} ms", "gufunc");
    let ms = best_ms(|| DeviceVec::<f32>::zeros(ROWS).map(drop))?;
    println!("{:>10}: {ms:.3} ms (the output's zeros alone)", "zeros");
    let few = DeviceArray::from_array(&gpu_runtime::ndarray::Array2::<f32>::ones((100, N)))?;
    let ms = best_ms(|| dot::device(&few, &few).map(drop))?;
    println!("{:>10}: {ms:.3} ms (100 rows: the call's fixed cost)", "gufunc");
    long_cores()
}

/// Few long cores, (16 000, 4096): the gufunc (a thread per row) against a block per row,
/// each shape's sums compared bit for bit with the gufunc's.
fn long_cores() -> gpu_runtime::Result<()> {
    const ROWS: usize = 16_000;
    const N: usize = 4096;
    println!("few long cores, ({ROWS}, {N}):");
    let ha: Vec<f32> = (0..ROWS * N).map(|k| ((k % 1013) as f32 - 506.0) / 64.0).collect();
    let hb: Vec<f32> = (0..ROWS * N).map(|k| ((k % 997) as f32 - 498.0) / 32.0).collect();
    let (a, b) = (DeviceVec::from_slice(&ha)?, DeviceVec::from_slice(&hb)?);
    let mut out = DeviceVec::<f32>::zeros(ROWS)?;
    // (shape, threads a block): a thread per row in blocks of 256 leaves most
    // multiprocessors idle (63 blocks for 132 of them); smaller blocks spread the rows.
    let shapes = [
        ("unchecked", 256u32),
        ("unchecked", 128),
        ("unchecked", 64),
        ("unchecked", 32),
        ("row_staged", 256),
        ("row_async", 256),
        ("row_async", 128),
        ("row_async", 64),
    ];
    let mut sums = Vec::new();
    for (name, threads) in shapes {
        let config = match name {
            "unchecked" => LaunchConfig::new(ROWS.div_ceil(threads as usize) as u32, threads),
            _ => LaunchConfig::new(ROWS as u32, threads),
        };
        out.copy_from(&vec![0.0; ROWS])?;
        let ms = best_ms(|| match name {
            "unchecked" => unchecked::launch_with(&config, &a, &b, N, &mut out)?.wait(),
            "row_staged" => row_staged::launch_with(&config, &a, &b, N, &mut out)?.wait(),
            _ => row_async::launch_with(&config, &a, &b, N, &mut out)?.wait(),
        })?;
        let label = format!("{name}/{threads}");
        println!("{label:>14}: {ms:.3} ms");
        sums.push((label, out.to_vec()?));
    }
    let (da, db) = (DeviceArray::from_vec(a, &[ROWS, N])?, DeviceArray::from_vec(b, &[ROWS, N])?);
    let mut r = dot::device(&da, &db)?;
    let ms = best_ms(|| {
        r = dot::device(&da, &db)?;
        Ok(())
    })?;
    println!("{:>14}: {ms:.3} ms (the generated kernel, a thread per row)", "gufunc");
    let want = r.to_array()?.into_raw_vec_and_offset().0;
    for (name, got) in sums {
        let differ = got.iter().zip(&want).filter(|(g, w)| g.to_bits() != w.to_bits()).count();
        assert_eq!(differ, 0, "{name}: {differ} sums differ from the gufunc's");
    }
    println!("every shape's sums are the gufunc's, bit for bit");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block-per-row shapes in the simulator: the in-order sums of each row, bit for bit.
    #[test]
    fn the_long_core_shapes_add_in_order() {
        let (rows, n) = (3, 2 * CHUNK);
        let a: Vec<f32> = (0..rows * n).map(|k| ((k % 101) as f32 - 50.0) / 7.0).collect();
        let b: Vec<f32> = (0..rows * n).map(|k| ((k % 89) as f32 - 44.0) / 3.0).collect();
        let want: Vec<f32> = (0..rows)
            .map(|r| {
                let mut s = 0.0f32;
                for i in 0..n {
                    s += a[r * n + i] * b[r * n + i];
                }
                s
            })
            .collect();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        // Fewer threads than a chunk has copies of four, and more.
        for threads in [64u32, 256, 384] {
            let mut out = vec![f32::NAN; rows];
            row_staged::simulate(2u32, threads, &a, &b, n, &mut out).unwrap();
            assert_eq!(bits(&out), bits(&want), "row_staged, {threads} threads");
            let mut out = vec![f32::NAN; rows];
            row_async::simulate(2u32, threads, &a, &b, n, &mut out).unwrap();
            assert_eq!(bits(&out), bits(&want), "row_async, {threads} threads");
        }
    }
}
