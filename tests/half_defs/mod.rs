//! Functions over `half::f16` and `half::bf16`, shared by the CPU tests (`tests/half.rs`)
//! and the GPU tests (`tests/gpu_half.rs`), with the loops they are checked against.
#![allow(dead_code)]

use gpu_runtime::{bf16, f16, gpu, guvectorize, kernel, vectorize};

#[vectorize]
pub fn axpy_h(a: f16, x: f16, y: f16) -> f16 {
    a * x + y
}

#[vectorize]
pub fn bf_ops(a: bf16, b: bf16) -> (bf16, bf16, bf16, bool) {
    (a - b, a / b, a.max(b), a < b)
}

#[vectorize]
pub fn f16_ops(a: f16, b: f16) -> (f16, f16, f16, bool) {
    (a % b, -a * b, a.min(b).copysign(b), a >= b)
}

/// What works on the sign bit alone (exact, NaNs included).
#[vectorize]
pub fn signs(a: f16, b: f16) -> (f16, bool, f16) {
    (-a, a.is_sign_negative(), a.copysign(b))
}

/// The sign of values rounded to `bf16` (a sum, a product, a conversion), read as a bit.
#[vectorize]
pub fn bf_rounded_signs(a: bf16, b: bf16, x: f32) -> (bf16, bool, bf16) {
    (bf16::ONE.copysign(a + b), (a * b).is_sign_negative(), bf16::ZERO.copysign(bf16::from_f32(x)))
}

#[vectorize]
pub fn widen(x: f16, y: bf16) -> (f32, f64, f32) {
    (x.to_f32(), f64::from(x), y.to_f32())
}

#[vectorize]
pub fn narrow(x: f32, y: f64) -> (f16, bf16, f16, bf16) {
    (f16::from_f32(x), bf16::from_f32(x), f16::from_f64(y), bf16::from_f64(y))
}

/// A sum over `f16` (each step rounded to `f16`, as the function says).
#[vectorize(identity = f16::ZERO)]
pub fn add_h(a: f16, b: f16) -> f16 {
    a + b
}

/// Mixed precision: `f16` storage, `f32` arithmetic: `y[i] += a * x[i]` accumulated in `f32`
/// and stored back as `f16`.
#[kernel]
pub fn axpy_mixed(a: f32, x: &[f16], y: &mut [f16]) {
    let i = gpu::grid1();
    if i < x.len() {
        let acc = a * x[i].to_f32() + y[i].to_f32();
        y[i] = f16::from_f32(acc);
    }
}

/// Each block's sum of `bf16` values, accumulated in `f32` in shared memory, and a warp
/// shuffle of a `bf16` value.
#[kernel]
pub fn block_sum_bf16(x: &[bf16], sums: &mut [f32], shifted: &mut [bf16]) {
    let s = gpu::shared::<f32, 64>();
    let t = gpu::thread_idx().x as usize;
    let i = gpu::block_idx().x as usize * 64 + t;
    let v = if i < x.len() { x[i] } else { bf16::ZERO };
    s[t] = v.to_f32();
    // Every lane shuffles (the mask names the whole warp); those past the data write nothing.
    let next = gpu::shfl_down_sync(u32::MAX, v, 1);
    if i < x.len() {
        shifted[i] = next;
    }
    gpu::sync_threads();
    if t == 0 {
        let mut total = 0.0f32;
        for k in 0..64 {
            total += s[k];
        }
        sums[gpu::block_idx().x as usize] = total;
    }
}

/// One generic function for `f16` and `f32` (`types(…)`), with the operator bounds both
/// types have (`gpu_runtime::Float` also promises the math functions, which the half types
/// compute through `f32`).
#[vectorize(types(f16, f32))]
pub fn lerp<T: Copy + core::ops::Add<Output = T> + core::ops::Sub<Output = T> + core::ops::Mul<Output = T>>(
    a: T,
    b: T,
    t: T,
) -> T {
    a + (b - a) * t
}

/// Mixed precision in a gufunc: the dot product of `f16` rows, accumulated in `f32`.
#[guvectorize("(n),(n)->()")]
pub fn dot_h(a: &[f16], b: &[f16]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..a.len() {
        s += a[i].to_f32() * b[i].to_f32();
    }
    s
}

/// The types named by path, in a module that does not import them: the generated code
/// must name `half`'s types, never a bare `f16` (Rust's own unstable type).
pub mod by_path {
    #[gpu_runtime::vectorize]
    pub fn sum_paths(a: gpu_runtime::bf16, b: ::gpu_runtime::bf16) -> gpu_runtime::bf16 {
        a + b
    }
}

pub mod reference {
    use gpu_runtime::{bf16, f16};

    /// Every `f16` bit pattern, then every `bf16` one (as `f16`-sized inputs).
    pub fn all_f16() -> Vec<f16> {
        (0..=u16::MAX).map(f16::from_bits).collect()
    }

    pub fn all_bf16() -> Vec<bf16> {
        (0..=u16::MAX).map(bf16::from_bits).collect()
    }

    /// The `f32` inputs of `bf_rounded_signs` beside `a` and `b`: near `a - b`, so that
    /// they round to `bf16` with either sign.
    pub fn rounded_sign_inputs(a: &[bf16], b: &[bf16]) -> Vec<f32> {
        a.iter().zip(b).map(|(a, b)| a.to_f32() * 1.000_001 - b.to_f32()).collect()
    }

    /// `n` pairs of bit patterns from a fixed linear congruential sequence.
    pub fn pairs(n: usize, seed: u64) -> Vec<(u16, u16)> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                ((s >> 48) as u16, (s >> 32) as u16)
            })
            .collect()
    }

    pub fn axpy_mixed(a: f32, x: &[f16], y: &[f16]) -> Vec<f16> {
        x.iter().zip(y).map(|(x, y)| f16::from_f32(a * x.to_f32() + y.to_f32())).collect()
    }

    /// The bits of a value, with every NaN made one (a NaN's payload is not specified).
    pub fn canon16(bits: u16, exp_mask: u16) -> u16 {
        let nan = bits & exp_mask == exp_mask && bits & !exp_mask & 0x7fff != 0;
        if nan { 0x7fff } else { bits }
    }
}
