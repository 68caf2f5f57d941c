use gpu_runtime::vectorize;

#[vectorize(target = "cuda", types(f32, f64))]
fn half(x: f32) -> f32 {
    x * 0.5
}

fn main() {}
