//! A test-case reducer: shrinks a program that shows a finding, keeping the finding. It
//! removes statements and replaces expressions by a zero of their type or by one of their
//! operands of the same type, as long as `fails` still says yes; the caller's `fails`
//! decides what "the same finding" means (and should refuse programs the interpreter
//! calls invalid).

use crate::ast::*;

/// A smaller program that still `fails` (the program itself when nothing smaller does).
pub fn reduce(p: &Program, fails: &mut dyn FnMut(&Program) -> bool) -> Program {
    let mut best = p.clone();
    loop {
        let mut improved = false;
        let mut k = 0;
        while k < count(&best, Site::Stmt) {
            let mut c = best.clone();
            if edit(&mut c, Site::Stmt, k, 0) && fails(&c) {
                best = c;
                improved = true;
            } else {
                k += 1;
            }
        }
        let mut k = 0;
        while k < count(&best, Site::Expr) {
            let mut choice = 0;
            let mut replaced = false;
            loop {
                let mut c = best.clone();
                if !edit(&mut c, Site::Expr, k, choice) {
                    break;
                }
                if fails(&c) {
                    best = c;
                    improved = true;
                    replaced = true;
                    break;
                }
                choice += 1;
            }
            if !replaced {
                k += 1;
            }
        }
        if !improved {
            return best;
        }
    }
}

#[derive(Copy, Clone, PartialEq)]
enum Site {
    Stmt,
    Expr,
}

fn count(p: &Program, site: Site) -> usize {
    let mut c = p.clone();
    let mut w = Walk { site, target: usize::MAX, choice: 0, seen: 0, done: false };
    for h in &mut c.helpers {
        w.block(&mut h.body);
    }
    w.block(&mut c.func.body);
    w.seen
}

/// Applies edit `choice` at the `k`-th site; false when there is no such edit.
fn edit(p: &mut Program, site: Site, k: usize, choice: usize) -> bool {
    let mut w = Walk { site, target: k, choice, seen: 0, done: false };
    for h in &mut p.helpers {
        w.block(&mut h.body);
    }
    w.block(&mut p.func.body);
    w.done
}

struct Walk {
    site: Site,
    target: usize,
    choice: usize,
    seen: usize,
    done: bool,
}

/// What an expression may become: a zero of its type, or one of its operands of its type.
fn replacements(e: &Expr) -> Vec<Expr> {
    // A literal, a variable, or a half or complex type's literal (`f16::from_f32(1.5)`,
    // which its zero is too) is as small as it gets.
    let literal = |a: &Expr| matches!(a.kind, ExprKind::Lit(_));
    if matches!(&e.kind, ExprKind::Lit(_) | ExprKind::Var(_))
        || matches!(&e.kind, ExprKind::Func { args, .. } if args.iter().all(literal))
    {
        return Vec::new();
    }
    let mut out = vec![Expr::zero(e.ty)];
    let tail = |b: &Block| match &b.tail {
        Some(Tail::Scalar(t)) => Some((**t).clone()),
        _ => None,
    };
    let children: Vec<Expr> = match &e.kind {
        ExprKind::Unary(_, a) => vec![(**a).clone()],
        ExprKind::Binary(_, a, b) => vec![(**a).clone(), (**b).clone()],
        ExprKind::Method { recv, args, .. } => std::iter::once((**recv).clone()).chain(args.iter().cloned()).collect(),
        ExprKind::If { then, els, .. } => [tail(then), tail(els)].into_iter().flatten().collect(),
        ExprKind::Match { arms, .. } => arms.iter().map(|a| a.body.clone()).collect(),
        ExprKind::Block(b) => tail(b).into_iter().collect(),
        ExprKind::Call(c) | ExprKind::Field(c, _) => c.args.clone(),
        ExprKind::Func { args, .. } => args.clone(),
        _ => Vec::new(),
    };
    out.extend(children.into_iter().filter(|c| c.ty == e.ty));
    out
}

impl Walk {
    fn hit(&mut self) -> bool {
        let hit = !self.done && self.seen == self.target;
        self.seen += 1;
        hit
    }

    fn block(&mut self, b: &mut Block) {
        if self.site == Site::Stmt {
            let mut i = 0;
            while i < b.stmts.len() {
                if self.hit() {
                    b.stmts.remove(i);
                    self.done = true;
                    return;
                }
                i += 1;
            }
        }
        for s in &mut b.stmts {
            self.stmt(s);
        }
        if let Some(t) = &mut b.tail {
            t.exprs_mut().into_iter().for_each(|e| self.expr(e));
        }
    }

    fn stmt(&mut self, s: &mut Stmt) {
        match s {
            Stmt::Const(c) => self.expr(&mut c.value),
            Stmt::Fn(f) => self.block(&mut f.body),
            Stmt::Let { init, .. } => init.iter_mut().for_each(|e| self.expr(e)),
            Stmt::LetTuple { call, .. } => call.args.iter_mut().for_each(|e| self.expr(e)),
            Stmt::LetStruct { init, .. } | Stmt::AssignStruct { init, .. } => {
                init.exprs_mut().into_iter().for_each(|e| self.expr(e))
            }
            Stmt::Assign { value, .. } | Stmt::Expr(value, _) => self.expr(value),
            Stmt::If { cond, then, els } => {
                self.expr(cond);
                self.block(then);
                els.iter_mut().for_each(|e| self.block(e));
            }
            Stmt::While { cond, body, .. } => {
                self.expr(cond);
                self.block(body);
            }
            Stmt::For { range, body, .. } => {
                self.expr(&mut range.start);
                self.expr(&mut range.end);
                range.step.iter_mut().for_each(|e| self.expr(e));
                self.block(body);
            }
            Stmt::Loop { body, .. } => self.block(body),
            Stmt::Break { value, .. } => value.iter_mut().for_each(|e| self.expr(e)),
            Stmt::Continue { .. } => {}
            Stmt::Return(t) => t.exprs_mut().into_iter().for_each(|e| self.expr(e)),
        }
    }

    fn expr(&mut self, e: &mut Expr) {
        if self.done {
            return;
        }
        if self.site == Site::Expr && self.hit() {
            if let Some(r) = replacements(e).into_iter().nth(self.choice) {
                *e = r;
                self.done = true;
            }
            return;
        }
        match &mut e.kind {
            ExprKind::Lit(_) | ExprKind::Var(_) | ExprKind::Const(_) | ExprKind::PathConst(..) => {}
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.expr(a),
            ExprKind::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Method { recv, args, .. } => {
                self.expr(recv);
                args.iter_mut().for_each(|a| self.expr(a));
            }
            ExprKind::Call(c) | ExprKind::Field(c, _) => c.args.iter_mut().for_each(|a| self.expr(a)),
            ExprKind::If { cond, then, els } => {
                self.expr(cond);
                self.block(then);
                self.block(els);
            }
            ExprKind::Match { scrutinee, arms } => {
                self.expr(scrutinee);
                for a in arms {
                    a.guard.iter_mut().for_each(|g| self.expr(g));
                    self.expr(&mut a.body);
                }
            }
            ExprKind::Block(b) | ExprKind::Loop { body: b, .. } => self.block(b),
            ExprKind::Func { args, .. } => args.iter_mut().for_each(|a| self.expr(a)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ty::Value;
    use crate::{Config, Stop, program, render, run};

    fn has_cast(p: &Program) -> bool {
        let mut found = false;
        visit_exprs(&p.func.body.stmts, p.func.body.tail.as_ref(), &mut |e| {
            found |= matches!(e.kind, ExprKind::Cast(_));
        });
        found
    }

    /// What the interpreter runs (a candidate may lose a declaration or a loop's exit).
    fn valid(p: &Program) -> bool {
        let args: Vec<Value> = p.func.params.iter().map(|q| Value::from_bits(q.ty, 1)).collect();
        !matches!(run(p, &args), Err(Stop::Invalid(_) | Stop::Runaway))
    }

    #[test]
    fn keeps_what_the_predicate_needs_and_little_else() {
        let p = (0..).map(|s| program(s, &Config::HOST)).find(|p| has_cast(p) && render(p).len() > 3000).unwrap();
        let small = reduce(&p, &mut |c| has_cast(c) && valid(c));
        assert!(has_cast(&small) && valid(&small));
        let (before, after) = (render(&p), render(&small));
        assert!(after.len() * 5 < before.len(), "reduced from {} to {} bytes:\n{after}", before.len(), after.len());
    }
}
