use gpu_runtime::{gpu, kernel};

const TPB: usize = 16;

#[kernel]
fn tile(x: &mut [f32]) {
    let t = gpu::shared::<f32, 16>();
    let i = gpu::thread_idx().x as usize % TPB;
    t[i] = x[i];
    x[i] = t[i];
}

fn main() {}
