//! A sum in two launches of one kernel: each block adds its part in shared memory down to
//! 32 values, then one warp finishes with shuffles (Numba's `cuda.shfl_down_sync`), and
//! thread 0 writes the block's sum; a second launch adds the blocks' sums. f64, checked
//! against the CPU's sum; without a GPU it runs in the simulator.

use gpu_runtime::{Error, gpu, kernel};

#[kernel]
pub fn block_sum(x: &[f64], partial: &mut [f64]) {
    const BLOCK: usize = 256;
    let cache = gpu::shared::<f64, 256>();
    let t = gpu::thread_idx().x as usize;
    let mut acc = 0.0f64;
    let mut i = gpu::grid1();
    while i < x.len() {
        acc += x[i];
        i += gpu::gridsize1();
    }
    cache[t] = acc;
    gpu::sync_threads();
    let mut s = BLOCK / 2;
    while s >= 32 {
        if t < s {
            cache[t] += cache[t + s];
        }
        gpu::sync_threads();
        s /= 2;
    }
    if t < 32 {
        let mut v = cache[t];
        let mut d = 16u32;
        while d > 0 {
            v += gpu::shfl_down_sync(0xffff_ffff, v, d);
            d /= 2;
        }
        if t == 0 {
            partial[gpu::block_idx().x as usize] = v;
        }
    }
}

fn sum(x: &[f64], blocks: u32, simulate: bool) -> gpu_runtime::Result<f64> {
    let mut partial = vec![0.0f64; blocks as usize];
    let mut total = [0.0f64];
    if simulate {
        block_sum::simulate(blocks, 256u32, x, &mut partial)?;
        block_sum::simulate(1u32, 256u32, &partial, &mut total)?;
    } else {
        block_sum::launch(blocks, 256u32, x, &mut partial)?;
        block_sum::launch(1u32, 256u32, &partial, &mut total)?;
    }
    Ok(total[0])
}

fn main() -> gpu_runtime::Result<()> {
    let x: Vec<f64> = (0..(1 << 24)).map(|i| (i % 1000) as f64 / 3.0).collect();
    let got = match sum(&x, 528, false) {
        Ok(s) => {
            println!("on the GPU: the sum of {} values", x.len());
            s
        }
        Err(e @ (Error::NoDriver | Error::NoDevice)) => {
            println!("no GPU found ({e}); in the simulator, on 100000 values");
            let x = &x[..100_000];
            let s = sum(x, 8, true)?;
            let want: f64 = x.iter().sum();
            assert!((s - want).abs() <= 1e-9 * want.abs().max(1.0), "{s} vs {want}");
            println!("sum = {s} (CPU: {want})");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let want: f64 = x.iter().sum();
    assert!((got - want).abs() <= 1e-9 * want.abs().max(1.0), "{got} vs {want}");
    println!("sum = {got} (CPU: {want})");
    Ok(())
}
