use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn inc(x: f32) -> f32 {
    x + 1
}

fn main() {}
