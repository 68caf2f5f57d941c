use gpu_runtime::kernel;

#[kernel]
fn first(x: &[f32]) -> f32 {
    x[0]
}

fn main() {}
