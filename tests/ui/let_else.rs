use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn parse(x: i32) -> i32 {
    let y = x else { return 0 };
    y
}

fn main() {}
