use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn tiny(x: f32) -> f32 {
    x * f32::TINY
}

fn main() {}
