use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn cube(x: f32) -> f32 {
    x.powi(3.0)
}

fn main() {}
