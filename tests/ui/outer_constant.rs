use gpu_runtime::vectorize;

mod settings {
    pub const SCALE: f32 = 2.5;
}
use settings::SCALE;

// An imported constant is not copied into the kernel (the macro sees only its own module's
// constants in this file).
#[vectorize(target = "cuda")]
fn scale(x: f32) -> f32 {
    x * SCALE
}

fn main() {}
