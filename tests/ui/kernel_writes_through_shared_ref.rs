use gpu_runtime::{gpu, kernel};

#[kernel]
fn fill(x: &[f32]) {
    let i = gpu::grid1();
    x[i] = 1.0;
}

fn main() {}
