//! Built-in methods a vectorized function may call: `x.sqrt()`, `f32::max(a, b)`,
//! `n.count_ones()`, … Each one has a signature (for the frontend), a receiver category
//! and, for the lowering, a behaviour that matches Rust's (release build) bit for bit
//! where Rust defines it exactly, or NVIDIA's libdevice within its documented error bounds
//! for transcendental functions.

use crate::ty::ScalarType;

/// A built-in method, named like the Rust method.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Intrinsic {
    // Shared by floats and integers.
    Abs,
    Signum,
    Min,
    Max,
    Clamp,
    RemEuclid,
    DivEuclid,
    DivCeil,
    // Floats: exact.
    Copysign,
    Floor,
    Ceil,
    Round,
    RoundTiesEven,
    Trunc,
    Fract,
    Sqrt,
    MulAdd,
    Recip,
    ToDegrees,
    ToRadians,
    IsNan,
    IsInfinite,
    IsFinite,
    IsSignNegative,
    IsSignPositive,
    Powi,
    // Floats: libdevice.
    Cbrt,
    Exp,
    Exp2,
    ExpM1,
    Ln,
    Log2,
    Log10,
    Ln1p,
    Log,
    Powf,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Hypot,
    Erf,
    Erfc,
    Gamma,
    LnGamma,
    // Integers.
    Pow,
    AbsDiff,
    UnsignedAbs,
    CountOnes,
    CountZeros,
    LeadingZeros,
    TrailingZeros,
    RotateLeft,
    RotateRight,
    SwapBytes,
    ReverseBits,
    IsPowerOfTwo,
    WrappingAdd,
    WrappingSub,
    WrappingMul,
    WrappingDiv,
    WrappingRem,
    WrappingNeg,
    WrappingAbs,
    WrappingShl,
    WrappingShr,
    WrappingPow,
    SaturatingAdd,
    SaturatingSub,
    SaturatingMul,
    SaturatingDiv,
    SaturatingNeg,
    SaturatingAbs,
    SaturatingPow,
}

/// Which receivers a method exists on.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Recv {
    Float,
    /// `half::f16` and `half::bf16`.
    Half,
    Int,
    Signed,
    Unsigned,
}

impl Recv {
    fn accepts(self, t: ScalarType) -> bool {
        match self {
            Recv::Float => t.is_float(),
            Recv::Half => t.is_half(),
            Recv::Int => t.is_int(),
            Recv::Signed => t.is_signed_int(),
            Recv::Unsigned => t.is_unsigned_int(),
        }
    }
}

/// The type of a method's argument or result, relative to its receiver.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Slot {
    /// The receiver's own type (`Self`).
    Same,
    Exact(ScalarType),
    /// The unsigned integer of the receiver's width (`abs_diff`, `unsigned_abs`).
    Unsigned,
}

impl Slot {
    pub fn resolve(self, recv: ScalarType) -> ScalarType {
        match self {
            Slot::Same => recv,
            Slot::Exact(t) => t,
            Slot::Unsigned => unsigned_of(recv),
        }
    }
}

/// The unsigned type of the same width (`i32` → `u32`).
pub fn unsigned_of(t: ScalarType) -> ScalarType {
    use ScalarType::*;
    match t {
        I8 => U8,
        I16 => U16,
        I32 => U32,
        I64 => U64,
        Isize => Usize,
        other => other,
    }
}

struct Method {
    name: &'static str,
    intrinsic: Intrinsic,
    recv: Recv,
    args: &'static [Slot],
    ret: Slot,
}

use ScalarType::{Bool as B, I32, U32};
use Slot::{Exact, Same};

const S1: &[Slot] = &[Same];
const S2: &[Slot] = &[Same, Same];
const NONE: &[Slot] = &[];

macro_rules! methods {
    ($($name:literal $i:ident $recv:ident ($args:expr) -> $ret:expr;)*) => {
        const METHODS: &[Method] = &[$(Method {
            name: $name,
            intrinsic: Intrinsic::$i,
            recv: Recv::$recv,
            args: $args,
            ret: $ret,
        }),*];
    };
}

methods! {
    "abs" Abs Float (NONE) -> Same;
    "abs" Abs Signed (NONE) -> Same;
    "signum" Signum Float (NONE) -> Same;
    "signum" Signum Signed (NONE) -> Same;
    "min" Min Float (S1) -> Same;
    "min" Min Int (S1) -> Same;
    "max" Max Float (S1) -> Same;
    "max" Max Int (S1) -> Same;
    "clamp" Clamp Float (S2) -> Same;
    "clamp" Clamp Int (S2) -> Same;
    "rem_euclid" RemEuclid Float (S1) -> Same;
    "rem_euclid" RemEuclid Int (S1) -> Same;
    "div_euclid" DivEuclid Float (S1) -> Same;
    "div_euclid" DivEuclid Int (S1) -> Same;
    "div_ceil" DivCeil Unsigned (S1) -> Same;
    "copysign" Copysign Float (S1) -> Same;
    "floor" Floor Float (NONE) -> Same;
    "ceil" Ceil Float (NONE) -> Same;
    "round" Round Float (NONE) -> Same;
    "round_ties_even" RoundTiesEven Float (NONE) -> Same;
    "trunc" Trunc Float (NONE) -> Same;
    "fract" Fract Float (NONE) -> Same;
    "sqrt" Sqrt Float (NONE) -> Same;
    "mul_add" MulAdd Float (S2) -> Same;
    "recip" Recip Float (NONE) -> Same;
    "to_degrees" ToDegrees Float (NONE) -> Same;
    "to_radians" ToRadians Float (NONE) -> Same;
    "is_nan" IsNan Float (NONE) -> Exact(B);
    "is_nan" IsNan Half (NONE) -> Exact(B);
    "is_infinite" IsInfinite Half (NONE) -> Exact(B);
    "is_finite" IsFinite Half (NONE) -> Exact(B);
    "is_sign_negative" IsSignNegative Half (NONE) -> Exact(B);
    "is_sign_positive" IsSignPositive Half (NONE) -> Exact(B);
    "signum" Signum Half (NONE) -> Same;
    "copysign" Copysign Half (S1) -> Same;
    "max" Max Half (S1) -> Same;
    "min" Min Half (S1) -> Same;
    "is_infinite" IsInfinite Float (NONE) -> Exact(B);
    "is_finite" IsFinite Float (NONE) -> Exact(B);
    "is_sign_negative" IsSignNegative Float (NONE) -> Exact(B);
    "is_sign_positive" IsSignPositive Float (NONE) -> Exact(B);
    "powi" Powi Float (&[Exact(I32)]) -> Same;
    "cbrt" Cbrt Float (NONE) -> Same;
    "exp" Exp Float (NONE) -> Same;
    "exp2" Exp2 Float (NONE) -> Same;
    "exp_m1" ExpM1 Float (NONE) -> Same;
    "ln" Ln Float (NONE) -> Same;
    "log2" Log2 Float (NONE) -> Same;
    "log10" Log10 Float (NONE) -> Same;
    "ln_1p" Ln1p Float (NONE) -> Same;
    "log" Log Float (S1) -> Same;
    "powf" Powf Float (S1) -> Same;
    "sin" Sin Float (NONE) -> Same;
    "cos" Cos Float (NONE) -> Same;
    "tan" Tan Float (NONE) -> Same;
    "asin" Asin Float (NONE) -> Same;
    "acos" Acos Float (NONE) -> Same;
    "atan" Atan Float (NONE) -> Same;
    "atan2" Atan2 Float (S1) -> Same;
    "sinh" Sinh Float (NONE) -> Same;
    "cosh" Cosh Float (NONE) -> Same;
    "tanh" Tanh Float (NONE) -> Same;
    "asinh" Asinh Float (NONE) -> Same;
    "acosh" Acosh Float (NONE) -> Same;
    "atanh" Atanh Float (NONE) -> Same;
    "hypot" Hypot Float (S1) -> Same;
    "erf" Erf Float (NONE) -> Same;
    "erfc" Erfc Float (NONE) -> Same;
    "gamma" Gamma Float (NONE) -> Same;
    "ln_gamma" LnGamma Float (NONE) -> Same;
    "pow" Pow Int (&[Exact(U32)]) -> Same;
    "abs_diff" AbsDiff Int (S1) -> Slot::Unsigned;
    "unsigned_abs" UnsignedAbs Signed (NONE) -> Slot::Unsigned;
    "count_ones" CountOnes Int (NONE) -> Exact(U32);
    "count_zeros" CountZeros Int (NONE) -> Exact(U32);
    "leading_zeros" LeadingZeros Int (NONE) -> Exact(U32);
    "trailing_zeros" TrailingZeros Int (NONE) -> Exact(U32);
    "rotate_left" RotateLeft Int (&[Exact(U32)]) -> Same;
    "rotate_right" RotateRight Int (&[Exact(U32)]) -> Same;
    "swap_bytes" SwapBytes Int (NONE) -> Same;
    "reverse_bits" ReverseBits Int (NONE) -> Same;
    "is_power_of_two" IsPowerOfTwo Unsigned (NONE) -> Exact(B);
    "wrapping_add" WrappingAdd Int (S1) -> Same;
    "wrapping_sub" WrappingSub Int (S1) -> Same;
    "wrapping_mul" WrappingMul Int (S1) -> Same;
    "wrapping_div" WrappingDiv Int (S1) -> Same;
    "wrapping_rem" WrappingRem Int (S1) -> Same;
    "wrapping_neg" WrappingNeg Int (NONE) -> Same;
    "wrapping_abs" WrappingAbs Signed (NONE) -> Same;
    "wrapping_shl" WrappingShl Int (&[Exact(U32)]) -> Same;
    "wrapping_shr" WrappingShr Int (&[Exact(U32)]) -> Same;
    "wrapping_pow" WrappingPow Int (&[Exact(U32)]) -> Same;
    "saturating_add" SaturatingAdd Int (S1) -> Same;
    "saturating_sub" SaturatingSub Int (S1) -> Same;
    "saturating_mul" SaturatingMul Int (S1) -> Same;
    "saturating_div" SaturatingDiv Int (S1) -> Same;
    "saturating_neg" SaturatingNeg Signed (NONE) -> Same;
    "saturating_abs" SaturatingAbs Signed (NONE) -> Same;
    "saturating_pow" SaturatingPow Int (&[Exact(U32)]) -> Same;
}

/// The special functions std lacks on stable, provided for both the host and the GPU by
/// `gpu_runtime::SpecialMath`.
pub const SPECIAL_MATH: &[&str] = &["erf", "erfc", "gamma", "ln_gamma"];

/// A resolved method: what to compute and its argument and result types.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub intrinsic: Intrinsic,
    /// Types of the arguments after the receiver.
    pub args: Vec<ScalarType>,
    pub ret: ScalarType,
}

/// Why a method call does not resolve.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The method exists, but not for this receiver (e.g. `abs` on `u32`).
    WrongReceiver {
        receivers: Vec<&'static str>,
    },
    Unknown,
}

/// The method `name` on a receiver of type `recv`.
pub fn method(name: &str, recv: ScalarType) -> Result<Signature, Lookup> {
    let candidates: Vec<&Method> = METHODS.iter().filter(|m| m.name == name).collect();
    if candidates.is_empty() {
        return Err(Lookup::Unknown);
    }
    match candidates.iter().find(|m| m.recv.accepts(recv)) {
        Some(m) => Ok(Signature {
            intrinsic: m.intrinsic,
            args: m.args.iter().map(|a| a.resolve(recv)).collect(),
            ret: m.ret.resolve(recv),
        }),
        None => Err(Lookup::WrongReceiver {
            receivers: candidates
                .iter()
                .map(|m| match m.recv {
                    Recv::Float => "floats",
                    Recv::Half => "`f16` and `bf16`",
                    Recv::Int => "integers",
                    Recv::Signed => "signed integers",
                    Recv::Unsigned => "unsigned integers",
                })
                .collect(),
        }),
    }
}

/// Every method name available on `recv`, for diagnostics.
pub fn methods_of(recv: ScalarType) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = METHODS.iter().filter(|m| m.recv.accepts(recv)).map(|m| m.name).collect();
    names.dedup();
    names
}

impl Intrinsic {
    /// Whether the operation can fail at run time, where Rust would panic, for a receiver
    /// of type `recv`: integer division by zero, `clamp` with `min > max`.
    /// Whether the method overflows on a `recv` receiver where a build with overflow
    /// checks panics (`i32::MIN.abs()`, an integer `pow` out of range).
    pub fn overflows(self, recv: ScalarType) -> bool {
        match self {
            Intrinsic::Abs => recv.is_signed_int(),
            Intrinsic::Pow => recv.is_int(),
            _ => false,
        }
    }

    pub fn may_fail(self, recv: ScalarType) -> bool {
        use Intrinsic::*;
        match self {
            Clamp => true,
            RemEuclid | DivEuclid | DivCeil | WrappingDiv | WrappingRem | SaturatingDiv => recv.is_int(),
            _ => false,
        }
    }

    /// The libdevice function computing this for `t`, for the transcendental functions.
    pub fn libdevice_name(self, t: ScalarType) -> Option<String> {
        use Intrinsic::*;
        let base = match self {
            Cbrt => "cbrt",
            Exp => "exp",
            Exp2 => "exp2",
            ExpM1 => "expm1",
            Ln => "log",
            Log2 => "log2",
            Log10 => "log10",
            Ln1p => "log1p",
            Powf => "pow",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Atan2 => "atan2",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Hypot => "hypot",
            Erf => "erf",
            Erfc => "erfc",
            Gamma => "tgamma",
            LnGamma => "lgamma",
            _ => return None,
        };
        Some(match t {
            ScalarType::F32 => format!("__nv_{base}f"),
            _ => format!("__nv_{base}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    #[test]
    fn methods_resolve_by_receiver() {
        assert_eq!(method("sqrt", F64).unwrap(), Signature { intrinsic: Intrinsic::Sqrt, args: vec![], ret: F64 });
        assert_eq!(method("powi", F32).unwrap().args, vec![I32]);
        assert_eq!(method("abs", I8).unwrap().intrinsic, Intrinsic::Abs);
        assert_eq!(method("abs_diff", I16).unwrap().ret, U16);
        assert_eq!(method("count_ones", U8).unwrap().ret, U32);
        assert_eq!(method("is_nan", F32).unwrap().ret, Bool);
        assert!(matches!(method("abs", U32), Err(Lookup::WrongReceiver { .. })));
        assert!(matches!(method("sqrt", I32), Err(Lookup::WrongReceiver { .. })));
        assert_eq!(method("frobnicate", F32), Err(Lookup::Unknown));
        assert!(method("is_power_of_two", I32).is_err());
    }

    #[test]
    fn only_transcendentals_use_libdevice() {
        assert_eq!(Intrinsic::Sin.libdevice_name(F32).as_deref(), Some("__nv_sinf"));
        assert_eq!(Intrinsic::Gamma.libdevice_name(F64).as_deref(), Some("__nv_tgamma"));
        assert_eq!(Intrinsic::Sqrt.libdevice_name(F32), None);
        assert!(
            Intrinsic::Clamp.may_fail(F32) && Intrinsic::RemEuclid.may_fail(I32) && !Intrinsic::RemEuclid.may_fail(F64)
        );
    }
}
