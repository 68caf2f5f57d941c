use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn sum(x: &[f32]) -> f32 {
    x[0]
}

fn main() {}
