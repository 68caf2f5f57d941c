use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn deref(x: f32) -> f32 {
    *x
}

fn main() {}
