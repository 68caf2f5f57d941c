use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn fib(n: u32) -> u32 {
    fn go(n: u32) -> u32 {
        if n < 2 { n } else { go(n - 1) + go(n - 2) }
    }
    go(n % 20)
}

fn main() {}
