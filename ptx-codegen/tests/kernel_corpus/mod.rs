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
        ("nanmin", 1),
        ("nanmax", 1),
        ("inc", 1),
        ("dec", 1),
        ("exchange", 1),
        ("compare_and_swap", 2),
        ("and", 1),
        ("or", 1),
        ("xor", 1),
    ] {
        for t in types {
            let supported = match op {
                "add" | "sub" | "exchange" | "min" | "max" | "nanmin" | "nanmax" => true,
                "inc" | "dec" => t.starts_with('u'),
                _ => !t.starts_with('f'),
            };
            if !supported {
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
    // Every warp built-in inside a divergent branch (even and odd lanes, each with its own
    // mask), written the same way in both arms: `tests/convergence.rs` checks that each
    // call stays in its own arm.
    out.extend(divergent().into_iter().map(|(n, s, _)| (n, s)));
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

/// A PTX instruction and how many times the source calls the built-in it comes from.
pub type Calls = Vec<(&'static str, usize)>;

/// `(name, source, calls)` of the kernels that call the warp's built-ins in divergent
/// branches.
pub fn divergent() -> Vec<(String, String, Calls)> {
    let arms = |name: &str, even: &str, odd: &str, ptx: Calls| {
        let src = format!(
            "fn {name}(x: &[u32], out: &mut [u32]) {{
                let i = gpu::grid1();
                let lane = gpu::lane_id();
                let v = x[i];
                if lane % 2 == 0 {{
                    out[i] = {even};
                }} else {{
                    out[i] = {odd};
                }}
            }}"
        );
        (name.to_string(), src, ptx)
    };
    let same = |name: &str, call: &str, ptx: Calls| arms(name, call, call, ptx);
    // Masks of the even and of the odd lanes, as each arm's own.
    let (e, o) = ("0x5555_5555u32", "0xaaaa_aaaau32");
    let both = |f: &dyn Fn(&str) -> String| (f(e), f(o));
    let pair = |name: &str, f: &dyn Fn(&str) -> String, ptx: Calls| {
        let (even, odd) = both(f);
        arms(name, &even, &odd, ptx)
    };
    vec![
        same("diverge_active_mask", "gpu::active_mask()", vec![("activemask.b32", 2)]),
        pair("diverge_ballot", &|m| format!("gpu::ballot_sync({m}, v % 3 == 0)"), vec![("vote.sync.ballot.b32", 2)]),
        pair("diverge_all", &|m| format!("gpu::all_sync({m}, v > 2) as u32"), vec![("vote.sync.all.pred", 2)]),
        pair("diverge_any", &|m| format!("gpu::any_sync({m}, v > 90) as u32"), vec![("vote.sync.any.pred", 2)]),
        pair("diverge_shfl", &|m| format!("gpu::shfl_sync({m}, v, (lane + 2) % 32)"), vec![("shfl.sync.idx.b32", 2)]),
        pair("diverge_shfl_up", &|m| format!("gpu::shfl_up_sync({m}, v, 2)"), vec![("shfl.sync.up.b32", 2)]),
        pair("diverge_shfl_down", &|m| format!("gpu::shfl_down_sync({m}, v, 4)"), vec![("shfl.sync.down.b32", 2)]),
        pair("diverge_shfl_xor", &|m| format!("gpu::shfl_xor_sync({m}, v, 2)"), vec![("shfl.sync.bfly.b32", 2)]),
        pair("diverge_match_any", &|m| format!("gpu::match_any_sync({m}, v % 4)"), vec![("match.any.sync.b32", 2)]),
        pair(
            "diverge_match_all",
            &|m| format!("{{ let (mask, all) = gpu::match_all_sync({m}, v / 64); mask ^ all as u32 }}"),
            vec![("match.all.sync.b32", 2)],
        ),
        pair("diverge_syncwarp", &|m| format!("{{ gpu::syncwarp({m}); v + 1 }}"), vec![("bar.warp.sync", 2)]),
    ]
}

const FIXED: &[(&str, &str)] = &[
    (
        "complex_elements",
        "fn complex_elements(a: &[Complex<f32>], b: &mut [Complex<f64>], w: Complex<f64>, k: f64) {
            let i = gpu::grid1();
            let tile = gpu::shared::<Complex<f32>, 64>();
            let t = gpu::thread_idx().x as usize;
            if i < a.len() { tile[t % 64] = a[i].conj(); }
            gpu::sync_threads();
            let mut local = [Complex::new(0.0, 0.0); 2];
            local[1] = Complex::new(tile[(t + 1) % 64].re as f64, tile[(t + 1) % 64].im as f64);
            if i < b.len() { b[i] = b[i] * w + local[1] * k - local[0]; }
        }",
    ),
    (
        "vector_access",
        "fn vector_access(x: &[f32], out: &mut [f32], w: &[f64], wout: &mut [f64], b: &[u8], bout: &mut [u8], k: usize) {
            let i = 4 * gpu::grid1();
            let s = gpu::shared::<f32, 256>();
            let h = gpu::dynamic_shared::<u16>();
            let part = s.slice(k, 200);
            let (a0, a1, a2, a3) = gpu::load4(x, i);
            gpu::store4(out, i, a3, a2, a1, a0);
            let (c0, c1) = gpu::load2(w, i);
            gpu::store2(wout, i, c1, c0);
            let (d0, d1, d2, d3) = gpu::load4(b, i + k);
            gpu::store4(bout, i, d0, d1, d2, d3);
            gpu::store4(s, 4 * (i % 64), a0, a1, a2, a3);
            gpu::store2(h, 2 * k, 1, 2);
            gpu::sync_threads();
            let (e0, e1) = gpu::load2(part, k);
            let (f0, f1, f2, f3) = gpu::load4(h, k);
            out[i] += e0 + e1 + (f0 + f1 + f2 + f3) as f32;
        }",
    ),
    (
        "shapes",
        "fn shapes(out: &mut [usize], n: usize) {
            let s1 = gpu::shared::<i32, 6>();
            let s2 = gpu::shared_2d::<i32, 2, 3>();
            let s3 = gpu::shared_3d::<u8, 2, 3, 4>();
            let d = gpu::dynamic_shared::<f64>();
            let local = [0u16; 5];
            let part = s1.slice(1, 4);
            let inner = part.slice(1, n);
            let (r, c) = s2.shape();
            let (a, b, k) = s3.shape();
            out[0] = s1.len();
            out[1] = s2.len();
            out[2] = r * 10 + c;
            out[3] = s2.rows() * 10 + s2.cols();
            out[4] = s3.len();
            out[5] = a * 100 + b * 10 + k;
            out[6] = d.len();
            out[7] = local.len();
            out[8] = part.len();
            out[9] = inner.len();
            out[10] = out.len();
            out[11] = s1.is_empty() as usize;
        }",
    ),
    (
        "views",
        "fn views(x: &[f32], out: &mut [f32], start: usize, end: usize) {
            let t = gpu::thread_idx().x as usize;
            let tile = gpu::shared::<f32, 64>();
            let dyn_tile = gpu::dynamic_shared::<f32>();
            tile[t % 64] = x[t];
            dyn_tile[t] = x[t] * 2.0;
            gpu::sync_threads();
            let part = tile.slice(start, end);
            let dyn_part = dyn_tile.slice(start, end);
            if t < part.len() {
                out[t] = part[t] + dyn_part[t];
                gpu::atomic::add(part, t, 1.0);
                let v = unsafe { *dyn_part.get_unchecked(t) };
                out[t] += v;
            }
        }",
    ),
    (
        "cube",
        "fn cube(x: &[i64], out: &mut [i64]) {
            let s = gpu::shared_3d::<i64, 4, 8, 8>();
            let t = gpu::thread_idx();
            let (i, j, k) = (t.z as usize, t.y as usize, t.x as usize);
            s[(i, j, k)] = x[gpu::grid1()];
            gpu::sync_threads();
            out[gpu::grid1()] = s[(3 - i, 7 - j, 7 - k)] + gpu::atomic::max(s, (i, j, 0), 5);
        }",
    ),
    (
        "lane_masks",
        "fn lane_masks(out: &mut [u32]) {
            let i = gpu::grid1() * 5;
            out[i] = gpu::lanemask_lt();
            out[i + 1] = gpu::lanemask_le();
            out[i + 2] = gpu::lanemask_eq();
            out[i + 3] = gpu::lanemask_ge();
            out[i + 4] = gpu::lanemask_gt();
        }",
    ),
    (
        "warp_matches",
        "fn warp_matches(a: &[f64], b: &[u8], out: &mut [u32], ok: &mut [bool]) {
            let i = gpu::grid1();
            let (m, all) = gpu::match_all_sync(0xffffffff, a[i]);
            out[i] = gpu::match_any_sync(0xffffffff, a[i]) ^ gpu::match_any_sync(0xffffffff, b[i]) ^ m;
            gpu::syncwarp(0xffffffff);
            ok[i] = all;
        }",
    ),
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
