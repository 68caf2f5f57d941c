use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn convert(x: i64) -> f64 {
    let y: f64 = x;
    y
}

fn main() {}
