use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn early(x: f32) -> f32 {
    if x < 0.0 {
        return;
    }
    x
}

fn main() {}
