use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn circumference(r: f64) -> f64 {
    2.0 * PI * r
}

fn main() {}
