use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn method(&self) -> f32 {
    1.0
}

fn main() {}
