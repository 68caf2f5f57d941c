use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn flip(x: u32) -> u32 {
    -x
}

fn main() {}
