use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn truthy(x: i32) -> bool {
    x as bool
}

fn main() {}
