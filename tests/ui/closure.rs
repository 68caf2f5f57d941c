use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn apply(x: f32) -> f32 {
    let double = |v: f32| v * 2.0;
    double(x)
}

fn main() {}
