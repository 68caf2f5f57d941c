use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn total(values: Vec<f32>) -> f32 {
    values[0]
}

fn main() {}
