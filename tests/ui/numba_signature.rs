use gpu_runtime::vectorize;

#[vectorize(["float32(float32, float32)"], target = "cuda")]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

fn main() {}
