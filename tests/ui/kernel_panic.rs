use gpu_runtime::{gpu, kernel};

#[kernel]
fn checked(x: &[i32], out: &mut [i32]) {
    let i = gpu::grid1();
    if x[i] < 0 {
        panic!("negative input at {i}");
    }
    assert!(x[i] < 100);
    out[i] = x[i];
}

fn main() {}
