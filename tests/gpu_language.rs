//! The kernel language on the GPU: every function of the corpus (the hand-written ones
//! shared with the compiler's tests, and one per method and receiver type) compiled with
//! `#[vectorize]`, run on 100 000 generated inputs (NaN, ±0, ±inf, subnormals and integer
//! extremes first) and compared with its `::scalar` on the CPU: bit for bit, except the
//! transcendental functions (within libdevice's documented error bound, plus one ulp for
//! the CPU's own rounding) and the sign of a zero that `min`/`max` return for `+0` vs `-0`
//! (which Rust leaves unspecified). Where the CPU panics, the GPU call must fail at the
//! same element with Rust's message; the other elements are then compared on their own.

mod common;

use std::fmt::Debug;

use common::{Gen, catch, inputs};
use gpu_runtime::{Error, SpecialMath, vectorize};

const N: usize = 100_000;

/// How a function's results are compared with the CPU's.
#[derive(Copy, Clone, Debug)]
enum Mode {
    Exact,
    /// `min`/`max`: `+0` and `-0` are the same answer.
    ZeroSignFree,
    /// At most this many units in the last place apart.
    Ulps(u64),
    /// Ulps of `max(|expected|, 1)`: for functions with zeros inside their domain, where
    /// libdevice bounds the absolute error (`ln_gamma`, `gamma`).
    UlpsOfOne(u64),
}

trait Check: Copy + Debug {
    fn check(self, want: Self, mode: Mode) -> bool;
}

macro_rules! check_exact {
    ($($t:ty),*) => {$(
        impl Check for $t {
            fn check(self, want: Self, _: Mode) -> bool {
                self == want
            }
        }
    )*};
}
check_exact!(bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! check_tuple {
    ($($t:ident $i:tt),*) => {
        impl<$($t: Check),*> Check for ($($t,)*) {
            fn check(self, want: Self, mode: Mode) -> bool {
                $(self.$i.check(want.$i, mode))&&*
            }
        }
    };
}
check_tuple!(A 0, B 1);
check_tuple!(A 0, B 1, C 2);

macro_rules! check_float {
    ($($t:ident: $bits:ident),*) => {$(
        impl Check for $t {
            fn check(self, want: Self, mode: Mode) -> bool {
                if self.is_nan() || want.is_nan() {
                    return self.is_nan() && want.is_nan();
                }
                if self.to_bits() == want.to_bits() {
                    return true;
                }
                let ulps = |a: $t, b: $t| -> u64 {
                    let key = |v: $t| -> i128 {
                        let b = v.to_bits();
                        let mag = (b & !(1 << ($bits::BITS - 1))) as i128;
                        if v.is_sign_negative() { -mag } else { mag }
                    };
                    (key(a) - key(b)).unsigned_abs() as u64
                };
                match mode {
                    Mode::Exact => false,
                    Mode::ZeroSignFree => self == 0.0 && want == 0.0,
                    Mode::Ulps(n) => ulps(self, want) <= n,
                    Mode::UlpsOfOne(n) => {
                        let unit = want.abs().max(1.0);
                        let ulp = $t::from_bits(unit.to_bits() + 1) - unit;
                        (self - want).abs() <= n as $t * ulp || ulps(self, want) <= n
                    }
                }
            }
        }
    )*};
}
check_float!(f32: u32, f64: u64);

/// Compares the GPU with the CPU results (`cpu[i]`, or the panic of element `i`). `gpu`
/// runs the kernel on all elements, or on the listed ones.
fn verify<R: Check>(
    name: &str,
    mode: Mode,
    cpu: &[Result<R, String>],
    gpu: impl Fn(Option<&[usize]>) -> gpu_runtime::Result<Vec<R>>,
    inputs_of: impl Fn(usize) -> String,
) -> Result<(), String> {
    let expected: Vec<usize> = match cpu.iter().position(Result::is_err) {
        None => (0..cpu.len()).collect(),
        Some(k) => {
            let msg = cpu[k].as_ref().unwrap_err();
            match gpu(None) {
                // The same element and Rust's very message (the GPU's is taken from the
                // original run on the host at the element that failed).
                Err(Error::KernelFault { index, message, .. }) if index as usize == k && *msg == message => {}
                Err(e) => return Err(format!("{name}: the CPU panics first at element {k} ({msg}); the GPU: {e}")),
                Ok(_) => {
                    return Err(format!("{name}: the CPU panics at element {k} ({msg}); the GPU returned results"));
                }
            }
            (0..cpu.len()).filter(|&i| cpu[i].is_ok()).collect()
        }
    };
    let got = if expected.len() == cpu.len() { gpu(None) } else { gpu(Some(&expected)) };
    let got = got.map_err(|e| format!("{name}: {e}"))?;
    if got.len() != expected.len() {
        return Err(format!("{name}: {} results for {} elements", got.len(), expected.len()));
    }
    let mut bad = expected.iter().zip(&got).filter(|(i, g)| !g.check(*cpu[**i].as_ref().unwrap(), mode));
    if let Some((i, g)) = bad.next() {
        let count = 1 + bad.count();
        return Err(format!(
            "{name}: {count} of {} elements differ ({mode:?}); first at element {i}, {}: GPU {g:?}, CPU {:?}",
            expected.len(),
            inputs_of(*i),
            cpu[*i].as_ref().unwrap()
        ));
    }
    Ok(())
}

type Case = (String, Box<dyn Fn(u64) -> Result<(), String>>);

/// One case per function: `$path` is the vectorized function, `($p: $t)*` its parameters.
macro_rules! case {
    ($cases:ident, $label:expr, [$($path:ident)::+], $mode:expr, ($($p:ident: $t:ty),*) -> $r:ty) => {
        case!($cases, $label, [$($path)::+], $mode, ($($p: $t),*) -> $r, f::scalar)
    };
    ($cases:ident, $label:expr, [$($path:ident)::+], $mode:expr, ($($p:ident: $t:ty),*) -> $r:ty, $reference:expr) => {
        let label: String = $label.to_string();
        $cases.push((label.clone(), Box::new(move |seed: u64| {
            use $($path)::+ as f;
            #[allow(unused_mut, unused_variables)]
            let mut g = Gen::new(seed);
            let params: &[&str] = &[$(stringify!($p)),*];
            let n = if params.is_empty() { 1 } else { N };
            $( let $p: Vec<$t> = inputs(n, g.next_u64()); )*
            let cpu: Vec<Result<$r, String>> = (0..n).map(|_i| catch(|| $reference($($p[_i]),*))).collect();
            let gpu = |keep: Option<&[usize]>| -> gpu_runtime::Result<Vec<$r>> {
                let host = match keep {
                    None => f($(&$p),*)?,
                    Some(_idx) => {
                        $( let $p: Vec<$t> = _idx.iter().map(|&i| $p[i]).collect(); )*
                        f($(&$p),*)?
                    }
                };
                Ok(<$r as gpu_runtime::Results>::zip(host))
            };
            let inputs_of = |_i: usize| -> String {
                let parts: Vec<String> = vec![$(format!("{} = {:?}", stringify!($p), $p[_i])),*];
                parts.join(", ")
            };
            verify(&label, $mode, &cpu, gpu, inputs_of)
        })));
    };
}

// ----- the hand-written corpus ------------------------------------------------------------

macro_rules! corpus {
    ($(fn $name:ident($($p:ident: $t:ty),*) -> $r:ty $body:block)*) => {
        mod hand {
            #![allow(unused_parens, clippy::all)]
            use super::*;
            $( #[vectorize(target = "cuda")] pub fn $name($($p: $t),*) -> $r $body )*
        }
        fn hand_written(cases: &mut Vec<Case>) {
            $( case!(cases, stringify!($name), [hand::$name], hand_mode(stringify!($name)), ($($p: $t),*) -> $r); )*
        }
    };
}

include!("../ptx-codegen/tests/corpus/functions.rs");

/// The hand-written functions that use transcendental functions.
fn hand_mode(name: &str) -> Mode {
    match name {
        // Cancellation between the terms: compare against the scale of the terms.
        "trig_mix" => Mode::UlpsOfOne(256),
        // `atan2`: libdevice's bound plus the CPU's.
        "polar" => Mode::Ulps(4),
        _ => Mode::Exact,
    }
}

// ----- one function per method ---------------------------------------------------------

macro_rules! float_methods {
    ($m:ident: $t:ident;
     exact { $($e:ident),* }
     minmax { $($mm:ident),* }
     approx { $($a:ident: $ua:expr),* }
     binary_exact { $($be:ident),* }
     binary_approx { $($ba:ident: $uba:expr),* }
     accurate { $($ac:ident: $uac:expr => $acref:path),* }
     binary_accurate { $($bac:ident: $ubac:expr => $bacref:path),* }
     special { $($s:ident: $us:expr),* }
     predicates { $($q:ident),* }
    ) => {
        mod $m {
            #![allow(unused_imports)]
            use super::*;
            $( #[vectorize] pub fn $e(x: $t) -> $t { x.$e() } )*
            $( #[vectorize] pub fn $mm(x: $t, y: $t) -> $t { x.$mm(y) } )*
            $( #[vectorize] pub fn $a(x: $t) -> $t { x.$a() } )*
            $( #[vectorize] pub fn $be(x: $t, y: $t) -> $t { x.$be(y) } )*
            $( #[vectorize] pub fn $ba(x: $t, y: $t) -> $t { x.$ba(y) } )*
            $( #[vectorize] pub fn $ac(x: $t) -> $t { x.$ac() } )*
            $( #[vectorize] pub fn $bac(x: $t, y: $t) -> $t { x.$bac(y) } )*
            $( #[vectorize] pub fn $s(x: $t) -> $t { SpecialMath::$s(x) } )*
            $( #[vectorize] pub fn $q(x: $t) -> bool { x.$q() } )*
            #[vectorize] pub fn mul_add(x: $t, y: $t, z: $t) -> $t { x.mul_add(y, z) }
            #[vectorize] pub fn clamp(x: $t, y: $t, z: $t) -> $t { x.clamp(y, z) }
            #[vectorize] pub fn powi(x: $t, n: i32) -> $t { x.powi(n) }
        }
        fn $m(cases: &mut Vec<Case>) {
            let t = stringify!($t);
            $( case!(cases, format!("{t}::{}", stringify!($e)), [$m::$e], Mode::Exact, (x: $t) -> $t); )*
            $( case!(cases, format!("{t}::{}", stringify!($mm)), [$m::$mm], Mode::ZeroSignFree, (x: $t, y: $t) -> $t); )*
            $( case!(cases, format!("{t}::{}", stringify!($a)), [$m::$a], Mode::Ulps($ua), (x: $t) -> $t); )*
            $( case!(cases, format!("{t}::{}", stringify!($be)), [$m::$be], Mode::Exact, (x: $t, y: $t) -> $t); )*
            $( case!(cases, format!("{t}::{}", stringify!($ba)), [$m::$ba], Mode::Ulps($uba), (x: $t, y: $t) -> $t); )*
            $( case!(cases, format!("{t}::{}", stringify!($ac)), [$m::$ac], Mode::Ulps($uac), (x: $t) -> $t, $acref); )*
            $( case!(cases, format!("{t}::{}", stringify!($bac)), [$m::$bac], Mode::Ulps($ubac), (x: $t, y: $t) -> $t, $bacref); )*
            $( case!(cases, format!("{t}::{}", stringify!($s)), [$m::$s], $us, (x: $t) -> $t); )*
            $( case!(cases, format!("{t}::{}", stringify!($q)), [$m::$q], Mode::Exact, (x: $t) -> bool); )*
            case!(cases, format!("{t}::mul_add"), [$m::mul_add], Mode::Exact, (x: $t, y: $t, z: $t) -> $t);
            case!(cases, format!("{t}::clamp"), [$m::clamp], Mode::Exact, (x: $t, y: $t, z: $t) -> $t);
            case!(cases, format!("{t}::powi"), [$m::powi], Mode::Exact, (x: $t, n: i32) -> $t);
        }
    };
}

macro_rules! float_module {
    ($m:ident: $t:ident, $r:ident, [$cbrt:expr, $exp:expr, $exp2:expr, $expm1:expr, $ln:expr, $log2:expr, $log10:expr, $ln1p:expr,
     $sin:expr, $cos:expr, $tan:expr, $asin:expr, $acos:expr, $atan:expr, $sinh:expr, $cosh:expr, $tanh:expr,
     $asinh:expr, $acosh:expr, $atanh:expr, $powf:expr, $atan2:expr, $hypot:expr, $log:expr,
     $erf:expr, $erfc:expr, $gamma:expr, $lgamma:expr]) => {
        float_methods! {
            $m: $t;
            exact { abs, signum, floor, ceil, round, round_ties_even, trunc, fract, sqrt, recip, to_degrees, to_radians }
            minmax { min, max }
            approx { cbrt: $cbrt, exp: $exp, exp2: $exp2, exp_m1: $expm1, ln: $ln, log2: $log2, log10: $log10,
                ln_1p: $ln1p, sin: $sin, cos: $cos, tan: $tan, asin: $asin, acos: $acos, atan: $atan, sinh: $sinh,
                cosh: $cosh, tanh: $tanh }
            binary_exact { copysign, rem_euclid, div_euclid }
            binary_approx { atan2: $atan2, log: $log }
            accurate { asinh: $asinh => reference::$r::asinh, acosh: $acosh => reference::$r::acosh, atanh: $atanh => reference::$r::atanh }
            binary_accurate { powf: $powf => reference::$r::powf, hypot: $hypot => reference::$r::hypot }
            special { erf: Mode::Ulps($erf), erfc: Mode::Ulps($erfc), gamma: Mode::UlpsOfOne($gamma), ln_gamma: Mode::UlpsOfOne($lgamma) }
            predicates { is_nan, is_infinite, is_finite, is_sign_negative, is_sign_positive }
        }
    };
}

#[path = "common/reference.rs"]
mod reference;

// libdevice's documented maximum errors (CUDA Math API), plus the CPU's own: one ulp for
// f32, two for f64 (glibc documents up to two for several double functions). `ln_gamma`
// (last) has no documented bound for -10.001 < x < -2.264 (f32) and -23.0001 < x < -2.2637
// (f64): there, the worst errors the `ulp_table` example measured (12 and 16 ulps of one).
float_module!(f32_methods: f32, f32, [2, 3, 3, 2, 2, 2, 3, 2, 3, 3, 5, 3, 3, 3, 4, 3, 3, 4, 5, 4, 5, 4, 4, 6, 3, 5, 6, 13]);
float_module!(f64_methods: f64, f64, [3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 3, 3, 5, 5, 4, 4, 4, 4, 6, 4, 7, 12, 18]);

macro_rules! int_case {
    ($cases:ident, $t:ident, $m:ident::$n:ident, ($($p:ident: $pt:ty),*) -> $r:ty) => {
        case!($cases, format!("{}::{}", $t, stringify!($n)), [$m::$n], Mode::Exact, ($($p: $pt),*) -> $r);
    };
}

macro_rules! int_methods {
    ($m:ident: $t:ident, $u:ident; $($extra:ident: ($($p:ident: $pt:ty),*) -> $r:ty = $body:expr;)*) => {
        mod $m {
            use super::*;
            #[vectorize] pub fn swap_bytes(x: $t) -> $t { x.swap_bytes() }
            #[vectorize] pub fn reverse_bits(x: $t) -> $t { x.reverse_bits() }
            #[vectorize] pub fn wrapping_neg(x: $t) -> $t { x.wrapping_neg() }
            #[vectorize] pub fn count_ones(x: $t) -> u32 { x.count_ones() }
            #[vectorize] pub fn count_zeros(x: $t) -> u32 { x.count_zeros() }
            #[vectorize] pub fn leading_zeros(x: $t) -> u32 { x.leading_zeros() }
            #[vectorize] pub fn trailing_zeros(x: $t) -> u32 { x.trailing_zeros() }
            #[vectorize] pub fn min(x: $t, y: $t) -> $t { x.min(y) }
            #[vectorize] pub fn max(x: $t, y: $t) -> $t { x.max(y) }
            #[vectorize] pub fn rem_euclid(x: $t, y: $t) -> $t { x.rem_euclid(y) }
            #[vectorize] pub fn div_euclid(x: $t, y: $t) -> $t { x.div_euclid(y) }
            #[vectorize] pub fn wrapping_add(x: $t, y: $t) -> $t { x.wrapping_add(y) }
            #[vectorize] pub fn wrapping_sub(x: $t, y: $t) -> $t { x.wrapping_sub(y) }
            #[vectorize] pub fn wrapping_mul(x: $t, y: $t) -> $t { x.wrapping_mul(y) }
            #[vectorize] pub fn wrapping_div(x: $t, y: $t) -> $t { x.wrapping_div(y) }
            #[vectorize] pub fn wrapping_rem(x: $t, y: $t) -> $t { x.wrapping_rem(y) }
            #[vectorize] pub fn saturating_add(x: $t, y: $t) -> $t { x.saturating_add(y) }
            #[vectorize] pub fn saturating_sub(x: $t, y: $t) -> $t { x.saturating_sub(y) }
            #[vectorize] pub fn saturating_mul(x: $t, y: $t) -> $t { x.saturating_mul(y) }
            #[vectorize] pub fn saturating_div(x: $t, y: $t) -> $t { x.saturating_div(y) }
            #[vectorize] pub fn pow(x: $t, n: u32) -> $t { x.pow(n) }
            #[vectorize] pub fn rotate_left(x: $t, n: u32) -> $t { x.rotate_left(n) }
            #[vectorize] pub fn rotate_right(x: $t, n: u32) -> $t { x.rotate_right(n) }
            #[vectorize] pub fn wrapping_shl(x: $t, n: u32) -> $t { x.wrapping_shl(n) }
            #[vectorize] pub fn wrapping_shr(x: $t, n: u32) -> $t { x.wrapping_shr(n) }
            #[vectorize] pub fn wrapping_pow(x: $t, n: u32) -> $t { x.wrapping_pow(n) }
            #[vectorize] pub fn saturating_pow(x: $t, n: u32) -> $t { x.saturating_pow(n) }
            #[vectorize] pub fn abs_diff(x: $t, y: $t) -> $u { x.abs_diff(y) }
            #[vectorize] pub fn clamp(x: $t, y: $t, z: $t) -> $t { x.clamp(y, z) }
            #[vectorize] pub fn shifts(x: $t, n: i16) -> $t { (x << n) ^ (x >> (n + 1)) }
            #[vectorize] pub fn arith(x: $t, y: $t) -> $t { x.wrapping_mul(3) - y / 7 + y % 5 }
            #[vectorize] pub fn divide(x: $t, y: $t) -> $t { x / y }
            #[vectorize] pub fn remainder(x: $t, y: $t) -> $t { x % y }
            $( #[vectorize] pub fn $extra($($p: $pt),*) -> $r { $body } )*
        }
        fn $m(cases: &mut Vec<Case>) {
            let t = stringify!($t);
            int_case!(cases, t, $m::swap_bytes, (x: $t) -> $t);
            int_case!(cases, t, $m::reverse_bits, (x: $t) -> $t);
            int_case!(cases, t, $m::wrapping_neg, (x: $t) -> $t);
            int_case!(cases, t, $m::count_ones, (x: $t) -> u32);
            int_case!(cases, t, $m::count_zeros, (x: $t) -> u32);
            int_case!(cases, t, $m::leading_zeros, (x: $t) -> u32);
            int_case!(cases, t, $m::trailing_zeros, (x: $t) -> u32);
            int_case!(cases, t, $m::min, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::max, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::rem_euclid, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::div_euclid, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::wrapping_add, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::wrapping_sub, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::wrapping_mul, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::wrapping_div, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::wrapping_rem, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::saturating_add, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::saturating_sub, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::saturating_mul, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::saturating_div, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::pow, (x: $t, n: u32) -> $t);
            int_case!(cases, t, $m::rotate_left, (x: $t, n: u32) -> $t);
            int_case!(cases, t, $m::rotate_right, (x: $t, n: u32) -> $t);
            int_case!(cases, t, $m::wrapping_shl, (x: $t, n: u32) -> $t);
            int_case!(cases, t, $m::wrapping_shr, (x: $t, n: u32) -> $t);
            int_case!(cases, t, $m::wrapping_pow, (x: $t, n: u32) -> $t);
            int_case!(cases, t, $m::saturating_pow, (x: $t, n: u32) -> $t);
            int_case!(cases, t, $m::abs_diff, (x: $t, y: $t) -> $u);
            int_case!(cases, t, $m::clamp, (x: $t, y: $t, z: $t) -> $t);
            int_case!(cases, t, $m::shifts, (x: $t, n: i16) -> $t);
            int_case!(cases, t, $m::arith, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::divide, (x: $t, y: $t) -> $t);
            int_case!(cases, t, $m::remainder, (x: $t, y: $t) -> $t);
            $( int_case!(cases, t, $m::$extra, ($($p: $pt),*) -> $r); )*
        }
    };
}

macro_rules! signed_int {
    ($m:ident: $t:ident, $u:ident) => {
        int_methods! { $m: $t, $u;
            abs: (x: $t) -> $t = x.abs();
            signum: (x: $t) -> $t = x.signum();
            wrapping_abs: (x: $t) -> $t = x.wrapping_abs();
            saturating_neg: (x: $t) -> $t = x.saturating_neg();
            saturating_abs: (x: $t) -> $t = x.saturating_abs();
            unsigned_abs: (x: $t) -> $u = x.unsigned_abs();
            negate: (x: $t) -> $t = -x;
        }
    };
}

macro_rules! unsigned_int {
    ($m:ident: $t:ident) => {
        int_methods! { $m: $t, $t;
            is_power_of_two: (x: $t) -> bool = x.is_power_of_two();
            div_ceil: (x: $t, y: $t) -> $t = x.div_ceil(y);
        }
    };
}

signed_int!(i8_methods: i8, u8);
signed_int!(i16_methods: i16, u16);
signed_int!(i32_methods: i32, u32);
signed_int!(i64_methods: i64, u64);
signed_int!(isize_methods: isize, usize);
unsigned_int!(u8_methods: u8);
unsigned_int!(u16_methods: u16);
unsigned_int!(u32_methods: u32);
unsigned_int!(u64_methods: u64);
unsigned_int!(usize_methods: usize);

// ----- casts between every pair of types ---------------------------------------------

macro_rules! casts {
    ($($from:ident => [$($to:ident),*];)*) => {
        mod casts {
            #![allow(non_snake_case)]
            use super::*;
            $( pub mod $from {
                use super::*;
                $( #[vectorize] pub fn $to(x: $from) -> $to { x as $to } )*
            } )*
        }
        fn casts(cases: &mut Vec<Case>) {
            $( $( case!(cases, format!("{} as {}", stringify!($from), stringify!($to)), [casts::$from::$to], Mode::Exact, (x: $from) -> $to); )* )*
        }
    };
}

casts! {
    f32 => [f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize];
    f64 => [f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize];
    i8 => [f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize];
    i16 => [f32, f64, i8, i16, i32, i64, u8, u16, u32, u64];
    i32 => [f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize];
    i64 => [f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize];
    u8 => [f32, f64, i8, i16, i32, i64, u8, u16, u32, u64];
    u16 => [f32, f64, i8, i16, i32, i64, u8, u16, u32, u64];
    u32 => [f32, f64, i8, i16, i32, i64, u8, u16, u32, u64];
    u64 => [f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize];
    bool => [i8, i32, u8, u64, i64];
}

fn all_cases() -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    hand_written(&mut cases);
    f32_methods(&mut cases);
    f64_methods(&mut cases);
    i8_methods(&mut cases);
    i16_methods(&mut cases);
    i32_methods(&mut cases);
    i64_methods(&mut cases);
    isize_methods(&mut cases);
    u8_methods(&mut cases);
    u16_methods(&mut cases);
    u32_methods(&mut cases);
    u64_methods(&mut cases);
    usize_methods(&mut cases);
    casts(&mut cases);
    cases
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_function_of_the_language_matches_the_cpu() {
    let cases = all_cases();
    let mut failures = Vec::new();
    for (i, (_, run)) in cases.iter().enumerate() {
        if let Err(e) = run(1000 + i as u64) {
            failures.push(e);
        }
    }
    println!("{} functions compared with the CPU on {N} elements each; {} differ", cases.len(), failures.len());
    assert!(
        failures.is_empty(),
        "{} of {} functions differ from the CPU:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The references themselves, on values known to many digits.
#[test]
fn references_are_accurate() {
    let close = |a: f64, b: f64| (a - b).abs() <= 2.0 * f64::EPSILON * b.abs();
    assert!(close(reference::f64::asinh(1.0), 0.881_373_587_019_543));
    assert!(close(reference::f64::asinh(-1e300), -691.468_675_078_773_6));
    assert!(close(reference::f64::acosh(2.0), 1.316_957_896_924_816_6));
    assert!(close(reference::f64::acosh(1e300), 691.468_675_078_773_6));
    assert!(close(reference::f64::atanh(0.5), 0.549_306_144_334_054_8));
    assert!(close(reference::f64::atanh(-0.999_999), -7.254_328_619_247_669));
    assert!(reference::f64::acosh(0.5).is_nan() && reference::f64::atanh(1.5).is_nan());
    assert_eq!(reference::f32::powf(f32::NAN, 0.0), 1.0);
    assert_eq!(reference::f64::hypot(f64::NAN, f64::NEG_INFINITY), f64::INFINITY);
}

/// The corpus holds at least the hundred functions the language promises to cover.
#[test]
fn the_corpus_is_large() {
    let cases = all_cases();
    println!("{} functions", cases.len());
    assert!(cases.len() >= 100);
}
