use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn square(x: f32) -> f32 {
    x * x
}

#[vectorize(target = "cuda")]
fn square_plus_one(x: f32) -> f32 {
    square(x) + 1.0
}

fn main() {}
