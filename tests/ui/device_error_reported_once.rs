use gpu_runtime::{device, vectorize};

#[device]
fn half(x: f32) -> f32 {
    x / 2
}

#[vectorize(target = "cuda")]
fn quarter(x: f32) -> f32 {
    half(half(x))
}

fn main() {}
