use gpu_runtime::vectorize;

const SCALE: f32 = 2.5;

#[vectorize(target = "cuda")]
fn scale(x: f32) -> f32 {
    x * SCALE
}

fn main() {}
