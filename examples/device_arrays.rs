//! Data that stays on the GPU between calls, Numba's `out=`, `reduce`, streams and a
//! function compiled for two element types: the `CUDAUFuncDispatcher` workflow, in Rust.
//!
//! Without a GPU it says so and runs the same pipeline on the CPU.

use gpu_runtime::{DeviceVec, Error, Float, vectorize};

/// Compiled once for f32 and once for f64; the call picks the kernel from the arguments.
#[vectorize(target = "cuda", types(f32, f64))]
fn gaussian<T: Float>(x: T, mu: T, sigma: T) -> T {
    let z = (x - mu) / sigma;
    (-(z * z) / T::from_f64(2.0)).exp() / (sigma * T::from_f64((2.0 * std::f64::consts::PI).sqrt()))
}

#[vectorize(target = "cuda", identity = 0.0)]
fn sum(a: f64, b: f64) -> f64 {
    a + b
}

/// Two results per element: one output array each.
#[vectorize(target = "cuda")]
fn min_max(a: f32, b: f32) -> (f32, f32) {
    (a.min(b), a.max(b))
}

fn main() -> gpu_runtime::Result<()> {
    let n = 1 << 20;
    let xs: Vec<f64> = (0..n).map(|i| -5.0 + 10.0 * i as f64 / n as f64).collect();
    let step = 10.0 / n as f64;
    match on_gpu(&xs, step) {
        Ok(()) => Ok(()),
        Err(e @ (Error::NoDriver | Error::NoDevice)) => {
            println!("no GPU found ({e}); the same functions on the CPU:");
            let density = gaussian::cpu(&xs, 0.0, 1.0)?;
            let total = sum::cpu(&density, 0.0)?.iter().sum::<f64>() * step;
            println!("integral of the density: {total:.6}");
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn on_gpu(xs: &[f64], step: f64) -> gpu_runtime::Result<()> {
    let device = gpu_runtime::default_device()?;
    println!("on {} (device {})", device.name(), device.ordinal());

    // Copy once, compute twice on the device, copy back one number.
    let x = DeviceVec::from_slice(xs)?;
    let density = gaussian::device(&x, 0.0, 1.0)?; // stays on the GPU
    let total = sum::reduce(&density)? * step; // one launch plus a small final pass
    println!("integral of the density: {total:.6}");

    // `into`: results written into memory you own, nothing allocated for them.
    let mut shifted = DeviceVec::<f64>::zeros(xs.len())?;
    gaussian::into(&mut shifted, &x, 1.0, 0.5)?;
    println!("peak of N(1, 0.5): {:.6}", shifted.to_vec()?.iter().cloned().fold(0.0, f64::max));

    // The f32 kernel of the same function, on host slices.
    let small: Vec<f32> = xs.iter().step_by(1 << 10).map(|&v| v as f32).collect();
    let d32 = gaussian(&small, 0.0f32, 1.0f32)?;
    println!("f32 kernel, {} values, middle one {:.6}", d32.len(), d32[d32.len() / 2]);

    // Two streams: both calls are queued before either is waited for; the slices stay
    // borrowed until then.
    let (s1, s2) = (device.new_stream()?, device.new_stream()?);
    let a: Vec<f32> = (0..1 << 20).map(|i| (i % 1000) as f32).collect();
    let b: Vec<f32> = (0..1 << 20).map(|i| (i % 777) as f32).collect();
    let p1 = min_max::launch(&s1, &a, &b)?;
    let p2 = gaussian::launch(&s2, &a, 500.0f32, 100.0f32)?;
    let ((lo, hi), g) = (p1.wait()?, p2.wait()?);
    println!("min/max of element 999: {} / {}; density there {:.3e}", lo[999], hi[999], g[999]);
    Ok(())
}
