use gpu_runtime::{gpu, kernel};

#[kernel]
fn views(x: &[f32], out: &mut [f32], n: usize) {
    let part = x.slice(0, n);
    let tile = gpu::shared_2d::<f32, 4, 4>();
    let row = tile.slice(0, 4);
    let s = gpu::shared::<f32, 16>();
    out[0] = s.slice(1, n)[0];
    let (r, c) = s.shape();
}

fn main() {}
