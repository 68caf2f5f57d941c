use gpu_runtime::vectorize;

#[vectorize(target = "CUDA")]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

fn main() {}
