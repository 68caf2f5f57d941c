use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn limit(x: f32) -> f32 {
    static MAX: f32 = 10.0;
    x.min(MAX)
}

fn main() {}
