use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn stop(x: f32) -> f32 {
    break;
    x
}

fn main() {}
