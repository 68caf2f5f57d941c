use gpu_runtime::{gpu, kernel};

#[kernel]
fn typed(y: &mut [f32]) {
    let a: [f32; 4] = [0.0; 4];
    let b: [f32; 3] = [1.0; 4];
    let c: [f64; 2] = [1.0f32, 2.0];
    let d: f32 = [1.0f32; 2];
    let s: [f32; 8] = gpu::shared::<f32, 8>();
    y[0] = a[0] + b[0] + d + s[0];
    y[1] = c[0] as f32;
}

fn main() {}
