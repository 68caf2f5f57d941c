use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn log_value(x: f32) {
    let _ = x;
}

fn main() {}
