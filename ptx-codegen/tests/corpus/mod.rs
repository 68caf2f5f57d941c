//! Functions of the kernel language, compiled by the tests that need a representative set
//! (ptxas acceptance, host differential tests).
#![allow(dead_code)]

/// Hand-written functions, each compiled natively (the reference) and kept as source text
/// (what the compiler gets): `CORPUS` holds `(name, source, native caller)`.
macro_rules! corpus {
    ($(fn $name:ident($($p:ident: $t:ty),*) -> $r:ty $body:block)*) => {
        pub mod native {
            #![allow(unused_mut, unused_parens, clippy::all)]
            $(pub fn $name($($p: $t),*) -> $r $body)*
        }
        pub const CORPUS: &[(&str, &str, fn(&[u64]) -> Vec<u64>)] = &[$((
            stringify!($name),
            stringify!(fn $name($($p: $t),*) -> $r $body),
            |args: &[u64]| crate::corpus::Native::call(&native::$name, args),
        )),*];
    };
}

// Calling the native functions with arguments and results as bits in `u64` words: the
// fuzzer's, which its own differential test uses the same way.
pub use kernel_fuzz::native::Native;

include!("functions.rs");

/// Functions that need `gpu_runtime` on the host, so only their source is here.
pub const STRING_ONLY: &[(&str, &str)] = &[
    (
        "special_math",
        "fn special_math(x: f64) -> f64 { SpecialMath::erf(x) + x.erfc() + gpu_runtime::SpecialMath::gamma(x) + x.ln_gamma() }",
    ),
    // Complex numbers in and out, every width, through arithmetic and the math methods
    // (num-complex is the host's reference: `complex_host.rs`).
    (
        "complex_mul_add",
        "fn complex_mul_add(a: Complex<f32>, b: Complex<f32>, c: Complex<f32>) -> Complex<f32> { a * b + c }",
    ),
    (
        "complex_mandelbrot",
        "fn complex_mandelbrot(c: num_complex::Complex64, limit: u32) -> u32 {
            let mut z = Complex::new(0.0f64, 0.0);
            let mut n = 0;
            while n < limit && z.norm_sqr() <= 4.0 { z = z * z + c; n += 1; }
            n
        }",
    ),
    (
        "complex_math",
        "fn complex_math(z: Complex32, x: f32) -> (Complex32, f32, bool) {
            let w = z.exp() + z.ln() * x - z.sqrt() / z.powf(x) + z.sin().conj() + z.atanh();
            (w.powi(3), w.norm() + w.arg(), w.is_finite())
        }",
    ),
];

/// Float methods of one argument (`x.m()` returning the same type).
pub const FLOAT_UNARY: &[&str] = &[
    "abs",
    "signum",
    "floor",
    "ceil",
    "round",
    "round_ties_even",
    "trunc",
    "fract",
    "sqrt",
    "cbrt",
    "exp",
    "exp2",
    "exp_m1",
    "ln",
    "log2",
    "log10",
    "ln_1p",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "recip",
    "to_degrees",
    "to_radians",
    "erf",
    "erfc",
    "gamma",
    "ln_gamma",
];
/// Float methods of two arguments (`x.m(y)`).
pub const FLOAT_BINARY: &[&str] =
    &["copysign", "powf", "atan2", "hypot", "min", "max", "log", "rem_euclid", "div_euclid"];
pub const FLOAT_PREDICATES: &[&str] = &["is_nan", "is_infinite", "is_finite", "is_sign_negative", "is_sign_positive"];
/// Integer methods of one argument returning the same type, and the receivers they apply to.
pub const INT_UNARY: &[(&str, Receivers)] = &[
    ("abs", Receivers::Signed),
    ("signum", Receivers::Signed),
    ("swap_bytes", Receivers::All),
    ("reverse_bits", Receivers::All),
    ("wrapping_neg", Receivers::All),
    ("wrapping_abs", Receivers::Signed),
    ("saturating_neg", Receivers::Signed),
    ("saturating_abs", Receivers::Signed),
];
pub const INT_COUNTS: &[&str] = &["count_ones", "count_zeros", "leading_zeros", "trailing_zeros"];
pub const INT_BINARY: &[&str] = &[
    "min",
    "max",
    "rem_euclid",
    "div_euclid",
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "wrapping_div",
    "wrapping_rem",
    "saturating_add",
    "saturating_sub",
    "saturating_mul",
    "saturating_div",
];
/// Integer methods taking a `u32` (a shift, rotation or exponent).
pub const INT_BY_U32: &[&str] =
    &["pow", "rotate_left", "rotate_right", "wrapping_shl", "wrapping_shr", "wrapping_pow", "saturating_pow"];

#[derive(Copy, Clone, PartialEq, Eq)]
pub enum Receivers {
    All,
    Signed,
}

pub const FLOATS: &[&str] = &["f32", "f64"];
pub const INTS: &[&str] = &["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "isize", "usize"];

/// The hand-written functions and one function per method and receiver type.
pub fn corpus() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = CORPUS.iter().map(|(n, s, _)| (n.to_string(), s.to_string())).collect();
    out.extend(STRING_ONLY.iter().map(|(n, s)| (n.to_string(), s.to_string())));
    let mut add = |name: String, src: String| out.push((name, src));
    for t in FLOATS {
        for m in FLOAT_UNARY {
            add(format!("{m}_{t}"), format!("fn {m}_{t}(x: {t}) -> {t} {{ x.{m}() }}"));
        }
        for m in FLOAT_BINARY {
            add(format!("{m}_{t}"), format!("fn {m}_{t}(x: {t}, y: {t}) -> {t} {{ x.{m}(y) }}"));
        }
        for m in FLOAT_PREDICATES {
            add(format!("{m}_{t}"), format!("fn {m}_{t}(x: {t}) -> bool {{ x.{m}() }}"));
        }
        add(format!("mul_add_{t}"), format!("fn mul_add_{t}(x: {t}, y: {t}, z: {t}) -> {t} {{ x.mul_add(y, z) }}"));
        add(format!("clamp_{t}"), format!("fn clamp_{t}(x: {t}, y: {t}, z: {t}) -> {t} {{ x.clamp(y, z) }}"));
        add(format!("powi_{t}"), format!("fn powi_{t}(x: {t}, n: i32) -> {t} {{ x.powi(n) }}"));
    }
    for t in INTS {
        let signed = t.starts_with('i');
        let unsigned = if signed { format!("u{}", &t[1..]) } else { t.to_string() };
        for (m, r) in INT_UNARY {
            if *r == Receivers::All || signed {
                add(format!("{m}_{t}"), format!("fn {m}_{t}(x: {t}) -> {t} {{ x.{m}() }}"));
            }
        }
        for m in INT_COUNTS {
            add(format!("{m}_{t}"), format!("fn {m}_{t}(x: {t}) -> u32 {{ x.{m}() }}"));
        }
        for m in INT_BINARY {
            add(format!("{m}_{t}"), format!("fn {m}_{t}(x: {t}, y: {t}) -> {t} {{ x.{m}(y) }}"));
        }
        for m in INT_BY_U32 {
            add(format!("{m}_{t}"), format!("fn {m}_{t}(x: {t}, n: u32) -> {t} {{ x.{m}(n) }}"));
        }
        add(format!("abs_diff_{t}"), format!("fn abs_diff_{t}(x: {t}, y: {t}) -> {unsigned} {{ x.abs_diff(y) }}"));
        add(format!("clamp_{t}"), format!("fn clamp_{t}(x: {t}, y: {t}, z: {t}) -> {t} {{ x.clamp(y, z) }}"));
        if signed {
            add(
                format!("unsigned_abs_{t}"),
                format!("fn unsigned_abs_{t}(x: {t}) -> {unsigned} {{ x.unsigned_abs() }}"),
            );
        } else {
            add(
                format!("is_power_of_two_{t}"),
                format!("fn is_power_of_two_{t}(x: {t}) -> bool {{ x.is_power_of_two() }}"),
            );
            add(format!("div_ceil_{t}"), format!("fn div_ceil_{t}(x: {t}, y: {t}) -> {t} {{ x.div_ceil(y) }}"));
        }
    }
    out
}
