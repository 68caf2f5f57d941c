//! Named constants: `f32::MAX`, `i64::MIN`, `u32::BITS`, `std::f64::consts::PI`, … with the
//! exact values of Rust's standard library.

use crate::ir::Literal;
use crate::ty::ScalarType;

fn float(t: ScalarType, f32v: f32, f64v: f64) -> (ScalarType, Literal) {
    match t {
        ScalarType::F32 => (t, Literal::Float { as_f64: f32v as f64, as_f32: f32v }),
        _ => (t, Literal::Float { as_f64: f64v, as_f32: f64v as f32 }),
    }
}

/// The associated constants of `half::f16` and `half::bf16`, with the `half` crate's
/// own values.
fn half_associated(t: ScalarType, name: &str) -> Option<(ScalarType, Literal)> {
    use half::{bf16, f16};
    let value = |a: f16, b: bf16| {
        let v = if t == ScalarType::F16 { a.to_f32() } else { b.to_f32() };
        Some((t, Literal::Float { as_f64: v as f64, as_f32: v }))
    };
    let int = |a, b, ty| Some((ty, Literal::Int(if t == ScalarType::F16 { a } else { b } as i128)));
    macro_rules! table {
        ($($n:ident),*) => {
            match name {
                $(stringify!($n) => value(f16::$n, bf16::$n),)*
                "RADIX" => int(f16::RADIX as i64, bf16::RADIX as i64, ScalarType::U32),
                "DIGITS" => int(f16::DIGITS as i64, bf16::DIGITS as i64, ScalarType::U32),
                "MANTISSA_DIGITS" => int(f16::MANTISSA_DIGITS as i64, bf16::MANTISSA_DIGITS as i64, ScalarType::U32),
                "MAX_EXP" => int(f16::MAX_EXP as i64, bf16::MAX_EXP as i64, ScalarType::I32),
                "MIN_EXP" => int(f16::MIN_EXP as i64, bf16::MIN_EXP as i64, ScalarType::I32),
                "MAX_10_EXP" => int(f16::MAX_10_EXP as i64, bf16::MAX_10_EXP as i64, ScalarType::I32),
                "MIN_10_EXP" => int(f16::MIN_10_EXP as i64, bf16::MIN_10_EXP as i64, ScalarType::I32),
                _ => None,
            }
        };
    }
    table!(
        ZERO,
        ONE,
        NEG_ONE,
        NEG_ZERO,
        MAX,
        MIN,
        MIN_POSITIVE,
        MIN_POSITIVE_SUBNORMAL,
        MAX_SUBNORMAL,
        EPSILON,
        INFINITY,
        NEG_INFINITY,
        NAN,
        E,
        PI,
        FRAC_1_PI,
        FRAC_1_SQRT_2,
        FRAC_2_PI,
        FRAC_2_SQRT_PI,
        FRAC_PI_2,
        FRAC_PI_3,
        FRAC_PI_4,
        FRAC_PI_6,
        FRAC_PI_8,
        LN_10,
        LN_2,
        LOG10_E,
        LOG10_2,
        LOG2_E,
        LOG2_10,
        SQRT_2
    )
}

/// Associated constants of a scalar type (`f32::EPSILON`, `u8::MAX`, `i32::BITS`,
/// `f16::ONE`).
pub fn associated(t: ScalarType, name: &str) -> Option<(ScalarType, Literal)> {
    use ScalarType::*;
    if t.is_half() {
        return half_associated(t, name);
    }
    if t.is_float() {
        let f = |a: f32, b: f64| Some(float(t, a, b));
        let int = |a: i32, b: i32, ty| Some((ty, Literal::Int(if t == F32 { a } else { b } as i128)));
        return match name {
            // The `Float` trait's constants, for generic functions compiled per type.
            "ZERO" => f(0.0, 0.0),
            "ONE" => f(1.0, 1.0),
            "MAX" => f(f32::MAX, f64::MAX),
            "MIN" => f(f32::MIN, f64::MIN),
            "MIN_POSITIVE" => f(f32::MIN_POSITIVE, f64::MIN_POSITIVE),
            "EPSILON" => f(f32::EPSILON, f64::EPSILON),
            "INFINITY" => f(f32::INFINITY, f64::INFINITY),
            "NEG_INFINITY" => f(f32::NEG_INFINITY, f64::NEG_INFINITY),
            "NAN" => f(f32::NAN, f64::NAN),
            "RADIX" => int(2, 2, U32),
            "MANTISSA_DIGITS" => int(f32::MANTISSA_DIGITS as i32, f64::MANTISSA_DIGITS as i32, U32),
            "DIGITS" => int(f32::DIGITS as i32, f64::DIGITS as i32, U32),
            "MAX_EXP" => int(f32::MAX_EXP, f64::MAX_EXP, I32),
            "MIN_EXP" => int(f32::MIN_EXP, f64::MIN_EXP, I32),
            "MAX_10_EXP" => int(f32::MAX_10_EXP, f64::MAX_10_EXP, I32),
            "MIN_10_EXP" => int(f32::MIN_10_EXP, f64::MIN_10_EXP, I32),
            _ => None,
        };
    }
    let (lo, hi) = t.int_range()?;
    match name {
        "MAX" => Some((t, Literal::Int(hi))),
        "MIN" => Some((t, Literal::Int(lo))),
        "BITS" => Some((U32, Literal::Int(t.bits() as i128))),
        _ => None,
    }
}

/// Mathematical constants of `std::f32::consts` / `std::f64::consts`.
pub fn math(t: ScalarType, name: &str) -> Option<(ScalarType, Literal)> {
    use std::f32::consts as c32;
    use std::f64::consts as c64;
    macro_rules! table {
        ($($n:ident),*) => {
            match name {
                $(stringify!($n) => Some(float(t, c32::$n, c64::$n)),)*
                _ => None,
            }
        };
    }
    if !t.is_float() {
        return None;
    }
    table!(
        PI,
        TAU,
        E,
        SQRT_2,
        FRAC_1_SQRT_2,
        LN_2,
        LN_10,
        LOG2_E,
        LOG10_E,
        LOG2_10,
        LOG10_2,
        FRAC_PI_2,
        FRAC_PI_3,
        FRAC_PI_4,
        FRAC_PI_6,
        FRAC_PI_8,
        FRAC_1_PI,
        FRAC_2_PI,
        FRAC_2_SQRT_PI
    )
}

/// A constant named by a path, in any of its usual spellings: `f32::MAX`,
/// `std::f32::MAX`, `core::i64::MIN`, `std::f64::consts::PI`, and `f64::consts::PI`, which
/// is Rust only where `use std::f64;` is in scope (the macro, which can see the imports
/// when it can read the file, reports it elsewhere).
pub fn by_path(segments: &[String]) -> Option<(ScalarType, Literal)> {
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    let ty = |n: &str| ScalarType::from_name(n);
    match s.as_slice() {
        [t, name] => associated(ty(t)?, name),
        ["half" | "gpu_runtime", t @ ("f16" | "bf16"), name] => associated(ty(t)?, name),
        ["std" | "core", t, name] => associated(ty(t)?, name),
        [t, "consts", name] => math(ty(t)?, name),
        ["std" | "core", t, "consts", name] => math(ty(t)?, name),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Option<(ScalarType, Literal)> {
        by_path(&p.split("::").map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn spellings() {
        assert_eq!(
            path("f32::MAX"),
            Some((ScalarType::F32, Literal::Float { as_f64: f32::MAX as f64, as_f32: f32::MAX }))
        );
        assert_eq!(
            path("std::f64::consts::PI").unwrap().1,
            Literal::Float { as_f64: std::f64::consts::PI, as_f32: std::f64::consts::PI as f32 }
        );
        assert_eq!(path("core::f32::consts::TAU").unwrap().0, ScalarType::F32);
        assert_eq!(path("f64::consts::E").unwrap().0, ScalarType::F64);
        assert_eq!(path("i8::MIN"), Some((ScalarType::I8, Literal::Int(-128))));
        assert_eq!(path("std::u64::MAX"), Some((ScalarType::U64, Literal::Int(u64::MAX as i128))));
        assert_eq!(path("usize::BITS"), Some((ScalarType::U32, Literal::Int(64))));
        assert_eq!(path("f32::MANTISSA_DIGITS"), Some((ScalarType::U32, Literal::Int(24))));
        assert_eq!(path("i32::PI"), None);
        assert_eq!(path("f32::consts::MAX"), None);
        let one = Literal::Float { as_f64: 1.0, as_f32: 1.0 };
        assert_eq!(path("half::bf16::ONE"), Some((ScalarType::BF16, one)));
        let pi = half::f16::PI.to_f32();
        assert_eq!(path("f16::PI"), Some((ScalarType::F16, Literal::Float { as_f64: pi as f64, as_f32: pi })));
        assert_eq!(path("bf16::MANTISSA_DIGITS"), Some((ScalarType::U32, Literal::Int(8))));
    }
}
