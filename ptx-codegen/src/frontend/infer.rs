//! Type inference for literals and `let` bindings, by unification, as rustc does it for
//! the scalar subset: an unsuffixed integer literal is an integer variable, an unsuffixed
//! float literal a float variable; unresolved variables fall back to `i32` and `f64`.

use crate::ir::{InferVar, Type};
use crate::ty::ScalarType;

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum VarKind {
    /// Any type (a `let` without annotation whose value is not known yet).
    Any,
    /// `{integer}`: an unsuffixed integer literal.
    Int,
    /// `{float}`: an unsuffixed float literal.
    Float,
    /// `Complex<_>`: a complex value whose parts' type is not known yet
    /// (`Complex::new(0.0, 1.0)`); the parts' variable is in [`InferTable::complex_part`].
    Complex,
}

impl VarKind {
    fn accepts(self, t: Type) -> bool {
        match (self, t) {
            (VarKind::Any, _) => true,
            (VarKind::Int, Type::Scalar(s)) => s.is_int(),
            (VarKind::Float, Type::Scalar(s)) => s.is_float(),
            (VarKind::Complex, Type::Scalar(s)) => s.is_complex(),
            _ => false,
        }
    }

    fn merge(self, other: VarKind) -> Option<VarKind> {
        match (self, other) {
            (VarKind::Any, k) | (k, VarKind::Any) => Some(k),
            (a, b) if a == b => Some(a),
            _ => None,
        }
    }
}

#[derive(Copy, Clone, Debug)]
enum VarState {
    Unbound(VarKind),
    Bound(Type),
    Link(InferVar),
}

#[derive(Default)]
pub struct InferTable {
    vars: Vec<VarState>,
    /// Element types of the tuple types ([`Type::Tuple`] indexes this).
    tuples: Vec<Vec<Type>>,
    /// The parts' type of each variable of kind [`VarKind::Complex`], by variable.
    complex_parts: std::collections::HashMap<u32, Type>,
}

impl InferTable {
    /// A tuple type with these element types.
    pub fn tuple(&mut self, elems: Vec<Type>) -> Type {
        self.tuples.push(elems);
        Type::Tuple(self.tuples.len() as u32 - 1)
    }

    /// The element types of a tuple type.
    pub fn tuple_elems(&self, t: Type) -> Option<Vec<Type>> {
        match self.shallow(t) {
            Type::Tuple(i) => Some(self.tuples[i as usize].clone()),
            _ => None,
        }
    }

    pub fn fresh(&mut self, kind: VarKind) -> Type {
        self.vars.push(VarState::Unbound(kind));
        Type::Infer(InferVar(self.vars.len() as u32 - 1))
    }

    /// The complex type whose parts have type `part` (`f32`, `f64` or a float variable):
    /// a concrete complex type when `part` is known, else a variable that follows it.
    pub fn complex(&mut self, part: Type) -> Type {
        if let Type::Scalar(p) = self.shallow(part) {
            if let Some(c) = ScalarType::complex_of(p) {
                return Type::Scalar(c);
            }
        }
        let v = self.fresh(VarKind::Complex);
        let Type::Infer(InferVar(i)) = v else { unreachable!("fresh gives a variable") };
        self.complex_parts.insert(i, part);
        v
    }

    /// The type of the parts of a complex type (concrete or a variable), `None` for any
    /// other type.
    pub fn complex_part(&self, t: Type) -> Option<Type> {
        match self.shallow(t) {
            Type::Scalar(s) => s.complex_part().map(Type::Scalar),
            Type::Infer(InferVar(i)) if self.kind(t) == Some(VarKind::Complex) => {
                let part = self.complex_parts[&i];
                Some(match self.shallow(part) {
                    Type::Scalar(p) => Type::Scalar(p),
                    other => other,
                })
            }
            _ => None,
        }
    }

    /// Follows links and bindings until a concrete type or an unbound variable.
    pub fn shallow(&self, t: Type) -> Type {
        let mut t = t;
        while let Type::Infer(v) = t {
            match self.vars[v.0 as usize] {
                VarState::Unbound(_) => return t,
                VarState::Bound(b) => t = b,
                VarState::Link(w) => t = Type::Infer(w),
            }
        }
        t
    }

    /// The kind of an unbound variable (after [`Self::shallow`]).
    pub fn kind(&self, t: Type) -> Option<VarKind> {
        match self.shallow(t) {
            Type::Infer(v) => match self.vars[v.0 as usize] {
                VarState::Unbound(k) => Some(k),
                _ => None,
            },
            _ => None,
        }
    }

    /// Makes `a` and `b` the same type, or says they cannot be. `Never` and `Error`
    /// unify with anything (a diverging branch fits any type; an error is reported once).
    pub fn unify(&mut self, a: Type, b: Type) -> Result<Type, ()> {
        let (a, b) = (self.shallow(a), self.shallow(b));
        match (a, b) {
            (Type::Error, Type::Infer(v)) | (Type::Infer(v), Type::Error) => {
                // Whatever the variable was to be, its error is already reported.
                self.vars[v.0 as usize] = VarState::Bound(Type::Error);
                Ok(Type::Error)
            }
            (Type::Error, _) | (_, Type::Error) => Ok(Type::Error),
            (Type::Never, x) | (x, Type::Never) => Ok(x),
            (Type::Unit, Type::Unit) => Ok(Type::Unit),
            (Type::Dim3, Type::Dim3) => Ok(Type::Dim3),
            (Type::Fragment(x), Type::Fragment(y)) if x == y => Ok(a),
            (Type::Array(x), Type::Array(y)) if x == y => Ok(a),
            (Type::Scalar(x), Type::Scalar(y)) if x == y => Ok(a),
            (Type::Tuple(x), Type::Tuple(y)) => {
                let (xs, ys) = (self.tuples[x as usize].clone(), self.tuples[y as usize].clone());
                if xs.len() != ys.len() {
                    return Err(());
                }
                for (p, q) in xs.into_iter().zip(ys) {
                    self.unify(p, q)?;
                }
                Ok(a)
            }
            (Type::Infer(v), Type::Infer(w)) => {
                if v == w {
                    return Ok(a);
                }
                let (kv, kw) = (self.kind(a).ok_or(())?, self.kind(b).ok_or(())?);
                let k = kv.merge(kw).ok_or(())?;
                if (kv, kw) == (VarKind::Complex, VarKind::Complex) {
                    let (pv, pw) = (self.complex_parts[&v.0], self.complex_parts[&w.0]);
                    self.unify(pv, pw)?;
                } else if kv == VarKind::Complex {
                    // `w` takes `v`'s kind, and with it `v`'s parts.
                    let pv = self.complex_parts[&v.0];
                    self.complex_parts.insert(w.0, pv);
                }
                self.vars[v.0 as usize] = VarState::Link(w);
                self.vars[w.0 as usize] = VarState::Unbound(k);
                Ok(b)
            }
            (Type::Infer(v), t) | (t, Type::Infer(v)) => {
                let k = self.kind(Type::Infer(v)).ok_or(())?;
                if !k.accepts(t) {
                    return Err(());
                }
                let part = (k == VarKind::Complex).then(|| self.complex_parts[&v.0]);
                self.vars[v.0 as usize] = VarState::Bound(t);
                if let (Some(part), Type::Scalar(c)) = (part, t) {
                    let p = c.complex_part().expect("a complex variable is bound to a complex type");
                    self.unify(part, Type::Scalar(p))?;
                }
                Ok(t)
            }
            _ => Err(()),
        }
    }

    /// The final type: unresolved integer variables become `i32`, float variables `f64`
    /// (rustc's fallback); a variable of unknown kind stays `Infer`.
    pub fn resolve(&self, t: Type) -> Type {
        let t = self.shallow(t);
        match self.kind(t) {
            Some(VarKind::Int) => Type::Scalar(ScalarType::I32),
            Some(VarKind::Float) => Type::Scalar(ScalarType::F64),
            // The parts decide (a float variable's fallback is `f64`).
            Some(VarKind::Complex) => match self.complex_part(t).map(|p| self.resolve(p)) {
                Some(Type::Scalar(p)) => ScalarType::complex_of(p).map_or(t, Type::Scalar),
                _ => t,
            },
            Some(VarKind::Any) | None => t,
        }
    }

    /// A readable name for diagnostics: `f32`, `{integer}`, `{float}`, `()`.
    pub fn describe(&self, t: Type) -> String {
        let t = self.shallow(t);
        match (t, self.kind(t)) {
            (Type::Scalar(s), _) => s.rust_name().to_string(),
            (_, Some(VarKind::Int)) => "{integer}".into(),
            (_, Some(VarKind::Float)) => "{float}".into(),
            (_, Some(VarKind::Complex)) => {
                let part = self.complex_part(t).map_or_else(|| "_".to_string(), |p| self.describe(p));
                format!("Complex<{part}>")
            }
            (Type::Unit, _) => "()".into(),
            (Type::Tuple(i), _) => {
                let parts: Vec<String> =
                    self.tuples[i as usize].clone().into_iter().map(|e| self.describe(e)).collect();
                if parts.len() == 1 { format!("({},)", parts[0]) } else { format!("({})", parts.join(", ")) }
            }
            (Type::Never, _) => "!".into(),
            (Type::Dim3, _) => "gpu::Dim3".into(),
            (Type::Fragment(f), _) => f.rust_name(),
            (Type::Array(_), _) => "an array".into(),
            _ => "_".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_variables_take_the_other_side() {
        let mut t = InferTable::default();
        let i = t.fresh(VarKind::Int);
        assert!(t.unify(i, Type::Scalar(ScalarType::U8)).is_ok());
        assert_eq!(t.resolve(i), Type::Scalar(ScalarType::U8));
        let f = t.fresh(VarKind::Float);
        assert!(t.unify(f, Type::Scalar(ScalarType::I32)).is_err());
        assert_eq!(t.resolve(f), Type::Scalar(ScalarType::F64));
    }

    #[test]
    fn variables_merge_kinds() {
        let mut t = InferTable::default();
        let any = t.fresh(VarKind::Any);
        let int = t.fresh(VarKind::Int);
        assert!(t.unify(any, int).is_ok());
        assert_eq!(t.kind(any), Some(VarKind::Int));
        let float = t.fresh(VarKind::Float);
        assert!(t.unify(any, float).is_err());
        assert!(t.unify(any, Type::Scalar(ScalarType::I64)).is_ok());
        assert_eq!(t.resolve(int), Type::Scalar(ScalarType::I64));
    }

    #[test]
    fn complex_variables_follow_their_parts() {
        let mut t = InferTable::default();
        let part = t.fresh(VarKind::Float);
        let c = t.complex(part);
        assert_eq!(t.describe(c), "Complex<{float}>");
        assert_eq!(t.resolve(c), Type::Scalar(ScalarType::C64));
        assert!(t.unify(part, Type::Scalar(ScalarType::F32)).is_ok());
        assert_eq!(t.resolve(c), Type::Scalar(ScalarType::C32));
        // Binding the complex variable binds its parts.
        let part = t.fresh(VarKind::Float);
        let c = t.complex(part);
        assert!(t.unify(c, Type::Scalar(ScalarType::C32)).is_ok());
        assert_eq!(t.resolve(part), Type::Scalar(ScalarType::F32));
        assert!(t.unify(c, Type::Scalar(ScalarType::F32)).is_err());
        // Two complex variables share their parts.
        let (p1, p2) = (t.fresh(VarKind::Float), t.fresh(VarKind::Float));
        let (c1, c2) = (t.complex(p1), t.complex(p2));
        assert!(t.unify(c1, c2).is_ok());
        assert!(t.unify(p2, Type::Scalar(ScalarType::F32)).is_ok());
        assert_eq!(t.resolve(c1), Type::Scalar(ScalarType::C32));
        // A known part gives a concrete type at once.
        assert_eq!(t.complex(Type::Scalar(ScalarType::F64)), Type::Scalar(ScalarType::C64));
    }

    #[test]
    fn never_fits_anything() {
        let mut t = InferTable::default();
        assert_eq!(t.unify(Type::Never, Type::Scalar(ScalarType::F32)), Ok(Type::Scalar(ScalarType::F32)));
        assert!(t.unify(Type::Unit, Type::Scalar(ScalarType::F32)).is_err());
    }
}
