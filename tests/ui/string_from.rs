use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn label(x: f32) -> f32 {
    let s = String::from("abc");
    x
}

fn main() {}
