use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn bump(x: u8) -> u8 {
    x + 256
}

fn main() {}
