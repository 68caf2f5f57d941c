use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn bits(x: f32) -> f32 {
    unsafe { x }
}

fn main() {}
