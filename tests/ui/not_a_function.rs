use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
struct Point {
    x: f32,
}

fn main() {}
