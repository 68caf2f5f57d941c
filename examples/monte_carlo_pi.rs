//! Numba's Monte-Carlo π (the example of its device random numbers), ported twice.
//! `compute_pi_xoroshiro` is Numba's kernel line for line: one xoroshiro128+ state per
//! thread, made on the host (`random::create_xoroshiro128p_states`), two
//! `xoroshiro128p_uniform_float32` draws a point, and the same numbers as Numba's for the
//! same seed. `compute_pi` draws its points from its own Philox subsequence
//! (`random::uniform_f32(seed, thread, offset)`) instead, so there are no states to
//! create, store or pass. Either estimate is the same on the GPU, on the CPU device and in
//! the simulator.
//!
//! `cargo run --release --example monte_carlo_pi` prints Numba's setting (24 blocks of 64
//! threads, 10,000 points each); `-- --bench` times 2^20 threads of 1,000 points (10^9
//! points) on the best device.

use gpu_runtime::{Device, DeviceVec, device, gpu, kernel, random};

/// Thread `t` draws `iterations` points in the unit square and writes 4 × the share that
/// falls inside the quarter circle. Point `i` is words `2i` and `2i + 1` of subsequence `t`
/// (`random::uniform_f32(seed, t, 2 * i)` and `(…, 2 * i + 1)`); one Philox block holds
/// four words, so the loop takes two points from each block it computes.
#[kernel]
pub fn compute_pi(seed: u64, iterations: u32, out: &mut [f32]) {
    let t = gpu::grid1();
    if t < out.len() {
        let mut inside = 0u32;
        // A `u32` block index: the counter's high word is a known zero.
        for b in 0..iterations / 2 {
            let (x0, y0, x1, y1) = random::block_u32(seed, t as u64, b as u64);
            inside += in_circle(random::unit_f32(x0), random::unit_f32(y0));
            inside += in_circle(random::unit_f32(x1), random::unit_f32(y1));
        }
        if iterations % 2 == 1 {
            let last = iterations as u64 - 1;
            let x = random::uniform_f32(seed, t as u64, 2 * last);
            let y = random::uniform_f32(seed, t as u64, 2 * last + 1);
            inside += in_circle(x, y);
        }
        out[t] = 4.0 * inside as f32 / iterations as f32;
    }
}

/// Numba's documentation kernel: thread `t` draws `iterations` points from state `t` of
/// `rng_states` and writes 4 × the share inside the quarter circle.
#[kernel]
pub fn compute_pi_xoroshiro(rng_states: &mut [u64], iterations: u32, out: &mut [f32]) {
    let thread_id = gpu::grid1();
    if thread_id < out.len() {
        let mut inside = 0u32;
        for _ in 0..iterations {
            let x = random::xoroshiro128p_uniform_float32(rng_states, thread_id);
            let y = random::xoroshiro128p_uniform_float32(rng_states, thread_id);
            inside += in_circle(x, y);
        }
        out[thread_id] = 4.0 * inside as f32 / iterations as f32;
    }
}

/// [`estimate`] with Numba's xoroshiro128+ states (`seed` for the states).
pub fn estimate_xoroshiro(device: &Device, blocks: u32, iterations: u32, seed: u64) -> gpu_runtime::Result<f64> {
    let threads = blocks as usize * 64;
    let mut states = random::create_xoroshiro128p_states_on(device, threads, seed, 0)?;
    let mut out = DeviceVec::<f32>::zeros_on(device, threads)?;
    compute_pi_xoroshiro::launch(blocks, 64u32, &mut states, iterations, &mut out)?;
    Ok(mean(&out.to_vec()?))
}

/// 1 if `(x, y)` lies inside the quarter circle, else 0.
#[device]
pub fn in_circle(x: f32, y: f32) -> u32 {
    (x * x + y * y <= 1.0) as u32
}

/// The mean of `blocks × 64` threads' estimates, computed on `device`.
pub fn estimate(device: &Device, blocks: u32, iterations: u32, seed: u64) -> gpu_runtime::Result<f64> {
    let threads = blocks as usize * 64;
    let mut out = DeviceVec::<f32>::zeros_on(device, threads)?;
    compute_pi::launch(blocks, 64u32, seed, iterations, &mut out)?;
    Ok(mean(&out.to_vec()?))
}

/// The mean of the estimates, as Numba's `out.mean()`.
pub fn mean(estimates: &[f32]) -> f64 {
    estimates.iter().map(|&e| e as f64).sum::<f64>() / estimates.len() as f64
}

fn main() -> gpu_runtime::Result<()> {
    let device = Device::best()?;
    if std::env::args().any(|a| a == "--bench") {
        let (blocks, iterations) = (1u32 << 14, 1000u32);
        let threads = blocks as usize * 64;
        // Each kernel as Numba's is timed: a warm-up, then the best of three runs with the
        // copy of the estimates back and their mean.
        let mut out = DeviceVec::<f32>::zeros_on(&device, threads)?;
        compute_pi::launch(blocks, 64u32, 1u64, iterations, &mut out)?;
        let (mut ms, mut pi) = (f64::INFINITY, 0.0);
        for _ in 0..3 {
            let start = std::time::Instant::now();
            compute_pi::launch(blocks, 64u32, 2u64, iterations, &mut out)?;
            pi = mean(&out.to_vec()?);
            ms = ms.min(start.elapsed().as_secs_f64() * 1e3);
        }
        // Numba's kernel on Numba's generator: the states made first (timed apart, as the
        // comparison times Numba's).
        let start = std::time::Instant::now();
        let mut states = random::create_xoroshiro128p_states_on(&device, threads, 1, 0)?;
        let states_ms = start.elapsed().as_secs_f64() * 1e3;
        compute_pi_xoroshiro::launch(blocks, 64u32, &mut states, iterations, &mut out)?;
        let (mut xo_ms, mut xo_pi) = (f64::INFINITY, 0.0);
        for _ in 0..3 {
            let start = std::time::Instant::now();
            compute_pi_xoroshiro::launch(blocks, 64u32, &mut states, iterations, &mut out)?;
            xo_pi = mean(&out.to_vec()?);
            xo_ms = xo_ms.min(start.elapsed().as_secs_f64() * 1e3);
        }
        println!(
            "{{\"device\": \"{}\", \"points\": {}, \"ms\": {ms:.3}, \"pi\": {pi}, \"xoroshiro_ms\": {xo_ms:.3}, \"xoroshiro_pi\": {xo_pi}, \"states_ms\": {states_ms:.1}}}",
            device.name(),
            (blocks as u64) * 64 * iterations as u64
        );
        return Ok(());
    }
    println!("pi: {} (Philox, on {})", estimate(&device, 24, 10_000, 1)?, device.name());
    println!("pi: {} (xoroshiro128+, Numba's kernel)", estimate_xoroshiro(&device, 24, 10_000, 1)?);
    Ok(())
}
