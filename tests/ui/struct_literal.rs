use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn make(x: f32) -> f32 {
    let p = Point { x, y: 0.0 };
    p.x
}

fn main() {}
