use gpu_runtime::vectorize;

// Tuples are results (one output array per field), not parameters.
#[vectorize(target = "cuda")]
fn norm(p: (f32, f32)) -> f32 {
    p.0.hypot(p.1)
}

// Fields are scalars: a tuple inside a tuple has no array to go to.
#[vectorize(target = "cuda")]
fn nested(x: f32) -> ((f32, f32), f32) {
    ((x, x), x)
}

// One output array per field, at most `kernel_abi::MAX_OUTPUTS` of them.
#[vectorize(target = "cuda")]
fn seven(x: f32) -> (f32, f32, f32, f32, f32, f32, f32) {
    (x, x, x, x, x, x, x)
}

fn main() {}
