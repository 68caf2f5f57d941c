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

/// One vectorized function per method, for `f32` and `f64` parts (`methods32::exp`, …),
/// and the same body on the host. The body names the operands `$z` and `$w`.
macro_rules! methods {
    (($z:ident, $w:ident) $($m:ident [$bound:expr]: $body:expr;)*) => {
        mod methods32 {
            use gpu_runtime::{Complex, Complex32, vectorize};
            $(
                #[vectorize]
                pub fn $m($z: Complex32, $w: Complex32) -> Complex32 {
                    $body
                }
            )*
        }
        mod methods64 {
            use gpu_runtime::{Complex, Complex64, vectorize};
            $(
                #[vectorize]
                pub fn $m($z: Complex64, $w: Complex64) -> Complex64 {
                    $body
                }
            )*
        }
        /// `(name, bound, GPU f32, host f32, GPU f64, host f64)` for each method.
        #[allow(clippy::type_complexity)]
        fn methods() -> Vec<(&'static str, f64, fn(&[Complex32], &[Complex32]) -> Vec<Complex32>, fn(Complex32, Complex32) -> Complex32, fn(&[Complex64], &[Complex64]) -> Vec<Complex64>, fn(Complex64, Complex64) -> Complex64)> {
            vec![$((
                stringify!($m),
                $bound as f64,
                |a, b| methods32::$m(a, b).unwrap(),
                |$z: Complex32, $w: Complex32| $body,
                |a, b| methods64::$m(a, b).unwrap(),
                |$z: Complex64, $w: Complex64| $body,
            )),*]
        }
    };
}

// Each method's bound: its norm-wise distance from num-complex on the host, in units of
// epsilon, measured on an H200 (2026-12-03) and rounded up to about twice that. The parts'
// functions (libdevice's against the C library's) differ by an ulp or two; formulas that
// cancel (`tan` near its poles, `asin`/`acos`/`asinh` through `ln` of a difference)
// magnify that, on the host as much as on the GPU. `powi` and `/` are arithmetic only:
// exact.
methods! {
    (z, _w)
    exp [8]: z.exp();
    ln [128]: z.ln();
    sqrt [8]: z.sqrt();
    cbrt [8]: z.cbrt();
    log2 [128]: z.log2();
    exp2 [8]: z.exp2();
    sin [8]: z.sin();
    cos [8]: z.cos();
    tan [2048]: z.tan();
    sinh [8]: z.sinh();
    cosh [8]: z.cosh();
    tanh [512]: z.tanh();
    asin [512]: z.asin();
    acos [512]: z.acos();
    atan [128]: z.atan();
    asinh [512]: z.asinh();
    acosh [64]: z.acosh();
    atanh [64]: z.atanh();
    powf [16]: z.powf(1.7);
    powc [32]: z.powc(_w);
    powi [0]: z.powi(5);
    div [0]: z / _w;
    finv [8]: z.finv();
    norm_arg [4]: Complex::new(z.norm(), z.arg());
}

#[vectorize]
fn csum(a: Complex64, b: Complex64) -> Complex64 {
    a + b
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

/// How far a result is from num-complex's: the larger part's distance in ulps, and the
/// norm-wise relative error `|got - want| / |want|` in units of the parts' epsilon (a part
/// near zero beside a large one can be many ulps off when the formula cancels, e.g. the
/// real part of `sqrt` near the negative axis, while the number as a whole is close).
fn distance<T: part_bits::Bits>(got: Complex<T>, want: Complex<T>, eps: f64) -> Option<(u64, f64)> {
    let nan = |z: Complex<T>| z.re.is_nan() || z.im.is_nan();
    if nan(got) || nan(want) {
        return (nan(got) && nan(want)).then_some((0, 0.0));
    }
    let part = |a: T, b: T| a.ulps_from(b);
    let ulps = part(got.re, want.re).max(part(got.im, want.im));
    let (dr, di) = (got.re.to_f64() - want.re.to_f64(), got.im.to_f64() - want.im.to_f64());
    let (wr, wi) = (want.re.to_f64(), want.im.to_f64());
    let scale = wr.hypot(wi);
    let rel = if scale == 0.0 || !scale.is_finite() {
        if dr == 0.0 && di == 0.0 { 0.0 } else { f64::INFINITY }
    } else {
        dr.hypot(di) / scale / eps
    };
    Some((ulps, rel))
}

mod part_bits {
    /// What the distances need of `f32` and `f64`.
    pub trait Bits: Copy {
        fn ulps_from(self, other: Self) -> u64;
        fn to_f64(self) -> f64;
        fn is_nan(self) -> bool {
            self.to_f64().is_nan()
        }
    }
    impl Bits for f32 {
        fn ulps_from(self, other: f32) -> u64 {
            super::ulps(self, other)
        }
        fn to_f64(self) -> f64 {
            self as f64
        }
    }
    impl Bits for f64 {
        fn ulps_from(self, other: f64) -> u64 {
            if self.to_bits() == other.to_bits() {
                return 0;
            }
            if self.is_infinite() || other.is_infinite() {
                return u64::MAX;
            }
            let key = |x: f64| {
                if x.to_bits() >> 63 == 1 { -((x.to_bits() & (u64::MAX >> 1)) as i128) } else { x.to_bits() as i128 }
            };
            key(self).abs_diff(key(other)) as u64
        }
        fn to_f64(self) -> f64 {
            self
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_math_on_the_gpu_within_its_bound() {
    let n = 1 << 18;
    let z = points(n);
    let w: Vec<Complex32> = z.iter().rev().map(|z| z * 0.25).collect();
    let z64: Vec<Complex64> = z.iter().map(|z| Complex::new(z.re as f64, z.im as f64)).collect();
    let w64: Vec<Complex64> = w.iter().map(|z| Complex::new(z.re as f64, z.im as f64)).collect();
    let mut failures = Vec::new();
    println!(
        "| method | f32: max ulps of a part | f32: norm-wise (eps) | f64: max ulps of a part | f64: norm-wise (eps) |"
    );
    for (name, bound, gpu32, host32, gpu64, host64) in methods() {
        let (g32, g64) = (gpu32(&z, &w), gpu64(&z64, &w64));
        let (mut u32max, mut r32max, mut u64max, mut r64max) = (0u64, 0f64, 0u64, 0f64);
        let mut classes = 0;
        for i in 0..n {
            match distance(g32[i], host32(z[i], w[i]), f32::EPSILON as f64) {
                Some((u, r)) => (u32max, r32max) = (u32max.max(u), r32max.max(r)),
                None => classes += 1,
            }
            match distance(g64[i], host64(z64[i], w64[i]), f64::EPSILON) {
                Some((u, r)) => (u64max, r64max) = (u64max.max(u), r64max.max(r)),
                None => classes += 1,
            }
        }
        println!("| `{name}` | {u32max} | {r32max:.1} | {u64max} | {r64max:.1} |");
        if classes > 0 || r32max > bound || r64max > bound {
            failures.push(format!("{name}: {classes} NaN where num-complex has none or the reverse, norm-wise {r32max:.1} / {r64max:.1} eps"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_reduction_on_the_gpu() {
    let v: Vec<Complex64> =
        (0..3_000_000).map(|i| Complex::new((i as f64 * 0.3).sin(), 1.0 / (1.0 + i as f64))).collect();
    let want = v[1..].iter().fold(v[0], |a, b| a + b);
    let got = csum::reduce(&v).unwrap();
    assert!((got - want).norm() <= 1e-12 * v.len() as f64, "{got} against {want}");
    let d = DeviceVec::from_slice(&v).unwrap();
    assert_eq!(csum::reduce(&d).unwrap(), got, "device and host inputs fold alike");
}

/// A complex fold that can fail (an integer division): its reduction reads back a fault
/// word beside the 16-byte value, which must not overwrite the value. Each operand's
/// factor is 1, or a division by zero for an `im` of -2 or less, wherever such a partial
/// sum is combined.
#[vectorize]
fn csum_checked(a: Complex64, b: Complex64) -> Complex64 {
    let ka = 1 / (a.im > -2.0) as i32;
    let kb = 1 / (b.im > -2.0) as i32;
    a * ka as f64 + b * kb as f64
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_complex_reduction_with_a_fault_check_keeps_its_value() {
    let mut v: Vec<Complex64> =
        (0..3_000_000).map(|i| Complex::new((i as f64 * 0.3).sin(), 1.0 / (1.0 + i as f64))).collect();
    let want = v[1..].iter().fold(v[0], |a, b| a + b);
    for got in [csum_checked::reduce(&v).unwrap(), csum_checked::reduce(&DeviceVec::from_slice(&v).unwrap()).unwrap()] {
        assert!(got.im > 14.0 && (got - want).norm() <= 1e-12 * v.len() as f64, "{got} against {want}");
    }
    let small = csum_checked::reduce(&v[..3]).unwrap();
    assert_eq!(small, v[0] + v[1] + v[2]);
    v[1000].im = -1e9;
    let e = csum_checked::reduce(&v).unwrap_err().to_string();
    assert!(e.contains("attempt to divide by zero"), "{e}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn complex_broadcasting_through_the_strided_entry() {
    use gpu_runtime::ndarray::Array2;
    let a = Array2::from_shape_fn((400, 300), |(i, j)| Complex::new(i as f32 * 0.5 - 3.0, j as f32 * 0.25));
    let row = Array2::from_shape_fn((1, 300), |(_, j)| Complex::new(1.0f32, -(j as f32) * 0.1));
    let k = Complex::new(0.0f32, 1.0);
    let got = mul_add::nd(&a, &row, k).unwrap();
    assert_eq!(got.shape(), &[400, 300]);
    let bad = got.indexed_iter().filter(|(ix, z)| !same32(**z, a[[ix[0], ix[1]]] * row[[0, ix[1]]] + k)).count();
    assert_eq!(bad, 0);
    // A reversed view, and a complex f64 column broadcast against it.
    let col = Array2::from_shape_fn((400, 1), |(i, _)| Complex::new(i as f64, 0.5));
    let b64 = Array2::from_shape_fn((400, 300), |(i, j)| Complex::new(j as f64 - i as f64, 1.0));
    let got = arith64::nd(b64.slice(gpu_runtime::ndarray::s![..;-1, ..]), &col, 2.0).unwrap();
    let rev = b64.slice(gpu_runtime::ndarray::s![..;-1, ..]);
    let bad = got
        .indexed_iter()
        .filter(|(ix, z)| {
            let (i, j) = (ix[0], ix[1]);
            let want = (rev[[i, j]] * col[[i, 0]] - 2.0) / (rev[[i, j]] + Complex::new(0.5, 2.0)) + 2.0 / col[[i, 0]];
            (z.re.to_bits(), z.im.to_bits()) != (want.re.to_bits(), want.im.to_bits())
        })
        .count();
    assert_eq!(bad, 0);
}
