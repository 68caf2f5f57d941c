//! The syntax of generated explicit kernels: what the generator builds, the renderer
//! prints as a `#[kernel]` and the interpreter runs. The scalar parts (values, conditions,
//! indices, and whole statements over the thread's own variables) are the scalar
//! generator's [`Expr`]s and [`Stmt`]s; the kernel's own statements hold them.

use crate::ast::{BinOp, Expr, Stmt};
use crate::ty::Ty;

/// A generated `#[kernel]`.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The seed it was generated from ([`kernel`](super::kernel) builds it again).
    pub seed: u64,
    pub name: String,
    pub params: Vec<KParam>,
    pub body: Vec<KStmt>,
    /// Its warp operations name every lane of a warp (shuffles across the whole warp): it
    /// runs only in blocks of whole warps (a multiple of 32 threads). Otherwise its warp
    /// operations name the lanes that exist, and any block size goes.
    pub whole_warps: bool,
}

#[derive(Clone, Debug)]
pub struct KParam {
    pub name: String,
    pub kind: ParamKind,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum ParamKind {
    /// A scalar by value.
    Scalar(Ty),
    /// `&[T]`: read anywhere.
    Input(Ty),
    /// `&mut [T]`, written as [`Writes`] says (which makes the writes race-free).
    Output(Ty, Writes),
}

impl ParamKind {
    /// The scalar's type, or the slice's element type.
    pub fn ty(self) -> Ty {
        match self {
            ParamKind::Scalar(t) | ParamKind::Input(t) | ParamKind::Output(t, _) => t,
        }
    }
}

/// Who may touch which element of a `&mut` slice: what makes a kernel race-free by
/// construction across blocks, where no barrier orders anything.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Writes {
    /// Element `i` is read and written only by the thread whose grid index (`grid1()`)
    /// is `i` modulo the grid's size: at `grid1()` or a grid-stride loop's index.
    Grid,
    /// Element `b` is read and written only by one thread of block `b` (the one whose
    /// `thread_idx().x` is a given value).
    Block,
    /// Only atomic updates of one [`AtomicOp::family`], anywhere, whose results are not
    /// used: the final values do not depend on the order the threads come in.
    Atomic,
}

/// Where a thread is, as one of the GPU's built-ins tells it.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Builtin {
    /// `gpu::thread_idx().x`
    ThreadX,
    /// `gpu::block_idx().x`
    BlockX,
    /// `gpu::block_dim().x`
    BlockDimX,
    /// `gpu::grid_dim().x`
    GridDimX,
    /// `gpu::grid1()`
    Grid1,
    /// `gpu::gridsize1()`
    GridSize1,
    /// `gpu::lane_id()`
    LaneId,
}

impl Builtin {
    /// Whether every thread of a block sees the same value.
    pub fn uniform(self) -> bool {
        matches!(self, Builtin::BlockX | Builtin::BlockDimX | Builtin::GridDimX | Builtin::GridSize1)
    }

    /// The type the built-in returns (`Dim3`'s fields are `u32`).
    pub fn ty(self) -> Ty {
        match self {
            Builtin::Grid1 | Builtin::GridSize1 => Ty::Usize,
            _ => Ty::U32,
        }
    }

    pub fn call(self) -> &'static str {
        match self {
            Builtin::ThreadX => "gpu::thread_idx().x",
            Builtin::BlockX => "gpu::block_idx().x",
            Builtin::BlockDimX => "gpu::block_dim().x",
            Builtin::GridDimX => "gpu::grid_dim().x",
            Builtin::Grid1 => "gpu::grid1()",
            Builtin::GridSize1 => "gpu::gridsize1()",
            Builtin::LaneId => "gpu::lane_id()",
        }
    }
}

/// A slice parameter or a shared array, by name.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Array {
    Global(String),
    Shared(String),
}

impl Array {
    pub fn name(&self) -> &str {
        match self {
            Array::Global(n) | Array::Shared(n) => n,
        }
    }
}

/// `gpu::atomic::…` operations on the integers whose final result does not depend on the
/// order of the updates, as long as one element sees updates of one [`AtomicOp::family`].
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum AtomicOp {
    Add,
    Sub,
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl AtomicOp {
    pub const ALL: [AtomicOp; 7] =
        [AtomicOp::Add, AtomicOp::Sub, AtomicOp::Min, AtomicOp::Max, AtomicOp::And, AtomicOp::Or, AtomicOp::Xor];

    /// Updates of one family commute with each other (`add` and `sub` are both additions
    /// modulo 2^n; each other operation only with itself), so the final value of elements
    /// that only they update does not depend on the order of the updates.
    pub fn family(self) -> u8 {
        match self {
            AtomicOp::Add | AtomicOp::Sub => 0,
            AtomicOp::Min => 1,
            AtomicOp::Max => 2,
            AtomicOp::And => 3,
            AtomicOp::Or => 4,
            AtomicOp::Xor => 5,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "add",
            AtomicOp::Sub => "sub",
            AtomicOp::Min => "min",
            AtomicOp::Max => "max",
            AtomicOp::And => "and",
            AtomicOp::Or => "or",
            AtomicOp::Xor => "xor",
        }
    }
}

/// The element types of atomic updates on the GPU.
pub const ATOMIC_TYPES: [Ty; 4] = [Ty::I32, Ty::U32, Ty::I64, Ty::U64];

/// A block barrier: `sync_threads()`, or one that also counts or combines a predicate.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Barrier {
    Sync,
    /// `sync_threads_count(p) -> u32`
    Count,
    /// `sync_threads_and(p) -> bool`
    And,
    /// `sync_threads_or(p) -> bool`
    Or,
}

impl Barrier {
    pub fn call(self) -> &'static str {
        match self {
            Barrier::Sync => "gpu::sync_threads",
            Barrier::Count => "gpu::sync_threads_count",
            Barrier::And => "gpu::sync_threads_and",
            Barrier::Or => "gpu::sync_threads_or",
        }
    }
}

/// A warp operation.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum WarpOp {
    /// `shfl_sync(mask, v, lane)`: lane `lane % 32`'s value.
    Shfl,
    /// `shfl_up_sync(mask, v, delta)`
    ShflUp,
    /// `shfl_down_sync(mask, v, delta)`
    ShflDown,
    /// `shfl_xor_sync(mask, v, lane_mask)`
    ShflXor,
    /// `ballot_sync(mask, p) -> u32`
    Ballot,
    /// `all_sync(mask, p) -> bool`
    All,
    /// `any_sync(mask, p) -> bool`
    Any,
    /// `match_any_sync(mask, v) -> u32`
    MatchAny,
}

impl WarpOp {
    pub fn call(self) -> &'static str {
        match self {
            WarpOp::Shfl => "gpu::shfl_sync",
            WarpOp::ShflUp => "gpu::shfl_up_sync",
            WarpOp::ShflDown => "gpu::shfl_down_sync",
            WarpOp::ShflXor => "gpu::shfl_xor_sync",
            WarpOp::Ballot => "gpu::ballot_sync",
            WarpOp::All => "gpu::all_sync",
            WarpOp::Any => "gpu::any_sync",
            WarpOp::MatchAny => "gpu::match_any_sync",
        }
    }

    /// The shuffles move the value's type; the votes and the match give a mask or a `bool`.
    pub fn result(self, value: Ty) -> Ty {
        match self {
            WarpOp::Shfl | WarpOp::ShflUp | WarpOp::ShflDown | WarpOp::ShflXor => value,
            WarpOp::Ballot | WarpOp::MatchAny => Ty::U32,
            WarpOp::All | WarpOp::Any => Ty::Bool,
        }
    }
}

/// The mask of a warp operation.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Mask {
    /// `u32::MAX`: every lane (a kernel with [`Kernel::whole_warps`]).
    Full,
    /// A variable holding the mask of the lanes that exist ([`KStmt::WarpLanes`]).
    Var(String),
}

/// How a grid-stride loop is written.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Stride {
    /// `let mut i = gpu::grid1(); while i < n { …; i += gpu::gridsize1(); }`
    While,
    /// `for i in (gpu::grid1()..n).step_by(gpu::gridsize1()) { … }`
    StepBy,
}

/// A statement of an explicit kernel.
#[derive(Clone, Debug)]
pub enum KStmt {
    /// `let name = <builtin> as ty;` (`ty` is `usize` or the built-in's own type).
    Index { name: String, builtin: Builtin, ty: Ty },
    /// `let name = slice.len();`
    Len { name: String, slice: String },
    /// The lanes of the thread's warp that exist (`u32`, 1 to 32) and their mask: `let
    /// lanes = …; let mask = …;`.
    WarpLanes { lanes: String, mask: String },
    /// Statements of the scalar language over the thread's variables (from the scalar
    /// generator: `let`, assignments, `if`, loops, `fn` and `const` items).
    Scalar(Vec<Stmt>),
    /// `let name = array[index];`
    Load { name: String, ty: Ty, array: Array, index: Expr },
    /// `array[index] = value;` or `array[index] op= value;`
    Store { array: Array, index: Expr, op: Option<BinOp>, value: Expr },
    /// `let name = gpu::shared::<ty, len>();`
    Shared { name: String, ty: Ty, len: usize },
    /// `gpu::atomic::op(array, index, value);`, its result unused.
    Atomic { op: AtomicOp, array: Array, index: Expr, value: Expr },
    /// `gpu::sync_threads();`, or `let name = gpu::sync_threads_count(pred);` …
    Barrier { kind: Barrier, vote: Option<(String, Expr)> },
    /// `let name = op(mask, value[, arg]);`
    Warp { name: String, op: WarpOp, mask: Mask, value: Expr, arg: Option<Expr> },
    /// `if cond { then } else { els }`. `uniform`: the condition is the same for every
    /// thread of a block, so the branches may hold barriers and warp operations.
    If { cond: Expr, then: Vec<KStmt>, els: Vec<KStmt>, uniform: bool },
    /// A grid-stride loop over `0..slice.len()`: `var` from `gpu::grid1()` by
    /// `gpu::gridsize1()`.
    GridStride { var: String, slice: String, form: Stride, body: Vec<KStmt> },
    /// A block-stride loop over `0..len`: `let mut var = thread; while var < len { …; var
    /// += step; }`, `thread` and `step` being the thread's index and the block's size
    /// (`usize` variables).
    BlockStride { var: String, thread: String, step: String, len: usize, body: Vec<KStmt> },
    /// `for var in 0..count { body }` (`var` of type `ty`): the same iterations for every
    /// thread of a block, so the body may hold barriers and warp operations.
    Repeat { var: String, ty: Ty, count: u32, body: Vec<KStmt> },
    /// A tree reduction of shared array `array` (`len` a power of two) into its element 0:
    /// `let mut var = len / 2; while var > 0 { if thread < var { s[thread] = s[thread] op
    /// s[thread + var]; } gpu::sync_threads(); var /= 2; }`.
    Tree { array: String, len: usize, op: BinOp, thread: String, var: String },
    /// `return;`
    Return,
}
