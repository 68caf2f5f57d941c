//! Complex numbers on the GPU: arithmetic bit for bit against num-complex on the host
//! (`+ - *` and division are the same formulas, with no contraction), the math methods
//! within a measured bound (libdevice's `exp`, `sin`, … against the C library's), complex
//! elements in kernels and 16-byte complex scalars passed by value.

use gpu_runtime::{Complex, Complex32, Complex64, DeviceVec, LaunchConfig, gpu, kernel, vectorize};

#[vectorize]
fn mul_add(a: Complex<f32>, b: Complex<f32>, c: Complex<f32>) -> Complex<f32> {
    a * b + c
}

#[vectorize]
fn arith64(a: Complex64, b: Complex64, x: f64) -> Complex64 {
    (a * b - x) / (a + Complex::new(0.5, x)) + x / b
}

#[vectorize]
fn math32(z: Complex32) -> (Complex32, Complex32, Complex32, f32) {
    (z.exp(), z.sqrt(), z.sin(), z.norm())
}

#[kernel]
fn scale(a: &[Complex64], out: &mut [Complex64], k: Complex64) {
    let i = gpu::grid1();
    if i < a.len() {
        let mut z = a[i];
        z.re -= 1.0;
        out[i] = z * k + z.conj();
    }
}

fn points(n: usize) -> Vec<Complex32> {
    (0..n)
        .map(|i| Complex::new(((i * 7919) % 2001) as f32 / 100.0 - 10.0, ((i * 104729) % 1999) as f32 / 150.0 - 6.5))
        .collect()
}

fn same32(a: Complex32, b: Complex32) -> bool {
    let eq = |x: f32, y: f32| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
    eq(a.re, b.re) && eq(a.im, b.im)
}

/// Distance in units in the last place (0 for equal values, any NaN equal to any NaN).
fn ulps(a: f32, b: f32) -> u64 {
    if a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) {
        return 0;
    }
    if a.is_nan() || b.is_nan() || a.is_infinite() || b.is_infinite() {
        return u64::MAX;
    }
    let key = |x: f32| if x.to_bits() >> 31 == 1 { -((x.to_bits() & 0x7fff_ffff) as i64) } else { x.to_bits() as i64 };
    key(a).abs_diff(key(b))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_arithmetic_on_the_gpu_is_num_complexs() {
    let n = 1 << 20;
    let a = points(n);
    let b: Vec<Complex32> = a.iter().rev().map(|z| z * 0.3 + 0.1).collect();
    let c: Vec<Complex32> = a.iter().map(|z| z.conj()).collect();
    let got = mul_add(&a, &b, &c).unwrap();
    let bad = (0..n).filter(|&i| !same32(got[i], a[i] * b[i] + c[i])).count();
    assert_eq!(bad, 0, "a * b + c differs from num-complex at {bad} of {n} elements");
    // Device arrays, and a broadcast complex scalar.
    let (da, db) = (DeviceVec::from_slice(&a).unwrap(), DeviceVec::from_slice(&b).unwrap());
    let k = Complex::new(-1.25f32, 0.5);
    let got = mul_add(&da, &db, k).unwrap().to_vec();
    assert_eq!((0..n).filter(|&i| !same32(got[i], a[i] * b[i] + k)).count(), 0);
    // f64, with division and real operands on both sides; a 16-byte scalar by value.
    let a64: Vec<Complex64> = a.iter().map(|z| Complex::new(z.re as f64, z.im as f64)).collect();
    let b64: Vec<Complex64> = b.iter().map(|z| Complex::new(z.re as f64 * 1.5, z.im as f64 - 0.25)).collect();
    let reference = |a: Complex64, b: Complex64, x: f64| (a * b - x) / (a + Complex::new(0.5, x)) + x / b;
    let got = arith64(&a64, &b64, 0.75).unwrap();
    let bits = |z: Complex64| (z.re.to_bits(), z.im.to_bits());
    assert_eq!((0..n).filter(|&i| bits(got[i]) != bits(reference(a64[i], b64[i], 0.75))).count(), 0);
    let w = Complex::new(2.5, -1.0);
    let got = arith64(w, &b64, &[0.5, -2.0, 3.0][..]).map(|v| v.len());
    assert!(got.is_err(), "lengths 1 million and 3 do not broadcast");
    let got = arith64(w, &b64[..3], &[0.5, -2.0, 3.0][..]).unwrap();
    for (i, x) in [0.5, -2.0, 3.0].into_iter().enumerate() {
        assert_eq!(bits(got[i]), bits(reference(w, b64[i], x)), "element {i}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_math_on_the_gpu_within_its_bound() {
    let n = 1 << 20;
    let z = points(n);
    let (e, s, sn, norm) = math32(&z).unwrap();
    let mut worst = [0u64; 4];
    for i in 0..n {
        let (we, ws, wsn, wn) = (z[i].exp(), z[i].sqrt(), z[i].sin(), z[i].norm());
        let part = |a: Complex32, b: Complex32| ulps(a.re, b.re).max(ulps(a.im, b.im));
        worst[0] = worst[0].max(part(e[i], we));
        worst[1] = worst[1].max(part(s[i], ws));
        worst[2] = worst[2].max(part(sn[i], wsn));
        worst[3] = worst[3].max(ulps(norm[i], wn));
    }
    println!(
        "ulps from num-complex over {n} points: exp {}, sqrt {}, sin {}, norm {}",
        worst[0], worst[1], worst[2], worst[3]
    );
    // libdevice's f32 functions are within 2 ulps of the correctly rounded result (its
    // documented bounds), and each part here is one product of two of them: 8 ulps
    // bounds the distance from the C library's.
    assert!(worst.iter().all(|&w| w <= 8), "beyond 8 ulps: {worst:?}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_kernel_elements_and_a_16_byte_scalar() {
    let n = 100_000;
    let a: Vec<Complex64> = points(n).iter().map(|z| Complex::new(z.re as f64, z.im as f64)).collect();
    let k = Complex::new(0.125, -3.0);
    let mut out = vec![Complex::new(0.0, 0.0); n];
    scale::launch(n.div_ceil(256) as u32, 256u32, &a, &mut out, k).unwrap();
    let want = |z: Complex64| {
        let mut z = z;
        z.re -= 1.0;
        z * k + z.conj()
    };
    let bad = (0..n)
        .filter(|&i| (out[i].re.to_bits(), out[i].im.to_bits()) != (want(a[i]).re.to_bits(), want(a[i]).im.to_bits()))
        .count();
    assert_eq!(bad, 0);
    // The simulator agrees.
    let mut sim = vec![Complex::new(0.0, 0.0); n];
    scale::simulate_with(&LaunchConfig::new(n.div_ceil(256) as u32, 256u32), &a, &mut sim, k).unwrap();
    assert_eq!(sim, out);
}
