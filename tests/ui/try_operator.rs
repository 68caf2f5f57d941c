use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn checked(x: i32) -> i32 {
    x.checked_add(1)?
}

fn main() {}
