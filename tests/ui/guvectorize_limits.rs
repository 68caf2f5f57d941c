use gpu_runtime::guvectorize;

#[guvectorize("(),(),(),(),(),(),(),(),(),(),()->()")]
fn eleven(a: f32, b: f32, c: f32, d: f32, e: f32, f: f32, g: f32, h: f32, i: f32, j: f32, k: f32) -> f32 {
    a + b + c + d + e + f + g + h + i + j + k
}

struct Rows;

impl Rows {
    #[guvectorize("(n)->()")]
    fn total(x: &[f32]) -> f32 {
        let mut s = 0.0;
        for i in 0..x.len() {
            s += x[i];
        }
        s
    }
}

fn main() {}
