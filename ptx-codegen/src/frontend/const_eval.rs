//! The values of integer constant expressions (`const TILE: usize = TPB * TPB;`,
//! `gpu::shared::<f32, { TPB * 2 }>()`, `[0.0f32; N / 4]`), computed with Rust's rules:
//! arithmetic in the expression's own type, `as` casts that wrap (integers) or saturate
//! (floats), and overflow, division by zero and over-long shifts as errors worded as
//! rustc words them.

use proc_macro2::Span;

use crate::ir::{BinaryOp, Expr, ExprKind, Literal, Type, UnaryOp};
use crate::ty::ScalarType;

/// Why an expression has no constant value.
#[derive(Debug)]
pub(super) enum Failure {
    /// Something a constant cannot compute (a call, a variable, a comparison): the caller
    /// says what a constant may hold.
    NotConstant(Span),
    /// Rust's evaluation fails here (overflow, division by zero): rustc's message.
    Overflow(Span, String),
}

/// The value of the integer expression `e`, with `ty` giving each subexpression's scalar
/// type (an unconstrained integer literal is `i32`, as in Rust).
pub(super) fn int_value(e: &Expr, ty: &dyn Fn(Type) -> Option<ScalarType>) -> Result<i128, Failure> {
    let t = ty(e.ty).ok_or(Failure::NotConstant(e.span))?;
    if !t.is_int() {
        return Err(Failure::NotConstant(e.span));
    }
    match &e.kind {
        ExprKind::Lit(Literal::Int(v)) => Ok(*v),
        ExprKind::Unary(UnaryOp::Neg, x) => {
            let v = int_value(x, ty)?;
            in_range(-v, t).ok_or_else(|| {
                Failure::Overflow(e.span, format!("attempt to negate `{}`, which would overflow", show(v, t)))
            })
        }
        ExprKind::Unary(UnaryOp::Not, x) => Ok(wrap(!int_value(x, ty)?, t)),
        ExprKind::Binary(op, a, b) => binary(*op, a, b, t, e.span, ty),
        ExprKind::Cast(x) => match ty(x.ty) {
            Some(s) if s.is_int() || s == ScalarType::Bool => Ok(wrap(int_value_or_bool(x, ty)?, t)),
            Some(s) if s.is_float() => Ok(float_to_int(float_value(x, s)?, t)),
            _ => Err(Failure::NotConstant(x.span)),
        },
        ExprKind::Block(b) if b.stmts.is_empty() => match &b.tail {
            Some(v) => int_value(v, ty),
            None => Err(Failure::NotConstant(e.span)),
        },
        _ => Err(Failure::NotConstant(e.span)),
    }
}

fn int_value_or_bool(e: &Expr, ty: &dyn Fn(Type) -> Option<ScalarType>) -> Result<i128, Failure> {
    match &e.kind {
        ExprKind::Lit(Literal::Bool(b)) => Ok(*b as i128),
        _ => int_value(e, ty),
    }
}

/// A float literal (possibly negated), for `2.5f32 as usize`.
fn float_value(e: &Expr, t: ScalarType) -> Result<f64, Failure> {
    match &e.kind {
        ExprKind::Lit(Literal::Float { as_f64, as_f32 }) => {
            Ok(if t == ScalarType::F32 { *as_f32 as f64 } else { *as_f64 })
        }
        ExprKind::Unary(UnaryOp::Neg, x) => Ok(-float_value(x, t)?),
        _ => Err(Failure::NotConstant(e.span)),
    }
}

/// Rust's float-to-integer `as`: toward zero, saturating, NaN to 0.
fn float_to_int(v: f64, t: ScalarType) -> i128 {
    let (lo, hi) = t.int_range().expect("an integer type");
    if v.is_nan() { 0 } else { (v as i128).clamp(lo, hi) }
}

fn binary(
    op: BinaryOp,
    a: &Expr,
    b: &Expr,
    t: ScalarType,
    span: Span,
    ty: &dyn Fn(Type) -> Option<ScalarType>,
) -> Result<i128, Failure> {
    let (x, y) = (int_value(a, ty)?, int_value(b, ty)?);
    let overflow = |what: String| Failure::Overflow(span, what);
    let computed =
        |sym: &str| overflow(format!("attempt to compute `{} {sym} {}`, which would overflow", show(x, t), show(y, t)));
    match op {
        BinaryOp::Add => in_range(x + y, t).ok_or_else(|| computed("+")),
        BinaryOp::Sub => in_range(x - y, t).ok_or_else(|| computed("-")),
        BinaryOp::Mul => in_range(x.checked_mul(y).unwrap_or(i128::MAX), t).ok_or_else(|| computed("*")),
        BinaryOp::Div if y == 0 => Err(overflow(format!("attempt to divide `{}` by zero", show(x, t)))),
        BinaryOp::Rem if y == 0 => {
            Err(overflow(format!("attempt to calculate the remainder of `{}` with a divisor of zero", show(x, t))))
        }
        // `MIN / -1` and `MIN % -1` overflow in Rust (the remainder too, although it is 0).
        BinaryOp::Div => in_range(x / y, t).ok_or_else(|| computed("/")),
        BinaryOp::Rem => in_range(x / y, t).map(|_| x % y).ok_or_else(|| computed("%")),
        BinaryOp::BitAnd => Ok(x & y),
        BinaryOp::BitOr => Ok(x | y),
        BinaryOp::BitXor => Ok(x ^ y),
        BinaryOp::Shl | BinaryOp::Shr => {
            let rt = ty(b.ty).unwrap_or(ScalarType::I32);
            if y < 0 || y >= t.bits() as i128 {
                let dir = if op == BinaryOp::Shl { "left" } else { "right" };
                return Err(overflow(format!("attempt to shift {dir} by `{}`, which would overflow", show(y, rt))));
            }
            // Arithmetic on i128 keeps the sign of a signed `x`; `wrap` drops the bits
            // shifted out at the left, as Rust's `<<` does.
            Ok(wrap(if op == BinaryOp::Shl { x << y } else { x >> y }, t))
        }
        _ => Err(Failure::NotConstant(span)),
    }
}

fn in_range(v: i128, t: ScalarType) -> Option<i128> {
    let (lo, hi) = t.int_range().expect("an integer type");
    (lo..=hi).contains(&v).then_some(v)
}

/// `v` reduced to `t`'s width, two's complement, as `as` does.
fn wrap(v: i128, t: ScalarType) -> i128 {
    let bits = t.bits();
    let low = v & ((1i128 << bits) - 1);
    if t.is_signed_int() && low >> (bits - 1) == 1 { low - (1i128 << bits) } else { low }
}

/// A value as rustc shows it in these messages: `200_u8`, `i32::MIN`, `u64::MAX`.
fn show(v: i128, t: ScalarType) -> String {
    let (lo, hi) = t.int_range().expect("an integer type");
    if t.is_signed_int() && v == lo {
        format!("{t}::MIN")
    } else if v == hi {
        format!("{t}::MAX")
    } else {
        format!("{v}_{t}")
    }
}

impl super::context::FnChecker<'_> {
    /// The value of the integer expression `e`, checked in this program.
    pub(super) fn int_value(&self, e: &Expr) -> Result<i128, Failure> {
        let infer = &self.prog.infer;
        int_value(e, &|t| match infer.resolve(t) {
            Type::Scalar(s) => Some(s),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_as_casts_do() {
        assert_eq!(wrap(200, ScalarType::I8), 200u8 as i8 as i128);
        assert_eq!(wrap(-1, ScalarType::U16), u16::MAX as i128);
        assert_eq!(wrap(1 << 40, ScalarType::U32), 0);
        assert_eq!(wrap(!5, ScalarType::U8), !5u8 as i128);
        assert_eq!(float_to_int(300.7, ScalarType::U8), 255);
        assert_eq!(float_to_int(-3.9, ScalarType::I8), -3);
        assert_eq!(float_to_int(f64::NAN, ScalarType::I32), 0);
    }

    #[test]
    fn shows_values_as_rustc_does() {
        assert_eq!(show(200, ScalarType::U8), "200_u8");
        assert_eq!(show(i32::MIN as i128, ScalarType::I32), "i32::MIN");
        assert_eq!(show(u64::MAX as i128, ScalarType::U64), "u64::MAX");
        assert_eq!(show(127, ScalarType::I8), "i8::MAX");
        assert_eq!(show(-1, ScalarType::I32), "-1_i32");
    }
}
