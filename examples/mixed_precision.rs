//! Mixed precision: a matrix-vector product `y = A x` whose matrix and vector are stored
//! as `f16` (half the bytes of `f32`, so half the memory traffic) and whose products and
//! sums are computed in `f32`. One warp per row: each lane sums a strided part of the row,
//! then the warp adds the 32 partial sums with shuffles.
//!
//! `cargo run --release --example mixed_precision` runs 4096 × 4096 on the best device and
//! checks every row against a sum in `f64` of the same `f16` inputs, within the bound of
//! any order of `f32` summation (`n u / (1 - n u)` times the sum of the magnitudes, `u` =
//! 2^-24, `n` = the row's length). It also prints what accumulating in `f16` would cost.

use gpu_runtime::{Device, DeviceVec, f16, gpu, kernel};

/// Rows per block of 256 threads (one warp each).
pub const ROWS_PER_BLOCK: usize = 8;

/// `y[r] = Σ_c a[r * cols + c] * x[c]`, in `f32`, one warp per row.
#[kernel]
pub fn gemv_f16(a: &[f16], x: &[f16], cols: usize, y: &mut [f32]) {
    let lane = gpu::lane_id() as usize;
    let row = gpu::block_idx().x as usize * ROWS_PER_BLOCK + gpu::thread_idx().x as usize / 32;
    let mut acc = 0.0f32;
    if row < y.len() {
        let mut c = lane;
        while c < cols {
            acc += a[row * cols + c].to_f32() * x[c].to_f32();
            c += 32;
        }
    }
    // Every lane of the warp takes part in the shuffles (rows past the end add zeros).
    let mut offset = 16;
    while offset > 0 {
        acc += gpu::shfl_down_sync(u32::MAX, acc, offset);
        offset /= 2;
    }
    if lane == 0 && row < y.len() {
        y[row] = acc;
    }
}

/// The launch's grid for `rows` rows.
pub fn grid(rows: usize) -> u32 {
    rows.div_ceil(ROWS_PER_BLOCK) as u32
}

/// `A x` on `device`.
pub fn gemv(device: &Device, a: &[f16], x: &[f16], rows: usize, cols: usize) -> gpu_runtime::Result<Vec<f32>> {
    let (da, dx) = (DeviceVec::from_slice_on(device, a)?, DeviceVec::from_slice_on(device, x)?);
    let mut y = DeviceVec::<f32>::zeros_on(device, rows)?;
    gemv_f16::launch(grid(rows), 256u32, &da, &dx, cols, &mut y)?;
    y.to_vec()
}

/// A `rows × cols` matrix and a vector of `f16` values in [-1, 1), from a fixed sequence.
pub fn inputs(rows: usize, cols: usize, seed: u64) -> (Vec<f16>, Vec<f16>) {
    let mut s = seed;
    let mut next = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        f16::from_f32(((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
    };
    let a = (0..rows * cols).map(|_| next()).collect();
    let x = (0..cols).map(|_| next()).collect();
    (a, x)
}

/// Each row's error against the exact product of the `f16` inputs (a sum in `f64`, whose
/// rounding is far below `f32`'s), divided by the bound of `f32` summation in any order;
/// every ratio must be at most 1.
pub fn error_ratios(a: &[f16], x: &[f16], cols: usize, y: &[f32]) -> Vec<f64> {
    let n = cols as f64;
    let u = f32::EPSILON as f64 / 2.0;
    let gamma = n * u / (1.0 - n * u);
    y.iter()
        .enumerate()
        .map(|(r, &got)| {
            let row = &a[r * cols..(r + 1) * cols];
            let exact: f64 = row.iter().zip(x).map(|(p, q)| p.to_f64() * q.to_f64()).sum();
            let magnitude: f64 = row.iter().zip(x).map(|(p, q)| (p.to_f64() * q.to_f64()).abs()).sum();
            (got as f64 - exact).abs() / (gamma * magnitude).max(f64::MIN_POSITIVE)
        })
        .collect()
}

fn main() -> gpu_runtime::Result<()> {
    let device = Device::best()?;
    let (rows, cols) = (4096, 4096);
    let (a, x) = inputs(rows, cols, 7);
    let start = std::time::Instant::now();
    let y = gemv(&device, &a, &x, rows, cols)?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    let worst = error_ratios(&a, &x, cols, &y).into_iter().fold(0.0, f64::max);
    println!("{rows} x {cols} f16 matrix, f32 sums, on {}: {ms:.1} ms with the copies", device.name());
    println!("worst row error: {worst:.2e} of the f32 summation bound");
    assert!(worst <= 1.0, "a row's error exceeds the bound");
    // What the same sums in f16 would give (on the host, row 0): the storage type as the
    // accumulator loses most of the digits.
    let in_f16 = (0..cols).fold(f16::ZERO, |s, c| s + a[c] * x[c]);
    let exact: f64 = (0..cols).map(|c| a[c].to_f64() * x[c].to_f64()).sum();
    println!("row 0: exact {exact:.6}, f32 sums {:.6}, f16 sums {:.6}", y[0], in_f16.to_f32());
    Ok(())
}
