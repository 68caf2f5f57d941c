use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn circumference(r: f32) -> f32 {
    2.0 * f32::consts::PI * r
}

fn main() {}
