use gpu_runtime::vectorize;

fn helper(x: f32) -> f32 {
    x * 2.0
}

#[vectorize(target = "cuda")]
fn twice(x: f32) -> f32 {
    helper(x)
}

fn main() {}
