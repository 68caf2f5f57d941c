use gpu_runtime::device;

#[device]
fn factorial(n: u64) -> u64 {
    if n < 2 { 1 } else { n * factorial(n - 1) }
}

fn main() {}
