use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn factorial(n: u64) -> u64 {
    if n < 2 { 1 } else { n * factorial(n - 1) }
}

fn main() {}
