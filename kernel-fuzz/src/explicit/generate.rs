//! The generator of explicit kernels: a seed in, a `#[kernel]` that is race-free by
//! construction out.
//!
//! A kernel is a prelude (the thread's indices, the slices' lengths, shared arrays, the
//! mask of its warp's lanes) and then sections drawn one after another: scalar code (the
//! scalar generator's statements), loads, stores, atomics, barriers, warp operations,
//! grid-stride and block-stride loops, tree reductions in shared memory, branches that
//! are the same for the whole block and branches that are not, and early returns.
//!
//! What makes it race-free:
//!
//! - A `&mut` slice is written as its [`Writes`] says, for the whole kernel (no barrier
//!   orders blocks): element `i` only by the thread whose `grid1()` is `i` modulo the
//!   grid's size, element `b` only by one thread of block `b`, or only by atomics.
//! - Between two barriers, the accesses of every thread to a shared array are of one kind
//!   ([`Mode`]): reads anywhere, writes of the thread's own elements (`j ≡ thread_idx
//!   (mod block_dim)`, which it may read back), or atomic updates. A barrier frees every
//!   array; after a branch, an array whose branches left it in different kinds is blocked
//!   until the next barrier.
//! - A shared array is read only once every element has been written (shared memory
//!   starts undefined on the GPU): by a block-stride fill that the whole block ran.
//! - Barriers and warp operations stand only where every thread of the block runs them
//!   together (not in a branch or loop whose condition differs between threads), and
//!   only before any return that not the whole block takes.
//! - The results of atomics are not used, and an element sees only updates that commute
//!   with each other (integer `add` and `sub`, or one of `min`, `max`, `and`, `or`, `xor`:
//!   [`AtomicOp::family`]; per output for the whole kernel, per shared array between
//!   barriers): the outputs do not depend on the schedule, so an interpreter that runs
//!   the threads one after another ([`super::interp`]) computes them.
//!
//! Faults are kept rare, so that most launches run to the end: the scalar parts with
//! [`Config::KERNEL`], and indices out of bounds only where an index is drawn
//! unchecked.

use super::ast::*;
use crate::ast::{BinOp, Expr, ExprKind, Stmt};
use crate::generate::{Config, ScalarVar, Scalars};
use crate::rng::Rng;
use crate::ty::{Ty, Value};

/// Loop iterations one scalar expression or statement may run.
const WORK: u64 = 12;

/// The kernel of `seed`.
pub fn kernel(seed: u64) -> Kernel {
    let mut rng = Rng::new(seed ^ 0x4B45_524E_454C_5321);
    let budget = rng.range(60, 200) as i64;
    let sections = rng.range(4, 9) as usize;
    let whole_warps = rng.chance(1, 2);
    let s = Scalars::new(rng, &Config::KERNEL, budget);
    let mut g = KGen {
        s,
        scopes: vec![Vec::new()],
        params: Vec::new(),
        arrays: Vec::new(),
        state: Vec::new(),
        whole_warps,
        mask: None,
        written: Vec::new(),
        leaders: Vec::new(),
        families: Vec::new(),
        names: Names::default(),
        uniform: true,
        diverged: false,
        in_repeat: false,
        stride: None,
    };
    g.params();
    let mut body = g.prelude();
    g.sections(&mut body, sections, 2);
    g.finish(&mut body);
    Kernel { seed, name: format!("k{seed}"), params: g.params, body, whole_warps }
}

/// How the threads of a block touch a shared array since the last barrier.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Mode {
    /// Not at all.
    Free,
    /// Reads, anywhere.
    Read,
    /// Each thread its own elements (reads and writes).
    Owned,
    /// Atomic updates that commute with each other: of one [`AtomicOp::family`].
    Atomic(u8),
    /// Unknown (branches left it in different kinds): nothing until the next barrier.
    Blocked,
}

impl Mode {
    /// The kind after one of two branches ran.
    fn merge(self, other: Mode) -> Mode {
        match (self, other) {
            (Mode::Free, m) | (m, Mode::Free) => m,
            (a, b) if a == b => a,
            _ => Mode::Blocked,
        }
    }

    /// Whether an access of kind `k` may come now.
    fn allows(self, k: Mode) -> bool {
        self == Mode::Free || self == k
    }

    /// The family of the atomic updates allowed now, if any.
    fn atomics(self) -> Option<Option<u8>> {
        match self {
            Mode::Free => Some(None),
            Mode::Atomic(f) => Some(Some(f)),
            _ => None,
        }
    }
}

#[derive(Copy, Clone, Debug)]
struct ArrayState {
    mode: Mode,
    /// Every element has been written.
    defined: bool,
}

struct SharedArray {
    name: String,
    ty: Ty,
    len: usize,
}

struct Var {
    name: String,
    ty: Ty,
    /// The same value in every thread of a block.
    uniform: bool,
    mutable: bool,
    /// Never assigned or shadowed by the scalar code.
    reserved: bool,
}

/// The prelude's variables.
#[derive(Default)]
struct Names {
    /// `thread_idx().x as usize`
    t: String,
    /// `block_idx().x as usize`
    b: String,
    /// `block_dim().x as usize`
    bd: String,
    /// `grid1()`
    gid: String,
    /// Each slice's length: (slice, variable).
    lens: Vec<(String, String)>,
}

struct KGen<'c> {
    s: Scalars<'c>,
    /// The kernel's variables, innermost scope last.
    scopes: Vec<Vec<Var>>,
    params: Vec<KParam>,
    arrays: Vec<SharedArray>,
    /// Each shared array's state, as `arrays`.
    state: Vec<ArrayState>,
    whole_warps: bool,
    /// The variables of the warp's lanes and their mask.
    mask: Option<(String, String)>,
    /// The outputs written so far (by name).
    written: Vec<String>,
    /// Each `Writes::Block` output's writer: the thread of each block that writes it.
    leaders: Vec<(String, usize)>,
    /// Each `Writes::Atomic` output's family of updates.
    families: Vec<(String, u8)>,
    names: Names,
    /// The code being generated runs for every thread of the block together.
    uniform: bool,
    /// A return that not the whole block takes may have been taken: no barrier or warp
    /// operation may follow.
    diverged: bool,
    /// Inside a `Repeat`, whose next iteration starts with a barrier: no divergent return.
    in_repeat: bool,
    /// Inside a grid-stride loop: its index and slice (the index is the thread's own for
    /// `Writes::Grid` outputs).
    stride: Option<(String, String)>,
}

impl KGen<'_> {
    fn rng(&mut self) -> &mut Rng {
        self.s.rng()
    }

    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.rng().chance(num, den)
    }

    fn declare(&mut self, name: &str, ty: Ty, uniform: bool) {
        let v = Var { name: name.to_string(), ty, uniform, mutable: false, reserved: true };
        self.scopes.last_mut().expect("a scope").push(v);
    }

    /// The variables visible here (the latest binding of each name), only the uniform
    /// ones if `uniform`.
    fn visible(&self, uniform: bool) -> Vec<ScalarVar> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for scope in self.scopes.iter().rev() {
            for v in scope.iter().rev() {
                if seen.contains(&v.name.as_str()) {
                    continue;
                }
                seen.push(&v.name);
                if v.uniform || !uniform {
                    out.push(ScalarVar { name: v.name.clone(), ty: v.ty, mutable: v.mutable, reserved: v.reserved });
                }
            }
        }
        out.reverse();
        out
    }

    /// An expression of type `ty` over the visible variables (the uniform ones only, if
    /// `uniform`).
    fn expr(&mut self, ty: Ty, uniform: bool) -> Expr {
        let vars = self.visible(uniform);
        let depth = self.rng().range(1, 3) as u32;
        self.s.expr(&vars, ty, depth, WORK)
    }

    fn var(name: &str, ty: Ty) -> Expr {
        Expr::new(ty, ExprKind::Var(name.to_string()))
    }

    fn binary(op: BinOp, a: Expr, b: Expr) -> Expr {
        let ty = if op.is_comparison() { Ty::Bool } else { a.ty };
        Expr::new(ty, ExprKind::Binary(op, Box::new(a), Box::new(b)))
    }

    fn usize_lit(&mut self, v: usize) -> Expr {
        self.s.lit_of(Value::Usize(v))
    }

    /// A scalar type: integers mostly.
    fn elem_type(&mut self, floats: bool) -> Ty {
        let ints = [Ty::I8, Ty::I16, Ty::I32, Ty::I64, Ty::U8, Ty::U16, Ty::U32, Ty::U64, Ty::Isize, Ty::Usize];
        match self.rng().weighted(&[12, if floats { 3 } else { 0 }, 1]) {
            0 => *self.rng().pick(&ints),
            1 => *self.rng().pick(&[Ty::F32, Ty::F64]),
            _ => Ty::Bool,
        }
    }

    fn any_type(&mut self) -> Ty {
        *self.rng().pick(&Ty::ALL)
    }

    // ----- parameters and prelude -----------------------------------------------------------

    fn params(&mut self) {
        let slices = self.rng().range(1, 3) as usize;
        let outputs = self.rng().range(1, slices.min(2) as i128) as usize;
        let scalars = self.rng().weighted(&[2, 3, 2, 1]);
        let mut params = Vec::new();
        for i in 0..outputs {
            let writes = [Writes::Grid, Writes::Block, Writes::Atomic][self.rng().weighted(&[4, 1, 3])];
            let ty = match writes {
                Writes::Atomic => *self.rng().pick(&ATOMIC_TYPES),
                _ => self.elem_type(true),
            };
            params.push(KParam { name: format!("y{i}"), kind: ParamKind::Output(ty, writes) });
        }
        for i in 0..slices - outputs {
            let ty = self.elem_type(true);
            params.push(KParam { name: format!("x{i}"), kind: ParamKind::Input(ty) });
        }
        for i in 0..scalars {
            let ty = self.any_type();
            params.push(KParam { name: format!("p{i}"), kind: ParamKind::Scalar(ty) });
        }
        // Any order.
        for i in (1..params.len()).rev() {
            let j = self.rng().below(i as u64 + 1) as usize;
            params.swap(i, j);
        }
        self.params = params;
    }

    /// The thread's indices, the slices' lengths, the kernel's items, its shared arrays and
    /// its warp's mask.
    fn prelude(&mut self) -> Vec<KStmt> {
        let mut out = Vec::new();
        for p in self.params.clone() {
            if let ParamKind::Scalar(ty) = p.kind {
                self.declare(&p.name, ty, true);
            }
        }
        self.names.t = "t".into();
        self.names.b = "b".into();
        self.names.bd = "bd".into();
        self.names.gid = "gid".into();
        let mut index = vec![
            ("t", Builtin::ThreadX, Ty::Usize),
            ("b", Builtin::BlockX, Ty::Usize),
            ("bd", Builtin::BlockDimX, Ty::Usize),
            ("gid", Builtin::Grid1, Ty::Usize),
        ];
        let extras = [
            ("gsz", Builtin::GridSize1, Ty::Usize),
            ("gd", Builtin::GridDimX, Ty::U32),
            ("lane", Builtin::LaneId, Ty::U32),
            ("t32", Builtin::ThreadX, Ty::U32),
            ("bd32", Builtin::BlockDimX, Ty::U32),
        ];
        for e in extras {
            if self.chance(1, 3) {
                index.push(e);
            }
        }
        for i in (1..index.len()).rev() {
            let j = self.rng().below(i as u64 + 1) as usize;
            index.swap(i, j);
        }
        for (name, builtin, ty) in index {
            self.declare(name, ty, builtin.uniform());
            out.push(KStmt::Index { name: name.into(), builtin, ty });
        }
        for (i, p) in self.params.clone().iter().enumerate() {
            if matches!(p.kind, ParamKind::Scalar(_)) {
                continue;
            }
            let name = format!("n{i}");
            self.declare(&name, Ty::Usize, true);
            self.names.lens.push((p.name.clone(), name.clone()));
            out.push(KStmt::Len { name, slice: p.name.clone() });
        }
        if self.chance(1, 4) {
            let item = self.s.item(1);
            out.push(KStmt::Scalar(vec![item]));
        }
        let arrays = self.rng().weighted(&[2, 3, 2]);
        for i in 0..arrays {
            let ty = if self.chance(2, 3) { *self.rng().pick(&ATOMIC_TYPES) } else { self.elem_type(true) };
            let len = *self.rng().pick(&[16, 32, 48, 64, 100, 128]);
            let name = format!("s{i}");
            out.push(KStmt::Shared { name: name.clone(), ty, len });
            self.arrays.push(SharedArray { name, ty, len });
            self.state.push(ArrayState { mode: Mode::Free, defined: false });
        }
        if !self.whole_warps || self.chance(1, 2) {
            let (lanes, mask) = ("lanes".to_string(), "mask".to_string());
            self.declare(&lanes, Ty::U32, false);
            self.declare(&mask, Ty::U32, false);
            out.push(KStmt::WarpLanes { lanes: lanes.clone(), mask: mask.clone() });
            self.mask = Some((lanes, mask));
        }
        out
    }

    fn len_of(&self, slice: &str) -> String {
        self.names.lens.iter().find(|(s, _)| s == slice).expect("every slice has its length").1.clone()
    }

    fn outputs(&self, writes: Writes) -> Vec<(String, Ty)> {
        self.params
            .iter()
            .filter_map(|p| match p.kind {
                ParamKind::Output(ty, w) if w == writes => Some((p.name.clone(), ty)),
                _ => None,
            })
            .collect()
    }

    fn inputs(&self) -> Vec<(String, Ty)> {
        self.params
            .iter()
            .filter_map(|p| match p.kind {
                ParamKind::Input(ty) => Some((p.name.clone(), ty)),
                _ => None,
            })
            .collect()
    }

    // ----- sections -------------------------------------------------------------------------

    fn sections(&mut self, out: &mut Vec<KStmt>, n: usize, depth: u32) {
        for _ in 0..n {
            if self.s.budget() <= 0 {
                break;
            }
            self.section(out, depth);
        }
    }

    /// A block of sections in a scope of its own.
    fn block(&mut self, n: usize, depth: u32) -> Vec<KStmt> {
        self.scopes.push(Vec::new());
        let mut out = Vec::new();
        self.sections(&mut out, n, depth);
        self.scopes.pop();
        out
    }

    fn section(&mut self, out: &mut Vec<KStmt>, depth: u32) {
        let together = self.uniform && !self.diverged;
        let nested = depth > 0;
        let loops = nested && self.stride.is_none();
        let readable = self.arrays_where(|_, s| s.defined && s.mode.allows(Mode::Read));
        let ownable = self.arrays_where(|_, s| s.mode.allows(Mode::Owned));
        let atomic = self.arrays_where(|a, s| s.defined && s.mode.atomics().is_some() && ATOMIC_TYPES.contains(&a.ty));
        let tree =
            self.arrays_where(|a, s| s.defined && s.mode == Mode::Free && a.len.is_power_of_two() && a.ty != Ty::Bool);
        let warps = self.whole_warps || self.mask.is_some();
        // An array not yet written is most of what a fill is for.
        let fill = if ownable.iter().any(|&a| !self.state[a].defined) { 5 } else { 2 };
        let weights = [
            5,                                                           // scalar statements
            if self.inputs().is_empty() { 0 } else { 3 },                // load
            if self.outputs(Writes::Grid).is_empty() { 0 } else { 3 },   // store at the thread's own index
            if self.outputs(Writes::Block).is_empty() { 0 } else { 1 },  // store at the block's index
            if loops { 3 } else { 0 },                                   // grid-stride loop
            if self.outputs(Writes::Atomic).is_empty() { 0 } else { 2 }, // atomic on global memory
            if together && !ownable.is_empty() { fill } else { 0 },      // block-stride fill
            if ownable.is_empty() { 0 } else { 1 },                      // own shared element
            if readable.is_empty() { 0 } else { 6 },                     // shared read
            if atomic.is_empty() { 0 } else { 5 },                       // shared atomic
            if together { 3 } else { 0 },                                // barrier
            if together && warps { 4 } else { 0 },                       // warp operation
            if self.uniform && nested { 1 } else { 0 },                  // uniform `if`
            if nested { 2 } else { 0 },                                  // divergent `if`
            if together && nested { 1 } else { 0 },                      // uniform loop
            if together && !tree.is_empty() { 4 } else { 0 },            // tree reduction
            if self.uniform { 1 } else { 0 },                            // uniform return
            if self.in_repeat { 0 } else { 1 },                          // divergent return
            if self.uniform { 1 } else { 0 },                            // uniform `let`
        ];
        match self.rng().weighted(&weights) {
            0 => self.scalar(out),
            1 => self.load(out),
            2 => self.grid_store(out),
            3 => self.block_store(out),
            4 => self.grid_stride(out, depth),
            5 => self.global_atomic(out),
            6 => {
                // Most fills are a phase of their own: the block writes the array, then waits.
                let a = *self.rng().pick(&ownable);
                self.fill(out, a);
                if self.chance(3, 4) {
                    self.barrier(out);
                }
            }
            7 => {
                let a = *self.rng().pick(&ownable);
                self.own_store(out, a);
            }
            8 => {
                let a = *self.rng().pick(&readable);
                self.shared_read(out, a);
            }
            9 => {
                let a = *self.rng().pick(&atomic);
                self.shared_atomic(out, a);
            }
            10 => self.barrier(out),
            11 => self.warp(out),
            12 => self.uniform_if(out, depth),
            13 => self.divergent_if(out, depth),
            14 => self.repeat(out, depth),
            15 => {
                let a = *self.rng().pick(&tree);
                self.tree(out, a);
            }
            16 => {
                let cond = self.block_condition();
                out.push(KStmt::If { cond, then: vec![KStmt::Return], els: Vec::new(), uniform: true });
            }
            17 => {
                let cond = self.expr(Ty::Bool, false);
                out.push(KStmt::If { cond, then: vec![KStmt::Return], els: Vec::new(), uniform: false });
                self.diverged = true;
            }
            _ => {
                let ty = self.any_type();
                let init = self.expr(ty, true);
                let name = self.s.fresh("u");
                out.push(KStmt::Scalar(vec![Stmt::Let {
                    name: name.clone(),
                    mutable: false,
                    annotated: true,
                    ty,
                    init: Some(init),
                }]));
                self.declare(&name, ty, true);
            }
        }
    }

    /// A condition the same for every thread of a block: on the block's index half the
    /// time (so that some blocks return), any uniform `bool` otherwise.
    fn block_condition(&mut self) -> Expr {
        if self.chance(1, 2) {
            return self.expr(Ty::Bool, true);
        }
        let op = *self.rng().pick(&[BinOp::Eq, BinOp::Ne, BinOp::Lt, BinOp::Gt]);
        let c = self.rng().range(0, 2) as usize;
        let b = Self::var(&self.names.b, Ty::Usize);
        let c = self.usize_lit(c);
        Self::binary(op, b, c)
    }

    fn arrays_where(&self, f: impl Fn(&SharedArray, &ArrayState) -> bool) -> Vec<usize> {
        (0..self.arrays.len()).filter(|&i| f(&self.arrays[i], &self.state[i])).collect()
    }

    fn scalar(&mut self, out: &mut Vec<KStmt>) {
        let vars = self.visible(false);
        let depth = self.rng().range(1, 2) as u32;
        let (stmts, declared) = self.s.stmts(&vars, depth, WORK);
        for v in declared {
            let var = Var { name: v.name, ty: v.ty, uniform: false, mutable: v.mutable, reserved: v.reserved };
            self.scopes.last_mut().expect("a scope").push(var);
        }
        if !stmts.is_empty() {
            out.push(KStmt::Scalar(stmts));
        }
    }

    /// An index into slice `slice`: in bounds most of the time.
    fn global_index(&mut self, slice: &str) -> Expr {
        let n = self.len_of(slice);
        let own = self.own_index();
        match self.rng().weighted(&[6, 3, 1, 1, 1]) {
            0 => {
                let e = self.expr(Ty::Usize, false);
                Self::binary(BinOp::Rem, e, Self::var(&n, Ty::Usize))
            }
            1 => Self::binary(BinOp::Rem, Self::var(&own, Ty::Usize), Self::var(&n, Ty::Usize)),
            2 => {
                let v = self.rng().range(0, 3) as usize;
                self.usize_lit(v)
            }
            3 => Self::var(&own, Ty::Usize),
            _ => self.expr(Ty::Usize, false),
        }
    }

    /// The thread's own index into `Writes::Grid` outputs here: the grid-stride loop's, or
    /// `grid1()`.
    fn own_index(&self) -> String {
        match &self.stride {
            Some((i, _)) => i.clone(),
            None => self.names.gid.clone(),
        }
    }

    fn load(&mut self, out: &mut Vec<KStmt>) {
        let inputs = self.inputs();
        let (x, ty) = self.rng().pick(&inputs).clone();
        let uniform = self.uniform && self.chance(1, 4);
        let stride = self.stride.clone().filter(|(_, s)| *s == x);
        let index = if uniform {
            let n = self.len_of(&x);
            let e = self.expr(Ty::Usize, true);
            Self::binary(BinOp::Rem, e, Self::var(&n, Ty::Usize))
        } else {
            match stride {
                Some((i, _)) if self.chance(1, 2) => Self::var(&i, Ty::Usize),
                _ => self.global_index(&x),
            }
        };
        let name = self.s.fresh("v");
        out.push(KStmt::Load { name: name.clone(), ty, array: Array::Global(x), index });
        self.declare(&name, ty, uniform);
    }

    /// `y[own] = value` (or `op=`) for a `Writes::Grid` output, checked against its length
    /// unless the index is known to be in bounds (or, now and then, to fault).
    fn grid_store(&mut self, out: &mut Vec<KStmt>) {
        let ys = self.outputs(Writes::Grid);
        let (y, ty) = self.rng().pick(&ys).clone();
        self.grid_store_to(out, y, ty);
    }

    fn grid_store_to(&mut self, out: &mut Vec<KStmt>, y: String, ty: Ty) {
        let own = self.own_index();
        let value = self.expr(ty, false);
        let op = self.compound(ty);
        let store = KStmt::Store { array: Array::Global(y.clone()), index: Self::var(&own, Ty::Usize), op, value };
        let in_bounds = matches!(&self.stride, Some((_, s)) if *s == y);
        if in_bounds || self.chance(1, 8) {
            out.push(store);
        } else {
            let n = self.len_of(&y);
            let cond = Self::binary(BinOp::Lt, Self::var(&own, Ty::Usize), Self::var(&n, Ty::Usize));
            out.push(KStmt::If { cond, then: vec![store], els: Vec::new(), uniform: false });
        }
        self.written.push(y);
    }

    /// An operator for `a[i] op= v`, or none (a plain store), on type `ty`.
    fn compound(&mut self, ty: Ty) -> Option<BinOp> {
        if ty == Ty::Bool || !self.chance(1, 4) {
            return None;
        }
        let ops: &[BinOp] = if ty.is_float() {
            &[BinOp::Add, BinOp::Sub, BinOp::Mul]
        } else {
            &[BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Xor, BinOp::Or, BinOp::And]
        };
        Some(*self.rng().pick(ops))
    }

    /// `if t == c { …; y[b] = v; }` for a `Writes::Block` output.
    fn block_store(&mut self, out: &mut Vec<KStmt>) {
        let ys = self.outputs(Writes::Block);
        let (y, ty) = self.rng().pick(&ys).clone();
        self.block_store_to(out, y, ty);
    }

    /// The thread of each block that writes `y[b]`: one per output, for the whole kernel.
    fn leader(&mut self, y: &str) -> usize {
        if let Some((_, c)) = self.leaders.iter().find(|(n, _)| n == y) {
            return *c;
        }
        let c = self.rng().range(0, 2) as usize;
        self.leaders.push((y.to_string(), c));
        c
    }

    fn block_store_to(&mut self, out: &mut Vec<KStmt>, y: String, ty: Ty) {
        let c = self.leader(&y);
        let t = Self::var(&self.names.t, Ty::Usize);
        let c = self.usize_lit(c);
        let cond = Self::binary(BinOp::Eq, t, c);
        self.scopes.push(Vec::new());
        let saved = std::mem::replace(&mut self.uniform, false);
        let mut then = Vec::new();
        let readable = self.arrays_where(|_, s| s.defined && s.mode.allows(Mode::Read));
        if !readable.is_empty() && self.chance(2, 3) {
            let a = *self.rng().pick(&readable);
            self.shared_read(&mut then, a);
        }
        if self.chance(1, 3) {
            self.scalar(&mut then);
        }
        let value = self.expr(ty, false);
        let op = self.compound(ty);
        let b = self.names.b.clone();
        let store = KStmt::Store { array: Array::Global(y.clone()), index: Self::var(&b, Ty::Usize), op, value };
        if self.chance(1, 6) {
            then.push(store);
        } else {
            let n = self.len_of(&y);
            let guard = Self::binary(BinOp::Lt, Self::var(&b, Ty::Usize), Self::var(&n, Ty::Usize));
            then.push(KStmt::If { cond: guard, then: vec![store], els: Vec::new(), uniform: false });
        }
        self.uniform = saved;
        self.scopes.pop();
        out.push(KStmt::If { cond, then, els: Vec::new(), uniform: false });
        self.written.push(y);
    }

    /// A grid-stride loop over a slice.
    fn grid_stride(&mut self, out: &mut Vec<KStmt>, depth: u32) {
        let slices: Vec<String> =
            self.params.iter().filter(|p| !matches!(p.kind, ParamKind::Scalar(_))).map(|p| p.name.clone()).collect();
        let slice = self.rng().pick(&slices).clone();
        let var = self.s.fresh("i");
        let form = if self.chance(1, 2) { Stride::While } else { Stride::StepBy };
        self.scopes.push(Vec::new());
        self.declare(&var, Ty::Usize, false);
        let saved_uniform = std::mem::replace(&mut self.uniform, false);
        let saved_stride = self.stride.replace((var.clone(), slice.clone()));
        let n = self.rng().range(1, 3) as usize;
        let mut body = Vec::new();
        self.sections(&mut body, n, depth - 1);
        // Most loops write the output they run over.
        let ys = self.outputs(Writes::Grid);
        if ys.iter().any(|(y, _)| *y == slice) && self.chance(2, 3) {
            let ty = ys.iter().find(|(y, _)| *y == slice).expect("found").1;
            let value = self.expr(ty, false);
            let op = self.compound(ty);
            body.push(KStmt::Store {
                array: Array::Global(slice.clone()),
                index: Self::var(&var, Ty::Usize),
                op,
                value,
            });
            self.written.push(slice.clone());
        }
        self.stride = saved_stride;
        self.uniform = saved_uniform;
        self.scopes.pop();
        out.push(KStmt::GridStride { var, slice, form, body });
    }

    fn global_atomic(&mut self, out: &mut Vec<KStmt>) {
        let ys = self.outputs(Writes::Atomic);
        let (y, ty) = self.rng().pick(&ys).clone();
        self.global_atomic_to(out, y, ty);
    }

    fn global_atomic_to(&mut self, out: &mut Vec<KStmt>, y: String, ty: Ty) {
        // One family of updates per output, for the whole kernel (no barrier orders blocks).
        let family = match self.families.iter().find(|(n, _)| *n == y) {
            Some((_, f)) => *f,
            None => {
                let f = self.rng().pick(&AtomicOp::ALL).family();
                self.families.push((y.clone(), f));
                f
            }
        };
        let op = self.atomic_op(family);
        let index = self.global_index(&y);
        let value = self.expr(ty, false);
        out.push(KStmt::Atomic { op, array: Array::Global(y.clone()), index, value });
        self.written.push(y);
    }

    /// A block-stride loop that writes every element of shared array `a` (its own ones in
    /// each thread): the array is then defined, if every thread ran it.
    fn fill(&mut self, out: &mut Vec<KStmt>, a: usize) {
        let (name, ty, len) = (self.arrays[a].name.clone(), self.arrays[a].ty, self.arrays[a].len);
        let var = self.s.fresh("j");
        self.scopes.push(Vec::new());
        self.declare(&var, Ty::Usize, false);
        let saved_uniform = std::mem::replace(&mut self.uniform, false);
        let mut body = Vec::new();
        if self.chance(1, 3) {
            self.scalar(&mut body);
        }
        let value = self.expr(ty, false);
        let op = if self.state[a].defined { self.compound(ty) } else { None };
        body.push(KStmt::Store { array: Array::Shared(name), index: Self::var(&var, Ty::Usize), op, value });
        self.uniform = saved_uniform;
        self.scopes.pop();
        let (t, bd) = (self.names.t.clone(), self.names.bd.clone());
        out.push(KStmt::BlockStride { var, thread: t, step: bd, len, body });
        self.state[a].mode = Mode::Owned;
        if self.uniform && !self.diverged {
            self.state[a].defined = true;
        }
    }

    /// `s[t] = v` (or `op=` once defined), checked against the length most of the time.
    fn own_store(&mut self, out: &mut Vec<KStmt>, a: usize) {
        let (name, ty, len) = (self.arrays[a].name.clone(), self.arrays[a].ty, self.arrays[a].len);
        let t = self.names.t.clone();
        let value = self.expr(ty, false);
        let op = if self.state[a].defined { self.compound(ty) } else { None };
        let index = Self::var(&t, Ty::Usize);
        let store = KStmt::Store { array: Array::Shared(name), index: index.clone(), op, value };
        if self.chance(1, 8) {
            out.push(store);
        } else {
            let len = self.usize_lit(len);
            let cond = Self::binary(BinOp::Lt, index, len);
            out.push(KStmt::If { cond, then: vec![store], els: Vec::new(), uniform: false });
        }
        self.state[a].mode = Mode::Owned;
    }

    /// An atomic operation of `family`.
    fn atomic_op(&mut self, family: u8) -> AtomicOp {
        let ops: Vec<AtomicOp> = AtomicOp::ALL.into_iter().filter(|o| o.family() == family).collect();
        *self.rng().pick(&ops)
    }

    fn shared_index(&mut self, len: usize) -> Expr {
        match self.rng().weighted(&[8, 1, 1]) {
            0 => {
                let e = self.expr(Ty::Usize, false);
                let len = self.usize_lit(len);
                Self::binary(BinOp::Rem, e, len)
            }
            1 => {
                let v = self.rng().below(len as u64) as usize;
                self.usize_lit(v)
            }
            _ => self.expr(Ty::Usize, false),
        }
    }

    fn shared_read(&mut self, out: &mut Vec<KStmt>, a: usize) {
        let (name, ty, len) = (self.arrays[a].name.clone(), self.arrays[a].ty, self.arrays[a].len);
        let index = self.shared_index(len);
        let v = self.s.fresh("v");
        out.push(KStmt::Load { name: v.clone(), ty, array: Array::Shared(name), index });
        self.declare(&v, ty, false);
        self.state[a].mode = Mode::Read;
    }

    fn shared_atomic(&mut self, out: &mut Vec<KStmt>, a: usize) {
        let (name, ty, len) = (self.arrays[a].name.clone(), self.arrays[a].ty, self.arrays[a].len);
        let family = match self.state[a].mode.atomics() {
            Some(Some(f)) => f,
            _ => self.rng().pick(&AtomicOp::ALL).family(),
        };
        let op = self.atomic_op(family);
        let index = self.shared_index(len);
        let value = self.expr(ty, false);
        out.push(KStmt::Atomic { op, array: Array::Shared(name), index, value });
        self.state[a].mode = Mode::Atomic(family);
    }

    fn barrier(&mut self, out: &mut Vec<KStmt>) {
        let kind = [Barrier::Sync, Barrier::Count, Barrier::And, Barrier::Or][self.rng().weighted(&[5, 1, 1, 1])];
        let vote = if kind == Barrier::Sync {
            None
        } else {
            let pred = self.expr(Ty::Bool, false);
            let name = self.s.fresh("c");
            Some((name, pred))
        };
        if let Some((name, _)) = &vote {
            let ty = if kind == Barrier::Count { Ty::U32 } else { Ty::Bool };
            self.declare(&name.clone(), ty, true);
        }
        out.push(KStmt::Barrier { kind, vote });
        for s in &mut self.state {
            s.mode = Mode::Free;
        }
    }

    fn warp(&mut self, out: &mut Vec<KStmt>) {
        let ops: &[WarpOp] = if self.whole_warps {
            &[
                WarpOp::Shfl,
                WarpOp::ShflUp,
                WarpOp::ShflDown,
                WarpOp::ShflXor,
                WarpOp::Ballot,
                WarpOp::All,
                WarpOp::Any,
                WarpOp::MatchAny,
            ]
        } else {
            &[WarpOp::Shfl, WarpOp::Ballot, WarpOp::All, WarpOp::Any, WarpOp::MatchAny]
        };
        let op = *self.rng().pick(ops);
        let mask = match self.mask.clone() {
            Some((_, m)) if !self.whole_warps || self.chance(1, 2) => Mask::Var(m),
            _ => Mask::Full,
        };
        let vty = match op {
            WarpOp::Ballot | WarpOp::All | WarpOp::Any => Ty::Bool,
            _ => {
                let t = self.any_type();
                if t == Ty::Bool && self.chance(1, 2) { Ty::U32 } else { t }
            }
        };
        let value = self.expr(vty, false);
        let arg = match op {
            WarpOp::Shfl if !self.whole_warps => {
                // A lane that exists: `e % lanes`.
                let lanes = self.mask.as_ref().expect("a kernel of partial warps has its lanes").0.clone();
                let e = self.expr(Ty::U32, false);
                Some(Self::binary(BinOp::Rem, e, Self::var(&lanes, Ty::U32)))
            }
            WarpOp::Shfl => Some(self.expr(Ty::U32, false)),
            // Offsets of a warp or more give the lane its own value.
            WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor => Some(if self.chance(1, 2) {
                let v = if self.chance(1, 3) { self.rng().range(32, 40) } else { self.rng().range(0, 31) };
                self.s.lit_of(Value::U32(v as u32))
            } else {
                let e = self.expr(Ty::U32, false);
                let m = if self.chance(1, 4) { 63 } else { 31 };
                Self::binary(BinOp::And, e, Expr::lit(Value::U32(m)))
            }),
            _ => None,
        };
        let name = self.s.fresh("w");
        self.declare(&name, op.result(vty), false);
        out.push(KStmt::Warp { name, op, mask, value, arg });
    }

    /// Runs `f` (which generates the branches of an `if`) from the current shared state for
    /// each branch, and leaves the merged state.
    fn branches(&mut self, depth: u32, two: bool) -> (Vec<KStmt>, Vec<KStmt>) {
        let before = self.state.clone();
        let n = self.rng().range(1, 3) as usize;
        let then = self.block(n, depth - 1);
        let after_then = std::mem::replace(&mut self.state, before);
        let els = if two {
            let n = self.rng().range(1, 2) as usize;
            self.block(n, depth - 1)
        } else {
            Vec::new()
        };
        for (s, t) in self.state.iter_mut().zip(after_then) {
            s.mode = s.mode.merge(t.mode);
            s.defined &= t.defined;
        }
        (then, els)
    }

    fn uniform_if(&mut self, out: &mut Vec<KStmt>, depth: u32) {
        let cond = self.block_condition();
        let two = self.chance(1, 3);
        let (then, els) = self.branches(depth, two);
        out.push(KStmt::If { cond, then, els, uniform: true });
    }

    fn divergent_if(&mut self, out: &mut Vec<KStmt>, depth: u32) {
        let cond = self.expr(Ty::Bool, false);
        let saved = std::mem::replace(&mut self.uniform, false);
        let two = self.chance(1, 3);
        let (then, els) = self.branches(depth, two);
        self.uniform = saved;
        out.push(KStmt::If { cond, then, els, uniform: false });
    }

    /// `for r in 0..count { gpu::sync_threads(); … }`: each iteration starts from a barrier,
    /// so it may use the shared arrays as the first did.
    fn repeat(&mut self, out: &mut Vec<KStmt>, depth: u32) {
        let count = self.rng().range(1, 3) as u32;
        let var = self.s.fresh("r");
        let ty = *self.rng().pick(&[Ty::U32, Ty::Usize, Ty::I32]);
        self.scopes.push(Vec::new());
        self.declare(&var, ty, true);
        let saved = std::mem::replace(&mut self.in_repeat, true);
        let mut body = Vec::new();
        self.barrier(&mut body);
        let n = self.rng().range(1, 3) as usize;
        self.sections(&mut body, n, depth - 1);
        self.in_repeat = saved;
        self.scopes.pop();
        out.push(KStmt::Repeat { var, ty, count, body });
    }

    fn tree(&mut self, out: &mut Vec<KStmt>, a: usize) {
        let (name, ty, len) = (self.arrays[a].name.clone(), self.arrays[a].ty, self.arrays[a].len);
        let op =
            if ty.is_float() { BinOp::Add } else { *self.rng().pick(&[BinOp::Add, BinOp::Xor, BinOp::Or, BinOp::And]) };
        let var = self.s.fresh("k");
        out.push(KStmt::Tree { array: name, len, op, thread: self.names.t.clone(), var });
        self.state[a].mode = Mode::Free;
    }

    /// Writes every output that no section wrote, so that each has something to compare.
    fn finish(&mut self, out: &mut Vec<KStmt>) {
        for p in self.params.clone() {
            let ParamKind::Output(ty, writes) = p.kind else { continue };
            if self.written.contains(&p.name) {
                continue;
            }
            match writes {
                Writes::Grid if self.chance(1, 2) => {
                    self.scopes.push(Vec::new());
                    let var = self.s.fresh("i");
                    self.declare(&var, Ty::Usize, false);
                    let saved_uniform = std::mem::replace(&mut self.uniform, false);
                    let saved_stride = self.stride.replace((var.clone(), p.name.clone()));
                    let mut body = Vec::new();
                    self.grid_store_to(&mut body, p.name.clone(), ty);
                    self.stride = saved_stride;
                    self.uniform = saved_uniform;
                    self.scopes.pop();
                    let form = if self.chance(1, 2) { Stride::While } else { Stride::StepBy };
                    out.push(KStmt::GridStride { var, slice: p.name.clone(), form, body });
                }
                Writes::Grid => self.grid_store_to(out, p.name.clone(), ty),
                Writes::Block => self.block_store_to(out, p.name.clone(), ty),
                Writes::Atomic => self.global_atomic_to(out, p.name.clone(), ty),
            }
        }
    }
}
