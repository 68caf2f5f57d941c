use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn add(a: f32, b: f32) -> f32 {
    a + b
}

fn main() {
    let a = vec![1.0f32, 2.0];
    let mut out = vec![0.0f64; 2];
    let _ = add::into(&mut out, &a, &a);
}
