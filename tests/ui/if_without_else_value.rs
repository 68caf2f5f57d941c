use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn relu(x: f32) -> f32 {
    if x > 0.0 { x }
    0.0
}

fn main() {}
