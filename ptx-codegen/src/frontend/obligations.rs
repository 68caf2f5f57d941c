//! Obligations: requirements on types that inference may leave open, checked once it is over.

use super::context::SpanRange;
use super::context::{Obligation, ProgramCx, Require};
use crate::ir::Type;
use crate::ty::ScalarType;

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
                // A literal's range says nothing of a tuple: its type is reported.
                (Type::Tuple(_), Require::Fits(_)) => {}
                (Type::Fragment(f), _) => {
                    let what = req.describe();
                    let name = f.rust_name();
                    self.error_at(
                        span,
                        format!(
                            "{what} does not apply to the tensor-core fragment `{name}`: `gpu::mma::mma` multiplies and accumulates, and `gpu::mma::store` writes the accumulator to an array, where its elements can be computed with"
                        ),
                    );
                }
                (Type::Dim3, _) => {
                    let what = req.describe();
                    self.error_at(
                        span,
                        format!("{what} does not apply to `gpu::Dim3`: apply it to its fields (`.x`, `.y`, `.z`)"),
                    );
                }
                (Type::Tuple(_), _) => {
                    let what = req.describe();
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
        if s.is_struct() {
            let what = req.describe();
            self.error_at(span, format!("{what} does not apply to the struct `{s}`: compute with its fields (`p.x`)"));
            return;
        }
        if s.is_complex() {
            let what = req.describe();
            // The checker writes out what applies to a complex number whose type it knows;
            // this is what reaches one only after inference, or never applies.
            self.error_at(span, format!("{what} does not apply to `{s}` here: a complex number takes `+ - * /`, `==`, `!=` and unary `-` where its type is known (annotate it, e.g. `let z: Complex<f32> = …;`), `as` casts of its parts (`z.re as f64`), and its methods"));
            return;
        }
        let problem = match req {
            Require::Numeric(op) if !(s.is_int() || s.is_floating()) => {
                Some(format!("cannot apply `{op}` to `{s}`: arithmetic needs an integer or float type"))
            }
            Require::Negatable if !(s.is_signed_int() || s.is_floating()) => Some(if s.is_unsigned_int() {
                format!("cannot negate an unsigned `{s}`: use a signed type or `wrapping_neg`")
            } else {
                format!("cannot apply unary `-` to `{s}`")
            }),
            Require::IntOrBool(op) if s.is_floating() => {
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
            Require::Matchable if s.is_floating() => Some(format!(
                "`match` on `{s}` is not supported: match on integers or `bool`, or compare with `if`/`else if`"
            )),
            _ => None,
        };
        if let Some(p) = problem {
            self.error_at(span, p);
        }
    }
}

/// Whether `from as to` is a valid cast in Rust, and if not, what to write instead.
pub(super) fn cast_problem(from: ScalarType, to: ScalarType) -> Option<String> {
    if let Some(c) = [from, to].into_iter().find(|t| t.is_complex()) {
        let instead = if to.is_complex() {
            format!("`{c}::new(x, 0.0)` (or `Complex::from(x)`) from a value of its parts' type")
        } else {
            "`z.re`, `z.im`, `z.norm()` or another method, then `as` on that".to_string()
        };
        return Some(format!("non-primitive cast: `{from}` as `{to}` (`{c}` is num-complex's type): write {instead}"));
    }
    // `half::f16` and `half::bf16` are not primitive types: no `as` reaches them.
    if let Some(h) = [from, to].into_iter().find(|t| t.is_half()) {
        let instead = match (from.is_half(), to) {
            (true, ScalarType::F32 | ScalarType::F64) => format!("`x.to_{to}()` or `{to}::from(x)`"),
            (true, _) => "`x.to_f32()`, then `as`".to_string(),
            (false, _) if from.is_float() => format!("`{h}::from_{from}(x)`"),
            (false, _) => format!("`{h}::from_f32(x as f32)`"),
        };
        return Some(format!(
            "non-primitive cast: `{from}` as `{to}` (`{h}` is the `half` crate's type): write {instead}"
        ));
    }
    if to == ScalarType::Bool && from != ScalarType::Bool {
        return Some(format!(
            "cannot cast `{from}` as `bool`: compare instead, e.g. `x != {}`",
            if from.is_float() { "0.0" } else { "0" }
        ));
    }
    if from == ScalarType::Bool && to.is_float() {
        return Some(format!("cannot cast `bool` as `{to}`: cast to an integer first, e.g. `b as u8 as {to}`"));
    }
    None
}

impl Require {
    /// What the requirement is of, for a message: `` `+` ``, `unary `-``, `a comparison`.
    fn describe(&self) -> String {
        match self {
            Require::Numeric(op) | Require::IntOrBool(op) => format!("`{op}`"),
            Require::Negatable => "unary `-`".into(),
            Require::Comparable => "a comparison".into(),
            Require::CastTo(to) => format!("`as {to}`"),
            Require::Matchable => "`match`".into(),
            Require::Int(what) => what.to_string(),
            Require::Fits(_) => "an integer literal".into(),
        }
    }
}
