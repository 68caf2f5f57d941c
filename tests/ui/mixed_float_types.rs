use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn mix(a: f32, b: f64) -> f64 {
    a + b
}

fn main() {}
