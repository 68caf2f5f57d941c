//! Kernel shapes for a `#[guvectorize]` function over many short cores, timed on one GPU:
//! a dot product per row of (1 000 000, 64) f32 device arrays, the work
//! `bench/gufunc_compare.py` gives Numba and CuPy. Each shape is an explicit kernel:
//!
//! - `checked`: one thread per row, each element read with a bounds check (a branch to
//!   the fault path per load);
//! - `unchecked`: one thread per row, reads unchecked (the generated kernel's shape);
//! - `staged`: a block of rows copied by the whole block into shared memory first (loads
//!   of consecutive addresses by consecutive threads), then one thread per row reading
//!   its row there (rows padded by one element against bank conflicts);
//! - `warp`: a warp per row, lanes taking every 32nd element and adding with shuffles (a
//!   reduction's shape, not a general function's: the reference for the memory system).
//!
//! `cargo run --release --bin gufunc_shapes` (needs a GPU); prints the best of 20 per shape.

use gpu_runtime::{DeviceVec, LaunchConfig, gpu, kernel};

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
    let shapes: [(&str, LaunchConfig); 4] = [
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
            _ => warp::launch_with(&config, &a, &b, N, &mut out)?.wait(),
        })?;
        let got = out.to_vec()?;
        assert_eq!(got[7], want, "{name}");
        assert_eq!(got[ROWS - 1], (0..N).map(|i| ha[(ROWS - 1) * N + i] * hb[(ROWS - 1) * N + i]).sum::<f32>());
        println!("{name:>10}: {ms:.3} ms");
    }
    Ok(())
}
