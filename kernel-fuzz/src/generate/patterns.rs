//! `match` expressions: arms, guards, and patterns whose last arm makes them exhaustive.

use super::Gen;
use super::literals::int_path_const;
use crate::ast::*;
use crate::ty::{Ty, Value};

impl Gen<'_> {
    pub(super) fn match_expr(&mut self, ty: Ty, d: u32) -> Expr {
        let st = loop {
            let t = self.any_type();
            if t.has_patterns() {
                break t;
            }
        };
        let scrutinee = self.expr(st, d);
        let n = self.rng.range(1, 4) as usize;
        let mut arms = Vec::new();
        for i in 0..=n {
            let last = i == n;
            self.vars.push(Vec::new());
            let pat = if last { self.last_pattern(st) } else { self.pattern(st, true) };
            let guard = if !last && self.rng.chance(1, 4) {
                let saved = std::mem::replace(&mut self.no_jumps, true);
                let g = self.expr(Ty::Bool, d);
                self.no_jumps = saved;
                Some(g)
            } else {
                None
            };
            let body = self.expr(ty, d);
            self.vars.pop();
            arms.push(Arm { pat, guard, body });
        }
        Expr::new(ty, ExprKind::Match { scrutinee: Box::new(scrutinee), arms })
    }

    /// The last arm's pattern, which matches everything left.
    fn last_pattern(&mut self, st: Ty) -> Pat {
        match self.rng.weighted(&[3, 2, 1]) {
            0 => Pat::Wild,
            1 => {
                let name = self.fresh("n");
                self.declare(name.clone(), st, false, false);
                Pat::Bind(name, None)
            }
            _ if st.is_int() => {
                // `..=x | x..` covers every value.
                let (min, max) = st.int_range();
                let x = self.rng.range(min, max);
                Pat::Or(vec![
                    Pat::Range { lo: None, hi: Some(Bound { value: Value::int(st, x), name: None }), inclusive: true },
                    Pat::Range { lo: Some(Bound { value: Value::int(st, x), name: None }), hi: None, inclusive: false },
                ])
            }
            _ => Pat::Or(vec![Pat::Lit(Value::Bool(true), true), Pat::Lit(Value::Bool(false), true)]),
        }
    }

    /// A pattern for a scrutinee of type `st`; `bind` allows bindings (not inside `|`).
    fn pattern(&mut self, st: Ty, bind: bool) -> Pat {
        let value = |g: &mut Self| match g.literal(st).kind {
            ExprKind::Lit(l) => l.value,
            _ => unreachable!(),
        };
        if st == Ty::Bool {
            return match self.rng.weighted(&[4, 1]) {
                0 => Pat::Lit(value(self), self.rng.chance(1, 2)),
                _ => Pat::Or(vec![Pat::Lit(Value::Bool(true), true), Pat::Lit(Value::Bool(false), true)]),
            };
        }
        let (min, max) = st.int_range();
        match self.rng.weighted(&[4, 4, 1, 2, if bind { 1 } else { 0 }, if bind { 1 } else { 0 }]) {
            0 => Pat::Lit(value(self), self.rng.chance(1, 2)),
            1 => {
                // A bound is a number, or now and then a constant of the function.
                let consts = self.consts_of(st);
                let end = |g: &mut Self| -> (i128, Option<String>) {
                    if !consts.is_empty() && g.rng.chance(1, 4) {
                        let (name, v) = g.rng.pick(&consts).clone();
                        (v.as_i128().unwrap(), Some(name))
                    } else {
                        (value(g).as_i128().unwrap(), None)
                    }
                };
                let a = end(self);
                let b = if self.rng.chance(1, 2) { end(self) } else { ((a.0 + self.rng.range(0, 20)).min(max), None) };
                let (lo, hi) = if a.0 <= b.0 { (a, b) } else { (b, a) };
                let named = |g: &mut Self, (v, name): (i128, Option<String>)| {
                    // `T::MIN` and `T::MAX` spelled as paths half the time.
                    let name = name.or_else(|| {
                        ((v == min || v == max) && g.rng.chance(1, 2)).then(|| int_path_const(st, v == max).0)
                    });
                    Some(Bound { value: Value::int(st, v), name })
                };
                let (l, h) = (lo.0, hi.0);
                let (lo, hi) = (named(self, lo), named(self, hi));
                match self.rng.below(5) {
                    0 => Pat::Range { lo, hi: None, inclusive: false },
                    1 => Pat::Range { lo: None, hi, inclusive: true },
                    // An exclusive end must leave the range non-empty.
                    2 if h > l => Pat::Range { lo, hi, inclusive: false },
                    3 if h > min => Pat::Range { lo: None, hi, inclusive: false },
                    _ => Pat::Range { lo, hi, inclusive: true },
                }
            }
            2 => {
                let consts = self.consts_of(st);
                if !consts.is_empty() && self.rng.chance(1, 2) {
                    let (name, v) = self.rng.pick(&consts).clone();
                    Pat::PathConst(name, v)
                } else {
                    let (p, v) = int_path_const(st, self.rng.chance(1, 2));
                    Pat::PathConst(p, v)
                }
            }
            3 => {
                let n = self.rng.range(2, 3) as usize;
                Pat::Or((0..n).map(|_| self.pattern(st, false)).collect())
            }
            4 => {
                let name = self.fresh("n");
                self.declare(name.clone(), st, false, false);
                Pat::Bind(name, None)
            }
            _ => {
                let sub = self.pattern(st, false);
                let name = self.fresh("n");
                self.declare(name.clone(), st, false, false);
                Pat::Bind(name, Some(Box::new(sub)))
            }
        }
    }
}
