//! A histogram with atomics (Numba's `cuda.atomic.add`): each block counts into its own
//! 256 bins in shared memory, then adds them to the global bins. Checked against a loop on
//! the CPU; without a GPU it runs in the simulator.

use gpu_runtime::{Error, gpu, kernel};

#[kernel]
pub fn histogram(data: &[u8], bins: &mut [u32]) {
    let local = gpu::shared::<u32, 256>();
    let t = gpu::thread_idx().x as usize;
    let step = gpu::block_dim().x as usize;
    let mut k = t;
    while k < 256 {
        local[k] = 0;
        k += step;
    }
    gpu::sync_threads();
    let mut i = gpu::grid1();
    while i < data.len() {
        gpu::atomic::add(local, data[i] as usize, 1u32);
        i += gpu::gridsize1();
    }
    gpu::sync_threads();
    let mut k = t;
    while k < 256 {
        gpu::atomic::add(bins, k, local[k]);
        k += step;
    }
}

fn main() -> gpu_runtime::Result<()> {
    // Bytes of a skewed distribution: small values are common.
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let data: Vec<u8> = (0..(1 << 24))
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 56) as u8).min((s >> 48) as u8)
        })
        .collect();
    let mut want = vec![0u32; 256];
    for &b in &data {
        want[b as usize] += 1;
    }
    let mut bins = vec![0u32; 256];
    match histogram::launch(264u32, 256u32, &data, &mut bins) {
        Ok(()) => println!("on the GPU: {} bytes counted", data.len()),
        Err(e @ (Error::NoDriver | Error::NoDevice)) => {
            println!("no GPU found ({e}); in the simulator, on the first 100000 bytes");
            let data = &data[..100_000];
            want = vec![0u32; 256];
            for &b in data {
                want[b as usize] += 1;
            }
            histogram::simulate(4u32, 256u32, data, &mut bins)?;
        }
        Err(e) => return Err(e),
    }
    assert_eq!(bins, want, "the histogram differs from the CPU's");
    println!("bins 0..8: {:?} (the same as the CPU's)", &bins[..8]);
    Ok(())
}
