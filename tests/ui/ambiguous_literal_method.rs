use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn root() -> f32 {
    2.0.sqrt()
}

fn main() {}
