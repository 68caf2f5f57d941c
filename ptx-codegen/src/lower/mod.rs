//! Kernel IR → LLVM IR.
//!
//! Two pieces per vectorized function: the scalar function itself (internal linkage, so it
//! is inlined and then dropped), and the kernel entry that runs it over `n` elements with a
//! grid-stride loop (see [`crate::abi`] for the entry's parameters).
//!
//! Locals, `if` values and loop results live in `alloca` slots; `mem2reg`/SROA turn them
//! into SSA values, which keeps this lowering free of phi bookkeeping.
//!
//! [`FnLower`] lowers a function's body; its `impl` continues by subject in [`arith`],
//! [`control`], [`intrinsic`] (built-in methods), [`arrays`] and [`kernel`] (the kernel
//! language). The entries that run a function are [`entry`] (elementwise), [`reduce`] and
//! [`explicit_entry`]; [`types`] and [`nvvm`] are what they all share.

mod arith;
mod arrays;
mod control;
mod entry;
mod explicit_entry;
mod intrinsic;
mod kernel;
mod mma;
mod nvvm;
mod reduce;
mod structs;
mod types;

use std::collections::HashMap;

pub use entry::{EntryKind, Weight, lower_kernel_entry};
pub use explicit_entry::{lower_explicit_entry, mark_convergent};
pub use reduce::lower_reduce_entry;
pub use types::{int_type, llvm_type, memory_type, ret_type};

use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicType, BasicTypeEnum, IntType};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FunctionValue, PointerValue, ValueKind};
use inkwell::{AddressSpace, IntPredicate};
use proc_macro2::Span;

use crate::ir::{self, Block, Expr, ExprKind, FnId, Function, Literal, LocalId, LoopId, Program, Stmt, Type};
use crate::ty::ScalarType;
use arrays::ArrayPlace;
use control::LoopTargets;
use types::tuple_type;

/// An error of the lowering: a bug in the compiler or a limit of LLVM, never a problem in the
/// user's function (the frontend reports those).
#[derive(Debug)]
pub struct LowerError {
    pub message: String,
    pub span: Span,
}

impl From<BuilderError> for LowerError {
    fn from(e: BuilderError) -> Self {
        LowerError { message: format!("LLVM builder error: {e}"), span: Span::call_site() }
    }
}

pub(crate) type LResult<T> = Result<T, LowerError>;

pub(crate) fn internal(msg: impl Into<String>, span: Span) -> LowerError {
    LowerError { message: msg.into(), span }
}

/// How a program's functions are lowered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Lowering {
    /// Every function takes a pointer to the fault code as its last parameter (the program
    /// can fail where Rust would panic).
    pub fault_code: bool,
    /// The fault pointer is an explicit kernel's per-thread record (code, index, length; see
    /// `explicit_entry.rs`), which can carry the values a panic message names.
    pub fault_record: bool,
    /// The user's `fastmath`: float operations may be contracted and reassociated.
    pub fastmath: bool,
    /// What integer overflow does (a release build wraps, `debug_assertions` panics).
    pub overflow: ir::IntOverflow,
    /// Rounds to `bf16` through calls of [`ROUND_BF16_F32`] and [`ROUND_BF16_F64`] (which the
    /// caller defines) instead of `fptrunc`: for the host copy only (`host.rs`). LLVM 19's
    /// x86-64 back end takes the sign bit of a value rounded to `bfloat` for zero (it
    /// compiles `and (bitcast (fptrunc x to bfloat)), 0x8000` to `0`, and `bf16`
    /// arithmetic, which its optimiser makes of a widened operation rounded back, the
    /// same way), so a `copysign` or `is_sign_negative` of such a value came out wrong on
    /// the host. An opaque call keeps both out of the host's code; the GPU's lowering, whose
    /// back end gets the sign right, keeps `fptrunc`.
    pub bf16_round_calls: bool,
}

/// The host copy's `bf16` rounding of an `f32`: `i16 (float)`, the bits `half::bf16::from_f32`
/// gives (see [`Lowering::bf16_round_calls`]).
pub const ROUND_BF16_F32: &str = "__gpu_vectorize_round_bf16_f32";
/// The same from an `f64`: `i16 (double)`, `half::bf16::from_f64`'s bits.
pub const ROUND_BF16_F64: &str = "__gpu_vectorize_round_bf16_f64";

/// Adds the program's functions to `module`, each with `internal` linkage, and returns them
/// (the vectorized function first). With `how.fault_code` every function's last
/// parameter points to an `i32` fault code, which stays 0 unless an operation fails where
/// Rust would panic: then the function stores the [`Fault`] code and returns at once, and
/// so does every caller up the chain.
pub fn lower_program<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    program: &Program,
    symbol: &str,
    how: Lowering,
) -> LResult<Vec<FunctionValue<'ctx>>> {
    let functions: Vec<FunctionValue<'ctx>> = program
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut params: Vec<inkwell::types::BasicMetadataTypeEnum> = Vec::new();
            for p in &f.params {
                match p.slice {
                    // A slice: its device pointer and its length.
                    Some(_) => params.extend::<[inkwell::types::BasicMetadataTypeEnum; 2]>([
                        cx.ptr_type(AddressSpace::from(nvvm::GLOBAL)).into(),
                        cx.i64_type().into(),
                    ]),
                    None => params.push(llvm_type(cx, p.ty).into()),
                }
            }
            if how.fault_code {
                params.push(cx.ptr_type(AddressSpace::default()).into());
            }
            let fn_ty = ret_type(cx, &f.ret).fn_type(&params, false);
            let name = if i == 0 { symbol.to_string() } else { format!("{symbol}.{}.{i}", f.name) };
            module.add_function(&name, fn_ty, Some(Linkage::Internal))
        })
        .collect();
    for (f, llfn) in program.functions.iter().zip(&functions) {
        lower_body(cx, module, f, *llfn, &functions, program, how)?;
    }
    if how.fastmath {
        fast_math(&functions);
    }
    Ok(functions)
}

fn lower_body<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    f: &Function,
    llfn: FunctionValue<'ctx>,
    functions: &[FunctionValue<'ctx>],
    program: &Program,
    how: Lowering,
) -> LResult<()> {
    let builder = cx.create_builder();
    let entry = cx.append_basic_block(llfn, "entry");
    builder.position_at_end(entry);
    let mut fl = FnLower {
        cx,
        module,
        builder,
        func: f,
        llfn,
        entry,
        functions,
        tuples: &program.tuples,
        array_info: &program.arrays,
        arrays: HashMap::new(),
        fastmath: how.fastmath,
        fault_record: how.fault_record,
        overflow: how.overflow,
        bf16_round_calls: how.bf16_round_calls,
        locals: vec![None; f.locals.len()],
        loops: HashMap::new(),
        copies: 1,
        ret_slot: None,
        ret_bb: None,
        err: if how.fault_code { llfn.get_last_param().map(|p| p.into_pointer_value()) } else { None },
        whole_warp_in: None,
    };
    let mut i = 0;
    for p in &f.params {
        let v = llfn.get_nth_param(i).ok_or_else(|| internal("missing parameter", f.span))?;
        if p.slice.is_some() {
            let Type::Array(a) = f.local(p.local).ty else { return Err(internal("a slice without an array", f.span)) };
            let len = llfn.get_nth_param(i + 1).ok_or_else(|| internal("missing parameter", f.span))?;
            let place = ArrayPlace { ptr: v.into_pointer_value(), len: len.into_int_value() };
            fl.arrays.insert(a, place);
            i += 2;
            continue;
        }
        let slot = fl.slot(p.local)?;
        fl.builder.build_store(slot, v)?;
        i += 1;
    }
    let ret_ty = ret_type(cx, &f.ret);
    let ret_slot = fl.alloca(ret_ty, "ret")?;
    let ret_bb = cx.append_basic_block(llfn, "return");
    fl.ret_slot = Some(ret_slot);
    fl.ret_bb = Some(ret_bb);

    let v = fl.block(&f.body)?;
    if let Some(v) = v {
        fl.builder.build_store(ret_slot, v)?;
    }
    fl.builder.build_unconditional_branch(ret_bb)?;
    fl.builder.position_at_end(ret_bb);
    let r = fl.builder.build_load(ret_ty, ret_slot, "r")?;
    fl.builder.build_return(Some(&r))?;
    fl.seal_open_blocks()?;
    Ok(())
}

/// `fastmath`: every float operation may be contracted (`a * b + c` into one `fma`),
/// approximated and use reciprocals. NaN and infinity keep their meaning. (f32 subnormals
/// flush to zero too: a property of the whole module, which [`crate::emit`] gives every
/// function alike.)
fn fast_math(functions: &[FunctionValue<'_>]) {
    use inkwell::values::FastMathFlags;
    let flags = FastMathFlags::AllowContract | FastMathFlags::ApproxFunc | FastMathFlags::AllowReciprocal;
    for f in functions {
        for bb in f.get_basic_blocks() {
            let mut inst = bb.get_first_instruction();
            while let Some(i) = inst {
                if i.can_use_fast_math_flags() {
                    let _ = i.set_fast_math_flags(flags);
                }
                inst = i.get_next_instruction();
            }
        }
    }
}

struct FnLower<'a, 'ctx> {
    cx: &'ctx Context,
    module: &'a Module<'ctx>,
    builder: Builder<'ctx>,
    func: &'a Function,
    llfn: FunctionValue<'ctx>,
    entry: BasicBlock<'ctx>,
    /// Every function of the program, by [`FnId`].
    functions: &'a [FunctionValue<'ctx>],
    /// The program's tuple types ([`Type::Tuple`]).
    tuples: &'a [Vec<ScalarType>],
    /// The program's arrays ([`Type::Array`]).
    array_info: &'a [ir::ArrayInfo],
    /// Where this function's arrays are (those it has reached the `let` of, and its slices).
    arrays: HashMap<u32, ArrayPlace<'ctx>>,
    fastmath: bool,
    /// See [`Lowering::fault_record`].
    fault_record: bool,
    overflow: ir::IntOverflow,
    /// See [`Lowering::bf16_round_calls`].
    bf16_round_calls: bool,
    locals: Vec<Option<PointerValue<'ctx>>>,
    loops: HashMap<LoopId, LoopTargets<'ctx>>,
    /// How many copies of the code being lowered the enclosing unrolled loops make
    /// ([`control::UNROLL_BUDGET`] bounds it).
    copies: u64,
    ret_slot: Option<PointerValue<'ctx>>,
    ret_bb: Option<BasicBlock<'ctx>>,
    err: Option<PointerValue<'ctx>>,
    /// The block that `gpu::mma`'s check that the whole warp is here last passed in: a later
    /// call in the same block, with no branch between, needs no check of its own.
    whole_warp_in: Option<BasicBlock<'ctx>>,
}

/// A lowered expression: `None` for `()` and for code after a diverging expression.
type Value<'ctx> = Option<BasicValueEnum<'ctx>>;

impl<'a, 'ctx> FnLower<'a, 'ctx> {
    /// An `alloca` in the entry block (where `mem2reg` looks for them).
    fn alloca(&self, ty: BasicTypeEnum<'ctx>, name: &str) -> LResult<PointerValue<'ctx>> {
        let b = self.cx.create_builder();
        match self.entry.get_first_instruction() {
            Some(i) => b.position_before(&i),
            None => b.position_at_end(self.entry),
        }
        Ok(b.build_alloca(ty, name)?)
    }

    fn slot(&mut self, id: LocalId) -> LResult<PointerValue<'ctx>> {
        if let Some(p) = self.locals[id.0 as usize] {
            return Ok(p);
        }
        let local = self.func.local(id);
        let Some(t) = self.value_type(local.ty) else {
            return Err(internal(format!("local `{}` has no value type", local.name), self.func.span));
        };
        let p = self.alloca(t, &local.name)?;
        self.locals[id.0 as usize] = Some(p);
        Ok(p)
    }

    /// The LLVM type of a value of type `t` (`None` for `()` and `!`).
    fn value_type(&self, t: Type) -> Option<BasicTypeEnum<'ctx>> {
        match t {
            Type::Scalar(s) => Some(llvm_type(self.cx, s)),
            Type::Tuple(i) => Some(tuple_type(self.cx, &self.tuples[i as usize])),
            Type::Dim3 => {
                let i32t = self.cx.i32_type().into();
                Some(self.cx.struct_type(&[i32t, i32t, i32t], false).into())
            }
            Type::Fragment(f) => Some(mma::fragment_type(self.cx, f)),
            _ => None,
        }
    }

    fn scalar_of(&self, e: &Expr) -> LResult<ScalarType> {
        e.ty.scalar().ok_or_else(|| internal(format!("expected a scalar, found {:?}", e.ty), e.span))
    }

    /// After `br`/`ret`, later code of the same block is unreachable: give it a block.
    fn start_dead_block(&self) {
        let bb = self.cx.append_basic_block(self.llfn, "dead");
        self.builder.position_at_end(bb);
    }

    /// Ends every block left without a terminator (only unreachable ones) with `unreachable`.
    fn seal_open_blocks(&self) -> LResult<()> {
        for bb in self.llfn.get_basic_blocks() {
            if bb.get_terminator().is_none() {
                self.builder.position_at_end(bb);
                self.builder.build_unreachable()?;
            }
        }
        Ok(())
    }

    fn block(&mut self, b: &Block) -> LResult<Value<'ctx>> {
        for s in &b.stmts {
            match s {
                Stmt::Let { local, init: Some(init) } if matches!(self.func.local(*local).ty, Type::Array(_)) => {
                    self.array_let(*local, init)?;
                }
                Stmt::Let { local, init } => {
                    let slot = self.slot(*local)?;
                    if let Some(e) = init {
                        if let Some(v) = self.expr(e)? {
                            self.builder.build_store(slot, v)?;
                        }
                    }
                }
                Stmt::LetTuple { locals, init } => {
                    if let Some(v) = self.expr(init)? {
                        for (i, local) in locals.iter().enumerate() {
                            if let Some(l) = local {
                                let slot = self.slot(*l)?;
                                let x = self.builder.build_extract_value(v.into_struct_value(), i as u32, "element")?;
                                self.builder.build_store(slot, x)?;
                            }
                        }
                    }
                }
                Stmt::Expr(e) => {
                    self.expr(e)?;
                }
            }
        }
        match &b.tail {
            Some(t) => self.expr(t),
            None => Ok(None),
        }
    }

    fn expr(&mut self, e: &Expr) -> LResult<Value<'ctx>> {
        match &e.kind {
            ExprKind::Lit(l) => Ok(Some(self.literal(*l, self.scalar_of(e)?))),
            ExprKind::Local(id) => {
                let slot = self.slot(*id)?;
                let t = self.value_type(e.ty).ok_or_else(|| internal("a local without a value type", e.span))?;
                Ok(Some(self.builder.build_load(t, slot, &self.func.local(*id).name)?))
            }
            ExprKind::Tuple(elems) => {
                let t =
                    self.value_type(e.ty).ok_or_else(|| internal("a tuple without a type", e.span))?.into_struct_type();
                let mut agg = t.get_undef();
                for (i, el) in elems.iter().enumerate() {
                    let Some(v) = self.expr(el)? else { return Ok(None) };
                    agg = self.builder.build_insert_value(agg, v, i as u32, "tuple")?.into_struct_value();
                }
                Ok(Some(agg.into()))
            }
            ExprKind::Field(base, i) => {
                let Some(v) = self.expr(base)? else { return Ok(None) };
                Ok(Some(self.builder.build_extract_value(v.into_struct_value(), *i as u32, "field")?))
            }
            ExprKind::Unary(op, a) => {
                let Some(v) = self.expr(a)? else { return Ok(None) };
                let t = self.scalar_of(a)?;
                Ok(Some(self.unary(*op, v, t)?))
            }
            ExprKind::Binary(op, a, b) => {
                let Some(l) = self.expr(a)? else { return Ok(None) };
                let Some(r) = self.expr(b)? else { return Ok(None) };
                let (lt, rt) = (self.scalar_of(a)?, self.scalar_of(b)?);
                Ok(Some(self.binary(*op, l, lt, r, rt, b)?))
            }
            ExprKind::Logical(op, a, b) => self.logical(*op, a, b),
            ExprKind::Cast(a) => {
                let Some(v) = self.expr(a)? else { return Ok(None) };
                Ok(Some(self.cast(v, self.scalar_of(a)?, self.scalar_of(e)?)?))
            }
            ExprKind::Assign(id, v) => {
                if let Some(v) = self.expr(v)? {
                    let slot = self.slot(*id)?;
                    self.builder.build_store(slot, v)?;
                }
                Ok(None)
            }
            ExprKind::CompoundAssign(op, id, v) => {
                let Some(r) = self.expr(v)? else { return Ok(None) };
                let slot = self.slot(*id)?;
                let lt = self.func.local(*id).ty.scalar().ok_or_else(|| internal("untyped local", e.span))?;
                let cur = self.builder.build_load(llvm_type(self.cx, lt), slot, "cur")?;
                let nv = self.binary(*op, cur, lt, r, self.scalar_of(v)?, v)?;
                self.builder.build_store(slot, nv)?;
                Ok(None)
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::If { cond, then, els } => self.if_expr(e, cond, then, els.as_deref()),
            ExprKind::While { id, cond, body } => self.while_loop(*id, cond, body),
            ExprKind::Loop { id, body } => self.loop_expr(e, *id, body),
            ExprKind::For { id, range, body } => self.for_loop(*id, range, body),
            ExprKind::Break { target, value } => self.break_expr(*target, value.as_deref(), e.span),
            ExprKind::Continue { target } => self.continue_expr(*target, e.span),
            ExprKind::Return(v) => self.return_expr(v.as_deref()),
            ExprKind::Call(i, args) => self.intrinsic(*i, args),
            ExprKind::CallFn(id, args) => self.call_fn(*id, args),
            ExprKind::Unreachable => {
                self.builder.build_unreachable()?;
                self.start_dead_block();
                Ok(None)
            }
            ExprKind::ArrayList(_)
            | ExprKind::ArrayRepeat(..)
            | ExprKind::SharedArray
            | ExprKind::ArrayView { .. }
            | ExprKind::Index { .. }
            | ExprKind::ArrayLen(_)
            | ExprKind::AssignIndex { .. }
            | ExprKind::Atomic { .. }
            | ExprKind::LoadVector { .. }
            | ExprKind::StoreVector { .. }
            | ExprKind::Gpu(..)
            | ExprKind::Mma(..)
            | ExprKind::CopyAsync { .. } => self.kernel_expr(e),
            ExprKind::Member { .. } | ExprKind::AssignMember { .. } | ExprKind::StructLit(_) => self.struct_expr(e),
        }
    }

    fn literal(&self, l: Literal, t: ScalarType) -> BasicValueEnum<'ctx> {
        match (l, t) {
            (Literal::Bool(b), _) => self.cx.bool_type().const_int(b as u64, false).into(),
            (Literal::Int(v), t) if t.is_int() => self.int_type(t).const_int(v as i64 as u64, false).into(),
            (Literal::Float { as_f32, .. }, ScalarType::F32) => self.cx.f32_type().const_float(as_f32 as f64).into(),
            (Literal::Float { as_f64, .. }, ScalarType::F64) => self.cx.f64_type().const_float(as_f64).into(),
            // The half types' constants (`f16::PI`), exactly representable: their bits.
            (Literal::Float { as_f32, .. }, t) if t.is_half() => {
                let bits = if t == ScalarType::F16 {
                    half::f16::from_f32(as_f32).to_bits()
                } else {
                    half::bf16::from_f32(as_f32).to_bits()
                };
                self.cx.i16_type().const_int(bits as u64, false).into()
            }
            // The frontend gives float literals float types and integer literals integer types.
            (Literal::Int(v), ScalarType::F32) => self.cx.f32_type().const_float(v as f32 as f64).into(),
            (Literal::Int(v), _) => self.cx.f64_type().const_float(v as f64).into(),
            (Literal::Float { as_f64, .. }, _) => self.int_type(t).const_int(as_f64 as i64 as u64, false).into(),
        }
    }

    fn int_type(&self, t: ScalarType) -> IntType<'ctx> {
        int_type(self.cx, t)
    }

    /// A call of a helper function. A fault inside it returns from this function too.
    fn call_fn(&mut self, id: FnId, args: &[Expr]) -> LResult<Value<'ctx>> {
        let mut vals: Vec<BasicMetadataValueEnum<'ctx>> = Vec::with_capacity(args.len() + 1);
        for a in args {
            match self.expr(a)? {
                Some(v) => vals.push(v.into()),
                None => return Ok(None),
            }
        }
        let callee = *self
            .functions
            .get(id.0 as usize)
            .ok_or_else(|| internal("call of an unknown function", self.func.span))?;
        if let Some(err) = self.err {
            vals.push(err.into());
        }
        let call = self.builder.build_call(callee, &vals, "call")?;
        // The callee's branches may leave lanes apart: `gpu::mma`'s next call checks again.
        self.whole_warp_in = None;
        let v = basic_value(call.try_as_basic_value(), self.func.span)?;
        if let Some(err) = self.err {
            let code = self.builder.build_load(self.cx.i32_type(), err, "code")?.into_int_value();
            let failed =
                self.builder.build_int_compare(IntPredicate::NE, code, self.cx.i32_type().const_zero(), "failed")?;
            self.return_if(failed)?;
        }
        Ok(Some(v))
    }
}

pub fn basic_value(v: ValueKind<'_>, span: Span) -> LResult<BasicValueEnum<'_>> {
    match v {
        ValueKind::Basic(b) => Ok(b),
        ValueKind::Instruction(_) => Err(internal("a call that should return a value returned void", span)),
    }
}
