//! `half::f16` and `half::bf16` on the GPU: every operation of `tests/half_defs` against the
//! `half` crate's own on the host, bit for bit (a NaN's payload aside), over every bit
//! pattern where one operand is enough and a million pairs where two are.

mod half_defs;

use gpu_runtime::{DeviceVec, bf16, f16};
use half_defs::reference::{all_bf16, all_f16, canon16, pairs, rounded_sign_inputs};
use half_defs::*;

const F16_EXP: u16 = 0x7c00;
const BF16_EXP: u16 = 0x7f80;

fn check16(what: &str, got: &[u16], want: impl Fn(usize) -> u16, exp: u16) {
    let bad: Vec<usize> = (0..got.len()).filter(|&k| canon16(got[k], exp) != canon16(want(k), exp)).take(5).collect();
    assert!(
        bad.is_empty(),
        "{what}: {} differ, first at {:?}: {:#06x} against {:#06x}",
        bad.len(),
        bad,
        got[bad[0]],
        want(bad[0])
    );
}

fn f32_same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// `x` rounded to `f32` toward zero, with the last bit set when that was inexact
/// ("round to odd"): rounding this to a type of 2 or more fewer bits (`f16`, `bf16`)
/// gives `x` rounded once, to nearest, ties to even.
fn round_to_odd(x: f64) -> f32 {
    let t = x as f32;
    if x.is_nan() || t as f64 == x {
        return t;
    }
    let toward_zero = if (t as f64).abs() > x.abs() { f32::from_bits(t.to_bits() - 1) } else { t };
    f32::from_bits(toward_zero.to_bits() | 1)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn half_arithmetic_on_the_gpu_is_the_half_crates() {
    let p = pairs(1 << 20, 7);
    let a: Vec<f16> = p.iter().map(|&(a, _)| f16::from_bits(a)).collect();
    let b: Vec<f16> = p.iter().map(|&(_, b)| f16::from_bits(b)).collect();
    let k = f16::from_f32(-0.3);
    let y = axpy_h(k, &a, &b).unwrap();
    let bits = |v: &[f16]| v.iter().map(|x| x.to_bits()).collect::<Vec<u16>>();
    check16("f16 a * x + y", &bits(&y), |i| (k * a[i] + b[i]).to_bits(), F16_EXP);
    let (r, n, m, ge) = f16_ops(&a, &b).unwrap();
    check16("f16 %", &bits(&r), |i| (a[i] % b[i]).to_bits(), F16_EXP);
    check16("f16 -a * b", &bits(&n), |i| (-a[i] * b[i]).to_bits(), F16_EXP);
    check16("f16 min/copysign", &bits(&m), |i| a[i].min(b[i]).copysign(b[i]).to_bits(), F16_EXP);
    assert!((0..a.len()).all(|i| ge[i] == (a[i] >= b[i])), "f16 >=");
    // The sign bit, read and written on the bits (a NaN's included): exact.
    let (neg, negative, copied) = signs(&a, &b).unwrap();
    assert_eq!(bits(&neg), a.iter().map(|x| (-*x).to_bits()).collect::<Vec<_>>(), "f16 -x");
    assert!((0..a.len()).all(|i| negative[i] == a[i].is_sign_negative()), "f16 is_sign_negative");
    assert_eq!(bits(&copied), (0..a.len()).map(|i| a[i].copysign(b[i]).to_bits()).collect::<Vec<_>>(), "copysign");

    let a: Vec<bf16> = p.iter().map(|&(a, _)| bf16::from_bits(a)).collect();
    let b: Vec<bf16> = p.iter().map(|&(_, b)| bf16::from_bits(b)).collect();
    let (d, q, m, lt) = bf_ops(&a, &b).unwrap();
    let bbits = |v: &[bf16]| v.iter().map(|x| x.to_bits()).collect::<Vec<u16>>();
    check16("bf16 -", &bbits(&d), |i| (a[i] - b[i]).to_bits(), BF16_EXP);
    check16("bf16 /", &bbits(&q), |i| (a[i] / b[i]).to_bits(), BF16_EXP);
    check16("bf16 max", &bbits(&m), |i| a[i].max(b[i]).to_bits(), BF16_EXP);
    assert!((0..a.len()).all(|i| lt[i] == (a[i] < b[i])), "bf16 <");
    // The sign of a rounded value, read as a bit (where it is not a NaN's, which Rust
    // leaves open): the host copy's back end once took it for `+`.
    let x = rounded_sign_inputs(&a, &b);
    let (sum_sign, product_negative, x_sign) = bf_rounded_signs(&a, &b, &x).unwrap();
    let wrong = (0..a.len())
        .filter(|&i| {
            let (s, p, r) = (a[i] + b[i], a[i] * b[i], bf16::from_f32(x[i]));
            (!s.is_nan() && sum_sign[i].to_bits() != bf16::ONE.copysign(s).to_bits())
                || (!p.is_nan() && product_negative[i] != p.is_sign_negative())
                || (!r.is_nan() && x_sign[i].to_bits() != bf16::ZERO.copysign(r).to_bits())
        })
        .count();
    assert_eq!(wrong, 0, "bf16 signs of rounded values");
    assert!((0..a.len()).any(|i| (a[i] + b[i]).is_sign_negative() && !(a[i] + b[i]).is_nan()), "negative sums tested");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn half_conversions_on_the_gpu_are_the_half_crates() {
    let (hs, bs) = (all_f16(), all_bf16());
    let (w32, w64, wb) = widen(&hs, &bs).unwrap();
    assert!((0..hs.len()).all(|k| f32_same(w32[k], hs[k].to_f32())), "f16 to f32");
    assert!((0..hs.len()).all(|k| w64[k].to_bits() == hs[k].to_f64().to_bits() || w64[k].is_nan() && hs[k].is_nan()));
    assert!((0..bs.len()).all(|k| f32_same(wb[k], bs[k].to_f32())), "bf16 to f32");
    // f32s around every f16 and bf16 rounding boundary: every exponent the half types
    // reach (and past them: overflow, subnormals, underflow to zero), all mantissas'
    // high bits, with low bits that land exactly on, just below and just above ties.
    let mut xs = Vec::new();
    for e in 90u32..160 {
        for hi in 0u32..1024 {
            // The 13 bits below an f16's mantissa (a bf16's tie bits are in `hi`).
            for lo in [0u32, 1, 0xfff, 0x1000, 0x1001, 0x1fff] {
                for sign in [0u32, 1 << 31] {
                    xs.push(f32::from_bits(sign | e << 23 | hi << 13 | lo));
                }
            }
        }
    }
    xs.extend([f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN_POSITIVE, 0.0, -0.0]);
    let ys: Vec<f64> = xs.iter().enumerate().map(|(k, &x)| x as f64 * (1.0 + (k % 7) as f64 * 1e-12)).collect();
    let (h, b, hd, bd) = narrow(&xs, &ys).unwrap();
    let to = |v: &[f16]| v.iter().map(|x| x.to_bits()).collect::<Vec<u16>>();
    let tob = |v: &[bf16]| v.iter().map(|x| x.to_bits()).collect::<Vec<u16>>();
    check16("f16::from_f32", &to(&h), |k| f16::from_f32(xs[k]).to_bits(), F16_EXP);
    check16("bf16::from_f32", &tob(&b), |k| bf16::from_f32(xs[k]).to_bits(), BF16_EXP);
    // From `f64`, one rounding (see `correctly_rounded`): the `half` crate rounds twice
    // on x86 with F16C and drops the low 32 bits without it, so it is not the reference.
    check16("f16::from_f64", &to(&hd), |k| f16::from_f32(round_to_odd(ys[k])).to_bits(), F16_EXP);
    check16("bf16::from_f64", &tob(&bd), |k| bf16::from_f32(round_to_odd(ys[k])).to_bits(), BF16_EXP);
    let ties = (0..ys.len()).filter(|&k| f16::from_f64(ys[k]) != f16::from_f32(round_to_odd(ys[k]))).count();
    println!("f16::from_f64: the half crate differs from one rounding on {ties} of {} values", ys.len());
    println!("conversions: {} values", xs.len());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn half_kernels_device_arrays_and_reduce_on_the_gpu() {
    let x: Vec<f16> = (0..100_000).map(|i| f16::from_f32((i % 1000) as f32 * 0.37 - 180.0)).collect();
    let y0: Vec<f16> = (0..100_000).map(|i| f16::from_f32(1.0 / (i as f32 + 1.0))).collect();
    let mut y = y0.clone();
    axpy_mixed::launch(400u32, 256u32, 2.5f32, &x, &mut y).unwrap();
    assert_eq!(y, half_defs::reference::axpy_mixed(2.5, &x, &y0));
    // Device arrays of f16 in place.
    let dx = DeviceVec::from_slice(&x).unwrap();
    let mut dy = DeviceVec::from_slice(&y0).unwrap();
    axpy_mixed::launch(400u32, 256u32, 2.5f32, &dx, &mut dy).unwrap();
    assert_eq!(dy.to_vec().unwrap(), y);

    let xb: Vec<bf16> = (0..5000).map(|i| bf16::from_f32((i % 300) as f32 * 0.25)).collect();
    let (mut sums, mut shifted) = (vec![0.0f32; 79], vec![bf16::ZERO; 5000]);
    block_sum_bf16::launch(79u32, 64u32, &xb, &mut sums, &mut shifted).unwrap();
    let (mut sums2, mut shifted2) = (vec![0.0f32; 79], vec![bf16::ZERO; 5000]);
    block_sum_bf16::simulate(79u32, 64u32, &xb, &mut sums2, &mut shifted2).unwrap();
    assert_eq!((sums, shifted), (sums2, shifted2));

    // A reduce over f16 whose every partial sum is exact (multiples of 1/8 below 256).
    let small: Vec<f16> = (0..200).map(|i| f16::from_f32((i % 17) as f32 * 0.125)).collect();
    assert_eq!(add_h::reduce(&small).unwrap().to_f32(), 196.75);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn half_gufuncs_and_paths_on_the_gpu() {
    use gpu_runtime::nd::{ArrayD, IxDyn};
    let rows =
        ArrayD::from_shape_fn(IxDyn(&[1000, 33]), |ix| f16::from_f32(((ix[0] * 33 + ix[1]) % 97) as f32 * 0.125));
    let got = dot_h(&rows, &rows).unwrap();
    let want = dot_h::cpu(&rows, &rows).unwrap();
    assert_eq!(got, want);
    let a: Vec<bf16> = (0..10_000).map(|i| bf16::from_f32((i % 300) as f32 * 0.3)).collect();
    assert_eq!(by_path::sum_paths(&a, &a).unwrap(), by_path::sum_paths::cpu(&a, &a).unwrap());
    // `types(f16, f32)`: the f16 instance on the GPU.
    let x: Vec<f16> = (0..10_000).map(|i| f16::from_bits(i as u16 * 7)).collect();
    let y: Vec<f16> = (0..10_000).map(|i| f16::from_bits(0x8000 ^ (i as u16 * 13))).collect();
    let t = f16::from_f32(0.375);
    let got: Vec<u16> = lerp(&x, &y, t).unwrap().iter().map(|v| v.to_bits()).collect();
    check16("lerp::<f16>", &got, |i| (x[i] + (y[i] - x[i]) * t).to_bits(), F16_EXP);
}
