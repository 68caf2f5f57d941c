use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn norm(x: f32) -> f32 {
    x.magnitude()
}

fn main() {}
