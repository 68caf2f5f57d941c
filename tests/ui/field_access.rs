use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn real(x: f32) -> f32 {
    x.re
}

fn main() {}
