//! An interpreter of generated explicit kernels with a deterministic schedule: blocks one
//! after another, and in a block the threads one after another from each barrier to the
//! next. The scalar parts run in the scalar interpreter (Rust's semantics), each thread
//! with its own variables.
//!
//! Between two barriers a generated kernel is race-free and its atomics' results are not
//! used, so what each thread computes does not depend on the order the threads run in:
//! running thread 0 to the barrier, then thread 1, and so on, gives what any schedule gives
//! (the simulator's threads, the GPU's warps). Statements that the whole block runs
//! together — barriers, warp operations, tree reductions, loops and branches the same for
//! the block — run here once for the block: a warp operation gathers the values of its
//! lanes, then gives each lane its result.
//!
//! As on the GPU and in the simulator, a thread that faults (or returns) stops, and the
//! others run on; threads that stopped no longer count at barriers. The launch then fails
//! with the fault of the first thread, in launch order, of the first block that had one.
//! Two things a fault can make unspecified are reported as such rather than given a
//! value: a warp operation whose mask names a lane that stopped ([`Outcome::Unspecified`]),
//! and reads of shared memory a stopped thread did not write ([`Outcome::Fault`]'s
//! `undefined`: the simulator reads zeros there, the GPU whatever was there).

use std::collections::HashMap;

use super::ast::*;
use crate::ast::{BinOp, Expr};
use crate::interp::{Env, Fault, Overflow, Scalars, Stop};
use crate::ty::Value;

/// A launch's shape: one-dimensional blocks and grid.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub struct Launch {
    pub grid: u32,
    pub block: u32,
}

/// A kernel's argument: a scalar, or a slice's elements.
#[derive(Clone, Debug)]
pub enum Arg {
    Scalar(Value),
    Slice(Vec<Value>),
}

/// The fault a thread stopped with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadFault {
    pub block: u32,
    pub thread: u32,
    /// Rust's panic message.
    pub message: String,
}

/// What a launch does.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Every thread ran to its end: the `&mut` slices' elements after the launch, in the
    /// order of the parameters.
    Done(Vec<Vec<Value>>),
    /// Threads faulted: the launch fails with `first`'s fault, the first thread's (in
    /// launch order) of the first block that had one, as the simulator reports it. `faults`
    /// are every thread's, block by block in launch order (the GPU reports any of them).
    /// `undefined`: a thread read shared memory that a stopped thread never wrote, or a
    /// warp operation named a stopped lane; what follows is unspecified on the GPU (the
    /// simulator reads zeros there), so the GPU may report another fault.
    Fault { first: ThreadFault, faults: Vec<ThreadFault>, undefined: bool },
    /// What the launch does is not specified: in the first block where threads fault, a
    /// warp operation names a lane that has stopped (the simulator faults the lanes waiting
    /// for it; which thread it reports depends on its schedule).
    Unspecified(String),
}

/// Runs `k` on `args` (one per parameter) over `launch`, with integer overflow as
/// `overflow` says. An error is a kernel the generator should not have made (a race, a
/// read of shared memory never written, a barrier in divergent code, …).
pub fn run(k: &Kernel, launch: Launch, args: &[Arg], overflow: Overflow) -> Result<Outcome, String> {
    if args.len() != k.params.len() {
        return Err(format!("{} takes {} arguments, not {}", k.name, k.params.len(), args.len()));
    }
    if k.whole_warps && launch.block % 32 != 0 {
        return Err(format!("{} runs in blocks of whole warps only, not {}", k.name, launch.block));
    }
    let mut m = Machine {
        sc: Scalars::new(overflow),
        launch,
        slices: HashMap::new(),
        memory: Vec::new(),
        scalars: Vec::new(),
        block: 0,
        shared: HashMap::new(),
        threads: Vec::new(),
        faults: Vec::new(),
        undefined: false,
    };
    for (p, a) in k.params.iter().zip(args) {
        match (p.kind, a) {
            (ParamKind::Scalar(t), Arg::Scalar(v)) if v.ty() == t => m.scalars.push((p.name.as_str(), *v)),
            (ParamKind::Input(t) | ParamKind::Output(t, _), Arg::Slice(vs)) if vs.iter().all(|v| v.ty() == t) => {
                m.slices.insert(p.name.as_str(), m.memory.len());
                m.memory.push(vs.clone());
            }
            _ => return Err(format!("argument {} does not fit {:?}", p.name, p.kind)),
        }
    }
    collect(&mut m.sc, &k.body);
    // Every block runs, as in the simulator and on the GPU: the GPU may report a fault of
    // any of them.
    let mut faults: Vec<ThreadFault> = Vec::new();
    for block in 0..launch.grid {
        m.block = block;
        m.shared.clear();
        m.threads = (0..launch.block).map(|linear| Thread { linear, env: m.scalars.clone(), live: true }).collect();
        let r = m.uniform(&k.body);
        let earlier = !faults.is_empty();
        faults.append(&mut m.faults);
        match r {
            Ok(()) => {}
            Err(Halt::Invalid(e)) => return Err(e),
            // Which of the block's threads the simulator reports depends on its schedule.
            Err(Halt::Unspecified(why)) if !earlier => return Ok(Outcome::Unspecified(why)),
            // What follows an earlier block's fault: the launch fails with that one, the
            // rest is unspecified.
            Err(Halt::Unspecified(_)) => {
                m.undefined = true;
                break;
            }
        }
    }
    if let Some(first) = faults.first() {
        return Ok(Outcome::Fault { first: first.clone(), faults, undefined: m.undefined });
    }
    if m.undefined {
        return Err("a thread read shared memory no thread wrote".into());
    }
    let outputs = k
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Output(..)))
        .map(|p| m.memory[m.slices[p.name.as_str()]].clone())
        .collect();
    Ok(Outcome::Done(outputs))
}

/// Shows the scalar interpreter the `fn` and `const` items in the kernel's scalar parts.
fn collect<'k>(sc: &mut Scalars<'k>, body: &'k [KStmt]) {
    for s in body {
        let mut exprs: Vec<&'k Expr> = Vec::new();
        match s {
            KStmt::Index { .. }
            | KStmt::Len { .. }
            | KStmt::WarpLanes { .. }
            | KStmt::Shared { .. }
            | KStmt::Tree { .. }
            | KStmt::Return
            | KStmt::Barrier { vote: None, .. } => {}
            KStmt::Scalar(stmts) => stmts.iter().for_each(|s| sc.collect_stmt(s)),
            KStmt::Load { index, .. } => exprs.push(index),
            KStmt::Store { index, value, .. } | KStmt::Atomic { index, value, .. } => exprs.extend([index, value]),
            KStmt::Barrier { vote: Some((_, p)), .. } => exprs.push(p),
            KStmt::Warp { value, arg, .. } => exprs.extend(std::iter::once(value).chain(arg)),
            KStmt::If { cond, then, els, .. } => {
                exprs.push(cond);
                collect(sc, then);
                collect(sc, els);
            }
            KStmt::GridStride { body, .. } | KStmt::BlockStride { body, .. } | KStmt::Repeat { body, .. } => {
                collect(sc, body)
            }
        }
        for e in exprs {
            sc.collect_expr(e);
        }
    }
}

/// Why the block's run stopped before its end.
enum Halt {
    Invalid(String),
    Unspecified(String),
}

/// Why a thread stopped.
enum Exit {
    /// With Rust's panic message.
    Fault(String),
    Return,
    Invalid(String),
}

impl Exit {
    /// A stop of the scalar interpreter; `clamp` the bounds of the last `clamp` that
    /// faulted, which Rust's message names.
    fn of(s: Stop, clamp: Option<(Value, Value)>) -> Exit {
        match s {
            Stop::Fault(f) => Exit::Fault(match (f, clamp) {
                (Fault::IntClampBounds, Some((lo, hi))) => {
                    format!("min > max. min = {}, max = {}", plain(lo), plain(hi))
                }
                (Fault::FloatClampBounds, Some((lo, hi))) => {
                    format!("min > max, or either was NaN. min = {}, max = {}", plain(lo), plain(hi))
                }
                _ => fault_message(f).to_string(),
            }),
            Stop::Runaway => Exit::Invalid("a loop ran away".into()),
            Stop::Invalid(e) => Exit::Invalid(e),
        }
    }
}

/// A value as Rust's `{:?}` writes it (no type suffix).
fn plain(v: Value) -> String {
    match v {
        Value::F32(x) => format!("{x:?}"),
        Value::F64(x) => format!("{x:?}"),
        Value::Bool(b) => format!("{b}"),
        v => v.as_i128().map_or_else(String::new, |x| x.to_string()),
    }
}

/// Rust's panic message for a fault of the scalar language (the beginning of it for
/// `clamp`'s, which go on with the bounds).
pub fn fault_message(f: Fault) -> &'static str {
    match f {
        Fault::DivideByZero => "attempt to divide by zero",
        Fault::RemainderByZero => "attempt to calculate the remainder with a divisor of zero",
        Fault::DivideOverflow => "attempt to divide with overflow",
        Fault::RemainderOverflow => "attempt to calculate the remainder with overflow",
        Fault::StepByZero => "assertion failed: step != 0",
        Fault::FloatClampBounds => "min > max, or either was NaN",
        Fault::IntClampBounds => "min > max",
        Fault::AddOverflow => "attempt to add with overflow",
        Fault::SubOverflow => "attempt to subtract with overflow",
        Fault::MulOverflow => "attempt to multiply with overflow",
        Fault::NegOverflow => "attempt to negate with overflow",
        Fault::ShlOverflow => "attempt to shift left with overflow",
        Fault::ShrOverflow => "attempt to shift right with overflow",
    }
}

fn out_of_bounds(len: usize, index: usize) -> Exit {
    Exit::Fault(format!("index out of bounds: the len is {len} but the index is {index}"))
}

struct Thread<'k> {
    /// Its index in the block.
    linear: u32,
    env: Env<'k>,
    live: bool,
}

/// Where a thread is.
#[derive(Copy, Clone)]
struct Place {
    thread: u32,
    block: u32,
    block_dim: u32,
    grid_dim: u32,
}

struct Machine<'k> {
    sc: Scalars<'k>,
    launch: Launch,
    /// Each slice parameter's index into `memory`.
    slices: HashMap<&'k str, usize>,
    memory: Vec<Vec<Value>>,
    /// The scalar parameters: every thread's first variables.
    scalars: Env<'k>,
    block: u32,
    /// The block's shared arrays: their elements, and which have been written.
    shared: HashMap<&'k str, (Vec<Value>, Vec<bool>)>,
    threads: Vec<Thread<'k>>,
    /// The block's faults, in launch order once the block has run.
    faults: Vec<ThreadFault>,
    undefined: bool,
}

fn lookup(env: &Env<'_>, name: &str) -> Option<Value> {
    env.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

fn as_index(v: Value) -> Result<usize, Exit> {
    match v {
        Value::Usize(i) => Ok(i),
        other => Err(Exit::Invalid(format!("an index of type {}", other.ty().name()))),
    }
}

impl<'k> Machine<'k> {
    fn place(&self, linear: u32) -> Place {
        Place { thread: linear, block: self.block, block_dim: self.launch.block, grid_dim: self.launch.grid }
    }

    fn live(&self) -> Vec<usize> {
        (0..self.threads.len()).filter(|&i| self.threads[i].live).collect()
    }

    /// Runs `f` for thread `i` with its variables; a thread that stops is recorded.
    fn on_thread(
        &mut self,
        i: usize,
        f: impl FnOnce(&mut Self, Place, &mut Env<'k>) -> Result<(), Exit>,
    ) -> Result<(), Halt> {
        let place = self.place(self.threads[i].linear);
        let mut env = std::mem::take(&mut self.threads[i].env);
        let r = f(self, place, &mut env);
        self.threads[i].env = env;
        match r {
            Ok(()) => Ok(()),
            Err(Exit::Return) => {
                self.threads[i].live = false;
                Ok(())
            }
            Err(Exit::Fault(message)) => {
                self.threads[i].live = false;
                let fault = ThreadFault { block: self.block, thread: place.thread, message };
                let at = self.faults.partition_point(|f| f.thread < place.thread);
                self.faults.insert(at, fault);
                Ok(())
            }
            Err(Exit::Invalid(e)) => Err(Halt::Invalid(e)),
        }
    }

    /// Runs statements that the whole block runs together.
    fn uniform(&mut self, body: &'k [KStmt]) -> Result<(), Halt> {
        for s in body {
            if self.live().is_empty() {
                return Ok(());
            }
            match s {
                KStmt::Barrier { kind, vote } => self.barrier(*kind, vote.as_ref())?,
                KStmt::Warp { name, op, mask, value, arg } => self.warp(name, *op, mask, value, arg.as_ref())?,
                KStmt::Tree { array, len, op, .. } => self.tree(array, *len, *op)?,
                KStmt::Return => {
                    for t in &mut self.threads {
                        t.live = false;
                    }
                }
                KStmt::If { cond, then, els, uniform: true } => {
                    let mut taken = None;
                    for i in self.live() {
                        let mut c = None;
                        self.on_thread(i, |m, _, env| {
                            c = Some(m.eval(env, cond)?);
                            Ok(())
                        })?;
                        match (c, taken) {
                            (Some(Value::Bool(c)), None) => taken = Some(c),
                            (Some(Value::Bool(c)), Some(t)) if c != t => {
                                return Err(Halt::Invalid("a uniform condition differs between threads".into()));
                            }
                            _ => {}
                        }
                    }
                    if let Some(c) = taken {
                        self.scoped(if c { then } else { els })?;
                    }
                }
                KStmt::Repeat { var, ty, count, body } => {
                    for r in 0..*count {
                        let marks: Vec<usize> = self.threads.iter().map(|t| t.env.len()).collect();
                        for t in &mut self.threads {
                            t.env.push((var, Value::U32(r).cast(*ty)));
                        }
                        let res = self.uniform(body);
                        for (t, m) in self.threads.iter_mut().zip(marks) {
                            t.env.truncate(m);
                        }
                        res?;
                    }
                }
                _ => {
                    for i in self.live() {
                        self.on_thread(i, |m, place, env| m.exec(place, env, s))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// [`Machine::uniform`] in a scope of its own.
    fn scoped(&mut self, body: &'k [KStmt]) -> Result<(), Halt> {
        let marks: Vec<usize> = self.threads.iter().map(|t| t.env.len()).collect();
        let r = self.uniform(body);
        for (t, m) in self.threads.iter_mut().zip(marks) {
            t.env.truncate(m);
        }
        r
    }

    fn eval(&mut self, env: &mut Env<'k>, e: &'k Expr) -> Result<Value, Exit> {
        self.sc.eval(env, e).map_err(|s| Exit::of(s, self.sc.clamp_bounds()))
    }

    /// `a op b` of the scalar language.
    fn binary(&self, op: BinOp, a: Value, b: Value) -> Result<Value, Exit> {
        self.sc.binary(op, a, b).map_err(|f| Exit::of(Stop::Fault(f), None))
    }

    fn barrier(&mut self, kind: Barrier, vote: Option<&'k (String, Expr)>) -> Result<(), Halt> {
        let Some((name, pred)) = vote else { return Ok(()) };
        let mut preds = Vec::new();
        for i in self.live() {
            self.on_thread(i, |m, _, env| {
                preds.push((i, m.eval(env, pred)?));
                Ok(())
            })?;
        }
        let yes = preds.iter().filter(|(_, p)| matches!(p, Value::Bool(true))).count();
        let result = match kind {
            Barrier::Count => Value::U32(yes as u32),
            Barrier::And => Value::Bool(yes == preds.len()),
            Barrier::Or => Value::Bool(yes > 0),
            Barrier::Sync => return Err(Halt::Invalid("a plain barrier with a vote".into())),
        };
        for i in self.live() {
            self.threads[i].env.push((name, result));
        }
        Ok(())
    }

    fn warp(
        &mut self,
        name: &'k str,
        op: WarpOp,
        mask: &'k Mask,
        value: &'k Expr,
        arg: Option<&'k Expr>,
    ) -> Result<(), Halt> {
        let block = self.launch.block;
        for w in 0..block.div_ceil(32) {
            let lanes: Vec<usize> = (w * 32..(w * 32 + 32).min(block)).map(|l| l as usize).collect();
            // Each live lane's mask, value and argument, in the order Rust evaluates them.
            let mut got: Vec<(usize, u32, Value, Option<Value>)> = Vec::new();
            for &i in &lanes {
                if !self.threads[i].live {
                    continue;
                }
                self.on_thread(i, |m, _, env| {
                    let mask = match mask {
                        Mask::Full => u32::MAX,
                        Mask::Var(v) => match lookup(env, v) {
                            Some(Value::U32(x)) => x,
                            _ => return Err(Exit::Invalid(format!("no mask {v}"))),
                        },
                    };
                    let v = m.eval(env, value)?;
                    let a = match arg {
                        Some(a) => Some(m.eval(env, a)?),
                        None => None,
                    };
                    got.push((i, mask, v, a));
                    Ok(())
                })?;
            }
            let Some(&(_, mask, ..)) = got.first() else { continue };
            let exist = if lanes.len() == 32 { u32::MAX } else { (1u32 << lanes.len()) - 1 };
            let arrived: u32 = got.iter().map(|g| 1u32 << (g.0 % 32)).fold(0, |a, b| a | b);
            if got.iter().any(|g| g.1 != mask) || mask & !exist != 0 || arrived & !mask != 0 {
                return Err(Halt::Invalid(format!(
                    "warp {w} calls {} with mask {mask:#x} (lanes {exist:#x})",
                    op.call()
                )));
            }
            if arrived != mask {
                let missing = (mask & !arrived).trailing_zeros();
                return Err(Halt::Unspecified(format!(
                    "{} in block {} names lane {missing} of warp {w}, which has stopped",
                    op.call(),
                    self.block
                )));
            }
            let value_of = |lane: u32| got.iter().find(|g| g.0 as u32 % 32 == lane).map(|g| g.2);
            let preds: u32 = got
                .iter()
                .filter(|g| matches!(g.2, Value::Bool(true)))
                .map(|g| 1u32 << (g.0 % 32))
                .fold(0, |a, b| a | b);
            let mut results = Vec::new();
            for g in &got {
                let lane = g.0 as u32 % 32;
                let arg = match g.3 {
                    Some(Value::U32(a)) => a,
                    _ => 0,
                };
                let source = match op {
                    WarpOp::Shfl => Some(arg % 32),
                    WarpOp::ShflUp => lane.checked_sub(arg),
                    WarpOp::ShflDown => lane.checked_add(arg).filter(|&s| s < 32),
                    WarpOp::ShflXor => Some(lane ^ arg).filter(|&s| s < 32),
                    _ => None,
                };
                let r = match op {
                    WarpOp::Shfl | WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor => match source {
                        Some(s) if mask & (1 << s) == 0 => {
                            return Err(Halt::Invalid(format!("{} reads lane {s}, not in {mask:#x}", op.call())));
                        }
                        Some(s) => value_of(s).expect("every lane of the mask arrived"),
                        None => g.2,
                    },
                    WarpOp::Ballot => Value::U32(preds),
                    WarpOp::All => Value::Bool(preds == mask),
                    WarpOp::Any => Value::Bool(preds != 0),
                    WarpOp::MatchAny => {
                        let bits = g.2.to_bits();
                        Value::U32(
                            got.iter()
                                .filter(|o| o.2.to_bits() == bits)
                                .map(|o| 1u32 << (o.0 % 32))
                                .fold(0, |a, b| a | b),
                        )
                    }
                };
                results.push((g.0, r));
            }
            for (i, r) in results {
                self.threads[i].env.push((name, r));
            }
        }
        Ok(())
    }

    fn tree(&mut self, array: &'k str, len: usize, op: BinOp) -> Result<(), Halt> {
        let mut k = len / 2;
        while k > 0 {
            for i in self.live() {
                let t = self.threads[i].linear as usize;
                if t >= k {
                    continue;
                }
                self.on_thread(i, |m, _, _| {
                    let a = m.shared_read(array, t)?;
                    let b = m.shared_read(array, t + k)?;
                    let v = m.binary(op, a, b)?;
                    m.shared_write(array, t, v)
                })?;
            }
            k /= 2;
        }
        Ok(())
    }

    fn shared_read(&mut self, array: &str, i: usize) -> Result<Value, Exit> {
        let Some((values, defined)) = self.shared.get(array) else {
            return Err(Exit::Invalid(format!("no shared array {array}")));
        };
        if i >= values.len() {
            return Err(out_of_bounds(values.len(), i));
        }
        if !defined[i] {
            self.undefined = true;
        }
        Ok(values[i])
    }

    fn shared_write(&mut self, array: &str, i: usize, v: Value) -> Result<(), Exit> {
        let Some((values, defined)) = self.shared.get_mut(array) else {
            return Err(Exit::Invalid(format!("no shared array {array}")));
        };
        if i >= values.len() {
            return Err(out_of_bounds(values.len(), i));
        }
        values[i] = v;
        defined[i] = true;
        Ok(())
    }

    fn read(&mut self, array: &'k Array, i: usize) -> Result<Value, Exit> {
        match array {
            Array::Shared(s) => self.shared_read(s, i),
            Array::Global(g) => {
                let mem = &self.memory[self.slices[g.as_str()]];
                mem.get(i).copied().ok_or_else(|| out_of_bounds(mem.len(), i))
            }
        }
    }

    fn write(&mut self, array: &'k Array, i: usize, v: Value) -> Result<(), Exit> {
        match array {
            Array::Shared(s) => self.shared_write(s, i, v),
            Array::Global(g) => {
                let mem = &mut self.memory[self.slices[g.as_str()]];
                let len = mem.len();
                *mem.get_mut(i).ok_or_else(|| out_of_bounds(len, i))? = v;
                Ok(())
            }
        }
    }

    /// Runs a statement in one thread.
    fn exec(&mut self, at: Place, env: &mut Env<'k>, s: &'k KStmt) -> Result<(), Exit> {
        match s {
            KStmt::Index { name, builtin, ty } => {
                let v = match builtin {
                    Builtin::ThreadX => Value::U32(at.thread),
                    Builtin::BlockX => Value::U32(at.block),
                    Builtin::BlockDimX => Value::U32(at.block_dim),
                    Builtin::GridDimX => Value::U32(at.grid_dim),
                    Builtin::Grid1 => Value::Usize(at.block as usize * at.block_dim as usize + at.thread as usize),
                    Builtin::GridSize1 => Value::Usize(at.block_dim as usize * at.grid_dim as usize),
                    Builtin::LaneId => Value::U32(at.thread % 32),
                };
                env.push((name, v.cast(*ty)));
            }
            KStmt::Len { name, slice } => {
                let len = self.memory[self.slices[slice.as_str()]].len();
                env.push((name, Value::Usize(len)));
            }
            KStmt::WarpLanes { lanes, mask } => {
                let n = (at.block_dim - (at.thread - at.thread % 32)).min(32);
                env.push((lanes, Value::U32(n)));
                env.push((mask, Value::U32(if n == 32 { u32::MAX } else { (1 << n) - 1 })));
            }
            KStmt::Scalar(stmts) => {
                for s in stmts {
                    self.sc.exec(env, s).map_err(|s| Exit::of(s, self.sc.clamp_bounds()))?;
                }
            }
            KStmt::Load { name, array, index, .. } => {
                let i = as_index(self.eval(env, index)?)?;
                let v = self.read(array, i)?;
                env.push((name, v));
            }
            KStmt::Store { array, index, op, value } => {
                // Rust evaluates the value first, then the place.
                let v = self.eval(env, value)?;
                let i = as_index(self.eval(env, index)?)?;
                let v = match op {
                    None => v,
                    Some(op) => {
                        let old = self.read(array, i)?;
                        self.binary(*op, old, v)?
                    }
                };
                self.write(array, i, v)?;
            }
            KStmt::Shared { name, ty, len } => {
                let zero = Value::from_bits(*ty, 0);
                self.shared.entry(name.as_str()).or_insert_with(|| (vec![zero; *len], vec![false; *len]));
            }
            KStmt::Atomic { op, array, index, value } => {
                // A call: its arguments in order, then the update.
                let i = as_index(self.eval(env, index)?)?;
                let v = self.eval(env, value)?;
                let old = self.read(array, i)?;
                let new = atomic(*op, old, v)?;
                match array {
                    // An update of an element never written leaves it unwritten.
                    Array::Shared(s) => {
                        if let Some((values, _)) = self.shared.get_mut(s.as_str()) {
                            values[i] = new;
                        }
                    }
                    Array::Global(_) => self.write(array, i, new)?,
                }
            }
            KStmt::If { cond, then, els, uniform: false } => {
                let c = self.eval(env, cond)?;
                let body = if matches!(c, Value::Bool(true)) { then } else { els };
                self.exec_scoped(at, env, body)?;
            }
            KStmt::GridStride { var, slice, body, .. } => {
                let len = self.memory[self.slices[slice.as_str()]].len();
                let mut i = at.block as usize * at.block_dim as usize + at.thread as usize;
                let step = at.block_dim as usize * at.grid_dim as usize;
                while i < len {
                    let mark = env.len();
                    env.push((var, Value::Usize(i)));
                    let r = self.exec_all(at, env, body);
                    env.truncate(mark);
                    r?;
                    i += step;
                }
            }
            KStmt::BlockStride { var, len, body, .. } => {
                let mut j = at.thread as usize;
                while j < *len {
                    let mark = env.len();
                    env.push((var, Value::Usize(j)));
                    let r = self.exec_all(at, env, body);
                    env.truncate(mark);
                    r?;
                    j += at.block_dim as usize;
                }
            }
            KStmt::Return => return Err(Exit::Return),
            KStmt::Barrier { .. }
            | KStmt::Warp { .. }
            | KStmt::Tree { .. }
            | KStmt::Repeat { .. }
            | KStmt::If { .. } => {
                return Err(Exit::Invalid(format!("{s:?} in code that not the whole block runs")));
            }
        }
        Ok(())
    }

    fn exec_all(&mut self, at: Place, env: &mut Env<'k>, body: &'k [KStmt]) -> Result<(), Exit> {
        for s in body {
            self.exec(at, env, s)?;
        }
        Ok(())
    }

    fn exec_scoped(&mut self, at: Place, env: &mut Env<'k>, body: &'k [KStmt]) -> Result<(), Exit> {
        let mark = env.len();
        let r = self.exec_all(at, env, body);
        env.truncate(mark);
        r
    }
}

/// An atomic update's new value: integer arithmetic wraps (on the GPU, in every build).
fn atomic(op: AtomicOp, old: Value, v: Value) -> Result<Value, Exit> {
    macro_rules! ints {
        ($($t:ident),*) => {
            match (old, v) {
                $((Value::$t(a), Value::$t(b)) => Value::$t(match op {
                    AtomicOp::Add => a.wrapping_add(b),
                    AtomicOp::Sub => a.wrapping_sub(b),
                    AtomicOp::Min => a.min(b),
                    AtomicOp::Max => a.max(b),
                    AtomicOp::And => a & b,
                    AtomicOp::Or => a | b,
                    AtomicOp::Xor => a ^ b,
                }),)*
                _ => return Err(Exit::Invalid(format!("an atomic {} of {old} and {v}", op.name()))),
            }
        };
    }
    Ok(ints!(I32, U32, I64, U64))
}
