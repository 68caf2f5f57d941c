//! Matrix multiplication with explicit kernels (`#[kernel]`, Numba's `@cuda.jit`): a naive
//! kernel, the shared-memory tiles of Numba's documented `fast_matmul`, and a register-tiled
//! kernel (each thread computes an 8×16 block of C from 128×8 tiles). Each is checked against
//! the CPU, then the seeds' table (CuPy's `dot`: CPU against GPU at 1000², 5000², 10000²)
//! is printed with the CPU side a multithreaded GEMM (`matrixmultiply`, rows split over
//! rayon's threads) and the GPU side our best kernel on device arrays.
//!
//! `cargo run --release --example matmul [-- sizes…]`. Without a GPU it runs the kernels
//! in the simulator on a small matrix instead. With `--json sizes…` it times every kernel
//! at each size and prints one JSON object per line (what `bench/compare.py --matmul`
//! reads); with `--ptx` it prints the register-tiled kernel's PTX (for `ptxas -v`).

use std::time::Instant;

use gpu_runtime::{DeviceVec, Error, gpu, kernel};
use rayon::prelude::*;

/// The side of a shared-memory tile (and threads per block along each axis).
const TPB: usize = 16;

/// One thread per element of C.
#[kernel]
fn matmul_naive(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    let (col, row) = gpu::grid2();
    if row < n && col < n {
        let mut acc = 0.0f32;
        for k in 0..n {
            acc += a[row * n + k] * b[k * n + col];
        }
        c[row * n + col] = acc;
    }
}

/// Numba's `fast_matmul`: 16×16 tiles of A and B staged in shared memory.
#[kernel]
fn matmul_tiled(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    const TPB: usize = 16;
    let sa = gpu::shared_2d::<f32, 16, 16>();
    let sb = gpu::shared_2d::<f32, 16, 16>();
    let (col, row) = gpu::grid2();
    let tx = gpu::thread_idx().x as usize;
    let ty = gpu::thread_idx().y as usize;
    let mut acc = 0.0f32;
    for t in 0..(n + TPB - 1) / TPB {
        let ac = t * TPB + tx;
        let br = t * TPB + ty;
        sa[(ty, tx)] = if row < n && ac < n { a[row * n + ac] } else { 0.0 };
        sb[(ty, tx)] = if br < n && col < n { b[br * n + col] } else { 0.0 };
        gpu::sync_threads();
        for k in 0..TPB {
            acc += sa[(ty, k)] * sb[(k, tx)];
        }
        gpu::sync_threads();
    }
    if row < n && col < n {
        c[row * n + col] = acc;
    }
}

/// Register tiling: a block of 128 threads computes a 128×128 tile of C, each thread an
/// 8×16 block held in a local array (registers: every index into it is a constant once the
/// compiler unrolls the loops over it), from 8-deep tiles of A (stored transposed) and B in
/// shared memory.
///
/// - A thread's rows are two runs of four, 64 apart, and its columns four runs of four, 32
///   apart, so each run is one 16-byte shared load (`ld.shared.v4.f32`): a step of k is 128
///   products for six loads. A warp covers 4×8 threads' blocks, so a load phase reads few
///   distinct addresses (broadcasts) and no bank twice.
/// - The A tile's rows are padded to 132 floats: the transposed stores of a warp then hit
///   32 different banks.
/// - Two tiles of each, in turns: while the threads multiply one, the next one's global
///   loads are already in flight (into registers), and they are stored into the other
///   buffer afterwards; one barrier per tile.
/// - The k loop is unrolled (its fragments `ar`/`br` are indexed by `kk`'s parity), so
///   the next step's shared loads overlap this step's multiplies.
/// - Global indices are computed in `u32` (the caller keeps n² below 2³²): 64-bit address
///   arithmetic takes registers, and `launch_bounds(128, 2)` holds the kernel to the 255
///   that let two blocks share a multiprocessor (it takes 253, with no spills).
/// - A tile that lies wholly inside the matrices is read with `get_unchecked`, after one
///   check per block that it does and that `a` and `b` hold n² elements; tiles at the
///   edges are read with range tests and bounds checks.
/// - `mul_add` is one fused multiply-add, as in Rust (a plain `a * b + c` rounds twice and
///   stays two instructions).
/// - The shared tiles are 1-D arrays, read at `buffer + kk * 132 + column`: as 2-D arrays
///   read at `(buf * 8 + kk, column)`, the row became `buf * 8 | kk` and was multiplied by
///   the row length after, an address computation per step.
///
/// How it got here, with the figures: bench/README.md ("Matrix multiplication").
///
/// The thread indices are masked to their range (the block is 8×16), which lets the
/// compiler prove the shared-memory indices in bounds and drop those checks.
#[kernel(launch_bounds(128, 2))]
fn matmul_regtile(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    let sa = gpu::shared::<f32, 2112>();
    let sb = gpu::shared::<f32, 2048>();
    let tid = ((gpu::thread_idx().y & 15) * 8 + (gpu::thread_idx().x & 7)) as usize;
    let (warp, lane) = (tid / 32, tid % 32);
    let ty = warp * 4 + lane / 8;
    let tx = lane % 8;
    let row0 = gpu::block_idx().y as usize * 128;
    let col0 = gpu::block_idx().x as usize * 128;
    let n32 = n as u32;
    // Whether this block's rows of A and columns of B lie wholly inside the matrices (and
    // the slices are as long as n² says): then its tiles are read without bounds checks.
    let inside = a.len() >= n * n && b.len() >= n * n && row0 + 128 <= n && col0 + 128 <= n;
    let mut acc = [0.0f32; 128];
    // This thread's eight elements of the tiles at k0 of A (128 rows × 8) and of B (8 × 128).
    let mut pa = [0.0f32; 8];
    let mut pb = [0.0f32; 8];
    for l in 0..8 {
        let e = tid + l * 128;
        let (gr, gk) = (row0 + e / 8, e % 8);
        pa[l] = if gr < n && gk < n { a[(gr as u32 * n32 + gk as u32) as usize] } else { 0.0 };
        let (gk2, gc) = (e / 128, col0 + e % 128);
        pb[l] = if gk2 < n && gc < n { b[(gk2 as u32 * n32 + gc as u32) as usize] } else { 0.0 };
        sa[e % 8 * 132 + e / 8] = pa[l];
        sb[e / 128 * 128 + e % 128] = pb[l];
    }
    gpu::sync_threads();
    let mut ar = [0.0f32; 16];
    let mut br = [0.0f32; 32];
    let mut buf = 0;
    let mut k0 = 0;
    while k0 < n {
        let k1 = k0 + 8;
        if inside && k1 + 8 <= n {
            for l in 0..8 {
                let e = tid + l * 128;
                let ia = (row0 + e / 8) as u32 * n32 + (k1 + e % 8) as u32;
                let ib = (k1 + e / 128) as u32 * n32 + (col0 + e % 128) as u32;
                // SAFETY: both tiles lie inside the n×n matrices (`inside`, and `k1 + 8 <= n`),
                // so `ia` and `ib` are below n² (or, should n² overflow u32, below 2³² ≤ n²),
                // and `a` and `b` hold at least n² elements (`inside`).
                pa[l] = unsafe { *a.get_unchecked(ia as usize) };
                // SAFETY: as above.
                pb[l] = unsafe { *b.get_unchecked(ib as usize) };
            }
        } else {
            for l in 0..8 {
                let e = tid + l * 128;
                let (gr, gk) = (row0 + e / 8, k1 + e % 8);
                pa[l] = if gr < n && gk < n { a[(gr as u32 * n32 + gk as u32) as usize] } else { 0.0 };
                let (gk2, gc) = (k1 + e / 128, col0 + e % 128);
                pb[l] = if gk2 < n && gc < n { b[(gk2 as u32 * n32 + gc as u32) as usize] } else { 0.0 };
            }
        }
        let (qa, qb) = (buf * 1056, buf * 1024);
        for kk in 0..8 {
            let fa = (kk % 2) * 8;
            let fb = (kk % 2) * 16;
            for i in 0..4 {
                ar[fa + i] = sa[qa + kk * 132 + ty * 4 + i];
                ar[fa + i + 4] = sa[qa + kk * 132 + 64 + ty * 4 + i];
                for q in 0..4 {
                    br[fb + q * 4 + i] = sb[qb + kk * 128 + q * 32 + tx * 4 + i];
                }
            }
            for i in 0..8 {
                for j in 0..16 {
                    acc[i * 16 + j] = ar[fa + i].mul_add(br[fb + j], acc[i * 16 + j]);
                }
            }
        }
        let other = (buf ^ 1) * 8;
        for l in 0..8 {
            let e = tid + l * 128;
            sa[(other + e % 8) * 132 + e / 8] = pa[l];
            sb[(other + e / 128) * 128 + e % 128] = pb[l];
        }
        gpu::sync_threads();
        buf ^= 1;
        k0 = k1;
    }
    for i in 0..8 {
        for j in 0..16 {
            let r = row0 + (i / 4) * 64 + ty * 4 + i % 4;
            let cc = col0 + (j / 4) * 32 + tx * 4 + j % 4;
            if r < n && cc < n {
                c[r * n + cc] = acc[i * 16 + j];
            }
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Naive,
    Tiled,
    RegTile,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Naive, Kind::Tiled, Kind::RegTile];

    /// Grid and block for an n×n product.
    fn shape(self, n: usize) -> ((u32, u32), (u32, u32)) {
        match self {
            Kind::Naive | Kind::Tiled => {
                let g = n.div_ceil(TPB) as u32;
                ((g, g), (TPB as u32, TPB as u32))
            }
            Kind::RegTile => {
                let g = n.div_ceil(128) as u32;
                ((g, g), (8, 16))
            }
        }
    }

    fn launch(
        self,
        a: &DeviceVec<f32>,
        b: &DeviceVec<f32>,
        c: &mut DeviceVec<f32>,
        n: usize,
    ) -> gpu_runtime::Result<()> {
        // The register-tiled kernel indexes in `u32`: above that, the shared-memory tiles.
        let kind = if n.saturating_mul(n) > u32::MAX as usize { Kind::Tiled } else { self };
        let (grid, block) = kind.shape(n);
        match kind {
            Kind::Naive => matmul_naive::launch(grid, block, a, b, c, n),
            Kind::Tiled => matmul_tiled::launch(grid, block, a, b, c, n),
            Kind::RegTile => matmul_regtile::launch(grid, block, a, b, c, n),
        }
    }

    fn simulate(self, a: &[f32], b: &[f32], c: &mut [f32], n: usize) -> gpu_runtime::Result<()> {
        let (grid, block) = self.shape(n);
        match self {
            Kind::Naive => matmul_naive::simulate(grid, block, a, b, c, n),
            Kind::Tiled => matmul_tiled::simulate(grid, block, a, b, c, n),
            Kind::RegTile => matmul_regtile::simulate(grid, block, a, b, c, n),
        }
    }
}

/// `c = a · b` on the CPU: `matrixmultiply`'s SGEMM on bands of rows, one per rayon task.
fn cpu_matmul(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; n * n];
    let band = n.div_ceil(rayon::current_num_threads() * 4).max(1);
    c.par_chunks_mut(band * n).enumerate().for_each(|(i, rows)| {
        let m = rows.len() / n;
        let a_rows = &a[i * band * n..];
        // SAFETY: `a_rows` holds at least `m` rows of `n` (row stride n), `b` is n×n, and
        // `rows` is m×n, all row-major with column stride 1, and `rows` is written only here.
        unsafe {
            matrixmultiply::sgemm(
                m,
                n,
                n,
                1.0,
                a_rows.as_ptr(),
                n as isize,
                1,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                rows.as_mut_ptr(),
                n as isize,
                1,
            );
        }
    });
    c
}

fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect()
}

/// The largest difference from the reference, relative to the largest reference value.
fn rel_error(got: &[f32], want: &[f32]) -> f64 {
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs() as f64)).max(1e-30);
    got.iter().zip(want).fold(0.0f64, |m, (g, w)| m.max((*g as f64 - *w as f64).abs())) / scale
}

fn gflops(n: usize, seconds: f64) -> f64 {
    2.0 * (n as f64).powi(3) / seconds / 1e9
}

/// Seconds per product: the median of `reps` timed runs (after one warm-up), as
/// `bench/compare.py` times its peers.
fn time_gpu(
    kind: Kind,
    a: &DeviceVec<f32>,
    b: &DeviceVec<f32>,
    c: &mut DeviceVec<f32>,
    n: usize,
    reps: usize,
) -> gpu_runtime::Result<f64> {
    kind.launch(a, b, c, n)?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        kind.launch(a, b, c, n)?;
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// `--json`: every kernel at every size, timed on device arrays, one JSON line each.
fn json(sizes: &[usize]) -> gpu_runtime::Result<()> {
    for &n in sizes {
        let (a, b) = (random(n * n, 3), random(n * n, 4));
        let (da, db) = (DeviceVec::from_slice(&a)?, DeviceVec::from_slice(&b)?);
        let mut dc = DeviceVec::<f32>::zeros(n * n)?;
        for kind in Kind::ALL {
            let s = time_gpu(kind, &da, &db, &mut dc, n, 5)?;
            println!(r#"{{"n": {n}, "kernel": "{kind:?}", "ms": {:.4}, "gflops": {:.1}}}"#, s * 1e3, gflops(n, s));
        }
    }
    Ok(())
}

fn main() -> gpu_runtime::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let sizes: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if args.iter().any(|a| a == "--json") {
        return json(&sizes);
    }
    if args.iter().any(|a| a == "--ptx") {
        // What the compiler made of the register-tiled kernel, for `ptxas`/`cuobjdump`.
        print!("{}", matmul_regtile::PTX);
        return Ok(());
    }
    let sizes = if sizes.is_empty() { vec![1000, 5000, 10000] } else { sizes };
    let device = match gpu_runtime::default_device() {
        Ok(d) => d,
        Err(e @ (Error::NoDriver | Error::NoDevice)) => {
            println!("no GPU found ({e}); the kernels in the simulator on a 70×70 product instead");
            let n = 70;
            let (a, b) = (random(n * n, 1), random(n * n, 2));
            let want = cpu_matmul(&a, &b, n);
            for kind in Kind::ALL {
                let mut c = vec![0.0f32; n * n];
                kind.simulate(&a, &b, &mut c, n)?;
                println!("{kind:?}: relative error {:.1e}", rel_error(&c, &want));
            }
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    println!("on {} (device {}), CPU with {} threads", device.name(), device.ordinal(), rayon::current_num_threads());

    // Every kernel against the CPU, with a size that is not a multiple of any tile.
    let n = 1000 + 13;
    let (a, b) = (random(n * n, 1), random(n * n, 2));
    let want = cpu_matmul(&a, &b, n);
    let (da, db) = (DeviceVec::from_slice(&a)?, DeviceVec::from_slice(&b)?);
    let mut dc = DeviceVec::<f32>::zeros(n * n)?;
    println!("\n{:>9} {:>12} {:>10} {:>10}", "kernel", "rel. error", "ms", "GFLOP/s");
    for kind in Kind::ALL {
        let s = time_gpu(kind, &da, &db, &mut dc, n, 3)?;
        let err = rel_error(&dc.to_vec()?, &want);
        println!("{:>9} {:>12.1e} {:>10.3} {:>10.0}", format!("{kind:?}"), err, s * 1e3, gflops(n, s));
        assert!(err < 1e-4, "{kind:?} differs from the CPU");
    }

    // The seeds' table.
    println!("\n{:>7} {:>10} {:>10} {:>8} {:>12} kernel", "n", "CPU s", "GPU s", "speedup", "GPU GFLOP/s");
    for n in sizes {
        let (a, b) = (random(n * n, 3), random(n * n, 4));
        let t = Instant::now();
        let want = cpu_matmul(&a, &b, n);
        let cpu = t.elapsed().as_secs_f64();
        let (da, db) = (DeviceVec::from_slice(&a)?, DeviceVec::from_slice(&b)?);
        let mut dc = DeviceVec::<f32>::zeros(n * n)?;
        // Our best kernel at this size (the register-tiled one has too few blocks to fill
        // the GPU at the smallest sizes).
        let mut best = (f64::INFINITY, Kind::RegTile);
        for kind in [Kind::Tiled, Kind::RegTile] {
            let s = time_gpu(kind, &da, &db, &mut dc, n, 3)?;
            let err = rel_error(&dc.to_vec()?, &want);
            assert!(err < 1e-4, "n = {n}: {kind:?} differs from the CPU ({err:.1e})");
            if s < best.0 {
                best = (s, kind);
            }
        }
        let (gpu, kind) = best;
        println!("{n:>7} {cpu:>10.3} {gpu:>10.4} {:>7.0}× {:>12.0} {kind:?}", cpu / gpu, gflops(n, gpu));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// n = 141: the register-tiled kernel's first block reads its tiles unchecked up to the
    /// last, partial k tile, and the others are edge blocks; not a multiple of 16 either.
    const N: usize = 141;

    #[test]
    fn every_kernel_matches_the_cpu_in_the_simulator() {
        let (a, b) = (random(N * N, 5), random(N * N, 6));
        let want = cpu_matmul(&a, &b, N);
        for kind in Kind::ALL {
            let mut c = vec![f32::NAN; N * N];
            kind.simulate(&a, &b, &mut c, N).unwrap();
            let err = rel_error(&c, &want);
            assert!(err < 1e-5, "{kind:?}: relative error {err:.1e}");
        }
    }

    /// Slices shorter than n² make every block take the checked reads: the first read past
    /// the end is a fault, on the GPU as in the simulator (where unchecked reads are checked
    /// too, so only the GPU run shows that the kernel's own test holds).
    fn short_input_faults(run: impl Fn(&[f32], &[f32], &mut [f32]) -> gpu_runtime::Result<()>) {
        let n = 256;
        let (a, b) = (random(n * n - 1, 7), random(n * n, 8));
        let mut c = vec![0.0f32; n * n];
        match run(&a, &b, &mut c) {
            Err(Error::ThreadFault { kernel, message, .. }) => {
                assert_eq!(kernel, "matmul_regtile");
                assert!(message.contains("the len is 65535 but the index is 65535"), "{message}");
            }
            other => panic!("a short `a` was read past its end: {other:?}"),
        }
    }

    #[test]
    fn short_input_faults_in_the_simulator() {
        short_input_faults(|a, b, c| Kind::RegTile.simulate(a, b, c, 256));
    }

    /// The GPU against the simulator (the suite of `tests/gpu_sim.rs` for this example's
    /// kernels): the same C, bit for bit, from each kernel.
    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn gpu_matches_the_simulator() {
        let (a, b) = (random(N * N, 5), random(N * N, 6));
        let (da, db) = (DeviceVec::from_slice(&a).unwrap(), DeviceVec::from_slice(&b).unwrap());
        for kind in Kind::ALL {
            let mut dc = DeviceVec::<f32>::zeros(N * N).unwrap();
            kind.launch(&da, &db, &mut dc, N).unwrap();
            let mut c = vec![f32::NAN; N * N];
            kind.simulate(&a, &b, &mut c, N).unwrap();
            let gpu = dc.to_vec().unwrap();
            let differ = gpu.iter().zip(&c).filter(|(g, s)| g.to_bits() != s.to_bits()).count();
            assert_eq!(differ, 0, "{kind:?}: {differ} elements differ from the simulator's");
        }
    }

    #[test]
    #[ignore = "needs a CUDA GPU"]
    fn gpu_short_input_faults() {
        short_input_faults(|a, b, c| {
            let (grid, block) = Kind::RegTile.shape(256);
            matmul_regtile::launch(grid, block, a, b, c, 256)
        });
    }
}
