use gpu_runtime::kernel;

#[kernel(target = "cpu")]
fn fill(x: &mut [f32]) {
    x[0] = 1.0;
}

fn main() {}
