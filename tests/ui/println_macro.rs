use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn noisy(x: f32) -> f32 {
    println!("{x}");
    x
}

fn main() {}
