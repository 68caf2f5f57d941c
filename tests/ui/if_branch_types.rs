use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn choose(x: f32) -> f32 {
    if x > 0.0 { x } else { 0 }
}

fn main() {}
