//! `f16` (IEEE binary16) and `bf16` (bfloat16) as bits: rounding from `f64` and `f32`
//! (to nearest, ties to even, with subnormals, infinities and NaN) and the exact widening
//! back, written out here so that the interpreter is an oracle of its own (the crate has no
//! dependencies; its tests hold these functions to the `half` crate over every bit pattern).
//!
//! The `half` crate computes `+ - * / %` in `f32` and rounds once; the interpreter does
//! the same with these conversions. Rounding `x as f32` first and then to a half type is
//! the same as rounding `x` once only for `f32` values: for an `f64`, [`from_f64`] rounds
//! once, which is what the compiler does for `f16::from_f64` (the `half` crate on x86 rounds
//! twice or drops the low bits, so only the interpreter is the reference there).

/// A half-precision format.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Half {
    F16,
    BF16,
}

impl Half {
    /// Bits of the exponent field.
    const fn exp_bits(self) -> u32 {
        match self {
            Half::F16 => 5,
            Half::BF16 => 8,
        }
    }

    /// Bits of the fraction field.
    const fn man_bits(self) -> u32 {
        match self {
            Half::F16 => 10,
            Half::BF16 => 7,
        }
    }

    const fn bias(self) -> i32 {
        (1 << (self.exp_bits() - 1)) - 1
    }

    /// The bits of `+inf`.
    pub const fn infinity(self) -> u16 {
        (((1u32 << self.exp_bits()) - 1) << self.man_bits()) as u16
    }

    /// The bits of `1.0`.
    pub const fn one(self) -> u16 {
        ((self.bias() as u32) << self.man_bits()) as u16
    }

    /// The bits of a quiet NaN (positive, the `half` crate's `NAN`).
    pub const fn nan(self) -> u16 {
        self.infinity() | 1 << (self.man_bits() - 1)
    }
}

pub const SIGN: u16 = 0x8000;

/// `x` rounded once to the format `h`: to nearest, ties to even; below the smallest
/// subnormal's half to a zero of `x`'s sign, past the largest finite value to an infinity;
/// a NaN stays a NaN (quiet, with `x`'s sign and the top bits of its payload).
pub fn from_f64(h: Half, x: f64) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 63) as u16) << 15;
    let mb = h.man_bits();
    if x.is_nan() {
        let payload = ((b >> (52 - mb)) as u16) & ((1 << mb) - 1);
        return sign | h.nan() | payload;
    }
    if x.is_infinite() {
        return sign | h.infinity();
    }
    if x == 0.0 {
        return sign;
    }
    // |x| = m · 2^e with m an integer of at most 53 bits; `lg` = floor(log2 |x|).
    let field = ((b >> 52) & 0x7FF) as i32;
    let frac = b & ((1u64 << 52) - 1);
    let (m, e, lg) = if field == 0 {
        (frac, -1074, 63 - frac.leading_zeros() as i32 - 1074)
    } else {
        (frac | 1 << 52, field - 1075, field - 1023)
    };
    let (emin, emax) = (1 - h.bias(), h.bias());
    if lg > emax {
        return sign | h.infinity();
    }
    // The result is n · 2^(t - mb): t the exponent of its binade (the subnormals' is emin).
    let t = lg.max(emin);
    let shift = (t - mb as i32 - e) as u32;
    // `m` has at most 53 bits and `t ≥ lg`, so the quantum is never below `x`'s own and the
    // shift is at least 1: n = m / 2^shift, rounded to nearest, ties to even.
    debug_assert!(shift >= 1);
    let n = if shift >= 54 {
        // Less than half the quantum.
        0
    } else {
        let q = m >> shift;
        let r = m & ((1u64 << shift) - 1);
        let half = 1u64 << (shift - 1);
        if r > half || r == half && q & 1 == 1 { q + 1 } else { q }
    };
    // n carries the implicit bit (2^mb) in a normal binade: the fields are then
    // `(t + bias - 1) << mb` plus n, and a carry out of the fraction moves into the
    // exponent (up to the infinity's bits); in the subnormal binade (t = emin) they are n.
    let bits = (((t + h.bias() - 1) as u64) << mb) + n;
    if bits >= h.infinity() as u64 {
        return sign | h.infinity();
    }
    sign | bits as u16
}

/// `x` rounded once to the format `h` (`f16::from_f32`, `bf16::from_f32`): every `f32` is
/// an `f64`, so this is [`from_f64`].
pub fn from_f32(h: Half, x: f32) -> u16 {
    from_f64(h, x as f64)
}

/// The value of `bits` in the format `h`, exactly (a NaN gives a NaN of its sign).
pub fn to_f64(h: Half, bits: u16) -> f64 {
    let (eb, mb) = (h.exp_bits(), h.man_bits());
    let neg = bits & SIGN != 0;
    let field = ((bits & !SIGN) >> mb) as i32;
    let frac = (bits & ((1 << mb) - 1)) as u64;
    let magnitude = if field == (1 << eb) - 1 {
        if frac == 0 { f64::INFINITY } else { f64::NAN }
    } else {
        // frac · 2^(emin - mb) for a subnormal, (2^mb + frac) · 2^(field - bias - mb)
        // otherwise: both products exact in f64 (at most 8 significant bits times a power
        // of two in f64's normal range).
        let (n, exp) = if field == 0 { (frac, 1 - h.bias()) } else { (frac | 1 << mb, field - h.bias()) };
        n as f64 * pow2(exp - mb as i32)
    };
    if neg { -magnitude } else { magnitude }
}

/// The value of `bits` in the format `h` as an `f32` (exact: both formats are subsets of it).
pub fn to_f32(h: Half, bits: u16) -> f32 {
    to_f64(h, bits) as f32
}

/// 2^k for k in f64's normal range.
fn pow2(k: i32) -> f64 {
    assert!((-1022..=1023).contains(&k), "2^{k} is no normal f64");
    f64::from_bits(((k + 1023) as u64) << 52)
}

pub fn is_nan(h: Half, bits: u16) -> bool {
    bits & !SIGN > h.infinity()
}

pub fn is_infinite(h: Half, bits: u16) -> bool {
    bits & !SIGN == h.infinity()
}

pub fn is_finite(h: Half, bits: u16) -> bool {
    bits & !SIGN < h.infinity()
}

/// `a op b` as the `half` crate computes it: in `f32`, rounded once.
pub fn arith(h: Half, a: u16, b: u16, op: impl Fn(f32, f32) -> f32) -> u16 {
    from_f32(h, op(to_f32(h, a), to_f32(h, b)))
}

/// `-x`: the sign bit flipped (a NaN stays a NaN).
pub fn neg(bits: u16) -> u16 {
    bits ^ SIGN
}

/// The ordering of two values (`None` with a NaN; `-0 == +0`).
pub fn compare(h: Half, a: u16, b: u16) -> Option<std::cmp::Ordering> {
    to_f64(h, a).partial_cmp(&to_f64(h, b))
}

/// The `half` crate's `max`: the argument when the receiver is NaN or the argument is
/// larger, else the receiver (so `max(+0, -0)` is `+0` and `max(-0, +0)` is `-0`).
pub fn max(h: Half, x: u16, y: u16) -> u16 {
    if is_nan(h, x) || compare(h, y, x) == Some(std::cmp::Ordering::Greater) { y } else { x }
}

/// The `half` crate's `min`, as [`max`].
pub fn min(h: Half, x: u16, y: u16) -> u16 {
    if is_nan(h, x) || compare(h, y, x) == Some(std::cmp::Ordering::Less) { y } else { x }
}

/// The `half` crate's `signum`: a NaN itself, else one with the sign bit's sign (`±0`
/// included).
pub fn signum(h: Half, x: u16) -> u16 {
    if is_nan(h, x) { x } else { h.one() | (x & SIGN) }
}

/// `x` with the sign bit of `sign`.
pub fn copysign(x: u16, sign: u16) -> u16 {
    (x & !SIGN) | (sign & SIGN)
}

/// The associated constants of `f16` and `bf16` the generator names, with their bits (the
/// `half` crate's values; its tests check them).
pub fn constants(h: Half) -> &'static [(&'static str, u16)] {
    match h {
        Half::F16 => &[
            ("ZERO", 0x0000),
            ("ONE", 0x3C00),
            ("NEG_ONE", 0xBC00),
            ("NEG_ZERO", 0x8000),
            ("MAX", 0x7BFF),
            ("MIN", 0xFBFF),
            ("MIN_POSITIVE", 0x0400),
            ("MIN_POSITIVE_SUBNORMAL", 0x0001),
            ("MAX_SUBNORMAL", 0x03FF),
            ("EPSILON", 0x1400),
            ("INFINITY", 0x7C00),
            ("NEG_INFINITY", 0xFC00),
            ("NAN", 0x7E00),
            ("PI", 0x4248),
            ("E", 0x4170),
            ("SQRT_2", 0x3DA8),
            ("LN_2", 0x398C),
            ("FRAC_1_SQRT_2", 0x39A8),
        ],
        Half::BF16 => &[
            ("ZERO", 0x0000),
            ("ONE", 0x3F80),
            ("NEG_ONE", 0xBF80),
            ("NEG_ZERO", 0x8000),
            ("MAX", 0x7F7F),
            ("MIN", 0xFF7F),
            ("MIN_POSITIVE", 0x0080),
            ("MIN_POSITIVE_SUBNORMAL", 0x0001),
            ("MAX_SUBNORMAL", 0x007F),
            ("EPSILON", 0x3C00),
            ("INFINITY", 0x7F80),
            ("NEG_INFINITY", 0xFF80),
            ("NAN", 0x7FC0),
            ("PI", 0x4049),
            ("E", 0x402E),
            ("SQRT_2", 0x3FB5),
            ("LN_2", 0x3F31),
            ("FRAC_1_SQRT_2", 0x3F35),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_values() {
        assert_eq!(from_f64(Half::F16, 1.0), 0x3C00);
        assert_eq!(from_f64(Half::F16, 65504.0), 0x7BFF);
        assert_eq!(from_f64(Half::F16, 65520.0), 0x7C00, "halfway to the next binade: to even, which is inf");
        assert_eq!(from_f64(Half::F16, 65519.99), 0x7BFF);
        assert_eq!(from_f64(Half::F16, 2f64.powi(-24)), 0x0001);
        assert_eq!(from_f64(Half::F16, 2f64.powi(-25)), 0x0000, "a tie with zero, which is even");
        assert_eq!(from_f64(Half::F16, 2f64.powi(-25) * 1.0000001), 0x0001);
        assert_eq!(from_f64(Half::F16, -2f64.powi(-26)), 0x8000);
        assert_eq!(from_f64(Half::F16, 5e-324), 0x0000);
        assert_eq!(from_f64(Half::BF16, 1.0), 0x3F80);
        assert_eq!(from_f64(Half::BF16, f64::MAX), 0x7F80);
        assert_eq!(from_f64(Half::BF16, -(2f64.powi(-133))), 0x8001);
        assert_eq!(to_f64(Half::F16, 0x0001), 2f64.powi(-24));
        assert_eq!(to_f64(Half::BF16, 0x0001), 2f64.powi(-133));
        assert_eq!(to_f64(Half::F16, 0xFBFF), -65504.0);
        assert!(to_f64(Half::BF16, 0xFFC1).is_nan());
    }
}
