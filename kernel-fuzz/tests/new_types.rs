//! The interpreter's own `f16`/`bf16` conversions and arithmetic (`kernel_fuzz::float16`)
//! and complex formulas (`kernel_fuzz::complex`) against the `half` crate and num-complex:
//! every bit pattern of the half types, and many `f32`, `f64` and complex values. The
//! crate writes them out so as to depend on neither (it is the oracle); this is where they
//! are held to the crates the kernel language's types come from.
//!
//! One exception by design: `f16::from_f64`/`bf16::from_f64` round once (as the compiler
//! does), where the `half` crate on x86 rounds twice or drops the low bits first; they are
//! checked against the `half` crate's correct `from_f32` after a round-to-odd step to
//! `f32`, which rounds once as well.

use half::{bf16, f16};
use kernel_fuzz::complex as c;
use kernel_fuzz::float16::{self as h, Half};
use kernel_fuzz::{Ty, Value};
use num_complex::Complex;

/// xorshift64*: a small deterministic source of bits.
struct Bits(u64);

impl Bits {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Both formats through one interface: the `half` crate's conversions and operators.
trait Crate: Copy + PartialOrd + std::fmt::Debug {
    const FMT: Half;
    fn from_bits(b: u16) -> Self;
    fn to_bits(self) -> u16;
    fn from_f32(x: f32) -> Self;
    fn to_f32(self) -> f32;
    fn to_f64(self) -> f64;
    fn ops(self, o: Self) -> [Self; 5];
    fn neg(self) -> Self;
    fn max(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn signum(self) -> Self;
    fn copysign(self, o: Self) -> Self;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_finite(self) -> bool;
    fn constant(name: &str) -> Self;
}

macro_rules! krate {
    ($t:ident, $fmt:expr) => {
        impl Crate for $t {
            const FMT: Half = $fmt;
            fn from_bits(b: u16) -> $t {
                $t::from_bits(b)
            }
            fn to_bits(self) -> u16 {
                $t::to_bits(self)
            }
            fn from_f32(x: f32) -> $t {
                $t::from_f32(x)
            }
            fn to_f32(self) -> f32 {
                $t::to_f32(self)
            }
            fn to_f64(self) -> f64 {
                $t::to_f64(self)
            }
            fn ops(self, o: $t) -> [$t; 5] {
                [self + o, self - o, self * o, self / o, self % o]
            }
            fn neg(self) -> $t {
                -self
            }
            fn max(self, o: $t) -> $t {
                $t::max(self, o)
            }
            fn min(self, o: $t) -> $t {
                $t::min(self, o)
            }
            fn signum(self) -> $t {
                $t::signum(self)
            }
            fn copysign(self, o: $t) -> $t {
                $t::copysign(self, o)
            }
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                $t::is_infinite(self)
            }
            fn is_finite(self) -> bool {
                $t::is_finite(self)
            }
            fn constant(name: &str) -> $t {
                match name {
                    "ZERO" => $t::ZERO,
                    "ONE" => $t::ONE,
                    "NEG_ONE" => $t::NEG_ONE,
                    "NEG_ZERO" => $t::NEG_ZERO,
                    "MAX" => $t::MAX,
                    "MIN" => $t::MIN,
                    "MIN_POSITIVE" => $t::MIN_POSITIVE,
                    "MIN_POSITIVE_SUBNORMAL" => $t::MIN_POSITIVE_SUBNORMAL,
                    "MAX_SUBNORMAL" => $t::MAX_SUBNORMAL,
                    "EPSILON" => $t::EPSILON,
                    "INFINITY" => $t::INFINITY,
                    "NEG_INFINITY" => $t::NEG_INFINITY,
                    "NAN" => $t::NAN,
                    "PI" => $t::PI,
                    "E" => $t::E,
                    "SQRT_2" => $t::SQRT_2,
                    "LN_2" => $t::LN_2,
                    "FRAC_1_SQRT_2" => $t::FRAC_1_SQRT_2,
                    other => panic!("no constant {other}"),
                }
            }
        }
    };
}
krate!(f16, Half::F16);
krate!(bf16, Half::BF16);

/// The same bits, or both NaN (a NaN's payload is not compared: Rust leaves it open).
fn same_half<T: Crate>(got: u16, want: T) -> bool {
    got == want.to_bits() || (h::is_nan(T::FMT, got) && want.is_nan())
}

fn same_f64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Widening is exact: every bit pattern, to `f32` and to `f64` (a NaN to a NaN of its sign).
fn widening<T: Crate>() {
    for b in 0..=u16::MAX {
        let x = T::from_bits(b);
        let (f, d) = (h::to_f32(T::FMT, b), h::to_f64(T::FMT, b));
        assert!(same_f64(f as f64, x.to_f32() as f64), "{b:#06x}: to_f32 {f:?}, the crate {:?}", x.to_f32());
        assert!(same_f64(d, x.to_f64()), "{b:#06x}: to_f64 {d:?}, the crate {:?}", x.to_f64());
        assert_eq!(f.is_sign_negative(), b & 0x8000 != 0, "{b:#06x}: the sign of to_f32");
        assert_eq!(h::is_nan(T::FMT, b), x.is_nan(), "{b:#06x}: is_nan");
        assert_eq!(h::is_infinite(T::FMT, b), x.is_infinite(), "{b:#06x}: is_infinite");
        assert_eq!(h::is_finite(T::FMT, b), x.is_finite(), "{b:#06x}: is_finite");
    }
}

#[test]
fn widening_is_the_crates() {
    widening::<f16>();
    widening::<bf16>();
}

/// `f32` values that test a rounding to `T`: every half value, its neighbours in `f32`, the
/// points halfway between two half values and their neighbours, and any bit patterns.
fn rounding_cases<T: Crate>(random: usize) -> Vec<f32> {
    let mut xs = Vec::new();
    let step = |x: f32, k: i32| f32::from_bits((x.to_bits() as i64 + k as i64) as u32);
    for b in 0..=u16::MAX {
        let x = T::from_bits(b).to_f32();
        if x.is_nan() {
            xs.push(x);
            continue;
        }
        for k in [-2, -1, 0, 1, 2] {
            xs.push(step(x, k));
        }
        let next = T::from_bits(b.wrapping_add(1)).to_f32();
        if next.is_finite() && x.is_finite() && (b & 0x7FFF) != 0x7FFF {
            // Halfway, exactly (f32 holds it), and an f32 step either side.
            let mid = ((x as f64 + next as f64) / 2.0) as f32;
            for k in [-1, 0, 1] {
                xs.push(step(mid, k));
            }
        }
    }
    let mut g = Bits(0x9E37_79B9_7F4A_7C15);
    xs.extend((0..random).map(|_| f32::from_bits(g.next() as u32)));
    xs.extend([f32::MAX, f32::MIN, f32::MIN_POSITIVE, 1e-45, -1e-45, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0]);
    xs
}

fn from_f32_matches<T: Crate>() {
    for x in rounding_cases::<T>(2_000_000) {
        let got = h::from_f32(T::FMT, x);
        assert!(
            same_half(got, T::from_f32(x)),
            "{x:?} ({:#010x}): {got:#06x}, the crate {:?}",
            x.to_bits(),
            T::from_f32(x)
        );
        if x.is_nan() {
            assert_eq!(got & 0x8000 != 0, x.is_sign_negative(), "{x:?}: a NaN keeps its sign");
        }
    }
}

#[test]
fn from_f32_is_the_crates() {
    from_f32_matches::<f16>();
    from_f32_matches::<bf16>();
}

/// `x` rounded to `f32` to odd: truncated toward zero, the lowest bit set if anything was
/// dropped. Rounding that to nearest in a format of at least two bits fewer rounds `x` once.
fn round_to_odd(x: f64) -> f32 {
    if !x.is_finite() {
        return x as f32;
    }
    let mut r = x as f32;
    if (r as f64).abs() > x.abs() {
        r = f32::from_bits(r.to_bits() - 1);
    }
    if r.is_infinite() {
        r = f32::from_bits(r.to_bits() - 1);
    }
    if r as f64 != x { f32::from_bits(r.to_bits() | 1) } else { r }
}

fn from_f64_matches<T: Crate>() {
    let mut g = Bits(0x0123_4567_89AB_CDEF);
    let mut xs: Vec<f64> = rounding_cases::<T>(0).into_iter().map(|x| x as f64).collect();
    // Halfway points nudged by the smallest f64 steps: where two roundings go wrong.
    for b in 0..=u16::MAX {
        let (x, next) = (T::from_bits(b).to_f64(), T::from_bits(b.wrapping_add(1)).to_f64());
        if x.is_finite() && next.is_finite() && (b & 0x7FFF) != 0x7FFF {
            let mid = (x + next) / 2.0;
            for k in [-3i64, -1, 1, 3, 1 << 20, -(1 << 20)] {
                xs.push(f64::from_bits((mid.to_bits() as i64 + k) as u64));
            }
        }
    }
    xs.extend((0..2_000_000).map(|_| f64::from_bits(g.next())));
    xs.extend((0..1_000_000).map(|_| (g.next() as i64 as f64) * 2f64.powi((g.next() % 300) as i32 - 200)));
    xs.extend([f64::MAX, f64::MIN, f64::MIN_POSITIVE, 5e-324, -5e-324, 1e-300, 1e300, f64::NAN, -f64::NAN]);
    for x in xs {
        let got = h::from_f64(T::FMT, x);
        let want = T::from_f32(round_to_odd(x));
        assert!(same_half(got, want), "{x:?} ({:#018x}): {got:#06x}, rounded once {want:?}", x.to_bits());
    }
}

#[test]
fn from_f64_rounds_once() {
    assert_eq!(round_to_odd(1.0 + 2f64.powi(-30)).to_bits(), 1.0f32.to_bits() | 1);
    assert_eq!(round_to_odd(-(1.0 + 2f64.powi(-30))).to_bits(), (-1.0f32).to_bits() | 1);
    assert_eq!(round_to_odd(1e300), f32::MAX);
    from_f64_matches::<f16>();
    from_f64_matches::<bf16>();
}

/// Half values: the special ones against each other, then random pairs of any bits.
fn pairs<T: Crate>(random: usize) -> Vec<(u16, u16)> {
    let specials: Vec<u16> = kernel_fuzz::inputs::edges(if T::FMT == Half::F16 { Ty::F16 } else { Ty::BF16 })
        .into_iter()
        .map(|v| v.to_bits() as u16)
        .collect();
    let mut out: Vec<(u16, u16)> = specials.iter().flat_map(|&a| specials.iter().map(move |&b| (a, b))).collect();
    let mut g = Bits(0xDEAD_BEEF_CAFE_F00D);
    out.extend((0..random).map(|_| {
        let r = g.next();
        (r as u16, (r >> 16) as u16)
    }));
    out
}

fn arithmetic_matches<T: Crate>() {
    for (a, b) in pairs::<T>(1_000_000) {
        let (x, y) = (T::from_bits(a), T::from_bits(b));
        let ops: [fn(f32, f32) -> f32; 5] = [|p, q| p + q, |p, q| p - q, |p, q| p * q, |p, q| p / q, |p, q| p % q];
        for (k, (op, want)) in ops.iter().zip(x.ops(y)).enumerate() {
            let got = h::arith(T::FMT, a, b, op);
            assert!(same_half(got, want), "{x:?} op#{k} {y:?}: {got:#06x}, the crate {want:?}");
        }
        assert_eq!(h::compare(T::FMT, a, b), x.partial_cmp(&y), "{x:?} <=> {y:?}");
        assert!(same_half(h::max(T::FMT, a, b), x.max(y)), "{x:?}.max({y:?})");
        assert!(same_half(h::min(T::FMT, a, b), x.min(y)), "{x:?}.min({y:?})");
        // The sign is copied bit for bit, a NaN's too.
        assert_eq!(h::copysign(a, b), x.copysign(y).to_bits(), "{x:?}.copysign({y:?})");
    }
    for b in 0..=u16::MAX {
        let x = T::from_bits(b);
        assert_eq!(h::neg(b), x.neg().to_bits(), "-{x:?}");
        assert!(same_half(h::signum(T::FMT, b), x.signum()), "{x:?}.signum()");
    }
    for (name, bits) in h::constants(T::FMT) {
        assert_eq!(*bits, T::constant(name).to_bits(), "{name}");
    }
    assert_eq!(T::FMT.one(), T::constant("ONE").to_bits());
    assert_eq!(T::FMT.infinity(), T::constant("INFINITY").to_bits());
    assert_eq!(T::FMT.nan(), T::constant("NAN").to_bits());
}

#[test]
fn arithmetic_is_the_crates() {
    arithmetic_matches::<f16>();
    arithmetic_matches::<bf16>();
}

/// A complex part type: the values the comparisons draw from, and its bits.
trait Part: c::Part + std::fmt::Debug {
    fn specials() -> Vec<Self>;
    fn random(g: &mut Bits) -> Self;
    fn bits(self) -> u64;
}

impl Part for f32 {
    fn specials() -> Vec<f32> {
        vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            3.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-45,
            f32::MIN_POSITIVE,
            f32::MAX,
            1e20,
            1e-20,
        ]
    }
    fn random(g: &mut Bits) -> f32 {
        match g.next() % 4 {
            0 => f32::from_bits(g.next() as u32),
            1 => (g.next() % 2001) as f32 / 8.0 - 125.0,
            _ => ((g.next() as i64 as f64) * 2f64.powi((g.next() % 120) as i32 - 123)) as f32,
        }
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

impl Part for f64 {
    fn specials() -> Vec<f64> {
        vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            3.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            1e160,
            1e-160,
        ]
    }
    fn random(g: &mut Bits) -> f64 {
        match g.next() % 4 {
            0 => f64::from_bits(g.next()),
            1 => (g.next() % 2001) as f64 / 8.0 - 125.0,
            _ => (g.next() as i64 as f64) * 2f64.powi((g.next() % 800) as i32 - 500),
        }
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

fn same_part<T: Part>(a: T, b: T) -> bool {
    a.bits() == b.bits() || (c::Part::is_nan(a) && c::Part::is_nan(b))
}

fn same_c<T: Part>((a, b): c::C<T>, z: Complex<T>) -> bool {
    same_part(a, z.re) && same_part(b, z.im)
}

/// Every formula against num-complex on pairs of special and random numbers, with special
/// and random parts and exponents (num-complex's methods need num-traits' bounds, which
/// this test cannot name: one copy per part type).
macro_rules! complex_matches {
    ($t:ty) => {{
        let mut g = Bits(0x5EED_5EED_5EED_5EED);
        let s = <$t as Part>::specials();
        let mut zs: Vec<($t, $t)> = s.iter().flat_map(|&a| s.iter().map(move |&b| (a, b))).collect();
        zs.extend((0..4000).map(|_| (<$t as Part>::random(&mut g), <$t as Part>::random(&mut g))));
        let n = zs.len();
        for i in 0..20 * n {
            let (z, w) = (zs[i % n], zs[(i * 31 + i / n) % n]);
            let x: $t = if i % 3 == 0 { s[i % s.len()] } else { <$t as Part>::random(&mut g) };
            let (zc, wc) = (Complex::new(z.0, z.1), Complex::new(w.0, w.1));
            let at = || format!("z = {zc:?}, w = {wc:?}, x = {x:?}");
            assert!(same_c(c::add(z, w), zc + wc), "z + w: {}", at());
            assert!(same_c(c::sub(z, w), zc - wc), "z - w: {}", at());
            assert!(same_c(c::mul(z, w), zc * wc), "z * w: {}", at());
            assert!(same_c(c::div(z, w), zc / wc), "z / w: {}", at());
            assert!(same_c(c::add_part(z, x), zc + x), "z + x: {}", at());
            assert!(same_c(c::sub_part(z, x), zc - x), "z - x: {}", at());
            assert!(same_c(c::mul_part(z, x), zc * x), "z * x: {}", at());
            assert!(same_c(c::div_part(z, x), zc / x), "z / x: {}", at());
            assert!(same_c(c::part_add(x, w), x + wc), "x + w: {}", at());
            assert!(same_c(c::part_sub(x, w), x - wc), "x - w: {}", at());
            assert!(same_c(c::part_mul(x, w), x * wc), "x * w: {}", at());
            assert!(same_c(c::part_div(x, w), x / wc), "x / w: {}", at());
            assert!(same_c(c::neg(z), -zc), "-z: {}", at());
            assert_eq!(c::eq(z, w), zc == wc, "z == w: {}", at());
            assert_eq!(c::eq(z, z), zc == zc, "z == z: {}", at());
            assert!(same_c(c::conj(z), zc.conj()), "conj: {}", at());
            assert!(same_part(c::norm_sqr(z), zc.norm_sqr()), "norm_sqr: {}", at());
            assert!(same_part(c::l1_norm(z), zc.l1_norm()), "l1_norm: {}", at());
            assert!(same_c(c::scale(z, x), zc.scale(x)), "scale: {}", at());
            assert!(same_c(c::unscale(z, x), zc.unscale(x)), "unscale: {}", at());
            assert!(same_c(c::inv(z), zc.inv()), "inv: {}", at());
            assert_eq!(c::is_nan(z), zc.is_nan(), "is_nan: {}", at());
            assert_eq!(c::is_infinite(z), zc.is_infinite(), "is_infinite: {}", at());
            assert_eq!(c::is_finite(z), zc.is_finite(), "is_finite: {}", at());
            assert_eq!(c::is_normal(z), zc.is_normal(), "is_normal: {}", at());
            let e = match i % 4 {
                0 => (g.next() % 25) as i32 - 12,
                1 => [i32::MIN, i32::MAX, 0, 1, -1, 64, -64][(g.next() % 7) as usize],
                _ => g.next() as i32 % 100,
            };
            assert!(same_c(c::powi(z, e), zc.powi(e)), "powi({e}): {}", at());
            assert!(same_c(c::powu(z, e as u32), zc.powu(e as u32)), "powu({}): {}", e as u32, at());
        }
    }};
}

#[test]
fn complex_is_num_complexs() {
    complex_matches!(f32);
    complex_matches!(f64);
}

/// A value's words round-trip, and `same` is bit for bit but for NaNs (part by part).
#[test]
fn values_as_words() {
    let vs = [
        Value::F16(0x3C00),
        Value::BF16(0xFFC1),
        Value::C32(1.5, -0.0),
        Value::C64(f64::MAX, f64::NAN),
        Value::C32(f32::NAN, 2.0),
    ];
    for v in vs {
        let w = v.to_words();
        assert_eq!(w.len(), v.ty().words());
        assert!(Value::from_words(v.ty(), &w).same(v), "{v}");
    }
    assert_eq!(Value::C32(1.0, 2.0).to_bits(), 1.0f32.to_bits() as u64 | (2.0f32.to_bits() as u64) << 32);
    assert!(Value::C64(f64::NAN, 1.0).same(Value::C64(-f64::NAN, 1.0)));
    assert!(!Value::C64(f64::NAN, 1.0).same(Value::C64(f64::NAN, -1.0)));
    assert!(!Value::C32(0.0, 1.0).same(Value::C32(-0.0, 1.0)));
    assert!(Value::F16(0x7E00).same(Value::F16(0xFE01)));
    assert!(!Value::F16(0x0000).same(Value::F16(0x8000)));
    assert!(!Value::F16(0x3C00).same(Value::BF16(0x3C00)));
}
