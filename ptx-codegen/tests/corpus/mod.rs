//! Functions of the kernel language, compiled by the tests that need a representative set
//! (ptxas acceptance, host differential tests).
#![allow(dead_code)]

/// Hand-written functions, each compiled natively (the reference) and kept as source text
/// (what the compiler gets): `CORPUS` holds `(name, source, native caller)`.
macro_rules! corpus {
    ($(fn $name:ident($($params:tt)*) -> $r:ty $body:block)*) => {
        pub mod native {
            #![allow(unused_mut, unused_parens, clippy::all)]
            $(pub fn $name($($params)*) -> $r $body)*
        }
        pub const CORPUS: &[(&str, &str, fn(&[u64]) -> u64)] = &[$((
            stringify!($name),
            stringify!(fn $name($($params)*) -> $r $body),
            |args: &[u64]| crate::corpus::Native::call(&native::$name, args),
        )),*];
    };
}

/// A native function called with its arguments' bits.
pub trait Native<Args> {
    fn call(&self, args: &[u64]) -> u64;
}
macro_rules! native_arity {
    ($($a:ident),*) => {
        impl<F: Fn($($a),*) -> R, R: Bits, $($a: Bits),*> Native<($($a,)*)> for F {
            #[allow(non_snake_case, unused_mut, unused_variables, unused_assignments)]
            fn call(&self, args: &[u64]) -> u64 {
                let mut i = 0;
                $(let $a = $a::from_u64(args[i]); i += 1;)*
                self($($a),*).to_u64()
            }
        }
    };
}
native_arity!();
native_arity!(A);
native_arity!(A, B);
native_arity!(A, B, C);
native_arity!(A, B, C, D);
native_arity!(A, B, C, D, E);
native_arity!(A, B, C, D, E, G);

/// A scalar's bits in the low bytes of a `u64`, as the runtime passes them.
pub trait Bits: Copy {
    fn to_u64(self) -> u64;
    fn from_u64(v: u64) -> Self;
}
macro_rules! bits_int { ($($t:ty: $u:ty),*) => {$(
    impl Bits for $t {
        fn to_u64(self) -> u64 { self as $u as u64 }
        fn from_u64(v: u64) -> Self { v as $u as $t }
    }
)*}; }
bits_int!(i8: u8, i16: u16, i32: u32, i64: u64, isize: u64, u8: u8, u16: u16, u32: u32, u64: u64, usize: u64);
impl Bits for bool {
    fn to_u64(self) -> u64 { self as u64 }
    fn from_u64(v: u64) -> Self { v as u8 != 0 }
}
impl Bits for f32 {
    fn to_u64(self) -> u64 { self.to_bits() as u64 }
    fn from_u64(v: u64) -> Self { f32::from_bits(v as u32) }
}
impl Bits for f64 {
    fn to_u64(self) -> u64 { self.to_bits() }
    fn from_u64(v: u64) -> Self { f64::from_bits(v) }
}

corpus! {
    fn add_f32(a: f32, b: f32) -> f32 { a + b }
    fn saxpy(a: f32, x: f32, y: f32) -> f32 { a * x + y }
    fn poly_f64(x: f64) -> f64 { let x2 = x * x; 1.5 * x2 - 2.0 * x + 0.25 }
    fn neg_ratio(a: f64, b: f64) -> f64 { -(a / b) }
    fn rem_f32(a: f32, b: f32) -> f32 { a % b }
    fn rem_f64(a: f64, b: f64) -> f64 { a % b }
    fn mixed_types(x: f64, n: i32) -> f32 { (x * n as f64) as f32 }
    fn wrap_i32(a: i32, b: i32) -> i32 { a * b + 7 - a }
    fn div_i64(a: i64, b: i64) -> i64 { a / b - a % b }
    fn div_u16(a: u16, b: u16) -> u16 { a / b + a % b }
    fn div_i8(a: i8, b: i8) -> i8 { a / b }
    fn mean_u32(a: u32, b: u32) -> u32 { (a + b) * 3 / 2 }
    fn sq_u64(a: u64, b: u64) -> u64 { let t = a - b; t * t + 1 }
    fn shifts(a: u32, b: i64) -> u32 { (a << b) ^ (a >> (b + 3)) }
    fn ashr_i16(a: i16, b: u8) -> i16 { a >> b }
    fn bits_u8(a: u8, b: u8) -> u8 { !(a & b) | (a ^ 0x5a) }
    fn bools(a: bool, b: bool) -> bool { (a && !b) || (a ^ b) & a | b }
    fn cmp_f32(a: f32, b: f32) -> bool { a < b || a == b && a != 0.0 }
    fn cmp_mixed(a: i32, b: u32) -> i32 { (a >= 0) as i32 + (b <= 5) as i32 * 2 + (a > -3 && b > 1) as i32 * 4 }
    fn casts_f2i(x: f32) -> i64 { x as i8 as i64 + x as u16 as i64 + x as i64 + (x as u64 / 3) as i64 }
    fn casts_i2f(a: i64, b: u64) -> f64 { a as f64 + b as f64 + a as f32 as f64 }
    fn casts_int(a: i64) -> u8 { (a as i8 as u32 as u16 as i16 as u64 >> 3) as u8 }
    fn casts_float(a: f64) -> f64 { (a as f32) as f64 - a }
    fn usize_isize(a: usize, b: isize) -> isize { a as isize - b }
    fn abs_branch(x: f32) -> f32 { if x < 0.0 { return -x; } x }
    fn if_chain(x: i32) -> i32 { if x < -10 { -1 } else if x < 10 { 0 } else if x < 100 { 1 } else { 2 } }
    fn while_collatz(n: u32) -> u32 { let mut x = n % 1000 + 1; let mut steps = 0; while x != 1 { if x % 2 == 0 { x /= 2; } else { x = 3 * x + 1; } steps += 1; } steps }
    fn loop_break(n: u32) -> u32 { let n = n % 100000; let mut i = 0u32; loop { i += 1; if i * i > n { break i; } } }
    fn for_sum(n: u32) -> u32 { let mut s = 0; for i in 0..n % 64 { s += i * i; } s }
    fn for_incl_rev(n: i8) -> i32 { let mut s = 0i32; for i in (n..=100).rev() { s = s * 3 + i as i32; } s }
    fn for_step(n: u64, k: usize) -> u64 { let mut s = 0; for i in (0..n % 1000).step_by(k) { s += i; } s }
    fn for_labels(n: u8) -> u32 { let mut s = 0u32; 'outer: for i in 0..n { for j in 0..=i { if j == 7 { continue 'outer; } if i > 200 { break 'outer; } s += j as u32; } } s }
    fn full_range(x: u8) -> u32 { let mut c = 0u32; for i in 0..=255u8 { if i <= x { c += 1; } } c }
    fn shadowing(x: i32) -> f32 { let x = x * 2; let x = x as f32 + 0.5; x }
    fn block_value(x: f64) -> f64 { let y = { let t = x * 2.0; t + 1.0 }; y * y }
    fn compound(mut a: i32, b: i32) -> i32 { a += b; a -= 1; a *= 3; a <<= 2; a >>= 1; a |= 5; a &= 0xff; a ^= b; a }
    fn neg_min(a: i32) -> i32 { -a }
    fn bool_out(x: f64, y: f64) -> bool { x * x + y * y <= 1.0 }
    fn bool_in(b: bool, x: f32) -> f32 { if b { x } else { -x } }
    fn lit_suffixes(x: f64) -> f64 { x + 1e3 + 2.5e-3_f64 + 0x10 as f64 + 0b101 as f64 + 1_000u32 as f64 }
    fn no_args() -> f32 { 42.0 }
    fn six_args(a: f32, b: f64, c: i32, d: u8, e: bool, f: i64) -> f64 { a as f64 + b + c as f64 + d as f64 + e as u8 as f64 + f as f64 }
    fn consts(x: f64) -> f64 { x * std::f64::consts::PI + f64::EPSILON - core::f64::consts::LN_2 + f32::MAX as f64 + i32::MIN as f64 + u8::BITS as f64 }
    fn float_limits(x: f32) -> bool { x == f32::INFINITY || x == f32::NEG_INFINITY || x < f32::MIN_POSITIVE || x > std::f32::MAX }
    fn method_paths(a: f32, b: f32) -> f32 { f32::max(a, b) + f32::sqrt(a.abs()) + std::primitive::f32::min(a, 2.0) }
    fn chained_methods(x: f32) -> f32 { x.abs().sqrt().mul_add(2.0, 1.0).clamp(-10.0, 10.0).powi(3) }
    fn int_chain(x: u32, k: u32) -> u32 { x.rotate_left(k).count_ones() + x.wrapping_mul(k).leading_zeros() + x.pow(3).saturating_add(k) }
    fn match_int(x: i32) -> i32 { match x { 0 => 10, 1 | 2 => 20, 3..=9 => 30, -5..0 => 40, i32::MIN..=-100 => 50, n if n > 1000 => n / 2, _ => -1 } }
    fn match_bool(b: bool, x: f32) -> f32 { match b { true => x, false => -x } }
    fn match_u8(x: u8) -> u32 { match x { 0..=9 => 1, 10..=99 => 2, _ => 3 } }
    fn match_binding(x: i64) -> i64 { match x % 7 { r @ 0..=3 => r * 2, r => r } }
    fn match_guard_last(x: u16) -> u16 { match x { 0 => 1, n if n % 2 == 0 => n / 2, n => n.wrapping_mul(3) + 1 } }
    fn match_in_loop(n: u8) -> u32 { let mut s = 0u32; for i in 0..n { s += match i % 4 { 0 => 1, 1 | 3 => { if i > 100 { break; } 2 } _ => continue }; } s }
    fn nested_helpers(x: f64, y: f64) -> f64 { const K: f64 = 0.5; fn sq(v: f64) -> f64 { v * v } fn norm(a: f64, b: f64) -> f64 { (sq(a) + sq(b)).sqrt() } norm(x, y) * K }
    fn nested_fault(a: i32, b: i32) -> i32 { fn q(a: i32, b: i32) -> i32 { a / b } fn r(a: i32, b: i32) -> i32 { a % b } q(a, b).wrapping_add(r(b, a)) }
    fn nested_loop_fault(n: u8, d: u8) -> u32 { fn step(i: u8, d: u8) -> u32 { (i / d) as u32 } let mut s = 0u32; for i in 0..n { s += step(i, d); } s }
    fn trig_mix(x: f32, y: f32) -> f32 { x.sin() * y.cos() + x.atan2(y) - x.hypot(y).ln_1p() }
}

/// Functions that need `gpu_runtime` on the host, so only their source is here.
pub const STRING_ONLY: &[(&str, &str)] = &[
    ("special_math", "fn special_math(x: f64) -> f64 { SpecialMath::erf(x) + x.erfc() + gpu_runtime::SpecialMath::gamma(x) + x.ln_gamma() }"),
];

/// Float methods of one argument (`x.m()` returning the same type).
pub const FLOAT_UNARY: &[&str] = &[
    "abs", "signum", "floor", "ceil", "round", "round_ties_even", "trunc", "fract", "sqrt", "cbrt", "exp", "exp2",
    "exp_m1", "ln", "log2", "log10", "ln_1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
    "asinh", "acosh", "atanh", "recip", "to_degrees", "to_radians", "erf", "erfc", "gamma", "ln_gamma",
];
/// Float methods of two arguments (`x.m(y)`).
pub const FLOAT_BINARY: &[&str] = &["copysign", "powf", "atan2", "hypot", "min", "max", "log", "rem_euclid", "div_euclid"];
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
    "min", "max", "rem_euclid", "div_euclid", "wrapping_add", "wrapping_sub", "wrapping_mul", "wrapping_div",
    "wrapping_rem", "saturating_add", "saturating_sub", "saturating_mul", "saturating_div",
];
/// Integer methods taking a `u32` (a shift, rotation or exponent).
pub const INT_BY_U32: &[&str] = &["pow", "rotate_left", "rotate_right", "wrapping_shl", "wrapping_shr", "wrapping_pow", "saturating_pow"];

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
            add(format!("unsigned_abs_{t}"), format!("fn unsigned_abs_{t}(x: {t}) -> {unsigned} {{ x.unsigned_abs() }}"));
        } else {
            add(format!("is_power_of_two_{t}"), format!("fn is_power_of_two_{t}(x: {t}) -> bool {{ x.is_power_of_two() }}"));
        }
    }
    out
}
