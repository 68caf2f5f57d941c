use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn polar(x: f32, y: f32) -> (f32, f32) {
    (x.hypot(y), y.atan2(x))
}

fn main() {}
