//! The benchmark of the elementwise workloads (issue: speed at the hardware limit). Prints
//! a readable table, then one JSON object on the last line (`bench/compare.py` reads it
//! and runs the same work in Numba, CuPy and PyTorch).
//!
//! `cargo run --release --bin bench` on a machine with a GPU. Sizes: `BENCH_LOG2_N`
//! (default 28) elements for the large cases.

use std::time::{Duration, Instant};

use gpu_runtime::{DeviceVec, device, gpu, kernel, random, vectorize};

#[vectorize(target = "cuda")]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

#[vectorize(target = "cuda", types(f32, f64))]
fn heavy<T: gpu_runtime::Float>(x: T, y: T) -> T {
    (-x * x).exp() * y.sin() + x.abs().sqrt()
}

/// Integer division can fault (a zero divisor, `i32::MIN / -1`): each call waits for its
/// fault word.
#[vectorize(target = "cuda")]
fn quotient(a: i32, b: i32) -> i32 {
    a / b
}

/// Half precision: `half::f16` computed through `f32`, rounded once (the `half` crate's
/// rule; the GPU's `add.f16` rounds the same).
#[vectorize(target = "cuda")]
fn add_f16(a: gpu_runtime::f16, b: gpu_runtime::f16) -> gpu_runtime::f16 {
    a + b
}

/// Complex multiply-add, num-complex's formulas (`(ac - bd) + (ad + bc)i`, then the sum).
#[vectorize(target = "cuda")]
fn complex_mul_add(
    a: gpu_runtime::Complex32,
    b: gpu_runtime::Complex32,
    c: gpu_runtime::Complex32,
) -> gpu_runtime::Complex32 {
    a * b + c
}

#[vectorize(target = "cuda", identity = 0.0)]
fn sum(a: f32, b: f32) -> f32 {
    a + b
}

#[vectorize(target = "cpu")]
fn heavy_cpu(x: f32, y: f32) -> f32 {
    (-x * x).exp() * y.sin() + x.abs().sqrt()
}

#[vectorize(target = "parallel")]
fn heavy_par(x: f32, y: f32) -> f32 {
    (-x * x).exp() * y.sin() + x.abs().sqrt()
}

fn heavy_by_hand(x: f32, y: f32) -> f32 {
    (-x * x).exp() * y.sin() + x.abs().sqrt()
}

/// Uniform floats in (0, 1], `out[i] = random::uniform_f32(seed, 0, i)`: each thread turns
/// one Philox block at a time into its four elements, stored with one 16-byte store, in a
/// grid-stride loop. Where the block indices fit 32 bits (up to 2^34 floats) the loop
/// passes the index through `u32`, so the counter's high word is a known zero and the first
/// round partly folds.
#[kernel]
fn fill_uniform(seed: u64, out: &mut [f32]) {
    let blocks = out.len() / 4;
    let mut b = gpu::grid1();
    if blocks <= u32::MAX as usize {
        while b < blocks {
            let (u0, u1, u2, u3) = four_uniform(seed, b as u32 as u64);
            gpu::store4(out, 4 * b, u0, u1, u2, u3);
            b += gpu::gridsize1();
        }
    } else {
        while b < blocks {
            let (u0, u1, u2, u3) = four_uniform(seed, b as u64);
            gpu::store4(out, 4 * b, u0, u1, u2, u3);
            b += gpu::gridsize1();
        }
    }
    // The last `len % 4` elements, by the first thread.
    if gpu::grid1() == 0 {
        for k in 4 * blocks..out.len() {
            out[k] = random::uniform_f32(seed, 0, k as u64);
        }
    }
}

/// The four uniform floats of Philox block `block` of subsequence 0.
#[device]
fn four_uniform(seed: u64, block: u64) -> (f32, f32, f32, f32) {
    let (w0, w1, w2, w3) = random::block_u32(seed, 0, block);
    (random::unit_f32(w0), random::unit_f32(w1), random::unit_f32(w2), random::unit_f32(w3))
}

/// The median of `reps` timings of `f` (after one warm-up call).
fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> Duration {
    std::hint::black_box(f());
    let mut times: Vec<Duration> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .collect();
    times.sort();
    times[reps / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// Uniform in [lo, hi), from a fixed seed.
fn uniform(n: usize, lo: f64, hi: f64, seed: u64) -> Vec<f64> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

struct Row {
    key: &'static str,
    what: String,
    us: f64,
    gbps: Option<f64>,
}

fn main() -> gpu_runtime::Result<()> {
    let start = Instant::now();
    let log2: u32 = std::env::var("BENCH_LOG2_N").ok().and_then(|v| v.parse().ok()).unwrap_or(28);
    let n = 1usize << log2;
    let mut rows: Vec<Row> = Vec::new();
    let mut push = |key: &'static str, what: String, d: Duration, bytes: Option<f64>| {
        let us = us(d);
        rows.push(Row { key, what, us, gbps: bytes.map(|b| b / d.as_secs_f64() / 1e9) });
    };

    // 7. Start-up: context, module load, first result.
    let device = gpu_runtime::default_device()?;
    let context = start.elapsed();
    let t = Instant::now();
    let first = add(&[1.0f32, 2.0], 3.0f32)?;
    let first_call = t.elapsed();
    assert_eq!(first, vec![4.0, 5.0]);
    let first_result = start.elapsed();

    let x32: Vec<f32> = uniform(n, -2.0, 2.0, 1).into_iter().map(|v| v as f32).collect();
    let y32: Vec<f32> = uniform(n, 0.0, 6.0, 2).into_iter().map(|v| v as f32).collect();
    // `BENCH_ONLY=device` stops after the device cases, `BENCH_ONLY=host` after the host
    // slices, `BENCH_ONLY=host_only` runs the host slices alone (for `bench/sweep.py`).
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    if only != "host_only" {
        let (dx, dy) = (DeviceVec::from_slice(&x32)?, DeviceVec::from_slice(&y32)?);
        let mut dout = DeviceVec::<f32>::zeros(n)?;

        // Calls whose results stay on the device return once the kernel is queued: each timed
        // call waits for the GPU, as the peers' timings do.
        let sync = || device.synchronize().unwrap();
        // 1. add, on the device.
        let reps = 20;
        let d = time(reps, || {
            add::into(&mut dout, &dx, &dy).unwrap();
            sync()
        });
        push("add_device", format!("add, 2^{log2} f32 on the device"), d, Some(12.0 * n as f64));
        // 3. add with a broadcast scalar.
        let d = time(reps, || {
            add::into(&mut dout, &dx, 2.0f32).unwrap();
            sync()
        });
        push("add_scalar", format!("add(x, 2.0), 2^{log2} f32"), d, Some(8.0 * n as f64));
        // 2. heavy, f32 and f64.
        let d = time(reps, || {
            heavy::into(&mut dout, &dx, &dy).unwrap();
            sync()
        });
        push("heavy_f32", format!("heavy, 2^{log2} f32"), d, Some(12.0 * n as f64));
        drop((dx, dy, dout));
        {
            let x64 = uniform(n, -2.0, 2.0, 1);
            let y64 = uniform(n, 0.0, 6.0, 2);
            let (dx, dy) = (DeviceVec::from_slice(&x64)?, DeviceVec::from_slice(&y64)?);
            let mut dout = DeviceVec::<f64>::zeros(n)?;
            let d = time(reps, || {
                heavy::into(&mut dout, &dx, &dy).unwrap();
                sync()
            });
            push("heavy_f64", format!("heavy, 2^{log2} f64"), d, Some(24.0 * n as f64));
        }
        // 4. Per-call latency on 1024 elements.
        {
            let small = DeviceVec::from_slice(&x32[..1024])?;
            let mut out = DeviceVec::<f32>::zeros(1024)?;
            let calls = 5000;
            add::into(&mut out, &small, &small)?;
            sync();
            let t = Instant::now();
            for _ in 0..calls {
                add::into(&mut out, &small, &small)?;
            }
            sync();
            push("latency_1024", "add, 1024 f32 on the device, per call".into(), t.elapsed() / calls, None);
            // Each call waited for before the next.
            let t = Instant::now();
            for _ in 0..calls {
                add::into(&mut out, &small, &small)?;
                sync();
            }
            push("latency_sync_1024", "the same, waiting for each call".into(), t.elapsed() / calls, None);
            // A function that can fault: each call reads its fault word back.
            let a: Vec<i32> = (0..1024).collect();
            let (da, db) = (DeviceVec::from_slice(&a)?, DeviceVec::from_slice(&vec![7i32; 1024])?);
            let mut q = DeviceVec::<i32>::zeros(1024)?;
            quotient::into(&mut q, &da, &db)?;
            let t = Instant::now();
            for _ in 0..calls {
                quotient::into(&mut q, &da, &db)?;
            }
            push(
                "latency_fault_1024",
                "i32 division (can fault), 1024 elements, per call".into(),
                t.elapsed() / calls,
                None,
            );
        }
        // 9. Half precision: add over f16 on the device.
        {
            let h = |v: &[f32]| v.iter().map(|&x| gpu_runtime::f16::from_f32(x)).collect::<Vec<_>>();
            let (dx, dy) = (DeviceVec::from_slice(&h(&x32))?, DeviceVec::from_slice(&h(&y32))?);
            let mut dout = DeviceVec::<gpu_runtime::f16>::zeros(n)?;
            let d = time(reps, || {
                add_f16::into(&mut dout, &dx, &dy).unwrap();
                sync()
            });
            push("add_f16", format!("add, 2^{log2} f16 on the device"), d, Some(6.0 * n as f64));
            let got = dout.to_vec()?;
            for i in [0, 1, n / 3, n - 1] {
                assert_eq!(got[i], gpu_runtime::f16::from_f32(x32[i]) + gpu_runtime::f16::from_f32(y32[i]));
            }
        }
        // 10. Complex: a * b + c over 2^(n-1) complex64 (the f32 inputs' pairs), on the device.
        {
            use gpu_runtime::Complex;
            let m = n / 2;
            let pairs = |v: &[f32], swap: bool| -> Vec<gpu_runtime::Complex32> {
                v.chunks_exact(2)
                    .map(|p| if swap { Complex::new(p[1], p[0]) } else { Complex::new(p[0], p[1]) })
                    .collect()
            };
            let (a, b, c) = (pairs(&x32, false), pairs(&y32, false), pairs(&y32, true));
            let (da, db, dc) = (DeviceVec::from_slice(&a)?, DeviceVec::from_slice(&b)?, DeviceVec::from_slice(&c)?);
            let mut dout = DeviceVec::<gpu_runtime::Complex32>::zeros(m)?;
            let d = time(reps, || {
                complex_mul_add::into(&mut dout, &da, &db, &dc).unwrap();
                sync()
            });
            push(
                "complex_mul_add",
                format!("a * b + c, 2^{} complex64 on the device", log2 - 1),
                d,
                Some(32.0 * m as f64),
            );
            let got = dout.to_vec()?;
            for i in [0, 1, m / 3, m - 1] {
                let want = a[i] * b[i] + c[i];
                assert_eq!(
                    (got[i].re.to_bits(), got[i].im.to_bits()),
                    (want.re.to_bits(), want.im.to_bits()),
                    "element {i}"
                );
            }
        }
        // 8. Random numbers: 2^n uniform f32 (Philox), into a device array.
        {
            let mut dout = DeviceVec::<f32>::zeros(n)?;
            // A grid-stride loop over `BENCH_RANDOM_PER_SM` (default 15, the best of a sweep
            // from 4 to 64 on the H200, within 1% of 16) blocks of 256 per SM: a thread's key
            // schedule (the seed's round keys) is computed once for many blocks, not once per
            // four floats.
            let per_sm: usize = std::env::var("BENCH_RANDOM_PER_SM").ok().and_then(|v| v.parse().ok()).unwrap_or(15);
            let sms = gpu_runtime::Device::best()?.sm_count() as usize;
            let grid = (n / 4).div_ceil(256).clamp(1, per_sm.max(1) * sms) as u32;
            let d = time(reps, || fill_uniform::launch(grid, 256u32, 42u64, &mut dout).unwrap());
            push("random_f32", format!("uniform f32 (Philox), 2^{log2} on the device"), d, Some(4.0 * n as f64));
            let head = dout.to_vec()?;
            for i in [0, 1, 2, 3, 4, 5, 6, 7, n / 2 + 1, n - 2, n - 1] {
                assert_eq!(head[i].to_bits(), random::uniform_f32(42, 0, i as u64).to_bits(), "element {i}");
            }
        }
        // 6. reduce (sum).
        {
            let dx = DeviceVec::from_slice(&x32)?;
            let d = time(reps, || sum::reduce(&dx).unwrap());
            push("reduce_sum", format!("sum, 2^{log2} f32 on the device"), d, Some(4.0 * n as f64));
        }
    }
    if only != "device" {
        // 5. Host slices, end to end.
        let d = time(5, || add(&x32, &y32).unwrap());
        push("add_host", format!("add, 2^{log2} f32 host slices end to end"), d, Some(12.0 * n as f64));
        // The same into a vector already touched (no page faults on the results).
        let mut out = vec![0f32; n];
        let d = time(5, || add::into(&mut out, &x32, &y32).unwrap());
        push("add_host_into", format!("add, 2^{log2} f32 host slices into touched memory"), d, Some(12.0 * n as f64));
        drop(out);
        // What the host's memory does alone: one input copied into memory already touched,
        // split over rayon's threads in 1 MiB pieces (the bound on the staging copies).
        let mut copy = vec![0f32; n];
        let d = time(5, || {
            use rayon::prelude::*;
            copy.par_chunks_mut(1 << 18).zip(x32.par_chunks(1 << 18)).for_each(|(d, s)| d.copy_from_slice(s));
        });
        push("host_copy", format!("copying 2^{log2} f32 host to host, threads"), d, Some(8.0 * n as f64));
        drop(copy);
        // The same over every GPU of the host (`on_devices`), where there are several.
        let count = gpu_runtime::device_count()?;
        if count > 1 {
            let all = (0..count).map(gpu_runtime::Device::cuda).collect::<gpu_runtime::Result<Vec<_>>>()?;
            let d = time(5, || add::on_devices(&all, &x32, &y32).unwrap());
            push("add_host_all_gpus", format!("the same over all {count} GPUs"), d, Some(12.0 * n as f64));
        }
    }

    // 8. The CPU targets against hand-written loops (2^24 elements).
    if only.is_empty() {
        let m = 1usize << 24.min(log2);
        let (xs, ys) = (&x32[..m], &y32[..m]);
        let d = time(5, || heavy_cpu(xs, ys).unwrap());
        push("cpu_target", "heavy, 2^24 f32, target = \"cpu\"".into(), d, None);
        let d = time(5, || xs.iter().zip(ys).map(|(&x, &y)| heavy_by_hand(x, y)).collect::<Vec<f32>>());
        push("cpu_by_hand", "heavy, 2^24 f32, a hand-written loop".into(), d, None);
        let d = time(5, || heavy_par(xs, ys).unwrap());
        push("parallel_target", "heavy, 2^24 f32, target = \"parallel\"".into(), d, None);
        let d = time(5, || {
            use rayon::prelude::*;
            xs.par_iter().zip(ys).map(|(&x, &y)| heavy_by_hand(x, y)).collect::<Vec<f32>>()
        });
        push("parallel_by_hand", "heavy, 2^24 f32, hand-written rayon".into(), d, None);
    }

    println!(
        "device: {} (compute capability {:?}, {} SMs)",
        device.name(),
        device.compute_capability(),
        device.sm_count()
    );
    println!(
        "start-up: context {:.1} ms, first call (module load + run) {:.1} ms, first result {:.1} ms after start",
        context.as_secs_f64() * 1e3,
        first_call.as_secs_f64() * 1e3,
        first_result.as_secs_f64() * 1e3
    );
    println!("{:<48} {:>12} {:>10}", "case", "µs", "GB/s");
    for r in &rows {
        println!("{:<48} {:>12.1} {:>10}", r.what, r.us, r.gbps.map_or(String::new(), |g| format!("{g:.0}")));
    }
    let cases: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "\"{}\": {{\"us\": {:.3}, \"gbps\": {}}}",
                r.key,
                r.us,
                r.gbps.map_or("null".into(), |g| format!("{g:.1}"))
            )
        })
        .collect();
    println!(
        "{{\"device\": \"{}\", \"log2_n\": {log2}, \"context_ms\": {:.2}, \"first_call_ms\": {:.2}, \"first_result_ms\": {:.2}, \"cases\": {{{}}}}}",
        device.name(),
        context.as_secs_f64() * 1e3,
        first_call.as_secs_f64() * 1e3,
        first_result.as_secs_f64() * 1e3,
        cases.join(", ")
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use gpu_runtime::random;

    /// The benchmark's fill, run in the simulator, is the host's Philox stream element for
    /// element: whole blocks stored four at a time, and a tail shorter than a block.
    #[test]
    fn fill_uniform_is_the_stream() {
        for n in [4 * 64, 4 * 64 + 3, 1001] {
            let mut out = vec![0.0f32; n];
            super::fill_uniform::simulate(2u32, 32u32, 42u64, &mut out).unwrap();
            for (i, v) in out.iter().enumerate() {
                assert_eq!(v.to_bits(), random::uniform_f32(42, 0, i as u64).to_bits(), "element {i} of {n}");
            }
        }
    }
}
