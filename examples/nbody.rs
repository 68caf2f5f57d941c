//! An n-body simulation with a user struct in device memory: each body is a
//! `#[derive(GpuType)]` struct, and one `#[kernel]` step computes every body's
//! acceleration from all the others, a tile of bodies at a time through shared memory
//! (the classic CUDA n-body scheme), then moves it (semi-implicit Euler).
//!
//! `cargo run --release --example nbody [bodies] [steps]` runs 16,384 bodies for 10 steps
//! on the best device, and checks the result against the same steps on the CPU in plain
//! Rust ([`step_host`]: the same device functions built by rustc, in the same order, so
//! the bodies are equal, not close) and the total energy against its value before the
//! steps (it drifts only by the integrator's error).

use gpu_runtime::{Device, DeviceVec, GpuType, LaunchConfig, Result, device, gpu, kernel};

/// One body: position, mass, velocity (and a spare word, so that the struct has no
/// padding and its 32 bytes load in whole sectors).
#[derive(Clone, Copy, Debug, PartialEq, GpuType)]
#[repr(C)]
pub struct Body {
    pub pos: [f32; 3],
    pub mass: f32,
    pub vel: [f32; 3],
    pub spare: f32,
}

/// Bodies per tile: the threads of a block load one tile into shared memory together.
pub const TILE: usize = 128;

/// Squared softening length: keeps the force finite when two bodies come close.
pub const SOFTENING2: f32 = 1e-2;

/// The acceleration `other` gives `me` (softened), as its three components.
#[device]
pub fn pull(me: Body, other: Body) -> (f32, f32, f32) {
    let dx = other.pos[0] - me.pos[0];
    let dy = other.pos[1] - me.pos[1];
    let dz = other.pos[2] - me.pos[2];
    let r2 = dx * dx + dy * dy + dz * dz + SOFTENING2;
    let inv = 1.0 / r2.sqrt();
    let s = other.mass * inv * inv * inv;
    (dx * s, dy * s, dz * s)
}

/// `b` after `dt` under the acceleration `(ax, ay, az)`: the velocity first, then the
/// position with the new velocity (semi-implicit Euler).
#[device]
pub fn advance(mut b: Body, ax: f32, ay: f32, az: f32, dt: f32) -> Body {
    b.vel[0] += ax * dt;
    b.vel[1] += ay * dt;
    b.vel[2] += az * dt;
    b.pos[0] += b.vel[0] * dt;
    b.pos[1] += b.vel[1] * dt;
    b.pos[2] += b.vel[2] * dt;
    b
}

/// One step of `dt` for every body of `bodies`, into `next`. Launch with blocks of `TILE`
/// threads and at least one thread per body.
#[kernel]
pub fn step(bodies: &[Body], next: &mut [Body], dt: f32) {
    let tile = gpu::shared::<Body, TILE>();
    let i = gpu::grid1();
    let t = gpu::thread_idx().x as usize;
    let me = if i < bodies.len() { bodies[i] } else { bodies[0] };
    let (mut ax, mut ay, mut az) = (0.0f32, 0.0f32, 0.0f32);
    let mut start = 0;
    while start < bodies.len() {
        // Each thread loads one body of the tile (a massless one past the end).
        let j = start + t;
        if j < bodies.len() {
            tile[t] = bodies[j];
        } else {
            let mut empty = bodies[0];
            empty.mass = 0.0;
            tile[t] = empty;
        }
        gpu::sync_threads();
        for k in 0..TILE {
            let (px, py, pz) = pull(me, tile[k]);
            ax += px;
            ay += py;
            az += pz;
        }
        gpu::sync_threads();
        start += TILE;
    }
    if i < bodies.len() {
        next[i] = advance(me, ax, ay, az, dt);
    }
}

/// `steps` steps of `dt` on `device`, the bodies kept in its memory between steps.
pub fn simulate(device: &Device, bodies: &[Body], steps: usize, dt: f32) -> Result<Vec<Body>> {
    let mut a = DeviceVec::from_slice_on(device, bodies)?;
    let mut b = DeviceVec::from_slice_on(device, bodies)?;
    let config = LaunchConfig::new(bodies.len().div_ceil(TILE) as u32, TILE as u32).device(device);
    for _ in 0..steps {
        step::launch_with(&config, &a, &mut b, dt)?.wait()?;
        std::mem::swap(&mut a, &mut b);
    }
    a.to_vec()
}

/// One step of [`step`] on the CPU in plain Rust (over threads with rayon): the same
/// functions in the kernel's order, every other body in index order (the tiles' massless
/// padding adds zeros), built by rustc where the kernel is built by the GPU compiler.
pub fn step_host(bodies: &[Body], dt: f32) -> Vec<Body> {
    use rayon::prelude::*;
    bodies
        .par_iter()
        .map(|&me| {
            let (mut ax, mut ay, mut az) = (0.0f32, 0.0f32, 0.0f32);
            for &other in bodies {
                let (px, py, pz) = pull(me, other);
                ax += px;
                ay += py;
                az += pz;
            }
            advance(me, ax, ay, az, dt)
        })
        .collect()
}

/// The total energy, kinetic plus potential (with the kernel's softening), in `f64`.
pub fn energy(bodies: &[Body]) -> f64 {
    let mut e = 0.0f64;
    for (i, b) in bodies.iter().enumerate() {
        let v2: f64 = b.vel.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
        e += 0.5 * f64::from(b.mass) * v2;
        for c in &bodies[i + 1..] {
            let r2: f64 = (0..3).map(|d| f64::from(c.pos[d] - b.pos[d]).powi(2)).sum::<f64>() + f64::from(SOFTENING2);
            e -= f64::from(b.mass) * f64::from(c.mass) / r2.sqrt();
        }
    }
    e
}

/// A cold disc of `n` bodies with small, nearly circular velocities (deterministic).
pub fn disc(n: usize) -> Vec<Body> {
    let total = n as f32;
    (0..n)
        .map(|i| {
            // A low-discrepancy spiral: radius by square root, angle by the golden ratio.
            let r = 1.0 + 4.0 * ((i as f32 + 0.5) / total).sqrt();
            let a = i as f32 * 2.399_963;
            let (s, c) = a.sin_cos();
            let speed = 0.3 * (1.0 / r).sqrt();
            Body {
                pos: [r * c, r * s, 0.05 * ((i % 7) as f32 - 3.0)],
                mass: 1.0 / total,
                vel: [-speed * s, speed * c, 0.0],
                spare: 0.0,
            }
        })
        .collect()
}

#[allow(dead_code)] // the tests include this file for its kernel, not for `main`
fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(16_384);
    let steps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let dt = 1e-3;
    let bodies = disc(n);
    let device = Device::best()?;
    // A first call loads the kernel; the timed one is the second.
    simulate(&device, &bodies, 1, dt)?;
    let start = std::time::Instant::now();
    let done = simulate(&device, &bodies, steps, dt)?;
    let took = start.elapsed().as_secs_f64();
    let rate = (n * n * steps) as f64 / took;
    println!("{n} bodies, {steps} steps on {}: {:.1} ms ({:.1} G interactions/s)", device.id(), took * 1e3, rate / 1e9);
    let mut host = bodies.clone();
    for _ in 0..steps {
        host = step_host(&host, dt);
    }
    let differ = done.iter().zip(&host).filter(|(a, b)| a != b).count();
    println!("bodies that differ from plain Rust on the CPU: {differ}");
    assert_eq!(differ, 0, "the device and the CPU disagree");
    let (before, after) = (energy(&bodies), energy(&done));
    let drift = ((after - before) / before).abs();
    println!("energy before {before:.6}, after {after:.6} (relative drift {drift:.2e})");
    assert!(drift < 1e-3, "the energy drifted by {drift:.2e}");
    Ok(())
}
