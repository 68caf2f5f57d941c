use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn gauss(x: f32) -> f32 {
    x.erf() * 0.5
}

fn main() {}
