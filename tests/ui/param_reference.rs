use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn read(x: &f64) -> f64 {
    *x
}

fn main() {}
