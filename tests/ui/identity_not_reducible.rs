use gpu_runtime::vectorize;

#[vectorize(target = "cuda", identity = 0.0)]
fn scale(x: f32) -> f32 {
    x * 2.0
}

fn main() {}
