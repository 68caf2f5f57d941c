use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn span(x: i32) -> i32 {
    let r = 0..x;
    x
}

fn main() {}
