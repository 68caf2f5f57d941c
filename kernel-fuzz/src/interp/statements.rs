//! Blocks, statements, loops and calls: the control flow, and each call's locals.

use super::operations::binary;
use super::{Fault, Flow, Interp, MAX_STEPS, R, Stop, fault, invalid, targets};
use crate::ast::*;
use crate::ty::Value;

impl<'p> Interp<'p> {
    /// Indexes the functions and constants (their names are unique in a program).
    pub(super) fn collect(&mut self, b: &'p Block) {
        visit_blocks(b, &mut |blk| self.collect_items(blk));
    }

    /// Indexes the functions and constants declared in `b` itself.
    pub(super) fn collect_items(&mut self, b: &'p Block) {
        for s in &b.stmts {
            match s {
                Stmt::Fn(f) => {
                    self.fns.insert(&f.name, f);
                }
                Stmt::Const(c) => {
                    self.consts.insert(&c.name, c);
                }
                _ => {}
            }
        }
    }

    pub(super) fn step(&mut self) -> R<'p, ()> {
        self.steps += 1;
        if self.steps > MAX_STEPS { Err(Flow::Stop(Stop::Runaway)) } else { Ok(()) }
    }

    /// Calls `f` on `args`: its scalar parameters' values, then the scalars of its struct
    /// parameters.
    pub(super) fn call_fn(&mut self, f: &'p FnItem, args: Vec<Value>) -> R<'p, Vec<Value>> {
        let names = f.params.iter().map(|p| &p.name).chain(f.struct_params.iter().flat_map(|p| &p.leaves));
        if args.len() != names.clone().count() {
            return invalid(format!("{} takes {} argument values", f.name, names.count()));
        }
        let (saved_base, saved_len) = (self.base, self.env.len());
        self.base = self.env.len();
        for (name, v) in names.zip(args) {
            self.env.push((name, v));
        }
        let r = match self.block(&f.body) {
            Ok(Some(v)) => Ok(v),
            Ok(None) => invalid(format!("{} ends without a value", f.name)),
            Err(Flow::Return(v)) => Ok(v),
            Err(e) => {
                if matches!(e, Flow::Stop(Stop::Fault(_))) && self.fault_in.is_none() {
                    self.fault_in = Some(&f.name);
                }
                Err(e)
            }
        };
        self.env.truncate(saved_len);
        self.base = saved_base;
        r
    }

    pub(super) fn lookup(&self, name: &str) -> R<'p, Value> {
        match self.env[self.base..].iter().rev().find(|(n, _)| *n == name) {
            Some((_, v)) => Ok(*v),
            None => invalid(format!("no variable {name}")),
        }
    }

    fn set(&mut self, name: &str, v: Value) -> R<'p, ()> {
        match self.env[self.base..].iter_mut().rev().find(|(n, _)| *n == name) {
            Some(slot) => {
                slot.1 = v;
                Ok(())
            }
            None => invalid(format!("no variable {name}")),
        }
    }

    /// Runs a block; its tail's values (`None` when it has none).
    pub(super) fn block(&mut self, b: &'p Block) -> R<'p, Option<Vec<Value>>> {
        let mark = self.env.len();
        let r = self.block_inner(b);
        self.env.truncate(mark);
        r
    }

    fn block_inner(&mut self, b: &'p Block) -> R<'p, Option<Vec<Value>>> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        match &b.tail {
            None => Ok(None),
            Some(t) => self.tail(t).map(Some),
        }
    }

    fn tail(&mut self, t: &'p Tail) -> R<'p, Vec<Value>> {
        match t {
            Tail::Scalar(e) => Ok(vec![self.expr(e)?]),
            Tail::Tuple(es) => es.iter().map(|e| self.expr(e)).collect(),
            Tail::Struct(init) => self.struct_value(init),
        }
    }

    /// The scalars of `init` for a struct whose scalars are `leaves`.
    fn struct_of(&mut self, init: &'p StructInit, leaves: &[String]) -> R<'p, Vec<Value>> {
        let vals = self.struct_value(init)?;
        if vals.len() != leaves.len() {
            return invalid(format!("a struct of {} scalars given {}", leaves.len(), vals.len()));
        }
        Ok(vals)
    }

    /// A struct's scalars, in declaration order (a literal's fields evaluated in that order).
    fn struct_value(&mut self, init: &'p StructInit) -> R<'p, Vec<Value>> {
        match init {
            StructInit::Literal(l) => l.exprs().into_iter().map(|e| self.expr(e)).collect(),
            StructInit::Copy { leaves, .. } => leaves.iter().map(|p| self.lookup(p)).collect(),
            StructInit::Call(c) => self.call(c),
        }
    }

    pub(super) fn scalar_block(&mut self, b: &'p Block) -> R<'p, Value> {
        match self.block(b)? {
            Some(v) => Ok(v[0]),
            None => invalid("a block used as a value has no value".into()),
        }
    }

    pub(super) fn stmt(&mut self, s: &'p Stmt) -> R<'p, ()> {
        match s {
            Stmt::Const(_) | Stmt::Fn(_) => {}
            Stmt::Let { name, init, ty, .. } => {
                // A deferred initialisation holds a placeholder until its assignment.
                let v = match init {
                    Some(e) => self.expr(e)?,
                    None => Value::zero(*ty),
                };
                self.env.push((name, v));
            }
            Stmt::LetTuple { names, call } => {
                let vals = self.call(call)?;
                for (n, v) in names.iter().zip(vals) {
                    if let Some((name, _)) = n {
                        self.env.push((name, v));
                    }
                }
            }
            Stmt::LetStruct { init, leaves, .. } => {
                for (name, v) in leaves.iter().zip(self.struct_of(init, leaves)?) {
                    self.env.push((name, v));
                }
            }
            Stmt::AssignStruct { init, leaves, .. } => {
                for (name, v) in leaves.iter().zip(self.struct_of(init, leaves)?) {
                    self.set(name, v)?;
                }
            }
            Stmt::Assign { name, op, value } => {
                // Rust evaluates the value of `x op= v` before it reads `x`.
                let v = self.expr(value)?;
                let new = match op {
                    None => v,
                    Some(op) => binary(*op, self.lookup(name)?, v, self.overflow).or_else(fault)?,
                };
                self.set(name, new)?;
            }
            Stmt::Expr(e, _) => {
                self.expr(e)?;
            }
            Stmt::If { cond, then, els } => {
                if self.expr(cond)?.truthy() {
                    self.block(then)?;
                } else if let Some(e) = els {
                    self.block(e)?;
                }
            }
            Stmt::While { label, cond, body } => loop {
                self.step()?;
                if !self.expr(cond)?.truthy() {
                    break;
                }
                match self.block(body) {
                    Ok(_) => {}
                    Err(Flow::Break(l, None)) if targets(l, label) => break,
                    Err(Flow::Continue(l)) if targets(l, label) => {}
                    Err(e) => return Err(e),
                }
            },
            Stmt::For { label, var, range, body } => {
                let start = self.expr(&range.start)?;
                let end = self.expr(&range.end)?;
                let step = match &range.step {
                    Some(s) => Some(self.expr(s)?),
                    None => None,
                };
                let step = match step {
                    Some(Value::Usize(0)) => return fault(Fault::StepByZero),
                    Some(Value::Usize(k)) => Some(k),
                    Some(other) => return invalid(format!("step_by({other})")),
                    None => None,
                };
                for i in range_values(start, end, range.inclusive, range.rev, step)? {
                    self.step()?;
                    let mark = self.env.len();
                    self.env.push((var, i));
                    let r = self.block(body);
                    self.env.truncate(mark);
                    match r {
                        Ok(_) => {}
                        Err(Flow::Break(l, None)) if targets(l, label) => break,
                        Err(Flow::Continue(l)) if targets(l, label) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
            Stmt::Loop { label, body } => loop {
                self.step()?;
                match self.block(body) {
                    Ok(_) => {}
                    Err(Flow::Break(l, None)) if targets(l, label) => break,
                    Err(Flow::Continue(l)) if targets(l, label) => {}
                    Err(e) => return Err(e),
                }
            },
            Stmt::Break { label, value } => {
                let v = match value {
                    Some(e) => Some(self.expr(e)?),
                    None => None,
                };
                return Err(Flow::Break(label.as_deref(), v));
            }
            Stmt::Continue { label } => return Err(Flow::Continue(label.as_deref())),
            Stmt::Return(t) => {
                let v = self.tail(t)?;
                return Err(Flow::Return(v));
            }
        }
        Ok(())
    }

    pub(super) fn call(&mut self, c: &'p Call) -> R<'p, Vec<Value>> {
        let Some(f) = self.fns.get(c.func.as_str()).copied() else {
            return invalid(format!("no function {}", c.func));
        };
        let mut args = c.args.iter().map(|a| self.expr(a)).collect::<R<'p, Vec<Value>>>()?;
        for s in &c.structs {
            for leaf in &s.leaves {
                args.push(self.lookup(leaf)?);
            }
        }
        self.call_fn(f, args)
    }

    pub(super) fn const_value(&mut self, name: &str) -> R<'p, Value> {
        let Some(c) = self.consts.get(name).copied() else {
            return invalid(format!("no constant {name}"));
        };
        // A constant sees no variables.
        let saved = std::mem::replace(&mut self.base, self.env.len());
        let v = self.expr(&c.value);
        self.base = saved;
        v
    }
}

/// The values a `for` loop over this range visits: Rust's own iterators decide.
fn range_values<'p>(
    start: Value,
    end: Value,
    inclusive: bool,
    rev: bool,
    step: Option<usize>,
) -> R<'p, Box<dyn Iterator<Item = Value>>> {
    fn finish<T: Copy + 'static>(
        it: Box<dyn DoubleEndedIterator<Item = T>>,
        rev: bool,
        step: Option<usize>,
        wrap: fn(T) -> Value,
    ) -> Box<dyn Iterator<Item = Value>> {
        let it: Box<dyn Iterator<Item = T>> = if rev { Box::new(it.rev()) } else { it };
        let it: Box<dyn Iterator<Item = T>> = match step {
            Some(k) => Box::new(it.step_by(k)),
            None => it,
        };
        Box::new(it.map(wrap))
    }
    macro_rules! ranges {
        ($($v:ident: $t:ty),*) => {
            match (start, end) {
                $((Value::$v(a), Value::$v(b)) => {
                    let it: Box<dyn DoubleEndedIterator<Item = $t>> =
                        if inclusive { Box::new(a..=b) } else { Box::new(a..b) };
                    Ok(finish(it, rev, step, Value::$v))
                })*
                _ => invalid(format!("a range from {start} to {end}")),
            }
        };
    }
    ranges!(I8: i8, I16: i16, I32: i32, I64: i64, Isize: isize, U8: u8, U16: u16, U32: u32, U64: u64, Usize: usize)
}
