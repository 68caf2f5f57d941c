//! numba-cuda's complex tests, ported (`tests/numba_complex_defs`), on the CPU device: each
//! use case over Numba's values, bit for bit against num-complex (the CPU device runs the
//! same lowering as the GPU, with the C library's math functions, as the host does).

mod numba_complex_defs;

use gpu_runtime::{Complex, Device};
use numba_complex_defs::*;

#[test]
fn numba_cmath_usecases_on_the_cpu_device() {
    let cpu = Device::cpu();
    for u in usecases() {
        let (a, b) = inputs(u.values);
        let got = (u.on64)(&cpu, &a, &b).unwrap();
        for i in 0..a.len() {
            let want = (u.host64)(a[i], b[i]);
            assert!(
                same(got[i], want, f64::is_nan),
                "{} complex128 of {} and {}: {} against {}",
                u.name,
                a[i],
                b[i],
                got[i],
                want
            );
        }
        let (a, b) = (narrow(&a), narrow(&b));
        let got = (u.on32)(&cpu, &a, &b).unwrap();
        for i in 0..a.len() {
            let want = (u.host32)(a[i], b[i]);
            assert!(
                same(got[i], want, f32::is_nan),
                "{} complex64 of {} and {}: {} against {}",
                u.name,
                a[i],
                b[i],
                got[i],
                want
            );
        }
    }
}

#[test]
fn numba_vectorize_and_kernel_usecases_on_the_cpu_device() {
    let a: Vec<_> = (0..5).map(|i| Complex::new(i as f64, 0.0)).collect();
    let want: Vec<_> = a.iter().map(|a| a * a + 1.0).collect();
    assert_eq!(vcomp::on(&Device::cpu(), &a).unwrap(), want);
    let mut v = a.clone();
    foo::simulate(1u32, 5u32, &mut v, Complex::new(0.0, 2.0)).unwrap();
    assert_eq!(v, a.iter().map(|a| a + Complex::new(0.0, 2.0)).collect::<Vec<_>>());
}
