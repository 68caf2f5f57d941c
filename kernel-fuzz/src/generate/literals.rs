//! Literals (edge values often, in several spellings) and the standard library's constants.

use super::Gen;
use crate::ast::*;
use crate::float16::{constants, from_f32, from_f64};
use crate::ty::{Ty, Value};

impl Gen<'_> {
    pub(super) fn lit_of(&mut self, value: Value) -> Expr {
        let bare = self.rng.chance(1, 2);
        let style = self.int_style(value);
        Expr::new(value.ty(), ExprKind::Lit(Lit { value, bare, style }))
    }

    fn int_style(&mut self, v: Value) -> u8 {
        match v.as_i128() {
            Some(x) if x >= 0 => *self.rng.pick(&[0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]),
            _ => 0,
        }
    }

    /// A literal of type `ty`: edge values often. The half and complex types have no
    /// literals: theirs are conversions and constructors of literals (`f16::from_f32(1.5)`,
    /// `Complex::new(0.5, -2.0)`).
    pub(super) fn literal(&mut self, ty: Ty) -> Expr {
        if ty.is_half() || ty.is_complex() {
            return self.new_type_literal(ty, false).0;
        }
        let v = match ty {
            Ty::Bool => Value::Bool(self.rng.chance(1, 2)),
            Ty::F32 | Ty::F64 => {
                let f64_only = ty == Ty::F64;
                let edges: &[f64] = &[0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1.5, -2.5, 0.1, 3.0, 10.0, 1e10, -1e-10, 100.0];
                match self.rng.weighted(&[6, 2, 3, 2]) {
                    0 => Value::float(ty, *self.rng.pick(edges)),
                    1 => {
                        let extremes: Vec<Value> = if f64_only {
                            vec![
                                Value::F64(f64::MAX),
                                Value::F64(f64::MIN),
                                Value::F64(f64::MIN_POSITIVE),
                                Value::F64(5e-324),
                                Value::F64(-1.5e-310),
                                Value::F64(f64::EPSILON),
                            ]
                        } else {
                            vec![
                                Value::F32(f32::MAX),
                                Value::F32(f32::MIN),
                                Value::F32(f32::MIN_POSITIVE),
                                Value::F32(1e-45),
                                Value::F32(-3e-40),
                                Value::F32(f32::EPSILON),
                                Value::F32(16777217.0),
                            ]
                        };
                        *self.rng.pick(&extremes)
                    }
                    2 => {
                        // A short decimal, as people write them.
                        let x =
                            (self.rng.range(-100_000, 100_000) as f64) / *self.rng.pick(&[1.0, 10.0, 100.0, 1000.0]);
                        Value::float(ty, x)
                    }
                    _ => loop {
                        let v = Value::from_bits(ty, self.rng.next_u64());
                        if v.as_f64().is_some_and(f64::is_finite) {
                            break v;
                        }
                    },
                }
            }
            t => {
                let (min, max) = t.int_range();
                let x = match self.rng.weighted(&[4, 3, 2, 2]) {
                    0 => *self.rng.pick(&[0, 1, 2, 3, 7, 8, 31, 32, 63, 64, 100]),
                    1 => *self.rng.pick(&[min, max, min + 1, max - 1, -1, -2, max / 2, min / 2]),
                    2 => {
                        let b = self.rng.range(0, t.bits() as i128 - 1);
                        (1i128 << b) + self.rng.range(-1, 1)
                    }
                    _ => self.rng.range(min, max),
                };
                Value::int(t, x.clamp(min, max))
            }
        };
        self.lit_of(v)
    }

    /// The value of a literal [`Gen::literal`] made.
    fn literal_value(&mut self, ty: Ty) -> (Expr, Value) {
        let e = self.literal(ty);
        let ExprKind::Lit(l) = &e.kind else { unreachable!("a literal of a primitive type") };
        let v = l.value;
        (e, v)
    }

    /// A "literal" of a half or complex type, and its value: a conversion or constructor of
    /// literals, in a spelling a constant may hold where `in_const`.
    pub(super) fn new_type_literal(&mut self, ty: Ty, in_const: bool) -> (Expr, Value) {
        if ty.is_half() {
            let h = ty.half().expect("a half type");
            let wide = if self.cfg.half_from_f64 { 1 } else { 0 };
            let small = if in_const { 0 } else { 1 };
            return match self.rng.weighted(&[5, small, wide]) {
                0 => {
                    let (e, x) = self.literal_value(Ty::F32);
                    let spelling = if in_const || self.rng.chance(1, 4) { 1 } else { 0 };
                    let Value::F32(x) = x else { unreachable!() };
                    (Expr::func(ty, Func::FromF32, vec![e], spelling), Value::from_bits(ty, from_f32(h, x) as u64))
                }
                1 => {
                    let t = *self.rng.pick(&[Ty::U8, Ty::I8]);
                    let (e, x) = self.literal_value(t);
                    let x = x.as_i128().unwrap() as f64;
                    (Expr::func(ty, Func::FromSmall, vec![e], 0), Value::from_bits(ty, from_f64(h, x) as u64))
                }
                _ => {
                    let (e, x) = self.literal_value(Ty::F64);
                    let spelling = if in_const || self.rng.chance(1, 4) { 1 } else { 0 };
                    let Value::F64(x) = x else { unreachable!() };
                    (Expr::func(ty, Func::FromF64, vec![e], spelling), Value::from_bits(ty, from_f64(h, x) as u64))
                }
            };
        }
        let p = ty.part().expect("a complex type");
        if !in_const && self.rng.chance(1, 5) {
            let (e, x) = self.literal_value(p);
            let spelling = self.rng.below(2) as u8;
            return (Expr::func(ty, Func::FromPart, vec![e], spelling), Value::complex(ty, x, Value::zero(p)));
        }
        let (re, x) = self.literal_value(p);
        let (im, y) = self.literal_value(p);
        let spelling = if in_const { *self.rng.pick(&[1, 2, 4]) } else { self.new_spelling() };
        (Expr::func(ty, Func::New, vec![re, im], spelling), Value::complex(ty, x, y))
    }

    /// A spelling of `Complex::new` ([`Func::New`]).
    pub(super) fn new_spelling(&mut self) -> u8 {
        self.rng.below(5) as u8
    }

    /// A constant of the standard library of type `ty`, in one of its spellings.
    pub(super) fn path_const(&mut self, ty: Ty) -> Option<(String, Value)> {
        let prefix = *self.rng.pick(&["", "", "", "std::", "core::"]);
        let t = ty.name();
        if ty.is_half() {
            let (name, bits) = *self.rng.pick(constants(ty.half().expect("a half type")));
            return Some((format!("{}::{name}", ty.name()), Value::from_bits(ty, bits as u64)));
        }
        if let Some(p) = ty.part() {
            let (name, v) = *self.rng.pick(&[("ZERO", (0.0, 0.0)), ("ONE", (1.0, 0.0)), ("I", (0.0, 1.0))]);
            let owner = match self.rng.below(2) {
                0 if ty == Ty::C32 => "Complex32".to_string(),
                0 => "Complex64".to_string(),
                _ => format!("Complex::<{}>", p.name()),
            };
            return Some((format!("{owner}::{name}"), Value::complex(ty, Value::float(p, v.0), Value::float(p, v.1))));
        }
        Some(match ty {
            Ty::Bool => return None,
            Ty::F32 | Ty::F64 => {
                let f32 = ty == Ty::F32;
                let v = |a: f32, b: f64| if f32 { Value::F32(a) } else { Value::F64(b) };
                let (name, value) = *self.rng.pick(&[
                    ("MAX", v(f32::MAX, f64::MAX)),
                    ("MIN", v(f32::MIN, f64::MIN)),
                    ("EPSILON", v(f32::EPSILON, f64::EPSILON)),
                    ("MIN_POSITIVE", v(f32::MIN_POSITIVE, f64::MIN_POSITIVE)),
                    ("INFINITY", v(f32::INFINITY, f64::INFINITY)),
                    ("NEG_INFINITY", v(f32::NEG_INFINITY, f64::NEG_INFINITY)),
                    ("NAN", v(f32::NAN, f64::NAN)),
                    ("consts::PI", v(std::f32::consts::PI, std::f64::consts::PI)),
                    ("consts::E", v(std::f32::consts::E, std::f64::consts::E)),
                    ("consts::TAU", v(std::f32::consts::TAU, std::f64::consts::TAU)),
                    ("consts::SQRT_2", v(std::f32::consts::SQRT_2, std::f64::consts::SQRT_2)),
                    ("consts::FRAC_1_SQRT_2", v(std::f32::consts::FRAC_1_SQRT_2, std::f64::consts::FRAC_1_SQRT_2)),
                    ("consts::LN_2", v(std::f32::consts::LN_2, std::f64::consts::LN_2)),
                ]);
                // `f32::consts::PI` is not Rust: the module path needs `std::` or `core::`.
                let prefix = if name.starts_with("consts") && prefix.is_empty() { "std::" } else { prefix };
                (format!("{prefix}{t}::{name}"), value)
            }
            Ty::U32 if self.rng.chance(1, 3) => {
                let (p, v) = *self.rng.pick(&[
                    ("i8::BITS", 8),
                    ("u64::BITS", 64),
                    ("f32::MANTISSA_DIGITS", 24),
                    ("f64::MANTISSA_DIGITS", 53),
                    ("f64::RADIX", 2),
                    ("f32::DIGITS", 6),
                ]);
                (p.to_string(), Value::U32(v))
            }
            Ty::I32 if self.rng.chance(1, 3) => {
                let (p, v) =
                    *self.rng.pick(&[("f32::MAX_EXP", 128), ("f64::MIN_EXP", -1021), ("f64::MAX_10_EXP", 308)]);
                (p.to_string(), Value::I32(v))
            }
            _ => {
                let (p, v) = int_path_const(ty, self.rng.chance(1, 2));
                (format!("{prefix}{p}"), v)
            }
        })
    }

    pub(super) fn bare(v: Value) -> Expr {
        Expr::new(v.ty(), ExprKind::Lit(Lit { value: v, bare: true, style: 0 }))
    }
}

/// `T::MAX` or `T::MIN` of an integer type, with its value.
pub(super) fn int_path_const(ty: Ty, max: bool) -> (String, Value) {
    let (lo, hi) = ty.int_range();
    if max {
        (format!("{}::MAX", ty.name()), Value::int(ty, hi))
    } else {
        (format!("{}::MIN", ty.name()), Value::int(ty, lo))
    }
}
