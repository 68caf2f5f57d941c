use gpu_runtime::{gpu, kernel};

#[kernel]
fn warps(x: &[i32], out: &mut [u32]) {
    let i = gpu::grid1();
    gpu::syncwarp();
    let (mask, all) = gpu::match_all_sync(gpu::active_mask(), x);
    out[i] = gpu::atomic::inc(out, 0, 1u64);
    let c = gpu::shared_3d::<u8, 2, 2>();
}

fn main() {}
