use gpu_runtime::{gpu, kernel};

#[kernel]
fn fill(x: &mut [f32]) {
    let i = gpu::thread_idx().x;
    x[i] = 1.0;
}

fn main() {}
