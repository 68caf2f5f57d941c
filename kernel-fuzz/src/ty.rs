//! The scalar types of the kernel language and their values: the primitive ones, and
//! `half`'s `f16`/`bf16` and num-complex's `Complex<f32>`/`Complex<f64>` (a value of those
//! holds its bits, so this crate needs neither).

use crate::float16::{Half, from_f64, to_f64};

/// A scalar type of the kernel language.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Ty {
    Bool,
    I8,
    I16,
    I32,
    I64,
    Isize,
    U8,
    U16,
    U32,
    U64,
    Usize,
    F32,
    F64,
    /// `half::f16`.
    F16,
    /// `half::bf16`.
    BF16,
    /// `num_complex::Complex<f32>`.
    C32,
    /// `num_complex::Complex<f64>`.
    C64,
}

impl Ty {
    /// The primitive scalar types: what every [`Config`](crate::Config) draws from.
    pub const ALL: [Ty; 13] = [
        Ty::Bool,
        Ty::I8,
        Ty::I16,
        Ty::I32,
        Ty::I64,
        Ty::Isize,
        Ty::U8,
        Ty::U16,
        Ty::U32,
        Ty::U64,
        Ty::Usize,
        Ty::F32,
        Ty::F64,
    ];

    /// The half-precision types ([`Config::halves`](crate::Config::halves)).
    pub const HALVES: [Ty; 2] = [Ty::F16, Ty::BF16];

    /// The complex types ([`Config::complex`](crate::Config::complex)).
    pub const COMPLEX: [Ty; 2] = [Ty::C32, Ty::C64];

    /// Every type: [`Ty::ALL`], then the half and the complex types.
    pub const EVERY: [Ty; 17] = [
        Ty::Bool,
        Ty::I8,
        Ty::I16,
        Ty::I32,
        Ty::I64,
        Ty::Isize,
        Ty::U8,
        Ty::U16,
        Ty::U32,
        Ty::U64,
        Ty::Usize,
        Ty::F32,
        Ty::F64,
        Ty::F16,
        Ty::BF16,
        Ty::C32,
        Ty::C64,
    ];

    /// The type as Rust writes it (`f16` and `Complex` imported by name).
    pub fn name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::I8 => "i8",
            Ty::I16 => "i16",
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::Isize => "isize",
            Ty::U8 => "u8",
            Ty::U16 => "u16",
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::Usize => "usize",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::F16 => "f16",
            Ty::BF16 => "bf16",
            Ty::C32 => "Complex<f32>",
            Ty::C64 => "Complex<f64>",
        }
    }

    /// The type as the first segment of a path (`f16::max(a, b)`, `Complex::conj(z)`).
    pub fn path_name(self) -> &'static str {
        if self.is_complex() { "Complex" } else { self.name() }
    }

    pub fn is_int(self) -> bool {
        self.is_signed() || self.is_unsigned()
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Ty::I8 | Ty::I16 | Ty::I32 | Ty::I64 | Ty::Isize)
    }

    pub fn is_unsigned(self) -> bool {
        matches!(self, Ty::U8 | Ty::U16 | Ty::U32 | Ty::U64 | Ty::Usize)
    }

    /// `f32` or `f64` (not the half types, which are no primitives).
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }

    /// `f16` or `bf16`.
    pub fn is_half(self) -> bool {
        matches!(self, Ty::F16 | Ty::BF16)
    }

    pub fn is_complex(self) -> bool {
        matches!(self, Ty::C32 | Ty::C64)
    }

    /// The type of a complex type's parts.
    pub fn part(self) -> Option<Ty> {
        match self {
            Ty::C32 => Some(Ty::F32),
            Ty::C64 => Some(Ty::F64),
            _ => None,
        }
    }

    /// The format of a half type.
    pub fn half(self) -> Option<Half> {
        match self {
            Ty::F16 => Some(Half::F16),
            Ty::BF16 => Some(Half::BF16),
            _ => None,
        }
    }

    /// The complex type whose parts have this type.
    pub fn complex_of(self) -> Option<Ty> {
        match self {
            Ty::F32 => Some(Ty::C32),
            Ty::F64 => Some(Ty::C64),
            _ => None,
        }
    }

    /// Whether `match` takes a value of this type with literal and range patterns.
    pub fn has_patterns(self) -> bool {
        self == Ty::Bool || self.is_int()
    }

    /// The width in bits (`isize`/`usize` are 64-bit on every target the project has).
    pub fn bits(self) -> u32 {
        match self {
            Ty::Bool | Ty::I8 | Ty::U8 => 8,
            Ty::I16 | Ty::U16 | Ty::F16 | Ty::BF16 => 16,
            Ty::I32 | Ty::U32 | Ty::F32 => 32,
            Ty::I64 | Ty::Isize | Ty::U64 | Ty::Usize | Ty::F64 | Ty::C32 => 64,
            Ty::C64 => 128,
        }
    }

    /// How many `u64` words a value takes where arguments and results are passed as words
    /// (the host JIT's `call`, the native corpus's callers): 2 for `Complex<f64>`, else 1.
    pub fn words(self) -> usize {
        self.bits().div_ceil(64) as usize
    }

    /// The smallest and largest value of an integer type.
    pub fn int_range(self) -> (i128, i128) {
        let b = self.bits();
        if self.is_signed() { (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1) } else { (0, (1i128 << b) - 1) }
    }

    /// The unsigned integer of the same width (`i16` → `u16`).
    pub fn unsigned(self) -> Ty {
        match self {
            Ty::I8 => Ty::U8,
            Ty::I16 => Ty::U16,
            Ty::I32 => Ty::U32,
            Ty::I64 => Ty::U64,
            Ty::Isize => Ty::Usize,
            t => t,
        }
    }

    /// The type rustc gives an unsuffixed literal of this kind that nothing constrains.
    pub fn fallback(self) -> Ty {
        if self.is_float() { Ty::F64 } else { Ty::I32 }
    }
}

/// A value of a scalar type.
#[derive(Copy, Clone, Debug)]
pub enum Value {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    Isize(isize),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    Usize(usize),
    F32(f32),
    F64(f64),
    /// An `f16`'s bits.
    F16(u16),
    /// A `bf16`'s bits.
    BF16(u16),
    /// A `Complex<f32>`: `re`, `im`.
    C32(f32, f32),
    /// A `Complex<f64>`: `re`, `im`.
    C64(f64, f64),
}

/// Calls `$body` with `$x` bound to the primitive inside an integer value (`$v`), or
/// evaluates `$other` for floats and `bool`.
#[macro_export]
#[doc(hidden)]
macro_rules! with_int {
    ($v:expr, $x:ident => $body:expr, _ => $other:expr) => {
        match $v {
            $crate::ty::Value::I8($x) => $body,
            $crate::ty::Value::I16($x) => $body,
            $crate::ty::Value::I32($x) => $body,
            $crate::ty::Value::I64($x) => $body,
            $crate::ty::Value::Isize($x) => $body,
            $crate::ty::Value::U8($x) => $body,
            $crate::ty::Value::U16($x) => $body,
            $crate::ty::Value::U32($x) => $body,
            $crate::ty::Value::U64($x) => $body,
            $crate::ty::Value::Usize($x) => $body,
            _ => $other,
        }
    };
}

impl Value {
    pub fn ty(self) -> Ty {
        match self {
            Value::Bool(_) => Ty::Bool,
            Value::I8(_) => Ty::I8,
            Value::I16(_) => Ty::I16,
            Value::I32(_) => Ty::I32,
            Value::I64(_) => Ty::I64,
            Value::Isize(_) => Ty::Isize,
            Value::U8(_) => Ty::U8,
            Value::U16(_) => Ty::U16,
            Value::U32(_) => Ty::U32,
            Value::U64(_) => Ty::U64,
            Value::Usize(_) => Ty::Usize,
            Value::F32(_) => Ty::F32,
            Value::F64(_) => Ty::F64,
            Value::F16(_) => Ty::F16,
            Value::BF16(_) => Ty::BF16,
            Value::C32(..) => Ty::C32,
            Value::C64(..) => Ty::C64,
        }
    }

    /// The value's bits in the low bytes of a `u64`, as the runtime passes scalars (`bool`
    /// as 0 or 1, a `Complex<f32>` with `re` in the low half). A `Complex<f64>` takes two
    /// words: see [`Value::to_words`].
    pub fn to_bits(self) -> u64 {
        match self {
            Value::Bool(b) => b as u64,
            Value::I8(x) => x as u8 as u64,
            Value::I16(x) => x as u16 as u64,
            Value::I32(x) => x as u32 as u64,
            Value::I64(x) => x as u64,
            Value::Isize(x) => x as u64,
            Value::U8(x) => x as u64,
            Value::U16(x) => x as u64,
            Value::U32(x) => x as u64,
            Value::U64(x) => x,
            Value::Usize(x) => x as u64,
            Value::F32(x) => x.to_bits() as u64,
            Value::F64(x) => x.to_bits(),
            Value::F16(h) | Value::BF16(h) => h as u64,
            Value::C32(re, im) => re.to_bits() as u64 | (im.to_bits() as u64) << 32,
            Value::C64(..) => panic!("a Complex<f64> takes two words: to_words"),
        }
    }

    /// The value's words as the host JIT and the native corpus pass them: [`Value::to_bits`],
    /// and for a `Complex<f64>` `re`'s bits then `im`'s.
    pub fn to_words(self) -> Vec<u64> {
        match self {
            Value::C64(re, im) => vec![re.to_bits(), im.to_bits()],
            v => vec![v.to_bits()],
        }
    }

    /// The value of type `ty` whose words ([`Value::to_words`]) are `words`.
    pub fn from_words(ty: Ty, words: &[u64]) -> Value {
        assert_eq!(words.len(), ty.words(), "a {} takes {} words", ty.name(), ty.words());
        match ty {
            Ty::C64 => Value::C64(f64::from_bits(words[0]), f64::from_bits(words[1])),
            t => Value::from_bits(t, words[0]),
        }
    }

    /// Splits a run of words into values of the types `tys`.
    pub fn all_from_words(tys: &[Ty], words: &[u64]) -> Vec<Value> {
        let mut at = 0;
        let vals = tys
            .iter()
            .map(|t| {
                let v = Value::from_words(*t, &words[at..at + t.words()]);
                at += t.words();
                v
            })
            .collect();
        assert_eq!(at, words.len(), "words for {tys:?}");
        vals
    }

    /// The value of type `ty` whose bits are the low bytes of `bits` (for a `Complex<f64>`,
    /// `re`'s bits, `im` zero: see [`Value::from_words`]).
    pub fn from_bits(ty: Ty, bits: u64) -> Value {
        match ty {
            Ty::Bool => Value::Bool(bits as u8 != 0),
            Ty::I8 => Value::I8(bits as i8),
            Ty::I16 => Value::I16(bits as i16),
            Ty::I32 => Value::I32(bits as i32),
            Ty::I64 => Value::I64(bits as i64),
            Ty::Isize => Value::Isize(bits as isize),
            Ty::U8 => Value::U8(bits as u8),
            Ty::U16 => Value::U16(bits as u16),
            Ty::U32 => Value::U32(bits as u32),
            Ty::U64 => Value::U64(bits),
            Ty::Usize => Value::Usize(bits as usize),
            Ty::F32 => Value::F32(f32::from_bits(bits as u32)),
            Ty::F64 => Value::F64(f64::from_bits(bits)),
            Ty::F16 => Value::F16(bits as u16),
            Ty::BF16 => Value::BF16(bits as u16),
            Ty::C32 => Value::C32(f32::from_bits(bits as u32), f32::from_bits((bits >> 32) as u32)),
            Ty::C64 => Value::C64(f64::from_bits(bits), 0.0),
        }
    }

    /// The complex number of type `ty` with parts `re` and `im` (of its parts' type).
    pub fn complex(ty: Ty, re: Value, im: Value) -> Value {
        match (ty, re, im) {
            (Ty::C32, Value::F32(a), Value::F32(b)) => Value::C32(a, b),
            (Ty::C64, Value::F64(a), Value::F64(b)) => Value::C64(a, b),
            _ => panic!("no {} of {re} and {im}", ty.name()),
        }
    }

    /// A half type's value of these bits.
    pub fn half_bits(ty: Ty, bits: u16) -> Value {
        match ty {
            Ty::F16 => Value::F16(bits),
            Ty::BF16 => Value::BF16(bits),
            _ => panic!("{} is no half type", ty.name()),
        }
    }

    /// The zero of a type (`false`, `0`, `+0.0`, `0 + 0i`).
    pub fn zero(ty: Ty) -> Value {
        Value::from_bits(ty, 0)
    }

    /// An integer value of type `ty` (wrapped into its range).
    pub fn int(ty: Ty, v: i128) -> Value {
        assert!(ty.is_int(), "{ty:?} is not an integer type");
        Value::from_bits(ty, v as u64)
    }

    /// A float value of type `ty` (rounded once to `f32`, `f16` or `bf16` for those).
    pub fn float(ty: Ty, v: f64) -> Value {
        match ty {
            Ty::F32 => Value::F32(v as f32),
            Ty::F64 => Value::F64(v),
            Ty::F16 => Value::F16(from_f64(Half::F16, v)),
            Ty::BF16 => Value::BF16(from_f64(Half::BF16, v)),
            _ => panic!("{ty:?} is not a float type"),
        }
    }

    /// An integer value as an `i128` (exact for every integer type).
    pub fn as_i128(self) -> Option<i128> {
        with_int!(self, x => Some(x as i128), _ => None)
    }

    /// A float value as an `f64` (exact for `f32`; not for the half types, which
    /// [`Value::half_f64`] reads).
    pub fn as_f64(self) -> Option<f64> {
        match self {
            Value::F32(x) => Some(x as f64),
            Value::F64(x) => Some(x),
            _ => None,
        }
    }

    /// An `f16` or a `bf16` as an `f64` (exact).
    pub fn half_f64(self) -> Option<f64> {
        match self {
            Value::F16(h) => Some(to_f64(Half::F16, h)),
            Value::BF16(h) => Some(to_f64(Half::BF16, h)),
            _ => None,
        }
    }

    /// The same value (NaN is the same as any NaN of its type, part by part for a complex
    /// number; `0.0` and `-0.0` differ).
    pub fn same(self, other: Value) -> bool {
        let f32s = |a: f32, b: f32| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan();
        let f64s = |a: f64, b: f64| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan();
        match (self, other) {
            (Value::F32(a), Value::F32(b)) => f32s(a, b),
            (Value::F64(a), Value::F64(b)) => f64s(a, b),
            (Value::C32(a, b), Value::C32(c, d)) => f32s(a, c) && f32s(b, d),
            (Value::C64(a, b), Value::C64(c, d)) => f64s(a, c) && f64s(b, d),
            (Value::F16(_) | Value::BF16(_), _) => match (self.half_f64(), other.half_f64()) {
                (Some(a), Some(b)) if a.is_nan() || b.is_nan() => a.is_nan() && b.is_nan() && self.ty() == other.ty(),
                _ => self.ty() == other.ty() && self.to_bits() == other.to_bits(),
            },
            _ => self.ty() == other.ty() && self.to_bits() == other.to_bits(),
        }
    }
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::F32(x) => write!(f, "{x:?}f32 ({:#010x})", x.to_bits()),
            Value::F64(x) => write!(f, "{x:?}f64 ({:#018x})", x.to_bits()),
            Value::F16(h) => write!(f, "{:?}f16 ({h:#06x})", to_f64(Half::F16, h)),
            Value::BF16(h) => write!(f, "{:?}bf16 ({h:#06x})", to_f64(Half::BF16, h)),
            Value::C32(re, im) => {
                write!(f, "Complex {{ re: {re:?}, im: {im:?} }}f32 ({:#010x}, {:#010x})", re.to_bits(), im.to_bits())
            }
            Value::C64(re, im) => {
                write!(f, "Complex {{ re: {re:?}, im: {im:?} }}f64 ({:#018x}, {:#018x})", re.to_bits(), im.to_bits())
            }
            v => with_int!(v, x => write!(f, "{x}{}", v.ty().name()), _ => unreachable!()),
        }
    }
}
