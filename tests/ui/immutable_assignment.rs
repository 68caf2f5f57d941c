use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn clamp_low(x: f32) -> f32 {
    let y = x;
    if y < 0.0 {
        y = 0.0;
    }
    y
}

fn main() {}
