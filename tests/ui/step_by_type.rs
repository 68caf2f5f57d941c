use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn evens(n: u32, k: u32) -> u32 {
    let mut s = 0;
    for i in (0..n).step_by(k) {
        s += i;
    }
    s
}

fn main() {}
