//! Complex numbers in every kind of function, on the CPU targets and in the simulator:
//! each result equal to num-complex's on the host, bit for bit.

use gpu_runtime::{Complex, Complex32, Complex64, Device, DeviceVec, LaunchConfig, gpu, kernel, vectorize};

#[vectorize]
fn mul_add(a: Complex<f32>, b: Complex<f32>, c: Complex<f32>) -> Complex<f32> {
    a * b + c
}

#[vectorize]
fn rotate(z: Complex64, angle: f64) -> (Complex64, f64) {
    let w = z * Complex::from_polar(1.0, angle);
    (w.exp().conj() / (w + 1.0), w.norm())
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
