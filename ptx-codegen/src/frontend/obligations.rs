//! Obligations: requirements on types that inference may leave open, checked once it is over.

use super::context::ProgramCx;
use super::diagnostics::SpanRange;
use super::operators::cast_problem;
use crate::ir::Type;
use crate::ty::ScalarType;

/// A requirement on a type that may not be known until inference ends.
#[derive(Clone)]
pub(super) enum Require {
    /// `+ - * / %`: an integer or float type.
    Numeric(&'static str),
    /// Unary `-`: a signed integer or a float.
    Negatable,
    /// `& | ^ !`: an integer or `bool`.
    IntOrBool(&'static str),
    /// Shift operands: an integer.
    Int(&'static str),
    /// An integer literal's value fits its type.
    Fits(i128),
    /// `as` between these types is allowed.
    CastTo(ScalarType),
    /// A comparison's operands: a scalar, not `()`.
    Comparable,
    /// A `match` scrutinee: an integer or `bool`.
    Matchable,
}

pub(super) struct Obligation {
    ty: Type,
    req: Require,
    span: SpanRange,
}

impl ProgramCx {
    pub(super) fn require(&mut self, ty: Type, req: Require, span: impl Into<SpanRange>) {
        let span = span.into();
        self.obligations.push(Obligation { ty, req, span });
    }

    /// Checks what inference had to leave open, now that it is over.
    pub(super) fn check_obligations(&mut self) {
        for ob in std::mem::take(&mut self.obligations) {
            let t = self.infer.resolve(ob.ty);
            self.check_obligation(t, &ob.req, ob.span);
        }
    }

    fn check_obligation(&mut self, t: Type, req: &Require, span: SpanRange) {
        let Type::Scalar(s) = t else {
            match (t, req) {
                (Type::Unit, Require::Comparable | Require::Numeric(_)) => {
                    self.error_at(span, "`()` has no value to compute with")
                }
                (Type::Tuple(_), _) => {
                    let what = match req {
                        Require::Numeric(op) | Require::IntOrBool(op) => format!("`{op}`"),
                        Require::Negatable => "unary `-`".into(),
                        Require::Comparable => "a comparison".into(),
                        Require::CastTo(to) => format!("`as {to}`"),
                        Require::Matchable => "`match`".into(),
                        Require::Int(what) => what.to_string(),
                        Require::Fits(_) => return,
                    };
                    let shown = self.infer.describe(t);
                    self.error_at(
                        span,
                        format!(
                            "{what} does not apply to the tuple `{shown}`: apply it to its elements (`t.0`, `t.1`, …)"
                        ),
                    );
                }
                _ => {} // errors and unknowns are reported elsewhere
            }
            return;
        };
        let problem = match req {
            Require::Numeric(op) if !(s.is_int() || s.is_float()) => {
                Some(format!("cannot apply `{op}` to `{s}`: arithmetic needs an integer or float type"))
            }
            Require::Negatable if !(s.is_signed_int() || s.is_float()) => Some(if s.is_unsigned_int() {
                format!("cannot negate an unsigned `{s}`: use a signed type or `wrapping_neg`")
            } else {
                format!("cannot apply unary `-` to `{s}`")
            }),
            Require::IntOrBool(op) if s.is_float() => {
                Some(format!("cannot apply `{op}` to `{s}`: bitwise operators need an integer or `bool`"))
            }
            Require::Int(what) if !s.is_int() => Some(format!("{what} needs an integer type, found `{s}`")),
            // A negative literal of an unsigned type is reported by `Negatable`.
            Require::Fits(v) if *v < 0 && s.is_unsigned_int() => None,
            Require::Fits(v) => {
                let (lo, hi) = s.int_range().unwrap_or((i128::MIN, i128::MAX));
                (*v < lo || *v > hi)
                    .then(|| format!("literal out of range for `{s}`: `{v}` does not fit in {lo}..={hi}"))
            }
            Require::CastTo(to) => cast_problem(s, *to),
            Require::Matchable if s.is_float() => Some(format!(
                "`match` on `{s}` is not supported: match on integers or `bool`, or compare with `if`/`else if`"
            )),
            _ => None,
        };
        if let Some(p) = problem {
            self.error_at(span, p);
        }
    }
}
