//! Explicit kernels (`#[kernel]`) covering every GPU built-in, every atomic on every type
//! it supports, local/shared/dynamic arrays and a shared-memory tiled matmul.

#![allow(dead_code)]

/// `(name, source)` of every kernel of the corpus.
pub fn corpus() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = FIXED.iter().map(|(n, s)| (n.to_string(), s.to_string())).collect();
    // Every atomic on every element type it supports, on a slice and on a shared array.
    let types = ["i32", "u32", "i64", "u64", "f32", "f64"];
    for (op, args) in [
        ("add", 1),
        ("sub", 1),
        ("min", 1),
        ("max", 1),
        ("exchange", 1),
        ("compare_and_swap", 2),
        ("and", 1),
        ("or", 1),
        ("xor", 1),
    ] {
        for t in types {
            let float = t.starts_with('f');
            if float && !matches!(op, "add" | "sub" | "exchange") {
                continue;
            }
            let vals = if args == 2 { "v, v" } else { "v" };
            out.push((
                format!("atomic_{op}_{t}"),
                format!(
                    "fn atomic_{op}_{t}(a: &mut [{t}], old: &mut [{t}], v: {t}) {{
                        let i = gpu::grid1();
                        let tile = gpu::shared::<{t}, 32>();
                        let s = gpu::atomic::{op}(tile, i % 32, {vals});
                        old[i] = gpu::atomic::{op}(a, i, {vals});
                        gpu::sync_threads();
                        old[i] = s;
                    }}"
                ),
            ));
        }
    }
    // Every shuffle on every scalar type.
    for t in ["f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize", "isize", "bool"] {
        out.push((
            format!("shuffles_{t}"),
            format!(
                "fn shuffles_{t}(a: &[{t}], out: &mut [{t}]) {{
                    let i = gpu::grid1();
                    if i >= a.len() {{ return; }}
                    let v = a[i];
                    let m = gpu::active_mask();
                    out[i] = gpu::shfl_sync(m, v, 0);
                    out[i] = gpu::shfl_up_sync(m, v, 1);
                    out[i] = gpu::shfl_down_sync(m, v, 2);
                    out[i] = gpu::shfl_xor_sync(0xffffffff, v, 16);
                }}"
            ),
        ));
    }
    out
}

const FIXED: &[(&str, &str)] = &[
    (
        "check_index",
        "fn check_index(x: &[f32], n: usize, y: &mut [f32]) {
            let t = gpu::grid1();
            if t < y.len() {
                y[t] = x[t * n + gpu::check_index(t % 3, n)];
            }
        }",
    ),
    (
        "axpy",
        "fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
            let i = gpu::grid1();
            if i < y.len() {
                y[i] = a * x[i] + y[i];
            }
        }",
    ),
    (
        "indices",
        "fn indices(out: &mut [u32]) {
            let t = gpu::thread_idx();
            let b = gpu::block_idx();
            let d = gpu::block_dim();
            let g = gpu::grid_dim();
            let i = gpu::grid1();
            let (x, y) = gpu::grid2();
            let (p, q, r) = gpu::grid3();
            let n = gpu::gridsize1();
            let (nx, ny) = gpu::gridsize2();
            let (sx, sy, sz) = gpu::gridsize3();
            out[i] = t.x + t.y + t.z + b.x + b.y + b.z + d.x + d.y + d.z + g.x + g.y + g.z
                + gpu::thread_idx().x + gpu_runtime::gpu::block_idx().y + ::gpu_runtime::gpu::lane_id()
                + gpu::WARP_SIZE;
            out[i] += (x + y + p + q + r + n + nx + ny + sx + sy + sz) as u32;
        }",
    ),
    (
        "barriers",
        "fn barriers(flags: &[bool], out: &mut [u32], ok: &mut [bool]) {
            let i = gpu::grid1();
            let f = flags[i];
            gpu::sync_threads();
            let c = gpu::sync_threads_count(f);
            let all = gpu::sync_threads_and(f);
            let any = gpu::sync_threads_or(f);
            gpu::thread_fence();
            gpu::thread_fence_block();
            gpu::thread_fence_system();
            let m = gpu::active_mask();
            let b = gpu::ballot_sync(m, f);
            let wall = gpu::all_sync(m, f);
            let wany = gpu::any_sync(0xffffffff, f);
            out[i] = c + b + gpu::lane_id();
            ok[i] = all && !any || wall != wany;
        }",
    ),
    (
        "local_arrays",
        "fn local_arrays(x: &[f64], out: &mut [f64], k: usize) {
            const N: usize = 8;
            let mut acc = [0.0f64; N];
            let w: [f64; 3] = [1.0, 2.0, 3.0];
            let mut big = [0i32; 100];
            for j in 0..acc.len() {
                acc[j] = x[j] * w[j % w.len()];
                acc[j] += 1.0;
                big[j * 7] += j as i32;
            }
            let mut s = 0.0;
            for j in 0..N {
                s += acc[j];
            }
            out[k] = s + big[k] as f64;
        }",
    ),
    (
        "unchecked",
        "fn unchecked(x: &[f32], out: &mut [f32]) {
            let i = gpu::grid1();
            if i < x.len() && i < out.len() {
                let v = unsafe { *x.get_unchecked(i) };
                let w = unsafe { x.get_unchecked(i) };
                out[i] = v * w;
                unsafe { *out.get_unchecked_mut(i) += 1.0; }
                let s = gpu::shared::<f32, 32>();
                unsafe { *s.get_unchecked_mut(i % 32) = v; }
                gpu::sync_threads();
                unsafe { *out.get_unchecked_mut(i) -= *s.get_unchecked((i + 1) % 32); }
            }
        }",
    ),
    (
        "dynamic",
        "fn dynamic(x: &[f32], out: &mut [f32]) {
            let buf = gpu::dynamic_shared::<f32>();
            let t = gpu::thread_idx().x as usize;
            let i = gpu::grid1();
            if t < buf.len() {
                buf[t] = x[i];
            }
            gpu::sync_threads();
            out[i] = buf[buf.len() - 1 - t];
        }",
    ),
    (
        "reduce_shared",
        "fn reduce_shared(x: &[f32], partial: &mut [f32], total: &mut [f32]) {
            const TPB: usize = 256;
            let cache = gpu::shared::<f32, TPB>();
            let flags = gpu::shared::<bool, 256>();
            let t = gpu::thread_idx().x as usize;
            let i = gpu::grid1();
            cache[t] = if i < x.len() { x[i] } else { 0.0 };
            flags[t] = i < x.len();
            gpu::sync_threads();
            let mut s = TPB / 2;
            while s > 0 {
                if t < s {
                    cache[t] += cache[t + s];
                }
                gpu::sync_threads();
                s /= 2;
            }
            if t == 0 {
                partial[gpu::block_idx().x as usize] = cache[0];
                gpu::atomic::add(total, 0, cache[0]);
            }
            let mut v = cache[t];
            let mut off = 16u32;
            while off > 0 {
                v += gpu::shfl_down_sync(0xffffffff, v, off);
                off /= 2;
            }
            if flags[t] && gpu::lane_id() == 0 {
                gpu::atomic::add(total, 0, v);
            }
        }",
    ),
    (
        "fast_matmul",
        "fn fast_matmul(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
            const TPB: usize = 16;
            let sa = gpu::shared_2d::<f32, TPB, TPB>();
            let sb = gpu::shared_2d::<f32, TPB, TPB>();
            let (x, y) = gpu::grid2();
            let tx = gpu::thread_idx().x as usize;
            let ty = gpu::thread_idx().y as usize;
            let bpg = gpu::grid_dim().x as usize;
            let mut tmp = 0.0f32;
            for i in 0..bpg {
                sa[(ty, tx)] = 0.0;
                sb[(ty, tx)] = 0.0;
                if y < n && tx + i * TPB < n {
                    sa[(ty, tx)] = a[y * n + tx + i * TPB];
                }
                if x < n && ty + i * TPB < n {
                    sb[(ty, tx)] = b[(ty + i * TPB) * n + x];
                }
                gpu::sync_threads();
                for j in 0..TPB {
                    tmp += sa[(ty, j)] * sb[(j, tx)];
                }
                gpu::sync_threads();
            }
            if y < n && x < n {
                c[y * n + x] = tmp;
            }
        }",
    ),
    (
        "helpers_and_faults",
        "fn helpers_and_faults(a: &[i32], b: &[i32], out: &mut [i32], scale: i32, on: bool) {
            fn mix(x: i32, y: i32) -> i32 {
                (x + y) / y
            }
            let i = gpu::grid1();
            if !on {
                return;
            }
            let v = match a[i] {
                0 => 1,
                k if k < 0 => -k,
                k => mix(k, b[i]),
            };
            out[i] = v * scale;
            out[i] -= 1;
            out[i] <<= 2u32;
        }",
    ),
    (
        "math",
        "fn math(x: &[f64], y: &mut [f32]) {
            let i = gpu::grid1();
            let v = x[i].sin().exp() + x[i].powf(2.5);
            y[i] = v as f32;
            y[i] = y[i].sqrt();
        }",
    ),
];
