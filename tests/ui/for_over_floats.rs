use gpu_runtime::vectorize;

#[vectorize(target = "cuda")]
fn steps(x: f32) -> f32 {
    let mut s = 0.0;
    for v in 0.0..x {
        s += v;
    }
    s
}

fn main() {}
