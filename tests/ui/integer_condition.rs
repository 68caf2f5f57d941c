use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn nonzero(x: i32) -> i32 {
    if x { 1 } else { 0 }
}

fn main() {}
