//! Numba's Monte-Carlo π (the example of its device random numbers), ported. Each thread
//! draws its points from its own Philox subsequence (`random::uniform_f32(seed, thread,
//! offset)`), so there are no generator states to create, store or pass, and the estimate
//! is the same on the GPU, on the CPU device and in the simulator.
//!
//! `cargo run --release --example monte_carlo_pi` prints Numba's setting (24 blocks of 64
//! threads, 10,000 points each); `-- --bench` times 2^20 threads of 1,000 points (10^9
//! points) on the best device.

use gpu_runtime::{Device, DeviceVec, gpu, kernel, random};

/// Thread `t` draws `iterations` points in the unit square and writes 4 × the share that
/// falls inside the quarter circle.
#[kernel]
pub fn compute_pi(seed: u64, iterations: u32, out: &mut [f32]) {
    let t = gpu::grid1();
    if t < out.len() {
        let mut inside = 0u32;
        for i in 0..iterations as u64 {
            let x = random::uniform_f32(seed, t as u64, 2 * i);
            let y = random::uniform_f32(seed, t as u64, 2 * i + 1);
            if x * x + y * y <= 1.0 {
                inside += 1;
            }
        }
        out[t] = 4.0 * inside as f32 / iterations as f32;
    }
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
        estimate(&device, blocks, iterations, 1)?;
        let start = std::time::Instant::now();
        let pi = estimate(&device, blocks, iterations, 2)?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        println!(
            "{{\"device\": \"{}\", \"points\": {}, \"ms\": {ms:.3}, \"pi\": {pi}}}",
            device.name(),
            (blocks as u64) * 64 * iterations as u64
        );
        return Ok(());
    }
    println!("pi: {} (on {})", estimate(&device, 24, 10_000, 1)?, device.name());
    Ok(())
}
