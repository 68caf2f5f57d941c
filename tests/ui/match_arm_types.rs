use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn grade(n: u8) -> u8 {
    match n {
        0..=49 => 0,
        _ => 1.5,
    }
}

fn main() {}
