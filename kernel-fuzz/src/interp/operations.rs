//! Operators, casts and methods on values, each computed by the Rust function that defines it.

use super::{Fault, Overflow};
use crate::ast::{BinOp, Func, UnOp};
use crate::complex::{self as c, Part};
use crate::float16::{self as h, Half};
use crate::methods::Method;
use crate::special::SpecialMath;
use crate::ty::{Ty, Value};
use crate::with_int;

/// The ordering of two values of one type (`None` for NaN or different types). Complex
/// numbers are equal or unordered: `==` and `!=` are all they have.
pub(super) fn compare(a: Value, b: Value) -> Option<std::cmp::Ordering> {
    if a.ty() != b.ty() {
        return None;
    }
    let equal = |e: bool| e.then_some(std::cmp::Ordering::Equal);
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.partial_cmp(&y),
        (Value::F32(x), Value::F32(y)) => x.partial_cmp(&y),
        (Value::F64(x), Value::F64(y)) => x.partial_cmp(&y),
        (Value::F16(x), Value::F16(y)) => h::compare(Half::F16, x, y),
        (Value::BF16(x), Value::BF16(y)) => h::compare(Half::BF16, x, y),
        (Value::C32(p, q), Value::C32(r, s)) => equal(c::eq((p, q), (r, s))),
        (Value::C64(p, q), Value::C64(r, s)) => equal(c::eq((p, q), (r, s))),
        _ => a.as_i128()?.partial_cmp(&b.as_i128()?),
    }
}

/// A conversion, constructor or part of a half or complex type, of type `ty`.
pub(super) fn func(f: Func, ty: Ty, args: &[Value]) -> Value {
    let half = || ty.half().expect("a half type");
    let of_half = |v: Value| match v {
        Value::F16(x) => (Half::F16, x),
        Value::BF16(x) => (Half::BF16, x),
        other => panic!("{f:?} of {other}"),
    };
    match (f, args) {
        (Func::FromF32, [Value::F32(x)]) => Value::half_bits(ty, h::from_f32(half(), *x)),
        (Func::FromF64, [Value::F64(x)]) => Value::half_bits(ty, h::from_f64(half(), *x)),
        (Func::FromSmall, [v @ (Value::U8(_) | Value::I8(_))]) => {
            Value::half_bits(ty, h::from_f64(half(), v.as_i128().expect("an integer") as f64))
        }
        (Func::ToF32, [v]) => {
            let (fmt, x) = of_half(*v);
            Value::F32(h::to_f32(fmt, x))
        }
        (Func::ToF64, [v]) => {
            let (fmt, x) = of_half(*v);
            Value::F64(h::to_f64(fmt, x))
        }
        (Func::New, [re, im]) => Value::complex(ty, *re, *im),
        (Func::FromPart, [re]) => Value::complex(ty, *re, Value::zero(re.ty())),
        (Func::Re, [Value::C32(re, _)]) => Value::F32(*re),
        (Func::Im, [Value::C32(_, im)]) => Value::F32(*im),
        (Func::Re, [Value::C64(re, _)]) => Value::F64(*re),
        (Func::Im, [Value::C64(_, im)]) => Value::F64(*im),
        _ => panic!("{f:?} of {args:?} to {}", ty.name()),
    }
}

impl Value {
    pub(super) fn truthy(self) -> bool {
        matches!(self, Value::Bool(true))
    }

    /// `self as to`, with Rust's semantics.
    pub fn cast(self, to: Ty) -> Value {
        macro_rules! to {
            ($x:expr) => {
                match to {
                    Ty::I8 => Value::I8($x as i8),
                    Ty::I16 => Value::I16($x as i16),
                    Ty::I32 => Value::I32($x as i32),
                    Ty::I64 => Value::I64($x as i64),
                    Ty::Isize => Value::Isize($x as isize),
                    Ty::U8 => Value::U8($x as u8),
                    Ty::U16 => Value::U16($x as u16),
                    Ty::U32 => Value::U32($x as u32),
                    Ty::U64 => Value::U64($x as u64),
                    Ty::Usize => Value::Usize($x as usize),
                    Ty::F32 => Value::F32($x as f32),
                    Ty::F64 => Value::F64($x as f64),
                    Ty::Bool => panic!("no cast to bool"),
                    t => panic!("no cast to {}", t.name()),
                }
            };
        }
        match self {
            Value::Bool(b) if to == Ty::Bool => Value::Bool(b),
            Value::Bool(b) => to!(b as u8),
            Value::F32(x) => to!(x),
            Value::F64(x) => to!(x),
            v => with_int!(v, x => to!(x), _ => panic!("no cast from {}", v.ty().name())),
        }
    }
}

pub(super) fn unary(op: UnOp, a: Value, overflow: Overflow) -> Result<Value, Fault> {
    Ok(match (op, a) {
        (UnOp::Not, Value::Bool(b)) => Value::Bool(!b),
        (UnOp::Neg, Value::F32(x)) => Value::F32(-x),
        (UnOp::Neg, Value::F64(x)) => Value::F64(-x),
        (UnOp::Neg, Value::F16(x)) => Value::F16(h::neg(x)),
        (UnOp::Neg, Value::BF16(x)) => Value::BF16(h::neg(x)),
        (UnOp::Neg, Value::C32(re, im)) => complex32(c::neg((re, im))),
        (UnOp::Neg, Value::C64(re, im)) => complex64(c::neg((re, im))),
        (UnOp::Neg, v) if overflow == Overflow::Check => {
            with_int!(v, x => Prim::into_value(x.checked_neg().ok_or(Fault::NegOverflow)?), _ => unreachable!())
        }
        (UnOp::Neg, v) => with_int!(v, x => Prim::into_value(x.wrapping_neg()), _ => unreachable!()),
        (UnOp::Not, v) => with_int!(v, x => Prim::into_value(!x), _ => unreachable!("! on a float")),
    })
}

/// `a op b` for the non-short-circuit operators.
pub(super) fn binary(op: BinOp, a: Value, b: Value, overflow: Overflow) -> Result<Value, Fault> {
    let check = overflow == Overflow::Check;
    if op.is_comparison() {
        let o = compare(a, b);
        return Ok(Value::Bool(match op {
            BinOp::Eq => o.is_some_and(|o| o.is_eq()),
            BinOp::Ne => !o.is_some_and(|o| o.is_eq()),
            BinOp::Lt => o.is_some_and(|o| o.is_lt()),
            BinOp::Le => o.is_some_and(|o| o.is_le()),
            BinOp::Gt => o.is_some_and(|o| o.is_gt()),
            _ => o.is_some_and(|o| o.is_ge()),
        }));
    }
    if op.is_shift() {
        // Checked: an amount of the width or more, or a negative one, panics.
        let amount = b.as_i128().expect("an integer shift amount");
        if check && !(0..a.ty().bits() as i128).contains(&amount) {
            return Err(if op == BinOp::Shl { Fault::ShlOverflow } else { Fault::ShrOverflow });
        }
        // Masked to the width, as `wrapping_shl` does (the amount's low bits are the same in
        // every integer type).
        let n = match b.cast(Ty::U32) {
            Value::U32(n) => n,
            _ => unreachable!(),
        };
        return Ok(
            with_int!(a, x => Prim::into_value(if op == BinOp::Shl { x.wrapping_shl(n) } else { x.wrapping_shr(n) }), _ => unreachable!()),
        );
    }
    macro_rules! int_ops {
        ($($v:ident),*) => {
            match (a, b) {
                $((Value::$v(x), Value::$v(y)) => Value::$v(match op {
                    BinOp::Add if check => x.checked_add(y).ok_or(Fault::AddOverflow)?,
                    BinOp::Sub if check => x.checked_sub(y).ok_or(Fault::SubOverflow)?,
                    BinOp::Mul if check => x.checked_mul(y).ok_or(Fault::MulOverflow)?,
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::Div if y == 0 => return Err(Fault::DivideByZero),
                    BinOp::Div => x.checked_div(y).ok_or(Fault::DivideOverflow)?,
                    BinOp::Rem if y == 0 => return Err(Fault::RemainderByZero),
                    BinOp::Rem => x.checked_rem(y).ok_or(Fault::RemainderOverflow)?,
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    BinOp::Xor => x ^ y,
                    _ => unreachable!(),
                }),)*
                (Value::F32(x), Value::F32(y)) => Value::F32(float_op(op, x, y)),
                (Value::F64(x), Value::F64(y)) => Value::F64(float_op(op, x, y)),
                (Value::F16(x), Value::F16(y)) => Value::F16(half_op(Half::F16, op, x, y)),
                (Value::BF16(x), Value::BF16(y)) => Value::BF16(half_op(Half::BF16, op, x, y)),
                (Value::C32(p, q), Value::C32(r, s)) => complex32(complex_op(op, (p, q), (r, s))),
                (Value::C64(p, q), Value::C64(r, s)) => complex64(complex_op(op, (p, q), (r, s))),
                (Value::C32(p, q), Value::F32(x)) => complex32(complex_part_op(op, (p, q), x)),
                (Value::C64(p, q), Value::F64(x)) => complex64(complex_part_op(op, (p, q), x)),
                (Value::F32(x), Value::C32(r, s)) => complex32(part_complex_op(op, x, (r, s))),
                (Value::F64(x), Value::C64(r, s)) => complex64(part_complex_op(op, x, (r, s))),
                (Value::Bool(x), Value::Bool(y)) => Value::Bool(match op {
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    BinOp::Xor => x ^ y,
                    _ => unreachable!(),
                }),
                _ => unreachable!("{op:?} on {a} and {b}"),
            }
        };
    }
    Ok(int_ops!(I8, I16, I32, I64, Isize, U8, U16, U32, U64, Usize))
}

fn float_op<
    T: std::ops::Add<Output = T>
        + std::ops::Sub<Output = T>
        + std::ops::Mul<Output = T>
        + std::ops::Div<Output = T>
        + std::ops::Rem<Output = T>,
>(
    op: BinOp,
    x: T,
    y: T,
) -> T {
    match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => x / y,
        BinOp::Rem => x % y,
        _ => unreachable!(),
    }
}

/// `a op b` of two halves, as the `half` crate computes it: in `f32`, rounded once.
fn half_op(fmt: Half, op: BinOp, a: u16, b: u16) -> u16 {
    h::arith(fmt, a, b, |x, y| float_op(op, x, y))
}

fn complex_op<T: Part>(op: BinOp, z: c::C<T>, w: c::C<T>) -> c::C<T> {
    match op {
        BinOp::Add => c::add(z, w),
        BinOp::Sub => c::sub(z, w),
        BinOp::Mul => c::mul(z, w),
        BinOp::Div => c::div(z, w),
        _ => unreachable!("{op:?} on complex numbers"),
    }
}

fn complex_part_op<T: Part>(op: BinOp, z: c::C<T>, x: T) -> c::C<T> {
    match op {
        BinOp::Add => c::add_part(z, x),
        BinOp::Sub => c::sub_part(z, x),
        BinOp::Mul => c::mul_part(z, x),
        BinOp::Div => c::div_part(z, x),
        _ => unreachable!("{op:?} of a complex number and a part"),
    }
}

fn part_complex_op<T: Part>(op: BinOp, x: T, z: c::C<T>) -> c::C<T> {
    match op {
        BinOp::Add => c::part_add(x, z),
        BinOp::Sub => c::part_sub(x, z),
        BinOp::Mul => c::part_mul(x, z),
        BinOp::Div => c::part_div(x, z),
        _ => unreachable!("{op:?} of a part and a complex number"),
    }
}

fn complex32((re, im): c::C<f32>) -> Value {
    Value::C32(re, im)
}

fn complex64((re, im): c::C<f64>) -> Value {
    Value::C64(re, im)
}

/// A primitive's conversions to and from [`Value`].
trait Prim: Copy {
    fn from_value(v: Value) -> Self;
    fn into_value(self) -> Value;
}

macro_rules! prim {
    ($($t:ty: $v:ident),*) => {$(
        impl Prim for $t {
            fn from_value(v: Value) -> Self {
                match v {
                    Value::$v(x) => x,
                    other => panic!("expected a {}, found {other}", stringify!($t)),
                }
            }
            fn into_value(self) -> Value {
                Value::$v(self)
            }
        }
    )*};
}
prim!(bool: Bool, i8: I8, i16: I16, i32: I32, i64: I64, isize: Isize, u8: U8, u16: U16, u32: U32, u64: U64, usize: Usize, f32: F32, f64: F64);

pub(super) fn call_method(m: Method, recv: Value, args: &[Value], overflow: Overflow) -> Result<Value, Fault> {
    // `abs` and `pow` check for overflow where the build does (their arithmetic is
    // compiled into the caller); every other method behaves alike in either build.
    if overflow == Overflow::Check {
        match m {
            Method::IAbs => {
                let f = Fault::NegOverflow;
                return match recv {
                    Value::I8(x) => checked(x.checked_abs(), f),
                    Value::I16(x) => checked(x.checked_abs(), f),
                    Value::I32(x) => checked(x.checked_abs(), f),
                    Value::I64(x) => checked(x.checked_abs(), f),
                    Value::Isize(x) => checked(x.checked_abs(), f),
                    _ => unreachable!("abs of a signed integer"),
                };
            }
            Method::Pow => {
                let n = <u32 as Prim>::from_value(args[0]);
                return with_int!(recv, x => checked(x.checked_pow(n), Fault::MulOverflow), _ => unreachable!());
            }
            _ => {}
        }
    }
    match recv {
        Value::I8(x) => i8_method(m, x, args),
        Value::I16(x) => i16_method(m, x, args),
        Value::I32(x) => i32_method(m, x, args),
        Value::I64(x) => i64_method(m, x, args),
        Value::Isize(x) => isize_method(m, x, args),
        Value::U8(x) => u8_method(m, x, args),
        Value::U16(x) => u16_method(m, x, args),
        Value::U32(x) => u32_method(m, x, args),
        Value::U64(x) => u64_method(m, x, args),
        Value::Usize(x) => usize_method(m, x, args),
        Value::F32(x) => f32_method(m, x, args),
        Value::F64(x) => f64_method(m, x, args),
        Value::F16(x) => Ok(half_method(Half::F16, m, x, args)),
        Value::BF16(x) => Ok(half_method(Half::BF16, m, x, args)),
        Value::C32(re, im) => Ok(complex_method(m, (re, im), args, Value::F32, complex32)),
        Value::C64(re, im) => Ok(complex_method(m, (re, im), args, Value::F64, complex64)),
        Value::Bool(_) => panic!("no methods on bool"),
    }
}

/// A method of `f16` or `bf16`, with the `half` crate's rules.
fn half_method(fmt: Half, m: Method, x: u16, args: &[Value]) -> Value {
    let a = |i: usize| match args[i] {
        Value::F16(y) | Value::BF16(y) => y,
        other => panic!("{m:?} takes a half, not {other}"),
    };
    let half = |bits| Value::half_bits(if fmt == Half::F16 { Ty::F16 } else { Ty::BF16 }, bits);
    match m {
        Method::HIsNan => Value::Bool(h::is_nan(fmt, x)),
        Method::HIsInfinite => Value::Bool(h::is_infinite(fmt, x)),
        Method::HIsFinite => Value::Bool(h::is_finite(fmt, x)),
        Method::HIsSignNegative => Value::Bool(x & h::SIGN != 0),
        Method::HIsSignPositive => Value::Bool(x & h::SIGN == 0),
        Method::HSignum => half(h::signum(fmt, x)),
        Method::HCopysign => half(h::copysign(x, a(0))),
        Method::HMax => half(h::max(fmt, x, a(0))),
        Method::HMin => half(h::min(fmt, x, a(0))),
        m => panic!("{m:?} is not a method of the half types"),
    }
}

/// A method of a complex number, with num-complex's formulas; `part` and `whole` wrap the
/// results.
fn complex_method<T: Part>(
    m: Method,
    z: c::C<T>,
    args: &[Value],
    part: fn(T) -> Value,
    whole: fn(c::C<T>) -> Value,
) -> Value
where
    Value: Unwrap<T>,
{
    let x = || <Value as Unwrap<T>>::unwrap(args[0]);
    match m {
        Method::Conj => whole(c::conj(z)),
        Method::NormSqr => part(c::norm_sqr(z)),
        Method::L1Norm => part(c::l1_norm(z)),
        Method::Scale => whole(c::scale(z, x())),
        Method::Unscale => whole(c::unscale(z, x())),
        Method::Inv => whole(c::inv(z)),
        Method::CPowi => whole(c::powi(z, <i32 as Prim>::from_value(args[0]))),
        Method::CPowu => whole(c::powu(z, <u32 as Prim>::from_value(args[0]))),
        Method::CIsNan => Value::Bool(c::is_nan(z)),
        Method::CIsInfinite => Value::Bool(c::is_infinite(z)),
        Method::CIsFinite => Value::Bool(c::is_finite(z)),
        Method::CIsNormal => Value::Bool(c::is_normal(z)),
        m => panic!("{m:?} is not a method of the complex types"),
    }
}

/// A part of a complex number out of a [`Value`].
trait Unwrap<T> {
    fn unwrap(self) -> T;
}

impl Unwrap<f32> for Value {
    fn unwrap(self) -> f32 {
        <f32 as Prim>::from_value(self)
    }
}

impl Unwrap<f64> for Value {
    fn unwrap(self) -> f64 {
        <f64 as Prim>::from_value(self)
    }
}

fn checked<T: Prim>(v: Option<T>, f: Fault) -> Result<Value, Fault> {
    v.map(Prim::into_value).ok_or(f)
}

macro_rules! signed_methods {
    ($m:ident, $x:ident) => {
        match $m {
            // `abs` and `-` wrap in a release build.
            Method::IAbs => $x.wrapping_abs().into_value(),
            Method::ISignum => $x.signum().into_value(),
            Method::UnsignedAbs => $x.unsigned_abs().into_value(),
            Method::WrappingAbs => $x.wrapping_abs().into_value(),
            Method::SaturatingNeg => $x.saturating_neg().into_value(),
            Method::SaturatingAbs => $x.saturating_abs().into_value(),
            m => panic!("{m:?} is not a method of signed integers"),
        }
    };
}

macro_rules! unsigned_methods {
    ($m:ident, $x:ident) => {
        match $m {
            Method::IsPowerOfTwo => $x.is_power_of_two().into_value(),
            m => panic!("{m:?} is not a method of unsigned integers"),
        }
    };
}

macro_rules! int_method {
    ($name:ident: $t:ty, $extra:ident) => {
        fn $name(m: Method, x: $t, args: &[Value]) -> Result<Value, Fault> {
            let a = |i: usize| <$t as Prim>::from_value(args[i]);
            let n = || <u32 as Prim>::from_value(args[0]);
            Ok(match m {
                Method::IMin => x.min(a(0)).into_value(),
                Method::IMax => x.max(a(0)).into_value(),
                Method::IClamp if a(0) > a(1) => return Err(Fault::IntClampBounds),
                Method::IClamp => x.clamp(a(0), a(1)).into_value(),
                Method::IRemEuclid if a(0) == 0 => return Err(Fault::RemainderByZero),
                Method::IRemEuclid => x.checked_rem_euclid(a(0)).ok_or(Fault::RemainderOverflow)?.into_value(),
                Method::IDivEuclid if a(0) == 0 => return Err(Fault::DivideByZero),
                Method::IDivEuclid => x.checked_div_euclid(a(0)).ok_or(Fault::DivideOverflow)?.into_value(),
                // `pow` wraps in a release build.
                Method::Pow => x.wrapping_pow(n()).into_value(),
                Method::AbsDiff => x.abs_diff(a(0)).into_value(),
                Method::CountOnes => x.count_ones().into_value(),
                Method::CountZeros => x.count_zeros().into_value(),
                Method::LeadingZeros => x.leading_zeros().into_value(),
                Method::TrailingZeros => x.trailing_zeros().into_value(),
                Method::RotateLeft => x.rotate_left(n()).into_value(),
                Method::RotateRight => x.rotate_right(n()).into_value(),
                Method::SwapBytes => x.swap_bytes().into_value(),
                Method::ReverseBits => x.reverse_bits().into_value(),
                Method::WrappingAdd => x.wrapping_add(a(0)).into_value(),
                Method::WrappingSub => x.wrapping_sub(a(0)).into_value(),
                Method::WrappingMul => x.wrapping_mul(a(0)).into_value(),
                Method::WrappingDiv if a(0) == 0 => return Err(Fault::DivideByZero),
                Method::WrappingDiv => x.wrapping_div(a(0)).into_value(),
                Method::WrappingRem if a(0) == 0 => return Err(Fault::RemainderByZero),
                Method::WrappingRem => x.wrapping_rem(a(0)).into_value(),
                Method::WrappingNeg => x.wrapping_neg().into_value(),
                Method::WrappingShl => x.wrapping_shl(n()).into_value(),
                Method::WrappingShr => x.wrapping_shr(n()).into_value(),
                Method::WrappingPow => x.wrapping_pow(n()).into_value(),
                Method::SaturatingAdd => x.saturating_add(a(0)).into_value(),
                Method::SaturatingSub => x.saturating_sub(a(0)).into_value(),
                Method::SaturatingMul => x.saturating_mul(a(0)).into_value(),
                Method::SaturatingDiv if a(0) == 0 => return Err(Fault::DivideByZero),
                Method::SaturatingDiv => x.saturating_div(a(0)).into_value(),
                Method::SaturatingPow => x.saturating_pow(n()).into_value(),
                m => $extra!(m, x),
            })
        }
    };
}

int_method!(i8_method: i8, signed_methods);
int_method!(i16_method: i16, signed_methods);
int_method!(i32_method: i32, signed_methods);
int_method!(i64_method: i64, signed_methods);
int_method!(isize_method: isize, signed_methods);
int_method!(u8_method: u8, unsigned_methods);
int_method!(u16_method: u16, unsigned_methods);
int_method!(u32_method: u32, unsigned_methods);
int_method!(u64_method: u64, unsigned_methods);
int_method!(usize_method: usize, unsigned_methods);

macro_rules! float_method {
    ($name:ident: $t:ty) => {
        fn $name(m: Method, x: $t, args: &[Value]) -> Result<Value, Fault> {
            let a = |i: usize| <$t as Prim>::from_value(args[i]);
            Ok(match m {
                Method::FAbs => x.abs().into_value(),
                Method::FSignum => x.signum().into_value(),
                Method::FMin => x.min(a(0)).into_value(),
                Method::FMax => x.max(a(0)).into_value(),
                // `min > max`, or either is NaN.
                Method::FClamp if a(0).partial_cmp(&a(1)).is_none_or(|o| o.is_gt()) => {
                    return Err(Fault::FloatClampBounds);
                }
                Method::FClamp => x.clamp(a(0), a(1)).into_value(),
                Method::FRemEuclid => x.rem_euclid(a(0)).into_value(),
                Method::FDivEuclid => x.div_euclid(a(0)).into_value(),
                Method::Copysign => x.copysign(a(0)).into_value(),
                Method::Floor => x.floor().into_value(),
                Method::Ceil => x.ceil().into_value(),
                Method::Round => x.round().into_value(),
                Method::RoundTiesEven => x.round_ties_even().into_value(),
                Method::Trunc => x.trunc().into_value(),
                Method::Fract => x.fract().into_value(),
                Method::Sqrt => x.sqrt().into_value(),
                Method::MulAdd => x.mul_add(a(0), a(1)).into_value(),
                Method::Recip => x.recip().into_value(),
                Method::ToDegrees => x.to_degrees().into_value(),
                Method::ToRadians => x.to_radians().into_value(),
                Method::IsNan => x.is_nan().into_value(),
                Method::IsInfinite => x.is_infinite().into_value(),
                Method::IsFinite => x.is_finite().into_value(),
                Method::IsSignNegative => x.is_sign_negative().into_value(),
                Method::IsSignPositive => x.is_sign_positive().into_value(),
                Method::Powi => x.powi(<i32 as Prim>::from_value(args[0])).into_value(),
                Method::Cbrt => x.cbrt().into_value(),
                Method::Exp => x.exp().into_value(),
                Method::Exp2 => x.exp2().into_value(),
                Method::ExpM1 => x.exp_m1().into_value(),
                Method::Ln => x.ln().into_value(),
                Method::Log2 => x.log2().into_value(),
                Method::Log10 => x.log10().into_value(),
                Method::Ln1p => x.ln_1p().into_value(),
                Method::Log => x.log(a(0)).into_value(),
                Method::Powf => x.powf(a(0)).into_value(),
                Method::Sin => x.sin().into_value(),
                Method::Cos => x.cos().into_value(),
                Method::Tan => x.tan().into_value(),
                Method::Asin => x.asin().into_value(),
                Method::Acos => x.acos().into_value(),
                Method::Atan => x.atan().into_value(),
                Method::Atan2 => x.atan2(a(0)).into_value(),
                Method::Sinh => x.sinh().into_value(),
                Method::Cosh => x.cosh().into_value(),
                Method::Tanh => x.tanh().into_value(),
                Method::Asinh => x.asinh().into_value(),
                Method::Acosh => x.acosh().into_value(),
                Method::Atanh => x.atanh().into_value(),
                Method::Hypot => x.hypot(a(0)).into_value(),
                Method::Erf => SpecialMath::erf(x).into_value(),
                Method::Erfc => SpecialMath::erfc(x).into_value(),
                Method::Gamma => SpecialMath::gamma(x).into_value(),
                Method::LnGamma => SpecialMath::ln_gamma(x).into_value(),
                m => panic!("{m:?} is not a float method"),
            })
        }
    };
}

float_method!(f32_method: f32);
float_method!(f64_method: f64);
