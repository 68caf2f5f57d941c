//! Literals (edge values often, in several spellings) and the standard library's constants.

use super::Gen;
use crate::ast::*;
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

    /// A literal of type `ty`: edge values often.
    pub(super) fn literal(&mut self, ty: Ty) -> Expr {
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

    /// A constant of the standard library of type `ty`, in one of its spellings.
    pub(super) fn path_const(&mut self, ty: Ty) -> Option<(String, Value)> {
        let prefix = *self.rng.pick(&["", "", "", "std::", "core::"]);
        let t = ty.name();
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
