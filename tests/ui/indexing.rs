use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn pick(x: f32) -> f32 {
    let table = [1.0f32, 2.0];
    table[0] * x
}

fn main() {}
