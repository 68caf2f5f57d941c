use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn biggest(x: f64, y: f64, z: f64) -> f64 {
    x.max(y, z)
}

fn main() {}
