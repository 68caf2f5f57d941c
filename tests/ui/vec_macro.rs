use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn first(x: f32) -> f32 {
    let v = vec![x, x];
    x
}

fn main() {}
