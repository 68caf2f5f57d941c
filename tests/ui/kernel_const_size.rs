use gpu_runtime::{gpu, kernel};

const TPB: usize = 16;

#[kernel]
fn sizes(x: &mut [f32], n: usize) {
    // A variable is not a constant.
    let mut acc = [0.0f32; n];
    // Rust's `min` is not a `const fn`.
    let t = gpu::shared::<f32, { TPB.min(8) }>();
    // A size is a `usize`.
    const WIDE: u32 = 4;
    let w = gpu::shared::<f32, WIDE>();
    acc[0] = t[0] + w[0];
    x[0] = acc[0];
}

#[kernel]
fn overflowing(x: &mut [f32]) {
    // Evaluated with Rust's rules: `16 - 17` overflows `usize`.
    let t = gpu::shared::<f32, { TPB - 17 }>();
    t[0] = x[0];
    x[0] = t[0];
}

fn main() {}
