//! The heat equation on a 2-D grid: a 5-point stencil, one thread per cell, the border held
//! fixed, two buffers swapped each step (on the device, no copies between steps). Checked
//! against the same steps on the CPU; without a GPU it runs in the simulator.

use gpu_runtime::{DeviceVec, Error, gpu, kernel};

#[kernel]
pub fn heat_step(u: &[f32], next: &mut [f32], h: usize, w: usize, k: f32) {
    let (x, y) = gpu::grid2();
    if y < h && x < w {
        let i = y * w + x;
        if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
            next[i] = u[i];
        } else {
            let lap = u[i - 1] + u[i + 1] + u[i - w] + u[i + w] - 4.0 * u[i];
            next[i] = u[i] + k * lap;
        }
    }
}

fn cpu_step(u: &[f32], next: &mut [f32], h: usize, w: usize, k: f32) {
    next.copy_from_slice(u);
    for y in 1..h - 1 {
        for x in 1..w - 1 {
            let i = y * w + x;
            let lap = u[i - 1] + u[i + 1] + u[i - w] + u[i + w] - 4.0 * u[i];
            next[i] = u[i] + k * lap;
        }
    }
}

/// A hot square in the middle of a cold plate.
fn plate(h: usize, w: usize) -> Vec<f32> {
    (0..h * w)
        .map(|i| if (i / w).abs_diff(h / 2) < h / 8 && (i % w).abs_diff(w / 2) < w / 8 { 100.0 } else { 0.0 })
        .collect()
}

/// `steps` steps on the GPU, or `None` without one.
fn on_gpu(u0: &[f32], h: usize, w: usize, k: f32, steps: usize) -> gpu_runtime::Result<Option<Vec<f32>>> {
    let grid = (w.div_ceil(16) as u32, h.div_ceil(16) as u32);
    let mut a = match DeviceVec::from_slice(u0) {
        Ok(a) => a,
        Err(e @ (Error::NoDriver | Error::NoDevice)) => {
            println!("no GPU found ({e})");
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let mut b = DeviceVec::<f32>::zeros(h * w)?;
    for _ in 0..steps {
        heat_step::launch(grid, (16u32, 16u32), &a, &mut b, h, w, k)?;
        std::mem::swap(&mut a, &mut b);
    }
    Ok(Some(a.to_vec()?))
}

fn main() -> gpu_runtime::Result<()> {
    let k = 0.2f32;
    let (mut h, mut w, mut steps) = (1024usize, 1536usize, 200);
    let got = match on_gpu(&plate(h, w), h, w, k, steps)? {
        Some(v) => {
            println!("on the GPU: {steps} steps of a {h}×{w} grid");
            v
        }
        None => {
            (h, w, steps) = (48, 80, 5);
            println!("{steps} steps of a {h}×{w} grid in the simulator instead");
            let mut u = plate(h, w);
            let mut next = vec![0.0f32; h * w];
            let grid = (w.div_ceil(16) as u32, h.div_ceil(16) as u32);
            for _ in 0..steps {
                heat_step::simulate(grid, (16u32, 16u32), &u, &mut next, h, w, k)?;
                std::mem::swap(&mut u, &mut next);
            }
            u
        }
    };
    let mut want = plate(h, w);
    let mut scratch = vec![0.0f32; h * w];
    for _ in 0..steps {
        cpu_step(&want, &mut scratch, h, w, k);
        std::mem::swap(&mut want, &mut scratch);
    }
    // The same operations in the same order: bit for bit.
    assert!(got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits()), "the kernel differs from the CPU");
    let total: f64 = got.iter().map(|&v| v as f64).sum();
    println!("heat left on the plate: {total:.1} (the same as the CPU's, bit for bit)");
    Ok(())
}
