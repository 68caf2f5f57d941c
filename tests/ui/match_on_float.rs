use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn bucket(x: f32) -> i32 {
    match x {
        _ => 0,
    }
}

fn main() {}
