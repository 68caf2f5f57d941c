//! Complex numbers in every kind of function, on the CPU targets and in the simulator:
//! each result equal to num-complex's on the host, bit for bit.

use gpu_runtime::ndarray::{ArrayD, IxDyn};
use gpu_runtime::{
    Complex, Complex32, Complex64, Device, DeviceVec, LaunchConfig, c64, device, gpu, guvectorize, kernel, vectorize,
};

#[vectorize]
fn mul_add(a: Complex<f32>, b: Complex<f32>, c: Complex<f32>) -> Complex<f32> {
    a * b + c
}

#[vectorize]
fn rotate(z: Complex64, angle: f64) -> (Complex64, f64) {
    let w = z * Complex::from_polar(1.0, angle);
    (w.exp().conj() / (w + 1.0), w.norm())
}

/// A device function over complex values, called from every kind of function below.
#[device]
fn twist(z: Complex64, k: f64) -> Complex64 {
    z * Complex::new(k.cos(), k.sin()) + z.conj() * 0.5
}

#[vectorize]
fn twisted(z: Complex64, k: f64) -> Complex64 {
    twist(z, k)
}

/// num-complex's shorthand constructors in a device function and a vectorized one (once
/// taken for calls of device functions named `c32` and `c64`, which do not exist).
#[device]
fn spin(z: Complex64, k: f64) -> Complex64 {
    z * c64(k.cos(), k.sin())
}

#[vectorize]
fn spun(z: Complex64, k: f32) -> (Complex64, Complex32) {
    (spin(z, k as f64), gpu_runtime::c32(k, 1.0) * k)
}

/// The complex dot product with conjugation (`Σ conj(x) y`), and the norm of `x`: a core
/// of complex values, a complex and a real output.
#[guvectorize("(n),(n)->(),()")]
fn cdot(x: &[Complex64], y: &[Complex64]) -> (Complex64, f64) {
    let mut acc = Complex::new(0.0f64, 0.0);
    let mut sq = 0.0;
    for i in 0..x.len() {
        acc += x[i].conj() * twist(y[i], 0.0);
        sq += x[i].norm_sqr();
    }
    (acc, sq.sqrt())
}

#[vectorize]
fn csum(a: Complex64, b: Complex64) -> Complex64 {
    a + b
}

#[kernel]
fn scale_rows(a: &[Complex32], out: &mut [Complex32], k: Complex32) {
    let i = gpu::grid1();
    if i < a.len() {
        let mut z = a[i];
        z.im += 1.0;
        out[i] = z * k - z.re;
    }
}

fn data(n: usize) -> (Vec<Complex32>, Vec<Complex32>, Vec<Complex32>) {
    let f = |i: usize, s: f32| Complex::new((i as f32 * 0.37 + s).sin() * 3.0, (i as f32 * 0.11 - s).cos() * 2.0);
    ((0..n).map(|i| f(i, 0.1)).collect(), (0..n).map(|i| f(i, 0.5)).collect(), (0..n).map(|i| f(i, 0.9)).collect())
}

fn bits32(v: &[Complex32]) -> Vec<(u32, u32)> {
    v.iter().map(|z| (z.re.to_bits(), z.im.to_bits())).collect()
}

#[test]
fn vectorized_complex_matches_num_complex_on_every_cpu_target() {
    let (a, b, c) = data(10_000);
    let want: Vec<Complex32> = a.iter().zip(&b).zip(&c).map(|((a, b), c)| a * b + c).collect();
    assert_eq!(bits32(&mul_add::cpu(&a, &b, &c).unwrap()), bits32(&want));
    assert_eq!(bits32(&mul_add::parallel(&a, &b, &c).unwrap()), bits32(&want));
    let cpu = Device::cpu();
    assert_eq!(bits32(&mul_add::on(&cpu, &a, &b, &c).unwrap()), bits32(&want));
    // A broadcast complex scalar, and device arrays of the CPU device.
    let k = Complex::new(0.5f32, -2.0);
    let want: Vec<Complex32> = a.iter().zip(&b).map(|(a, b)| a * b + k).collect();
    assert_eq!(bits32(&mul_add::on(&cpu, &a, &b, k).unwrap()), bits32(&want));
    let (da, db) = (DeviceVec::from_slice_on(&cpu, &a).unwrap(), DeviceVec::from_slice_on(&cpu, &b).unwrap());
    let out = mul_add::on(&cpu, &da, &db, k).unwrap();
    assert_eq!(bits32(&out), bits32(&want));
}

#[test]
fn complex_f64_with_tuples_and_broadcast_scalars() {
    let z: Vec<Complex64> = (0..3000).map(|i| Complex::new(i as f64 * 1e-3 - 1.5, (i as f64 * 0.7).sin())).collect();
    let reference = |z: Complex64, angle: f64| {
        let w = z * Complex::from_polar(1.0, angle);
        (w.exp().conj() / (w + 1.0), w.norm())
    };
    let want: Vec<(Complex64, f64)> = z.iter().map(|z| reference(*z, 0.25)).collect();
    let bits = |v: &[(Complex64, f64)]| {
        v.iter().map(|(w, n)| (w.re.to_bits(), w.im.to_bits(), n.to_bits())).collect::<Vec<_>>()
    };
    let (w, n) = rotate::on(&Device::cpu(), &z, 0.25).unwrap();
    let got: Vec<(Complex64, f64)> = w.into_iter().zip(n).collect();
    assert_eq!(bits(&got), bits(&want));
    let (w, n) = rotate::cpu(&z, 0.25).unwrap();
    let got: Vec<(Complex64, f64)> = w.into_iter().zip(n).collect();
    assert_eq!(bits(&got), bits(&want));
    // A complex f64 broadcast to every element: 16 bytes by value.
    let one = Complex::new(0.75, -0.5);
    let (w, _) = rotate::on(&Device::cpu(), one, &[0.0, 1.0, 2.0][..]).unwrap();
    let want: Vec<Complex64> = [0.0, 1.0, 2.0].iter().map(|a| reference(one, *a).0).collect();
    assert_eq!(
        w.iter().map(|w| (w.re.to_bits(), w.im.to_bits())).collect::<Vec<_>>(),
        want.iter().map(|w| (w.re.to_bits(), w.im.to_bits())).collect::<Vec<_>>()
    );
}

#[test]
fn complex_kernel_on_the_cpu_device_and_in_the_simulator() {
    let (a, _, _) = data(1000);
    let k = Complex::new(1.5f32, 0.25);
    let want: Vec<Complex32> = a
        .iter()
        .map(|z| {
            let mut z = *z;
            z.im += 1.0;
            z * k - z.re
        })
        .collect();
    let mut out = vec![Complex::new(0.0f32, 0.0); a.len()];
    scale_rows::launch_with(&LaunchConfig::new(4u32, 256u32).device(&Device::cpu()), &a, &mut out, k)
        .unwrap()
        .wait()
        .unwrap();
    assert_eq!(bits32(&out), bits32(&want));
    let mut out = vec![Complex::new(0.0f32, 0.0); a.len()];
    scale_rows::simulate(4u32, 256u32, &a, &mut out, k).unwrap();
    assert_eq!(bits32(&out), bits32(&want));
}

#[test]
fn complex_reduction_folds_in_order_on_the_cpu_device() {
    let v: Vec<Complex64> = (0..5000).map(|i| Complex::new((i as f64 * 0.3).sin(), 1.0 / (1.0 + i as f64))).collect();
    let fold = |v: &[Complex64]| v[1..].iter().fold(v[0], |a, b| a + b);
    let got = csum::reduce_on(&Device::cpu(), &v).unwrap();
    // The CPU device folds in a tree, as the GPU does: the sum may round differently from a
    // left fold, but not by more than the terms' rounding.
    let want = fold(&v);
    assert!((got - want).norm() <= 1e-12 * v.len() as f64, "{got} against {want}");
    let got = csum::reduce_on(&Device::cpu(), &v[..1]).unwrap();
    assert_eq!(got, v[0]);
}

#[test]
fn complex_in_device_functions_and_generalized_functions() {
    let z: Vec<Complex64> = (0..300).map(|i| Complex::new((i as f64).sin(), (i as f64 * 0.5).cos())).collect();
    let twist_host = |z: Complex64, k: f64| z * Complex::new(k.cos(), k.sin()) + z.conj() * 0.5;
    let want: Vec<Complex64> = z.iter().map(|z| twist_host(*z, 0.3)).collect();
    assert_eq!(twisted::on(&Device::cpu(), &z, 0.3).unwrap(), want);
    assert_eq!(twisted::cpu(&z, 0.3).unwrap(), want);
    let k: Vec<f32> = (0..300).map(|i| i as f32 * 0.01 - 1.0).collect();
    let want: (Vec<Complex64>, Vec<Complex32>) = z
        .iter()
        .zip(&k)
        .map(|(z, &k)| (z * Complex::new((k as f64).cos(), (k as f64).sin()), Complex::new(k, 1.0) * k))
        .unzip();
    assert_eq!(spun::on(&Device::cpu(), &z, &k).unwrap(), want);
    assert_eq!(spun::cpu(&z, &k).unwrap(), want);
    // Rows of 30: the dot of each row of x with the same row of y.
    let (rows, n) = (10, 30);
    let y: Vec<Complex64> = z.iter().map(|z| z * 0.5 + 1.0).collect();
    let x_arr = ArrayD::from_shape_vec(IxDyn(&[rows, n]), z.clone()).unwrap();
    let y_arr = ArrayD::from_shape_vec(IxDyn(&[rows, n]), y.clone()).unwrap();
    let reference = |r: usize| {
        let mut acc = Complex::new(0.0f64, 0.0);
        let mut sq = 0.0;
        for i in r * n..(r + 1) * n {
            acc += z[i].conj() * twist_host(y[i], 0.0);
            sq += z[i].norm_sqr();
        }
        (acc, sq.sqrt())
    };
    for (dots, norms) in [
        cdot::cpu(&x_arr, &y_arr).unwrap(),
        cdot::on(&Device::cpu(), &x_arr, &y_arr).unwrap(),
        cdot::simulate(&x_arr, &y_arr).unwrap(),
    ] {
        for r in 0..rows {
            let (d, s) = reference(r);
            assert_eq!((dots[[r]], norms[[r]]), (d, s), "row {r}");
        }
    }
}

#[test]
fn complex_nd_broadcasting_on_the_cpu_device_and_the_cpu() {
    use gpu_runtime::ndarray::Array2;
    let a = Array2::from_shape_fn((40, 30), |(i, j)| Complex::new(i as f32 * 0.5 - 3.0, j as f32 * 0.25));
    let row = Array2::from_shape_fn((1, 30), |(_, j)| Complex::new(1.0f32, -(j as f32) * 0.1));
    let k = Complex::new(0.0f32, 1.0);
    let want = a.indexed_iter().map(|((_, j), z)| z * row[[0, j]] + k).collect::<Vec<_>>();
    let cpu = Device::cpu();
    for got in [cpu.scope(|| mul_add::nd(&a, &row, k)).unwrap(), mul_add::nd_cpu(&a, &row, k).unwrap()] {
        assert_eq!(got.shape(), &[40, 30]);
        assert_eq!(bits32(&got.iter().copied().collect::<Vec<_>>()), bits32(&want));
    }
}
