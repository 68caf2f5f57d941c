//! A core view in a `#[guvectorize]` function is indexed and measured; on the GPU it is
//! not a value to bind or pass, and a matrix takes a pair of indices.
use gpu_runtime::{Mat, guvectorize};

#[guvectorize("(n)->()")]
fn bound(a: &[f32]) -> f32 {
    let b = a;
    b[0]
}

#[guvectorize("(m,n)->()")]
fn one_index(a: Mat<f32>) -> f32 {
    a[3]
}

#[guvectorize("(n)->()")]
fn iterated(a: &[f32]) -> f32 {
    a.iter().sum()
}

fn main() {}
