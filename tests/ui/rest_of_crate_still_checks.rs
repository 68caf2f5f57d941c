use gpu_runtime::vectorize;

// The body has an error; the call API still exists, so `main` reports nothing more,
// and its own mistake (the String) is still found.
#[vectorize(target = "cuda")]
fn scale(x: f32) -> f32 {
    x * 2
}

fn main() {
    let a = [1.0f32, 2.0];
    let r: gpu_runtime::Result<Vec<f32>> = scale(&a);
    let s: String = scale::scalar(1.0);
    let _ = (r, s);
}
