use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

fn main() {
    let a = vec![1.0f64, 2.0];
    let b = vec![3.0f64, 4.0];
    let _ = add(&a, &b);
}
