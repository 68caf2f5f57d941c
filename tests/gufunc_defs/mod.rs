//! `#[guvectorize]` functions shared by `tests/gufunc.rs` (on the host and in the
//! simulator, in CI) and `tests/gpu_gufunc.rs` (on the GPU).
#![allow(dead_code)]

use gpu_runtime::{guvectorize, random};

// `examples/gufuncs.rs`, from its own source: its `dot` and `matmul` serve the tests too.
#[path = "../../examples/gufuncs.rs"]
pub mod example;
#[allow(unused_imports)]
pub use example::{dot, matmul};

/// Random numbers in a core: `out[i] = x[i] + noise`, the noise drawn from subsequence `row`
/// at offset `i`, so every row's noise is its own and the same on every target.
#[guvectorize("(n),()->(n)")]
pub fn add_noise(x: &[f32], row: u64, out: &mut [f32]) {
    for i in 0..x.len() {
        out[i] = x[i] + random::uniform_f32(99, row, i as u64);
    }
}

/// A core output and a `()` input.
#[guvectorize("(n),()->(n)")]
pub fn shift(x: &[f64], by: f64, out: &mut [f64]) {
    for i in 0..x.len() {
        out[i] = x[i] + by;
    }
}

/// The index of the largest element (the first of equals); `u32::MAX` for an empty row.
#[guvectorize("(n)->()")]
pub fn argmax(x: &[f32]) -> u32 {
    if x.is_empty() {
        return u32::MAX;
    }
    let mut best = 0;
    for i in 1..x.len() {
        if x[i] > x[best] {
            best = i;
        }
    }
    best as u32
}

/// Two `()` outputs returned together: the largest element of a row and its index (the
/// first of equals), in one pass; `(-inf, u32::MAX)` for an empty row.
#[guvectorize("(n)->(),()")]
pub fn max_at(x: &[f32]) -> (f32, u32) {
    let mut best = f32::NEG_INFINITY;
    let mut at = u32::MAX;
    for i in 0..x.len() {
        if x[i] > best || at == u32::MAX {
            best = x[i];
            at = i as u32;
        }
    }
    (best, at)
}

/// Two outputs: a row standardised (mean 0, standard deviation 1) through a parameter,
/// and its standard deviation as the return value.
#[guvectorize("(n)->(n),()")]
pub fn standardize(x: &[f32], out: &mut [f32]) -> f32 {
    let n = x.len() as f32;
    let mut mean = 0.0;
    for i in 0..x.len() {
        mean += x[i];
    }
    mean /= n;
    let mut var = 0.0;
    for i in 0..x.len() {
        var += (x[i] - mean) * (x[i] - mean);
    }
    let sd = (var / n).sqrt();
    for i in 0..x.len() {
        out[i] = (x[i] - mean) / sd;
    }
    sd
}

/// A row's softmax.
#[guvectorize("(n)->(n)")]
pub fn softmax(x: &[f32], out: &mut [f32]) {
    let mut m = f32::NEG_INFINITY;
    for i in 0..x.len() {
        m = m.max(x[i]);
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        let e = (x[i] - m).exp();
        out[i] = e;
        s += e;
    }
    for i in 0..out.len() {
        out[i] /= s;
    }
}

/// An output core size no input fixes (`m`, given with `tile::sized`).
#[guvectorize("(n)->(m)")]
pub fn tile(x: &[f32], out: &mut [f32]) {
    for i in 0..out.len() {
        out[i] = x[i % x.len()];
    }
}

/// Reads `x[at]`: past the core when `at >= n`.
#[guvectorize("(n),()->()")]
pub fn read_at(x: &[i32], at: usize) -> i32 {
    x[at]
}
