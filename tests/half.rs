//! `half::f16` and `half::bf16` on the CPU paths and in the simulator: every operation
//! against the `half` crate's own, bit for bit (a NaN's payload aside). The GPU runs the
//! same functions in `tests/gpu_half.rs`.

mod half_defs;

use gpu_runtime::{bf16, f16};
use half_defs::reference::{all_bf16, all_f16, canon16, pairs, rounded_sign_inputs};
use half_defs::*;

const F16_EXP: u16 = 0x7c00;
const BF16_EXP: u16 = 0x7f80;

fn same_f16(a: f16, b: f16) -> bool {
    canon16(a.to_bits(), F16_EXP) == canon16(b.to_bits(), F16_EXP)
}

fn same_bf16(a: bf16, b: bf16) -> bool {
    canon16(a.to_bits(), BF16_EXP) == canon16(b.to_bits(), BF16_EXP)
}

#[test]
fn vectorized_half_functions_on_the_cpu_are_the_half_crates() {
    let p = pairs(20_000, 1);
    let a: Vec<f16> = p.iter().map(|&(a, _)| f16::from_bits(a)).collect();
    let b: Vec<f16> = p.iter().map(|&(_, b)| f16::from_bits(b)).collect();
    let y = axpy_h::parallel(f16::from_f32(1.5), &a, &b).unwrap();
    for k in 0..a.len() {
        let want = f16::from_f32(1.5) * a[k] + b[k];
        assert!(same_f16(y[k], want), "{:?} * {:?} + {:?}: {:?}, not {want:?}", 1.5, a[k], b[k], y[k]);
    }
    let (r, n, m, ge) = f16_ops::cpu(&a, &b).unwrap();
    for k in 0..a.len() {
        assert!(same_f16(r[k], a[k] % b[k]));
        assert!(same_f16(n[k], -a[k] * b[k]));
        assert!(same_f16(m[k], a[k].min(b[k]).copysign(b[k])));
        assert_eq!(ge[k], a[k] >= b[k]);
    }
    let (neg, negative, copied) = signs::cpu(&a, &b).unwrap();
    for k in 0..a.len() {
        assert_eq!((neg[k].to_bits(), negative[k]), ((-a[k]).to_bits(), a[k].is_sign_negative()));
        assert_eq!(copied[k].to_bits(), a[k].copysign(b[k]).to_bits());
    }
    let a: Vec<bf16> = p.iter().map(|&(a, _)| bf16::from_bits(a)).collect();
    let b: Vec<bf16> = p.iter().map(|&(_, b)| bf16::from_bits(b)).collect();
    let (d, q, m, lt) = bf_ops::cpu(&a, &b).unwrap();
    for k in 0..a.len() {
        assert!(same_bf16(d[k], a[k] - b[k]) && same_bf16(q[k], a[k] / b[k]) && same_bf16(m[k], a[k].max(b[k])));
        assert_eq!(lt[k], a[k] < b[k]);
    }
    let x = rounded_sign_inputs(&a, &b);
    let (sum_sign, product_negative, x_sign) = bf_rounded_signs::cpu(&a, &b, &x).unwrap();
    for k in 0..a.len() {
        assert_eq!(sum_sign[k].to_bits(), bf16::ONE.copysign(a[k] + b[k]).to_bits());
        assert_eq!(product_negative[k], (a[k] * b[k]).is_sign_negative());
        assert_eq!(x_sign[k].to_bits(), bf16::ZERO.copysign(bf16::from_f32(x[k])).to_bits());
    }
    let (w32, w64, wb) = widen::cpu(&all_f16(), &all_bf16()).unwrap();
    for (k, (x, y)) in all_f16().into_iter().zip(all_bf16()).enumerate() {
        assert!(w32[k].to_bits() == x.to_f32().to_bits() || x.is_nan() && w32[k].is_nan());
        assert!(w64[k].to_bits() == x.to_f64().to_bits() || x.is_nan() && w64[k].is_nan());
        assert!(wb[k].to_bits() == y.to_f32().to_bits() || y.is_nan() && wb[k].is_nan());
    }
}

#[test]
fn reduce_over_f16_rounds_each_step_as_the_fold_does() {
    let x: Vec<f16> = (0..200).map(|i| f16::from_f32((i % 17) as f32 * 0.125)).collect();
    let cpu = gpu_runtime::Device::cpu();
    let got = cpu.scope(|| add_h::reduce(&x)).unwrap();
    // The fold's order may differ from left to right; each step rounds to f16 either way,
    // and a sum of multiples of 1/8 stays exact while it is below 2^11 / 8 = 256 (here 196.75).
    let want: f32 = x.iter().map(|v| v.to_f32()).sum();
    assert_eq!(got.to_f32(), want);
    assert_eq!(cpu.scope(|| add_h::reduce(&[] as &[f16])).unwrap(), f16::ZERO);
}

#[test]
fn kernels_over_half_slices_in_the_simulator() {
    let x: Vec<f16> = (0..300).map(|i| f16::from_f32(i as f32 * 0.37 - 40.0)).collect();
    let y0: Vec<f16> = (0..300).map(|i| f16::from_f32(1.0 / (i as f32 + 1.0))).collect();
    let mut y = y0.clone();
    axpy_mixed::simulate(3u32, 128u32, 2.5, &x, &mut y).unwrap();
    assert_eq!(y, half_defs::reference::axpy_mixed(2.5, &x, &y0));

    let x: Vec<bf16> = (0..200).map(|i| bf16::from_f32(i as f32 * 0.25)).collect();
    let mut sums = vec![0.0f32; 4];
    let mut shifted = vec![bf16::ZERO; 200];
    block_sum_bf16::simulate(4u32, 64u32, &x, &mut sums, &mut shifted).unwrap();
    for (b, s) in sums.iter().enumerate() {
        let want: f32 = x.iter().skip(b * 64).take(64).map(|v| v.to_f32()).sum();
        assert_eq!(*s, want, "block {b}");
    }
    for (i, got) in shifted.iter().enumerate() {
        // Lane 31 of a warp reads its own value back (shfl_down past the warp's end);
        // the last block's threads past the data hold zero.
        let from = if i % 32 == 31 { i } else { i + 1 };
        let want = if from < 200 { x[from] } else { bf16::ZERO };
        assert_eq!(*got, want, "element {i}");
    }
}

#[test]
fn half_types_by_path_and_in_gufuncs() {
    let a: Vec<bf16> = (0..100).map(|i| bf16::from_f32(i as f32 * 0.3)).collect();
    let want: Vec<bf16> = a.iter().map(|&x| x + x).collect();
    assert_eq!(by_path::sum_paths::cpu(&a, &a).unwrap(), want);
    let cpu = gpu_runtime::Device::cpu();
    assert_eq!(
        cpu.scope(|| by_path::sum_paths::reduce(&a[..10])).unwrap(),
        a[..10].iter().fold(bf16::ZERO, |s, &x| s + x)
    );

    use gpu_runtime::nd::{ArrayD, IxDyn};
    let rows = ArrayD::from_shape_fn(IxDyn(&[5, 7]), |ix| f16::from_f32((ix[0] * 7 + ix[1]) as f32 * 0.25));
    let got = dot_h::cpu(&rows, &rows).unwrap();
    let sim = dot_h::simulate(&rows, &rows).unwrap();
    for r in 0..5 {
        let want: f32 = (0..7).map(|c| rows[[r, c]].to_f32() * rows[[r, c]].to_f32()).sum();
        assert_eq!((got[[r]], sim[[r]]), (want, want), "row {r}");
    }
}

#[test]
fn a_generic_function_for_f16_and_f32() {
    let a: Vec<f16> = (0..50).map(|i| f16::from_f32(i as f32 * 0.5)).collect();
    let b: Vec<f16> = (0..50).map(|i| f16::from_f32(100.0 - i as f32)).collect();
    let t = f16::from_f32(0.25);
    let got = lerp::cpu(&a, &b, t).unwrap();
    let sim: Vec<f16> = (0..50).map(|i| a[i] + (b[i] - a[i]) * t).collect();
    assert_eq!(got, sim);
    assert_eq!(lerp::cpu(&[1.0f32], &[3.0f32], 0.5f32).unwrap(), vec![2.0]);
    assert!(lerp::PTX_F16.contains(".entry"), "{}", lerp::PTX_F16);
}
