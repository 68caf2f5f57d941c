use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
async fn later(x: f32) -> f32 {
    x
}

fn main() {}
