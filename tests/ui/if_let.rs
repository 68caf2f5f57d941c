use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn some(x: i32) -> i32 {
    if let 1 = x { 1 } else { 0 }
}

fn main() {}
