use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn outer(x: f32) -> f32 {
    let scale = 2.0;
    fn inner(v: f32) -> f32 {
        v * scale
    }
    inner(x)
}

fn main() {}
