use gpu_runtime::{vectorize, Float};

#[vectorize(target = "cuda", types(f32, f64))]
fn half<T: Float>(x: T) -> T {
    x * T::from_f64(0.5)
}

fn main() {
    let _ = half(&[1i32, 2, 3]);
}
