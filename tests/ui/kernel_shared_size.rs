use gpu_runtime::{gpu, kernel};

#[kernel]
fn tile(x: &mut [f32], n: usize) {
    let t = gpu::shared::<f32, n>();
    t[0] = x[0];
}

fn main() {}
