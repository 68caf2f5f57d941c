use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn magnitude(x: u32) -> u32 {
    x.abs()
}

fn main() {}
