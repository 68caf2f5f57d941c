//! numba-cuda's complex tests (`tests/cudapy/test_complex.py`, `test_vectorize_complex.py`,
//! `test_complex_kernel.py`), ported: the same functions over the same values, as
//! vectorized functions and kernels of ours. Numba checks against Python's `cmath`; the
//! kernel language's spec is Rust's num-complex, so the port checks against num-complex on
//! the host (bit for bit on the CPU device, within each function's bound on the GPU:
//! `tests/gpu_numba_complex.rs`). Shared by `tests/numba_complex.rs` (CI) and the GPU test.
#![allow(dead_code)]

use gpu_runtime::{Complex, Complex32, Complex64, gpu, kernel, vectorize};

/// Numba's `basic_values`: every pair of these reals.
pub const BASIC: [f64; 9] = [-0.0, 0.0, 1.0, -1.0, 1.5, -3.5, f64::NEG_INFINITY, f64::INFINITY, f64::NAN];

/// Numba's `more_values`.
pub const MORE: [f64; 9] =
    [0.0, 0.0, 1.0, -1.0, -std::f64::consts::PI, std::f64::consts::PI, f64::NEG_INFINITY, f64::INFINITY, f64::NAN];

/// Numba's `non_nan_values`.
pub const NON_NAN: [f64; 8] =
    [-0.0, 0.0, 1.0, -1.0, -std::f64::consts::PI, std::f64::consts::PI, f64::INFINITY, f64::NEG_INFINITY];

/// `complex(x, y)` for every pair `x, y` of `reals`.
pub fn pairs(reals: &[f64]) -> Vec<Complex64> {
    reals.iter().flat_map(|&x| reals.iter().map(move |&y| Complex::new(x, y))).collect()
}

pub fn narrow(v: &[Complex64]) -> Vec<Complex32> {
    v.iter().map(|z| Complex::new(z.re as f32, z.im as f32)).collect()
}

/// One vectorized function per Numba use case, for `complex64` and `complex128`
/// (`c64::exp`, `c128::exp`, …), and a table of them with the host's reference.
macro_rules! usecases {
    ($z:ident, $w:ident; $($name:ident [$values:ident, $bound:expr]: $body:expr;)*) => {
        pub mod c64 {
            use gpu_runtime::{Complex, Complex32, vectorize};
            $(
                #[vectorize]
                pub fn $name($z: Complex32, $w: Complex32) -> Complex32 {
                    $body
                }
            )*
        }
        pub mod c128 {
            use gpu_runtime::{Complex, Complex64, vectorize};
            $(
                #[vectorize]
                pub fn $name($z: Complex64, $w: Complex64) -> Complex64 {
                    $body
                }
            )*
        }
        /// A use case: its name, values, bound (norm-wise, in epsilons, for the GPU), the
        /// calls on a device and the host's results.
        pub struct Usecase {
            pub name: &'static str,
            pub values: &'static [f64],
            pub bound: f64,
            pub on32: fn(&gpu_runtime::Device, &[Complex32], &[Complex32]) -> gpu_runtime::Result<Vec<Complex32>>,
            pub host32: fn(Complex32, Complex32) -> Complex32,
            pub on64: fn(&gpu_runtime::Device, &[Complex64], &[Complex64]) -> gpu_runtime::Result<Vec<Complex64>>,
            pub host64: fn(Complex64, Complex64) -> Complex64,
        }
        pub fn usecases() -> Vec<Usecase> {
            vec![$(Usecase {
                name: stringify!($name),
                values: &$values,
                bound: $bound as f64,
                on32: |d, a, b| c64::$name::on(d, a, b),
                host32: |$z: Complex32, $w: Complex32| $body,
                on64: |d, a, b| c128::$name::on(d, a, b),
                host64: |$z: Complex64, $w: Complex64| $body,
            }),*]
        }
    };
}

// Numba's use cases (`complex_usecases.py`) in Rust's names: `z.real` is `z.re`, `phase`
// is `arg`, `polar` is `to_polar`, `rect` is `from_polar`, `log` with a base is `z.log(b)`
// (num-complex's base is real: Numba's complex base is the second value's real part here).
// Each returns a complex value (a predicate as `1` or `0`, `polar` as `(r, phi)`) so that
// one table holds them all. The bound is for the GPU (libdevice against the C library),
// in units of epsilon, norm-wise on the finite values; the arithmetic ones are exact.
usecases! {
    z, _w;
    real [BASIC, 0]: Complex::new(z.re, 0.0);
    imag [BASIC, 0]: Complex::new(z.im, 0.0);
    conjugate [BASIC, 0]: z.conj();
    phase [BASIC, 4]: Complex::new(z.arg(), 0.0);
    polar [BASIC, 4]: { let (r, phi) = z.to_polar(); Complex::new(r, phi) };
    rect [MORE, 4]: Complex::from_polar(z.re, _w.im);
    isnan [BASIC, 0]: Complex::new(if z.is_nan() { 1.0 } else { 0.0 }, 0.0);
    isinf [BASIC, 0]: Complex::new(if z.is_infinite() { 1.0 } else { 0.0 }, 0.0);
    isfinite [BASIC, 0]: Complex::new(if z.is_finite() { 1.0 } else { 0.0 }, 0.0);
    exp [MORE, 8]: z.exp();
    log [MORE, 128]: z.ln();
    log_base [MORE, 128]: z.log(_w.re.abs() + 2.0);
    log10 [MORE, 128]: z.log10();
    sqrt [MORE, 8]: z.sqrt();
    acos [MORE, 512]: z.acos();
    asin [MORE, 512]: z.asin();
    atan [NON_NAN, 128]: z.atan();
    cos [MORE, 8]: z.cos();
    sin [MORE, 8]: z.sin();
    tan [MORE, 2048]: z.tan();
    acosh [MORE, 64]: z.acosh();
    asinh [MORE, 512]: z.asinh();
    atanh [MORE, 64]: z.atanh();
    cosh [MORE, 8]: z.cosh();
    sinh [MORE, 8]: z.sinh();
    tanh [MORE, 512]: z.tanh();
}

/// `test_vectorize_complex.py`: `a * a + 1.0` over `complex128`.
#[vectorize]
pub fn vcomp(a: Complex64) -> Complex64 {
    a * a + 1.0
}

/// `test_complex_kernel.py`: `a[i] += b` with a complex scalar argument.
#[kernel]
pub fn foo(a: &mut [Complex64], b: Complex64) {
    let i = gpu::grid1();
    if i < a.len() {
        a[i] += b;
    }
}

/// The inputs of a use case: each value `z` with a second value `w` (for `rect` and
/// `log_base`, every pair; otherwise `w` is unused).
pub fn inputs(values: &[f64]) -> (Vec<Complex64>, Vec<Complex64>) {
    let zs = pairs(values);
    let mut a = Vec::new();
    let mut b = Vec::new();
    for z in &zs {
        for w in &zs {
            a.push(*z);
            b.push(*w);
        }
    }
    (a, b)
}

/// Whether `got` is `want` bit for bit, any NaN equal to any NaN.
pub fn same<T: PartialEq + Copy>(got: Complex<T>, want: Complex<T>, nan: fn(T) -> bool) -> bool {
    let part = |a: T, b: T| a == b || (nan(a) && nan(b));
    part(got.re, want.re) && part(got.im, want.im)
}

/// How far `got` is from `want`, in units of `eps`: `None` when a part is NaN, infinite or
/// finite in one and not the same in the other (an infinity of the other sign included);
/// else the distance of the finite parts over the larger finite part of `want` (norm-wise,
/// so a part near zero beside a large one is not judged in its own ulps). Bit-identical
/// parts (signed zeros included) are distance 0.
pub fn distance(got: Complex64, want: Complex64, eps: f64) -> Option<f64> {
    let mut num = 0.0f64;
    for (g, w) in [(got.re, want.re), (got.im, want.im)] {
        if g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()) {
            continue;
        }
        if !g.is_finite() || !w.is_finite() {
            return None;
        }
        num = num.max((g - w).abs());
    }
    if num == 0.0 {
        return Some(0.0);
    }
    let scale = [want.re, want.im].iter().filter(|x| x.is_finite()).fold(0.0f64, |m, x| m.max(x.abs()));
    Some(if scale == 0.0 { f64::INFINITY } else { num / scale / eps })
}

pub fn widen(z: Complex32) -> Complex64 {
    Complex::new(z.re as f64, z.im as f64)
}
