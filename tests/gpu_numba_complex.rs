//! numba-cuda's complex tests, ported (`tests/numba_complex_defs`), on the GPU: the exact
//! use cases bit for bit against num-complex on the host, the math functions within their
//! bounds (NaNs and infinities exactly where the host has them), the vectorized and kernel
//! use cases as Numba writes them.

mod numba_complex_defs;

use gpu_runtime::{Complex, Device, LaunchConfig};
use numba_complex_defs::*;

#[test]
#[ignore = "needs a CUDA GPU"]
fn numba_cmath_usecases_on_the_gpu() {
    let gpu = Device::cuda(0).unwrap();
    let mut failures = Vec::new();
    println!("| use case | values | complex64: worst (eps) | complex128: worst (eps) | bound |");
    for u in usecases() {
        let (a, b) = inputs(u.values);
        let got = (u.on64)(&gpu, &a, &b).unwrap();
        let mut worst64 = 0.0f64;
        for i in 0..a.len() {
            match distance(got[i], (u.host64)(a[i], b[i]), f64::EPSILON) {
                Some(d) => worst64 = worst64.max(d),
                None => failures.push(format!(
                    "{} complex128 of {} and {}: {} against {}",
                    u.name,
                    a[i],
                    b[i],
                    got[i],
                    (u.host64)(a[i], b[i])
                )),
            }
        }
        let (a, b) = (narrow(&a), narrow(&b));
        let got = (u.on32)(&gpu, &a, &b).unwrap();
        let mut worst32 = 0.0f64;
        for i in 0..a.len() {
            let want = (u.host32)(a[i], b[i]);
            match distance(widen(got[i]), widen(want), f32::EPSILON as f64) {
                Some(d) => worst32 = worst32.max(d),
                None => {
                    failures.push(format!("{} complex64 of {} and {}: {} against {}", u.name, a[i], b[i], got[i], want))
                }
            }
        }
        println!("| `{}` | {} | {worst32:.1} | {worst64:.1} | {} |", u.name, u.values.len() * u.values.len(), u.bound);
        if worst32 > u.bound || worst64 > u.bound {
            failures.push(format!("{}: {worst32:.1} / {worst64:.1} eps, bound {}", u.name, u.bound));
        }
    }
    assert!(failures.is_empty(), "{} differences:\n{}", failures.len(), failures.join("\n"));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn numba_vectorize_and_kernel_usecases_on_the_gpu() {
    let a: Vec<_> = (0..5).map(|i| Complex::new(i as f64, 0.0)).collect();
    let want: Vec<_> = a.iter().map(|a| a * a + 1.0).collect();
    assert_eq!(vcomp(&a).unwrap(), want);
    let mut v = a.clone();
    foo::launch_with(&LaunchConfig::new(1u32, 5u32), &mut v, Complex::new(0.0, 2.0)).unwrap().wait().unwrap();
    assert_eq!(v, a.iter().map(|a| a + Complex::new(0.0, 2.0)).collect::<Vec<_>>());
}
