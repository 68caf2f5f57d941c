use gpu_runtime::{gpu, kernel};

#[kernel]
fn misuse(x: &[f32], y: &mut [f32]) {
    let i = gpu::grid1();
    // Outside `unsafe`.
    *y.get_unchecked_mut(i) = 1.0;
    // Through a `&` slice.
    unsafe { *x.get_unchecked_mut(i) = 2.0 };
    // A reference into a `&mut` slice kept as a value.
    let r = unsafe { y.get_unchecked(i) };
    y[0] = *r;
}

fn main() {}
