//! Device functions: helpers marked `#[device]`, defined anywhere in the crate, called from
//! vectorized functions and from each other (checked here on the CPU path; the GPU path is
//! below, on the GPU).

mod geometry {
    use gpu_runtime::device;

    #[device]
    pub fn square(x: f64) -> f64 {
        x * x
    }

    /// Calls another device function of the same module.
    #[device]
    pub(crate) fn norm(x: f64, y: f64) -> f64 {
        (square(x) + square(y)).sqrt()
    }
}

mod shading {
    use crate::geometry::norm;
    use gpu_runtime::device;

    /// Calls a device function imported from another module.
    #[device]
    pub fn falloff(x: f64, y: f64) -> f64 {
        1.0 / (1.0 + norm(x, y))
    }
}

use gpu_runtime::vectorize;
use shading::falloff;

#[vectorize]
fn light(x: f64, y: f64) -> f64 {
    falloff(x, y) * crate::geometry::square(2.0)
}

/// A vectorized function calls another through its original, `light::scalar`.
#[vectorize]
fn double_light(x: f64, y: f64) -> f64 {
    light::scalar(x, y) * 2.0
}

/// An `i64` helper: the unsuffixed literal passed to it is an `i64` (not an `i32` decided
/// before the helper's signature was known).
#[gpu_runtime::device]
fn halve(a: i64) -> i64 {
    a / 2
}

#[vectorize]
fn big_literals(x: i64) -> i64 {
    halve(5000000000) + double_big::scalar(3000000000) + x
}

#[vectorize]
fn double_big(x: i64) -> i64 {
    x * 2
}

/// Parameters named by raw identifiers.
#[vectorize]
fn raw_names(r#type: f32, r#match: f32) -> f32 {
    r#type - r#match
}

#[test]
fn literals_and_names_follow_rust() {
    assert_eq!(big_literals::cpu(&[1i64]).unwrap(), vec![2_500_000_000 + 6_000_000_000 + 1]);
    assert_eq!(raw_names::cpu(&[3.0f32], 1.0).unwrap(), vec![2.0]);
    assert!(raw_names::PTX.contains(".entry vectorize_raw_names("), "{}", raw_names::PTX);
}

#[test]
fn device_functions_compile_into_the_kernel() {
    // Everything is inlined into one kernel: no call remains.
    assert!(light::PTX.contains(".visible .entry vectorize_light("));
    assert!(!light::PTX.contains("call."), "{}", light::PTX);
    assert!(light::PTX.contains("sqrt.rn.f64"));
    let x = [0.0f64, 3.0, -1.5];
    let y = [0.0f64, 4.0, 2.0];
    let want: Vec<f64> = x.iter().zip(&y).map(|(&a, &b)| 4.0 / (1.0 + (a * a + b * b).sqrt())).collect();
    assert_eq!(light::cpu(&x, &y).unwrap(), want);
    assert_eq!(double_light::cpu(3.0, 4.0).unwrap(), vec![4.0 / 6.0 * 2.0]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_functions_run_on_the_gpu() {
    let x: Vec<f64> = (0..100_000).map(|i| (i as f64 - 50_000.0) * 0.01).collect();
    let y: Vec<f64> = x.iter().map(|v| v.sin() * 3.0).collect();
    let want: Vec<f64> = x.iter().zip(&y).map(|(&a, &b)| light::scalar(a, b)).collect();
    assert_eq!(light(&x, &y).unwrap(), want);
    let want: Vec<f64> = x.iter().zip(&y).map(|(&a, &b)| double_light::scalar(a, b)).collect();
    assert_eq!(double_light(&x, &y).unwrap(), want);
}

/// `fastmath` trades exactness for speed: the results stay close.
#[vectorize(fastmath)]
fn fast_wave(x: f32, y: f32) -> f32 {
    x.sin() * y.exp() + x * y
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fastmath_kernels_run_and_stay_close() {
    let x: Vec<f32> = (0..100_000).map(|i| (i as f32 - 50_000.0) * 6e-5).collect();
    let y: Vec<f32> = x.iter().map(|v| v.cos()).collect();
    let got = fast_wave(&x, &y).unwrap();
    for i in 0..x.len() {
        let want = fast_wave::scalar(x[i], y[i]);
        assert!((got[i] - want).abs() <= 1e-5 * (1.0 + want.abs()), "x = {}, y = {}: {} vs {want}", x[i], y[i], got[i]);
    }
    assert!(fast_wave::PTX.contains("sin.approx.ftz.f32"));
}
