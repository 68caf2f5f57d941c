use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn messy(x: &f32, y: f32) -> f32 {
    let a = y + 1;
    println!("{a}");
    let v = vec![a];
    a
}

fn main() {}
