use gpu_runtime::vectorize;

#[vectorize(target = "cuda", fastmath = "yes")]
fn fast(x: f32) -> f32 {
    x.sin()
}

fn main() {}
