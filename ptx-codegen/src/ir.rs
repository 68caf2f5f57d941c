//! The typed kernel IR: what the frontend produces from a `syn::ItemFn` and the lowering
//! turns into LLVM IR. Every expression carries its type and the span of its source.

use proc_macro2::Span;

use kernel_abi::mma::Layout;

use crate::intrinsic::Intrinsic;
use crate::ty::ScalarType;

/// The type of an expression. `Infer` and `Error` exist only while the frontend checks a
/// function; a [`Function`] handed to the lowering holds neither.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Type {
    Scalar(ScalarType),
    Unit,
    /// The type of `return`, `break`, `continue` and of blocks that never finish.
    Never,
    Infer(InferVar),
    Error,
    /// A tuple: an index into the checker's tuple table while checking, and into
    /// [`Program::tuples`] afterwards.
    Tuple(u32),
    /// `gpu::Dim3` (kernels): three `u32`s, `.x .y .z`.
    Dim3,
    /// A slice parameter, a local array or a shared array (kernels): an index into
    /// [`Program::arrays`]. Only a variable has this type; it is indexed, never copied.
    Array(u32),
    /// A warp's tensor-core fragment (kernels, `gpu::mma`): each lane holds its part of a
    /// tile in registers.
    Fragment(Fragment),
}

/// What a tensor-core product multiplies (`gpu::mma`), from the arrays' element type.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum MmaInput {
    /// `half::f16`: `mma.m16n8k16` with `f32` accumulation.
    F16,
    /// `half::bf16`: likewise.
    Bf16,
    /// `f32` arrays, rounded to TF32 (10 bits of mantissa, to nearest, ties away from
    /// zero) as they are loaded: `mma.m16n8k8`.
    Tf32,
}

impl MmaInput {
    pub const ALL: [MmaInput; 3] = [MmaInput::F16, MmaInput::Bf16, MmaInput::Tf32];

    /// The input an array of `t` gives.
    pub fn of(t: ScalarType) -> Option<MmaInput> {
        match t {
            ScalarType::F16 => Some(MmaInput::F16),
            ScalarType::BF16 => Some(MmaInput::Bf16),
            ScalarType::F32 => Some(MmaInput::Tf32),
            _ => None,
        }
    }

    /// The element type of the arrays it is loaded from.
    pub fn elem(self) -> ScalarType {
        match self {
            MmaInput::F16 => ScalarType::F16,
            MmaInput::Bf16 => ScalarType::BF16,
            MmaInput::Tf32 => ScalarType::F32,
        }
    }
}

/// A tensor-core fragment: the part of a tile each lane of a warp holds. `A` is a 16 × K
/// tile, `B` a K × 8 tile, `Acc` a 16 × 8 tile of `f32`; K is 16 for the 16-bit inputs
/// and 8 for TF32 ([`Fragment::layout`]).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Fragment {
    A(MmaInput),
    B(MmaInput),
    Acc,
}

impl Fragment {
    /// Where each lane holds the tile's elements.
    pub fn layout(self) -> Layout {
        match self {
            Fragment::A(MmaInput::Tf32) => Layout::ATf32,
            Fragment::A(_) => Layout::A16,
            Fragment::B(MmaInput::Tf32) => Layout::BTf32,
            Fragment::B(_) => Layout::B16,
            Fragment::Acc => Layout::Acc,
        }
    }

    /// The 32-bit registers a lane holds.
    pub fn regs(self) -> u32 {
        match self {
            Fragment::A(_) | Fragment::Acc => 4,
            Fragment::B(_) => 2,
        }
    }

    /// The element type of the arrays it is loaded from and stored to.
    pub fn elem(self) -> ScalarType {
        match self {
            Fragment::A(i) | Fragment::B(i) => i.elem(),
            Fragment::Acc => ScalarType::F32,
        }
    }

    /// Its type as a kernel names it: `gpu::mma::A<f16>`, `gpu::mma::Acc`.
    pub fn rust_name(self) -> String {
        match self {
            Fragment::A(i) => format!("gpu::mma::A<{}>", i.elem().rust_name()),
            Fragment::B(i) => format!("gpu::mma::B<{}>", i.elem().rust_name()),
            Fragment::Acc => "gpu::mma::Acc".into(),
        }
    }
}

/// `gpu::mma::*`: a warp's tensor-core operations ([`ExprKind::Mma`]). Every one but
/// `zeros` is made by the 32 lanes of a warp together.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum MmaOp {
    /// `load_a(array, base, ld)`, `load_b(…)`, `load_acc(…)`: the fragment of the tile whose
    /// element `(r, c)` is `array[base + r * ld + c]`. Arguments: `base`, `ld`.
    Load(Fragment, u32),
    /// `store(array, base, ld, acc)`: writes the accumulator's tile there. Arguments:
    /// `base`, `ld`, the accumulator.
    Store(u32),
    /// `zeros()`: an accumulator of zeros (no lane talks to another).
    Zeros,
    /// `mma(a, b, c)`: `a · b + c`.
    Mma,
}

impl Type {
    pub fn scalar(self) -> Option<ScalarType> {
        match self {
            Type::Scalar(t) => Some(t),
            _ => None,
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct InferVar(pub u32);

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct LocalId(pub u32);

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct LoopId(pub u32);

#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub struct FnId(pub u32);

/// A vectorized function with the helper functions it calls (directly or not).
#[derive(Clone, Debug)]
pub struct Program {
    /// The vectorized function first, then its helpers; [`FnId`] indexes this.
    pub functions: Vec<Function>,
    /// The element types of every tuple type the program uses ([`Type::Tuple`]).
    pub tuples: Vec<Vec<ScalarType>>,
    /// Every array of the program ([`Type::Array`]): slices, local and shared arrays.
    pub arrays: Vec<ArrayInfo>,
}

/// What an array-typed variable is (explicit kernels).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayInfo {
    pub elem: ScalarType,
    pub kind: ArrayKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArrayKind {
    /// A `&[T]` (`mutable: false`) or `&mut [T]` parameter: a device pointer and a length.
    Slice { mutable: bool },
    /// `let a = [v; N]` / `[a, b, c]`: `len` elements in the thread's own memory.
    Local { len: u64 },
    /// `gpu::shared::<T, N>()` (`dims = [N]`), `gpu::shared_2d::<T, R, C>()` (`[R, C]`) or
    /// `gpu::shared_3d::<T, A, B, C>()` (`[A, B, C]`), row-major: one block-wide array per
    /// call site.
    Shared { dims: Vec<u64> },
    /// `gpu::dynamic_shared::<T>()`: the block's dynamic shared memory, sized at launch.
    DynamicShared,
    /// `s.slice(start, end)`: elements `start..end` of the 1-D shared array, dynamic shared
    /// memory or view `base`, indexed from 0 and bounds-checked against `end - start`.
    View { base: u32 },
}

impl ArrayInfo {
    pub fn mutable(&self) -> bool {
        !matches!(self.kind, ArrayKind::Slice { mutable: false })
    }

    /// How many indices an element takes (2 for `shared_2d`, 3 for `shared_3d`).
    pub fn rank(&self) -> usize {
        match &self.kind {
            ArrayKind::Shared { dims } => dims.len(),
            _ => 1,
        }
    }
}

impl Program {
    /// The bytes of the program's static shared arrays (each call site once).
    pub fn static_shared_bytes(&self) -> u64 {
        self.arrays
            .iter()
            .map(|a| match &a.kind {
                ArrayKind::Shared { dims } => dims.iter().product::<u64>() * a.elem.size_bytes() as u64,
                _ => 0,
            })
            .sum()
    }

    /// Whether the program uses the block's dynamic shared memory.
    pub fn uses_dynamic_shared(&self) -> bool {
        self.arrays.iter().any(|a| a.kind == ArrayKind::DynamicShared)
    }
}

impl Program {
    pub fn entry(&self) -> &Function {
        &self.functions[0]
    }

    /// Whether some function of the program can fail at run time.
    pub fn may_fail(&self) -> bool {
        self.may_fail_with(IntOverflow::Wrap)
    }

    /// Whether some operation can fail at run time when integer overflow is `overflow`.
    pub fn may_fail_with(&self, overflow: IntOverflow) -> bool {
        self.functions.iter().any(|f| f.may_fail_with(overflow))
    }

    /// Whether overflow checks change anything: some integer operation of the program
    /// is checked under [`IntOverflow::Panic`].
    pub fn checks_overflow(&self) -> bool {
        self.functions.iter().any(Function::checks_overflow)
    }
}

#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: RetType,
    pub locals: Vec<Local>,
    pub body: Block,
    pub span: Span,
}

/// What a function returns: one scalar, or a tuple of scalars (several outputs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RetType {
    Scalar(ScalarType),
    Tuple(Vec<ScalarType>),
}

impl RetType {
    /// The scalars returned, in order (one for a scalar).
    pub fn scalars(&self) -> &[ScalarType] {
        match self {
            RetType::Scalar(t) => std::slice::from_ref(t),
            RetType::Tuple(ts) => ts,
        }
    }

    pub fn scalar(&self) -> Option<ScalarType> {
        match self {
            RetType::Scalar(t) => Some(*t),
            RetType::Tuple(_) => None,
        }
    }

    /// As Rust writes it: `f32` or `(f32, u8)`.
    pub fn rust_name(&self) -> String {
        match self {
            RetType::Scalar(t) => t.rust_name().to_string(),
            RetType::Tuple(ts) => {
                let names: Vec<&str> = ts.iter().map(|t| t.rust_name()).collect();
                if names.len() == 1 { format!("({},)", names[0]) } else { format!("({})", names.join(", ")) }
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    /// The scalar's type, or a slice's element type.
    pub ty: ScalarType,
    pub local: LocalId,
    /// `Some(mutable)` for a slice parameter of a kernel (`&[T]` / `&mut [T]`).
    pub slice: Option<bool>,
}

#[derive(Clone, Debug)]
pub struct Local {
    pub name: String,
    pub ty: Type,
    pub mutable: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    /// `let x = init;` (`init` is `None` for `let x;`, which rustc only accepts when every
    /// path assigns before use).
    Let {
        local: LocalId,
        init: Option<Expr>,
    },
    /// `let (a, _, c) = tuple;`: one local (or `_`) per element.
    LetTuple {
        locals: Vec<Option<LocalId>>,
        init: Expr,
    },
    Expr(Expr),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
    pub span: Span,
}

#[derive(Copy, Clone, PartialEq, Debug)]
pub enum Literal {
    /// An integer literal's value (its type is the expression's type).
    Int(i128),
    /// A float literal, parsed once for each width (rounding the f64 parse to f32 could
    /// round twice); the expression's type says which one is meant.
    Float {
        as_f64: f64,
        as_f32: f32,
    },
    Bool(bool),
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum UnaryOp {
    Neg,
    /// `!`: logical not on `bool`, bitwise not on integers.
    Not,
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinaryOp {
    pub fn is_comparison(self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
    }

    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum LogicalOp {
    And,
    Or,
}

/// How a counted `for` loop steps.
#[derive(Clone, Debug)]
pub struct ForRange {
    pub var: LocalId,
    pub start: Box<Expr>,
    pub end: Box<Expr>,
    pub inclusive: bool,
    /// `.rev()`: iterate from the top down.
    pub reverse: bool,
    /// `.step_by(k)`: `None` steps by one.
    pub step: Option<Box<Expr>>,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Lit(Literal),
    Local(LocalId),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// Short-circuiting `&&` / `||`.
    Logical(LogicalOp, Box<Expr>, Box<Expr>),
    /// `expr as T`, where `T` is this expression's type.
    Cast(Box<Expr>),
    Assign(LocalId, Box<Expr>),
    /// `x op= value`.
    CompoundAssign(BinaryOp, LocalId, Box<Expr>),
    Block(Block),
    If {
        cond: Box<Expr>,
        then: Block,
        els: Option<Box<Expr>>,
    },
    While {
        id: LoopId,
        cond: Box<Expr>,
        body: Block,
    },
    Loop {
        id: LoopId,
        body: Block,
    },
    For {
        id: LoopId,
        range: ForRange,
        body: Block,
    },
    Break {
        target: LoopId,
        value: Option<Box<Expr>>,
    },
    Continue {
        target: LoopId,
    },
    Return(Option<Box<Expr>>),
    Call(Intrinsic, Vec<Expr>),
    /// A call of a helper function of the program.
    CallFn(FnId, Vec<Expr>),
    /// `(a, b, …)`.
    Tuple(Vec<Expr>),
    /// `t.0`: an element of a tuple.
    Field(Box<Expr>, usize),
    /// Code that cannot run (after the last arm of an exhaustive `match` whose arm has a
    /// guard; rustc checks exhaustiveness on the host copy of the function).
    Unreachable,
    /// `[a, b, c]` (the initialiser of a local array).
    ArrayList(Vec<Expr>),
    /// `[v; len]` (the initialiser of a local array).
    ArrayRepeat(Box<Expr>, u64),
    /// `gpu::shared*()`: the initialiser of a shared array (nothing to compute).
    SharedArray,
    /// `a[i]` (`a[(i, j)]` for a 2-D shared array): bounds-checked unless `checked` is
    /// false (`get_unchecked`).
    Index {
        /// The array's index in [`Program::arrays`].
        array: u32,
        index: Vec<Expr>,
        checked: bool,
    },
    /// `a.len()`: every element, whatever the rank (`R * C` for a 2-D shared array).
    ArrayLen(u32),
    /// `s.slice(start, end)` (the initialiser of a view, [`ArrayKind::View`]): `bounds`
    /// holds `start` and `end`.
    ArrayView {
        base: u32,
        bounds: Vec<Expr>,
    },
    /// `a[i] = v` (`op: None`) or `a[i] op= v`.
    AssignIndex {
        array: u32,
        /// The element type.
        elem: ScalarType,
        index: Vec<Expr>,
        /// Bounds-checked (`a[i] = v`), or not (`*a.get_unchecked_mut(i) = v`).
        checked: bool,
        op: Option<BinaryOp>,
        value: Box<Expr>,
    },
    /// A part of a user struct's value: `p.mass`, `p.pos[k]`, `a[i].vel[0]`, `p.inner.x`.
    /// Where `base` is a variable or an element (`ExprKind::Local`, `ExprKind::Index`),
    /// only the part is read from it.
    Member {
        base: Box<Expr>,
        path: Vec<Step>,
    },
    /// `place.path = value` (`op: None`) or `place.path op= value`: writes one part of a
    /// struct in place, the rest of it untouched. `place` is a variable (`ExprKind::Local`)
    /// or an element (`ExprKind::Index`); `leaf` is the part's type. As for a scalar, the
    /// value is evaluated first, then the place.
    AssignMember {
        place: Box<Expr>,
        path: Vec<Step>,
        leaf: ScalarType,
        op: Option<BinaryOp>,
        value: Box<Expr>,
    },
    /// `Particle { pos: [x, y, z], vel: [0.0; 3], mass }`: a user struct's value from one
    /// value per field, in the definition's order (an array field's is an
    /// `ExprKind::ArrayList` or `ExprKind::ArrayRepeat`).
    StructLit(Vec<Expr>),
    /// `gpu::atomic::op(a, i, args…)`: the old value.
    Atomic {
        op: AtomicOp,
        array: u32,
        index: Vec<Expr>,
        args: Vec<Expr>,
    },
    /// A GPU built-in (`gpu::thread_idx()`, `gpu::sync_threads()`, …).
    Gpu(GpuOp, Vec<Expr>),
    /// `gpu::load2(a, i)` / `gpu::load4(a, i)`: the elements of `a[i..][..lanes]`, as a
    /// tuple (one vector load where their address is aligned to their size).
    LoadVector {
        array: u32,
        index: Box<Expr>,
        lanes: u32,
    },
    /// `gpu::store2(a, i, v0, v1)` / `gpu::store4(a, i, v0, v1, v2, v3)`: writes `values`
    /// to `a[i..][..values.len()]` (one vector store where aligned).
    StoreVector {
        array: u32,
        index: Box<Expr>,
        values: Vec<Expr>,
    },
    /// `gpu::mma::op(…)` (see [`MmaOp`] for the arguments).
    Mma(MmaOp, Vec<Expr>),
    /// `gpu::copy_async4(dst, i, src, j)` and its siblings: `dst[i..][..lanes]` (shared
    /// memory) takes the values of `src[j..][..lanes]` (a slice parameter) asynchronously,
    /// by the next `copy_async_wait` that covers the copy's group (`cp.async`). `checked`
    /// is false for `copy_async4_unchecked` and its siblings (in `unsafe`): no window
    /// checks.
    CopyAsync {
        dst: u32,
        dst_index: Box<Expr>,
        src: u32,
        src_index: Box<Expr>,
        lanes: u32,
        checked: bool,
    },
}

/// One step from a user struct to a part of it.
#[derive(Clone, Debug)]
pub enum Step {
    /// A field, by its index in the definition.
    Field(u32),
    /// An element of the array field just stepped to, bounds-checked against its length
    /// `len` (the index is a `usize`).
    Elem { index: Box<Expr>, len: u64 },
}

/// `gpu::atomic::*`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum AtomicOp {
    Add,
    Sub,
    /// On floats, Numba's `atomic.min`: a NaN in memory stays, a NaN argument is ignored.
    Min,
    Max,
    /// Numba's `atomic.nanmin`: NaN is a missing value on either side (on integers, `min`).
    NanMin,
    NanMax,
    /// CUDA's `atom.inc`: `if old >= v { 0 } else { old + 1 }`.
    Inc,
    /// CUDA's `atom.dec`: `if old == 0 || old > v { v } else { old - 1 }`.
    Dec,
    Exchange,
    CompareAndSwap,
    And,
    Or,
    Xor,
}

impl AtomicOp {
    pub const ALL: [(&'static str, AtomicOp); 13] = [
        ("add", AtomicOp::Add),
        ("sub", AtomicOp::Sub),
        ("min", AtomicOp::Min),
        ("max", AtomicOp::Max),
        ("nanmin", AtomicOp::NanMin),
        ("nanmax", AtomicOp::NanMax),
        ("inc", AtomicOp::Inc),
        ("dec", AtomicOp::Dec),
        ("exchange", AtomicOp::Exchange),
        ("compare_and_swap", AtomicOp::CompareAndSwap),
        ("and", AtomicOp::And),
        ("or", AtomicOp::Or),
        ("xor", AtomicOp::Xor),
    ];

    /// The element types the operation supports.
    pub fn types(self) -> &'static [ScalarType] {
        use ScalarType::*;
        match self {
            AtomicOp::Add
            | AtomicOp::Sub
            | AtomicOp::Exchange
            | AtomicOp::Min
            | AtomicOp::Max
            | AtomicOp::NanMin
            | AtomicOp::NanMax => &[I32, U32, I64, U64, F32, F64],
            AtomicOp::Inc | AtomicOp::Dec => &[U32, U64],
            _ => &[I32, U32, I64, U64],
        }
    }
}

/// The GPU's own built-ins (explicit kernels), named as `gpu::name`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum GpuOp {
    ThreadIdx,
    BlockIdx,
    BlockDim,
    GridDim,
    Grid(u8),
    GridSize(u8),
    SyncThreads,
    SyncThreadsCount,
    SyncThreadsAnd,
    SyncThreadsOr,
    ThreadFence,
    ThreadFenceBlock,
    ThreadFenceSystem,
    LaneId,
    /// `gpu::lanemask_lt()` and its siblings: the lanes below, at or above the thread's own.
    LaneMask(LaneMask),
    ActiveMask,
    /// `gpu::syncwarp(mask)`: the lanes of `mask` wait for each other.
    SyncWarp,
    /// `gpu::match_any_sync(mask, v)`: the lanes of `mask` whose `v` has the same bits.
    MatchAny,
    /// `gpu::match_all_sync(mask, v)`: `(mask, true)` when every lane of `mask` has the same
    /// bits, else `(0, false)`.
    MatchAll,
    Shfl,
    ShflUp,
    ShflDown,
    ShflXor,
    Ballot,
    AllSync,
    AnySync,
    /// `gpu::check_index(i, len)`: `i`, or the index-out-of-bounds fault when `i >= len`
    /// (the bounds check of a view into a slice, as `#[guvectorize]` makes).
    CheckIndex,
    /// `gpu::copy_async_commit()`: the thread's asynchronous copies since the last commit
    /// form a group (`cp.async.commit_group`).
    CopyAsyncCommit,
    /// `gpu::copy_async_wait(n)`: waits until at most `n` of the thread's committed groups
    /// are still copying (`cp.async.wait_group n`, `n` a literal).
    CopyAsyncWait(u32),
    /// `gpu::copy_async_wait_all()`: waits for every copy, committed or not.
    CopyAsyncWaitAll,
}

/// Which lanes `gpu::lanemask_*()` names, relative to the thread's own lane.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum LaneMask {
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
}

impl LaneMask {
    pub const ALL: [(&'static str, LaneMask); 5] = [
        ("lanemask_lt", LaneMask::Lt),
        ("lanemask_le", LaneMask::Le),
        ("lanemask_eq", LaneMask::Eq),
        ("lanemask_ge", LaneMask::Ge),
        ("lanemask_gt", LaneMask::Gt),
    ];

    /// The PTX special register's name (`lanemask_lt`).
    pub fn register(self) -> &'static str {
        match self {
            LaneMask::Lt => "lt",
            LaneMask::Le => "le",
            LaneMask::Eq => "eq",
            LaneMask::Ge => "ge",
            LaneMask::Gt => "gt",
        }
    }
}

impl Function {
    pub fn local(&self, id: LocalId) -> &Local {
        &self.locals[id.0 as usize]
    }

    /// Whether some operation in the body can fail at run time (integer division or
    /// remainder by zero or with overflow), so the kernel needs an error flag.
    pub fn may_fail(&self) -> bool {
        self.may_fail_with(IntOverflow::Wrap)
    }

    /// [`Function::may_fail`], with integer overflow `overflow`.
    pub fn may_fail_with(&self, overflow: IntOverflow) -> bool {
        (overflow == IntOverflow::Panic && self.checks_overflow()) || self.fails_anyway()
    }

    /// Whether some integer operation is checked under [`IntOverflow::Panic`].
    pub fn checks_overflow(&self) -> bool {
        let mut found = false;
        visit_block(&self.body, &mut |e| {
            found |= match &e.kind {
                ExprKind::Binary(op, lhs, rhs) => op_overflows(*op, lhs.ty, rhs),
                ExprKind::CompoundAssign(op, id, rhs) => op_overflows(*op, self.local(*id).ty, rhs),
                ExprKind::AssignIndex { op: Some(op), elem, value, .. } => {
                    op_overflows(*op, Type::Scalar(*elem), value)
                }
                ExprKind::AssignMember { op: Some(op), leaf, value, .. } => {
                    op_overflows(*op, Type::Scalar(*leaf), value)
                }
                ExprKind::Unary(UnaryOp::Neg, a) => a.ty.scalar().is_some_and(ScalarType::is_signed_int),
                ExprKind::Call(i, args) => args.first().and_then(|a| a.ty.scalar()).is_some_and(|t| i.overflows(t)),
                _ => false,
            };
        });
        found
    }

    /// Operations that fail whatever the overflow semantics.
    fn fails_anyway(&self) -> bool {
        let mut found = false;
        visit_block(&self.body, &mut |e| {
            found |= match &e.kind {
                ExprKind::Binary(op, _, rhs) | ExprKind::CompoundAssign(op, _, rhs) => {
                    matches!(op, BinaryOp::Div | BinaryOp::Rem) && e_is_int(rhs) && !is_safe_divisor(rhs)
                }
                ExprKind::Call(i, args) => args.first().and_then(|a| a.ty.scalar()).is_some_and(|t| i.may_fail(t)),
                // `step_by(0)` panics in Rust.
                ExprKind::For { range, .. } => range.step.as_deref().is_some_and(step_may_be_zero),
                ExprKind::Gpu(GpuOp::CheckIndex, _) => true,
                ExprKind::Member { path, .. } => path.iter().any(|s| matches!(s, Step::Elem { .. })),
                ExprKind::AssignMember { path, leaf, op, value, .. } => {
                    let divides = matches!(op, Some(BinaryOp::Div | BinaryOp::Rem)) && leaf.is_int();
                    path.iter().any(|s| matches!(s, Step::Elem { .. })) || (divides && !is_safe_divisor(value))
                }
                _ => false,
            };
        });
        found
    }
}

fn e_is_int(e: &Expr) -> bool {
    e.ty.scalar().is_some_and(ScalarType::is_int)
}

/// A literal divisor other than 0 and -1 can neither divide by zero nor overflow.
pub fn is_safe_divisor(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Lit(Literal::Int(v)) if v != 0 && v != -1)
}

/// How integer `+ - *`, unary `-`, `abs`, `pow` and shifts treat overflow: as rustc does
/// with overflow checks off (wrap, a release build) or on (panic, `debug_assertions`).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum IntOverflow {
    #[default]
    Wrap,
    Panic,
}

/// Whether `lhs op rhs` (`lhs` of type `lt`) is checked for overflow under
/// [`IntOverflow::Panic`]: integer `+ - *`, and shifts unless by a literal below the width.
/// The lowering asks the same.
pub fn op_overflows(op: BinaryOp, lt: Type, rhs: &Expr) -> bool {
    let Some(t) = lt.scalar().filter(|t| t.is_int()) else { return false };
    match op {
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => true,
        BinaryOp::Shl | BinaryOp::Shr => shift_may_overflow(rhs, t),
        _ => false,
    }
}

/// Whether a shift of a `t` by `amount` can be by the bit width or more (a literal amount
/// below the width cannot).
pub fn shift_may_overflow(amount: &Expr, t: ScalarType) -> bool {
    !matches!(amount.kind, ExprKind::Lit(Literal::Int(v)) if (0..t.bits() as i128).contains(&v))
}

/// Whether a `step_by` step can be zero at run time (a nonzero literal cannot). The
/// fallibility analysis above and the lowering's check both ask this, so they agree.
pub fn step_may_be_zero(step: &Expr) -> bool {
    !matches!(step.kind, ExprKind::Lit(Literal::Int(v)) if v != 0)
}

/// Calls `f` on every expression of the block, parents before children.
pub fn visit_block(b: &Block, f: &mut dyn FnMut(&Expr)) {
    for s in &b.stmts {
        match s {
            Stmt::Let { init, .. } => {
                if let Some(e) = init {
                    visit_expr(e, f)
                }
            }
            Stmt::LetTuple { init: e, .. } | Stmt::Expr(e) => visit_expr(e, f),
        }
    }
    if let Some(t) = &b.tail {
        visit_expr(t, f);
    }
}

pub fn visit_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Lit(_)
        | ExprKind::Local(_)
        | ExprKind::Continue { .. }
        | ExprKind::Unreachable
        | ExprKind::SharedArray
        | ExprKind::ArrayLen(_) => {}
        ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::Assign(_, a) | ExprKind::ArrayRepeat(a, _) => {
            visit_expr(a, f)
        }
        ExprKind::Index { index, .. } => index.iter().for_each(|a| visit_expr(a, f)),
        ExprKind::AssignIndex { index, value, .. } => {
            index.iter().for_each(|a| visit_expr(a, f));
            visit_expr(value, f);
        }
        ExprKind::Atomic { index, args, .. } => index.iter().chain(args).for_each(|a| visit_expr(a, f)),
        ExprKind::LoadVector { index, .. } => visit_expr(index, f),
        ExprKind::CopyAsync { dst_index, src_index, .. } => {
            visit_expr(dst_index, f);
            visit_expr(src_index, f);
        }
        ExprKind::StoreVector { index, values, .. } => {
            visit_expr(index, f);
            values.iter().for_each(|a| visit_expr(a, f));
        }
        ExprKind::ArrayList(args)
        | ExprKind::Gpu(_, args)
        | ExprKind::Mma(_, args)
        | ExprKind::ArrayView { bounds: args, .. } => args.iter().for_each(|a| visit_expr(a, f)),
        ExprKind::CompoundAssign(_, _, a) => visit_expr(a, f),
        ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => {
            visit_expr(a, f);
            visit_expr(b, f);
        }
        ExprKind::Block(b) | ExprKind::Loop { body: b, .. } => visit_block(b, f),
        ExprKind::If { cond, then, els } => {
            visit_expr(cond, f);
            visit_block(then, f);
            if let Some(e) = els {
                visit_expr(e, f);
            }
        }
        ExprKind::While { cond, body, .. } => {
            visit_expr(cond, f);
            visit_block(body, f);
        }
        ExprKind::For { range, body, .. } => {
            visit_expr(&range.start, f);
            visit_expr(&range.end, f);
            if let Some(s) = &range.step {
                visit_expr(s, f);
            }
            visit_block(body, f);
        }
        ExprKind::Break { value, .. } | ExprKind::Return(value) => {
            if let Some(v) = value {
                visit_expr(v, f);
            }
        }
        ExprKind::Call(_, args) | ExprKind::CallFn(_, args) | ExprKind::Tuple(args) => {
            for a in args {
                visit_expr(a, f);
            }
        }
        ExprKind::Field(a, _) => visit_expr(a, f),
        ExprKind::Member { base, path } => {
            visit_expr(base, f);
            visit_steps(path, f);
        }
        ExprKind::AssignMember { place, path, value, .. } => {
            visit_expr(value, f);
            visit_expr(place, f);
            visit_steps(path, f);
        }
        ExprKind::StructLit(fields) => fields.iter().for_each(|a| visit_expr(a, f)),
    }
}

fn visit_steps(path: &[Step], f: &mut dyn FnMut(&Expr)) {
    for step in path {
        if let Step::Elem { index, .. } = step {
            visit_expr(index, f);
        }
    }
}
