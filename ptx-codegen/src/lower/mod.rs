//! Kernel IR → LLVM IR.
//!
//! Two pieces per vectorized function: the scalar function itself (internal linkage, so it
//! is inlined and then dropped), and the kernel entry that runs it over `n` elements with a
//! grid-stride loop (see [`crate::abi`] for the entry's parameters).
//!
//! Locals, `if` values and loop results live in `alloca` slots; `mem2reg`/SROA turn them
//! into SSA values, which keeps this lowering free of phi bookkeeping.

mod entry;
mod intrinsic;
mod kernel;
mod reduce;

use std::collections::HashMap;

pub use entry::{EntryKind, Weight, lower_kernel_entry};
pub use kernel::{lower_explicit_entry, mark_convergent};
pub use reduce::lower_reduce_entry;

use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic as LlvmIntrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicType, BasicTypeEnum, IntType};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FunctionValue, IntValue, PointerValue, ValueKind};
use inkwell::{AddressSpace, FloatPredicate, IntPredicate};
use proc_macro2::Span;

use crate::abi::Fault;
use crate::ir::{
    self, BinaryOp, Block, Expr, ExprKind, FnId, ForRange, Function, Literal, LocalId, LogicalOp, LoopId, Program,
    RetType, Stmt, Type, UnaryOp,
};
use crate::ty::ScalarType;

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

/// The LLVM type of a scalar as a value (`bool` is `i1`).
pub fn llvm_type<'ctx>(cx: &'ctx Context, t: ScalarType) -> BasicTypeEnum<'ctx> {
    match t {
        ScalarType::Bool => cx.bool_type().into(),
        ScalarType::F32 => cx.f32_type().into(),
        ScalarType::F64 => cx.f64_type().into(),
        _ => int_type(cx, t).into(),
    }
}

/// The LLVM integer type of an integer (or `bool`) scalar.
pub fn int_type(cx: &Context, t: ScalarType) -> IntType<'_> {
    match t.bits() {
        1 => cx.bool_type(),
        8 => cx.i8_type(),
        16 => cx.i16_type(),
        32 => cx.i32_type(),
        _ => cx.i64_type(),
    }
}

/// The LLVM type of a function's result: a scalar, or a struct of the tuple's scalars.
pub fn ret_type<'ctx>(cx: &'ctx Context, r: &RetType) -> BasicTypeEnum<'ctx> {
    match r {
        RetType::Scalar(t) => llvm_type(cx, *t),
        RetType::Tuple(ts) => tuple_type(cx, ts),
    }
}

fn tuple_type<'ctx>(cx: &'ctx Context, ts: &[ScalarType]) -> BasicTypeEnum<'ctx> {
    let fields: Vec<BasicTypeEnum<'ctx>> = ts.iter().map(|t| llvm_type(cx, *t)).collect();
    cx.struct_type(&fields, false).into()
}

/// The LLVM type of a scalar in memory and in kernel parameters (`bool` is one byte).
pub fn memory_type<'ctx>(cx: &'ctx Context, t: ScalarType) -> BasicTypeEnum<'ctx> {
    match t {
        ScalarType::Bool => cx.i8_type().into(),
        _ => llvm_type(cx, t),
    }
}

/// How a program's functions are lowered.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Lowering {
    /// Every function takes a pointer to the fault code as its last parameter (the program
    /// can fail where Rust would panic).
    pub fault_code: bool,
    /// The user's `fastmath`: float operations may be contracted and reassociated.
    pub fastmath: bool,
    /// What integer overflow does (a release build wraps, `debug_assertions` panics).
    pub overflow: ir::IntOverflow,
}

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
                        cx.ptr_type(AddressSpace::from(kernel::GLOBAL)).into(),
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
        overflow: how.overflow,
        locals: vec![None; f.locals.len()],
        loops: HashMap::new(),
        copies: 1,
        ret_slot: None,
        ret_bb: None,
        err: if how.fault_code { llfn.get_last_param().map(|p| p.into_pointer_value()) } else { None },
    };
    let mut i = 0;
    for p in &f.params {
        let v = llfn.get_nth_param(i).ok_or_else(|| internal("missing parameter", f.span))?;
        if p.slice.is_some() {
            let Type::Array(a) = f.local(p.local).ty else { return Err(internal("a slice without an array", f.span)) };
            let len = llfn.get_nth_param(i + 1).ok_or_else(|| internal("missing parameter", f.span))?;
            let place = kernel::ArrayPlace { ptr: v.into_pointer_value(), len: len.into_int_value() };
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

/// What `MIN / -1` does: panic (`/`, `%`, `div_euclid`), wrap (`wrapping_div`) or
/// saturate (`saturating_div`).
#[derive(Copy, Clone, PartialEq, Eq)]
enum Overflow {
    Fault,
    Wrap,
}

struct DivGuard<'ctx> {
    /// The divisor, or 1 where dividing would be undefined.
    divisor: IntValue<'ctx>,
    /// Whether this is `MIN / -1`.
    overflow: IntValue<'ctx>,
}

struct LoopTargets<'ctx> {
    break_bb: BasicBlock<'ctx>,
    continue_bb: BasicBlock<'ctx>,
    result: Option<PointerValue<'ctx>>,
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
    arrays: HashMap<u32, kernel::ArrayPlace<'ctx>>,
    fastmath: bool,
    overflow: ir::IntOverflow,
    locals: Vec<Option<PointerValue<'ctx>>>,
    loops: HashMap<LoopId, LoopTargets<'ctx>>,
    /// How many copies of the code being lowered the enclosing unrolled loops make
    /// ([`UNROLL_BUDGET`] bounds it).
    copies: u64,
    ret_slot: Option<PointerValue<'ctx>>,
    ret_bb: Option<BasicBlock<'ctx>>,
    err: Option<PointerValue<'ctx>>,
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
            ExprKind::Break { target, value } => {
                let (break_bb, result) = {
                    let t = self.loops.get(target).ok_or_else(|| internal("break outside its loop", e.span))?;
                    (t.break_bb, t.result)
                };
                if let Some(v) = value {
                    let Some(v) = self.expr(v)? else { return Ok(None) };
                    if let Some(slot) = result {
                        self.builder.build_store(slot, v)?;
                    }
                }
                self.builder.build_unconditional_branch(break_bb)?;
                self.start_dead_block();
                Ok(None)
            }
            ExprKind::Continue { target } => {
                let bb =
                    self.loops.get(target).ok_or_else(|| internal("continue outside its loop", e.span))?.continue_bb;
                self.builder.build_unconditional_branch(bb)?;
                self.start_dead_block();
                Ok(None)
            }
            ExprKind::Return(v) => {
                if let Some(v) = v {
                    let Some(v) = self.expr(v)? else { return Ok(None) };
                    self.builder.build_store(self.ret_slot.expect("set before the body"), v)?;
                }
                self.builder.build_unconditional_branch(self.ret_bb.expect("set before the body"))?;
                self.start_dead_block();
                Ok(None)
            }
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
            | ExprKind::Gpu(..) => self.kernel_expr(e),
        }
    }

    fn literal(&self, l: Literal, t: ScalarType) -> BasicValueEnum<'ctx> {
        match (l, t) {
            (Literal::Bool(b), _) => self.cx.bool_type().const_int(b as u64, false).into(),
            (Literal::Int(v), t) if t.is_int() => self.int_type(t).const_int(v as i64 as u64, false).into(),
            (Literal::Float { as_f32, .. }, ScalarType::F32) => self.cx.f32_type().const_float(as_f32 as f64).into(),
            (Literal::Float { as_f64, .. }, ScalarType::F64) => self.cx.f64_type().const_float(as_f64).into(),
            // The frontend gives float literals float types and integer literals integer types.
            (Literal::Int(v), ScalarType::F32) => self.cx.f32_type().const_float(v as f32 as f64).into(),
            (Literal::Int(v), _) => self.cx.f64_type().const_float(v as f64).into(),
            (Literal::Float { as_f64, .. }, _) => self.int_type(t).const_int(as_f64 as i64 as u64, false).into(),
        }
    }

    fn int_type(&self, t: ScalarType) -> IntType<'ctx> {
        int_type(self.cx, t)
    }

    /// `-v`, wrapping (`-i32::MIN == i32::MIN`), as in release builds.
    fn int_neg(&self, v: IntValue<'ctx>) -> LResult<IntValue<'ctx>> {
        Ok(self.builder.build_int_neg(v, "neg")?)
    }

    fn unary(&mut self, op: UnaryOp, v: BasicValueEnum<'ctx>, t: ScalarType) -> LResult<BasicValueEnum<'ctx>> {
        if op == UnaryOp::Neg && t.is_signed_int() && self.overflow == ir::IntOverflow::Panic {
            // `-MIN` overflows: a build with overflow checks panics.
            let x = v.into_int_value();
            let min = self.int_min(t)?;
            let is_min = self.builder.build_int_compare(IntPredicate::EQ, x, min, "neg_min")?;
            self.raise(is_min, Fault::NegOverflow)?;
        }
        let b = &self.builder;
        Ok(match (op, t.is_float()) {
            (UnaryOp::Neg, true) => b.build_float_neg(v.into_float_value(), "neg")?.into(),
            // Wrapping negation, as in release builds (`-i32::MIN == i32::MIN`).
            (UnaryOp::Neg, false) => self.int_neg(v.into_int_value())?.into(),
            (UnaryOp::Not, _) => b.build_not(v.into_int_value(), "not")?.into(),
        })
    }

    fn binary(
        &mut self,
        op: BinaryOp,
        l: BasicValueEnum<'ctx>,
        lt: ScalarType,
        r: BasicValueEnum<'ctx>,
        rt: ScalarType,
        rhs: &Expr,
    ) -> LResult<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        if lt.is_float() {
            let (x, y) = (l.into_float_value(), r.into_float_value());
            let pred = |p| -> LResult<BasicValueEnum<'ctx>> { Ok(b.build_float_compare(p, x, y, "cmp")?.into()) };
            // No fast-math flags: IEEE results, bit for bit what the CPU computes.
            return match op {
                BinaryOp::Add => Ok(b.build_float_add(x, y, "add")?.into()),
                BinaryOp::Sub => Ok(b.build_float_sub(x, y, "sub")?.into()),
                BinaryOp::Mul => Ok(b.build_float_mul(x, y, "mul")?.into()),
                BinaryOp::Div => Ok(b.build_float_div(x, y, "div")?.into()),
                // LLVM expands `frem` for NVPTX as `x - trunc(x / y) * y`, which is not
                // Rust's exact remainder; libdevice's `fmod` is.
                BinaryOp::Rem => {
                    let name = if lt == ScalarType::F32 { "__nv_fmodf" } else { "__nv_fmod" };
                    self.call_libdevice(name, lt, &[x.into(), y.into()])
                }
                BinaryOp::Eq => pred(FloatPredicate::OEQ),
                // `!=` is true when either side is NaN.
                BinaryOp::Ne => pred(FloatPredicate::UNE),
                BinaryOp::Lt => pred(FloatPredicate::OLT),
                BinaryOp::Le => pred(FloatPredicate::OLE),
                BinaryOp::Gt => pred(FloatPredicate::OGT),
                BinaryOp::Ge => pred(FloatPredicate::OGE),
                _ => Err(internal(format!("`{}` on floats", op.symbol()), rhs.span)),
            };
        }
        let (x, y) = (l.into_int_value(), r.into_int_value());
        if self.overflow == ir::IntOverflow::Panic && ir::op_overflows(op, Type::Scalar(lt), rhs) {
            return self.checked_binary(op, x, lt, y, rt);
        }
        let b = &self.builder;
        let signed = lt.is_signed_int();
        let cmp = |p| -> LResult<BasicValueEnum<'ctx>> { Ok(b.build_int_compare(p, x, y, "cmp")?.into()) };
        let (lt_p, le_p, gt_p, ge_p) = if signed {
            (IntPredicate::SLT, IntPredicate::SLE, IntPredicate::SGT, IntPredicate::SGE)
        } else {
            (IntPredicate::ULT, IntPredicate::ULE, IntPredicate::UGT, IntPredicate::UGE)
        };
        match op {
            // Integer arithmetic wraps, as in release builds.
            BinaryOp::Add => Ok(b.build_int_add(x, y, "add")?.into()),
            BinaryOp::Sub => Ok(b.build_int_sub(x, y, "sub")?.into()),
            BinaryOp::Mul => Ok(b.build_int_mul(x, y, "mul")?.into()),
            BinaryOp::Div | BinaryOp::Rem => self.div_rem(op, x, y, lt, rhs),
            BinaryOp::BitAnd => Ok(b.build_and(x, y, "and")?.into()),
            BinaryOp::BitOr => Ok(b.build_or(x, y, "or")?.into()),
            BinaryOp::BitXor => Ok(b.build_xor(x, y, "xor")?.into()),
            BinaryOp::Shl | BinaryOp::Shr => Ok(self.shift(op == BinaryOp::Shl, x, lt, y, rt)?.into()),
            BinaryOp::Eq => cmp(IntPredicate::EQ),
            BinaryOp::Ne => cmp(IntPredicate::NE),
            BinaryOp::Lt => cmp(lt_p),
            BinaryOp::Le => cmp(le_p),
            BinaryOp::Gt => cmp(gt_p),
            BinaryOp::Ge => cmp(ge_p),
        }
    }

    /// `x << y` / `x >> y`: the amount is taken modulo the width, as `wrapping_shl` does
    /// (and as release builds do): reduced in its own type, then brought to `x`'s width.
    /// `x op y` with overflow checks (`+ - *` out of range, a shift by the width or more),
    /// raising the fault Rust's message names.
    fn checked_binary(
        &mut self,
        op: BinaryOp,
        x: IntValue<'ctx>,
        xt: ScalarType,
        y: IntValue<'ctx>,
        yt: ScalarType,
    ) -> LResult<BasicValueEnum<'ctx>> {
        let (verb, fault) = match op {
            BinaryOp::Add => ("add", Fault::AddOverflow),
            BinaryOp::Sub => ("sub", Fault::SubOverflow),
            BinaryOp::Mul => ("mul", Fault::MulOverflow),
            BinaryOp::Shl | BinaryOp::Shr => {
                // A negative amount of a signed type is, as unsigned, past the width too.
                let width = self.int_type(yt).const_int(xt.bits() as u64, false);
                let out = self.builder.build_int_compare(IntPredicate::UGE, y, width, "shift_out")?;
                let fault = if op == BinaryOp::Shl { Fault::ShlOverflow } else { Fault::ShrOverflow };
                self.raise(out, fault)?;
                return Ok(self.shift(op == BinaryOp::Shl, x, xt, y, yt)?.into());
            }
            _ => return Err(internal(format!("`{}` has no overflow check", op.symbol()), self.func.span)),
        };
        let sign = if xt.is_signed_int() { "s" } else { "u" };
        let both =
            self.llvm(&format!("llvm.{sign}{verb}.with.overflow"), &[x.get_type().into()], &[x.into(), y.into()])?;
        let both = both.into_struct_value();
        let value = self.builder.build_extract_value(both, 0, verb)?;
        let overflowed = self.builder.build_extract_value(both, 1, "overflow")?.into_int_value();
        self.raise(overflowed, fault)?;
        Ok(value)
    }

    /// The smallest value of the integer type `t`.
    fn int_min(&self, t: ScalarType) -> LResult<IntValue<'ctx>> {
        match t.int_range() {
            Some((lo, _)) => Ok(self.int_type(t).const_int(lo as i64 as u64, false)),
            None => Err(internal(format!("{t} is not an integer"), self.func.span)),
        }
    }

    /// Raises `fault` where `cond` holds (see [`FnLower::raise_if`]).
    fn raise(&mut self, cond: IntValue<'ctx>, fault: Fault) -> LResult<()> {
        let code = self.cx.i32_type().const_int(fault.code() as u64, false);
        self.raise_if(cond, code)
    }

    fn shift(
        &self,
        left: bool,
        x: IntValue<'ctx>,
        xt: ScalarType,
        y: IntValue<'ctx>,
        yt: ScalarType,
    ) -> LResult<IntValue<'ctx>> {
        let b = &self.builder;
        let mask = self.int_type(yt).const_int((xt.bits() - 1) as u64, false);
        let amount = b.build_and(y, mask, "amt")?;
        let amount = b.build_int_cast_sign_flag(amount, self.int_type(xt), false, "amt")?;
        Ok(if left {
            b.build_left_shift(x, amount, "shl")?
        } else {
            b.build_right_shift(x, amount, xt.is_signed_int(), "shr")?
        })
    }

    /// Calls `name` from libdevice (declared here, linked before optimisation).
    fn call_libdevice(
        &self,
        name: &str,
        ret: ScalarType,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> LResult<BasicValueEnum<'ctx>> {
        let f = match self.module.get_function(name) {
            Some(f) => f,
            None => {
                let params: Vec<_> = args
                    .iter()
                    .map(|a| match a {
                        BasicMetadataValueEnum::FloatValue(v) => v.get_type().into(),
                        BasicMetadataValueEnum::IntValue(v) => v.get_type().into(),
                        _ => self.cx.f64_type().into(),
                    })
                    .collect();
                let ty = llvm_type(self.cx, ret).fn_type(&params, false);
                self.module.add_function(name, ty, None)
            }
        };
        let call = self.builder.build_call(f, args, "libdevice")?;
        basic_value(call.try_as_basic_value(), self.func.span)
    }

    /// Integer `/` and `%`: Rust panics on a zero divisor and on `MIN / -1`; the kernel
    /// raises a fault instead (see [`DivGuard`]).
    fn div_rem(
        &mut self,
        op: BinaryOp,
        x: IntValue<'ctx>,
        y: IntValue<'ctx>,
        t: ScalarType,
        rhs: &Expr,
    ) -> LResult<BasicValueEnum<'ctx>> {
        let is_div = op == BinaryOp::Div;
        if ir::is_safe_divisor(rhs) {
            return Ok(self.raw_div_rem(is_div, x, y, t)?.into());
        }
        let guard = self.div_guard(is_div, x, y, t, Overflow::Fault)?;
        Ok(self.raw_div_rem(is_div, x, guard.divisor, t)?.into())
    }

    /// `sdiv`/`udiv`/`srem`/`urem` without checks: the divisor must be safe.
    fn raw_div_rem(
        &self,
        is_div: bool,
        x: IntValue<'ctx>,
        d: IntValue<'ctx>,
        t: ScalarType,
    ) -> LResult<IntValue<'ctx>> {
        let b = &self.builder;
        Ok(match (is_div, t.is_signed_int()) {
            (true, true) => b.build_int_signed_div(x, d, "div")?,
            (true, false) => b.build_int_unsigned_div(x, d, "div")?,
            (false, true) => b.build_int_signed_rem(x, d, "rem")?,
            (false, false) => b.build_int_unsigned_rem(x, d, "rem")?,
        })
    }

    /// Checks a division's divisor: raises the division (or remainder) fault on a zero
    /// divisor and, with [`Overflow::Fault`], on `MIN / -1`, and returns a divisor that is
    /// safe to divide by (1 in those cases, so nothing is undefined; `MIN / 1` is `MIN`,
    /// the wrapping result).
    fn div_guard(
        &mut self,
        is_div: bool,
        x: IntValue<'ctx>,
        y: IntValue<'ctx>,
        t: ScalarType,
        overflow: Overflow,
    ) -> LResult<DivGuard<'ctx>> {
        let b = &self.builder;
        let ty = self.int_type(t);
        let zero = b.build_int_compare(IntPredicate::EQ, y, ty.const_zero(), "by_zero")?;
        let mut ovf = self.cx.bool_type().const_zero();
        if t.is_signed_int() {
            let min = ty.const_int(1u64 << (t.bits() - 1), false);
            let is_min = b.build_int_compare(IntPredicate::EQ, x, min, "is_min")?;
            let minus_one = b.build_int_compare(IntPredicate::EQ, y, ty.const_all_ones(), "by_minus_one")?;
            ovf = b.build_and(is_min, minus_one, "overflow")?;
        }
        let bad = b.build_or(zero, ovf, "bad")?;
        let divisor = b.build_select(bad, ty.const_int(1, false), y, "divisor")?.into_int_value();
        let (zero_fault, ovf_fault) = if is_div {
            (Fault::DivideByZero, Fault::DivideOverflow)
        } else {
            (Fault::RemainderByZero, Fault::RemainderOverflow)
        };
        let i32t = self.cx.i32_type();
        let code = |f: Fault| i32t.const_int(f.code() as u64, false);
        if overflow == Overflow::Fault {
            let c = b.build_select(zero, code(zero_fault), code(ovf_fault), "fault")?.into_int_value();
            self.raise_if(bad, c)?;
        } else {
            self.raise_if(zero, code(zero_fault))?;
        }
        Ok(DivGuard { divisor, overflow: ovf })
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
        let v = basic_value(call.try_as_basic_value(), self.func.span)?;
        if let Some(err) = self.err {
            let code = self.builder.build_load(self.cx.i32_type(), err, "code")?.into_int_value();
            let failed =
                self.builder.build_int_compare(IntPredicate::NE, code, self.cx.i32_type().const_zero(), "failed")?;
            self.return_if(failed)?;
        }
        Ok(Some(v))
    }

    /// `if cond { return <zero> }` (the fault code is already stored), branch unlikely.
    fn return_if(&mut self, cond: IntValue<'ctx>) -> LResult<()> {
        let fail = self.cx.append_basic_block(self.llfn, "propagate");
        let cont = self.cx.append_basic_block(self.llfn, "ok");
        let cond = self.unlikely(cond)?;
        self.builder.build_conditional_branch(cond, fail, cont)?;
        self.builder.position_at_end(fail);
        let ret_ty = ret_type(self.cx, &self.func.ret);
        self.builder.build_store(self.ret_slot.expect("set before the body"), ret_ty.const_zero())?;
        self.builder.build_unconditional_branch(self.ret_bb.expect("set before the body"))?;
        self.builder.position_at_end(cont);
        Ok(())
    }

    fn unlikely(&self, cond: IntValue<'ctx>) -> LResult<IntValue<'ctx>> {
        let expect = LlvmIntrinsic::find("llvm.expect")
            .and_then(|i| i.get_declaration(self.module, &[self.cx.bool_type().into()]))
            .ok_or_else(|| internal("llvm.expect is missing", self.func.span))?;
        let call =
            self.builder.build_call(expect, &[cond.into(), self.cx.bool_type().const_zero().into()], "unlikely")?;
        Ok(basic_value(call.try_as_basic_value(), self.func.span)?.into_int_value())
    }

    /// `if cond { raise code }`, on a branch marked unlikely.
    fn raise_if(&mut self, cond: IntValue<'ctx>, code: IntValue<'ctx>) -> LResult<()> {
        let Some(err) = self.err else {
            return Err(internal("a fault is raised in a function without an error flag", self.func.span));
        };
        let fail = self.cx.append_basic_block(self.llfn, "fault");
        let cont = self.cx.append_basic_block(self.llfn, "ok");
        let cond = self.unlikely(cond)?;
        self.builder.build_conditional_branch(cond, fail, cont)?;
        self.builder.position_at_end(fail);
        // Rust panics at the first failing operation: record it and return at once, so
        // one element reports one fault (the kernel keeps the first element's).
        self.builder.build_store(err, code)?;
        let ret_ty = ret_type(self.cx, &self.func.ret);
        self.builder.build_store(self.ret_slot.expect("set before the body"), ret_ty.const_zero())?;
        self.builder.build_unconditional_branch(self.ret_bb.expect("set before the body"))?;
        self.builder.position_at_end(cont);
        Ok(())
    }

    fn logical(&mut self, op: LogicalOp, a: &Expr, b: &Expr) -> LResult<Value<'ctx>> {
        let bool_t = self.cx.bool_type();
        let slot = self.alloca(bool_t.into(), "logic")?;
        let Some(l) = self.expr(a)? else { return Ok(None) };
        self.builder.build_store(slot, l)?;
        let rhs_bb = self.cx.append_basic_block(self.llfn, "rhs");
        let done = self.cx.append_basic_block(self.llfn, "logic_done");
        let l = l.into_int_value();
        match op {
            LogicalOp::And => self.builder.build_conditional_branch(l, rhs_bb, done)?,
            LogicalOp::Or => self.builder.build_conditional_branch(l, done, rhs_bb)?,
        };
        self.builder.position_at_end(rhs_bb);
        if let Some(r) = self.expr(b)? {
            self.builder.build_store(slot, r)?;
        }
        self.builder.build_unconditional_branch(done)?;
        self.builder.position_at_end(done);
        Ok(Some(self.builder.build_load(bool_t, slot, "logic")?))
    }

    /// `as`, with Rust's semantics: float→int saturates and maps NaN to 0, int→int
    /// truncates or extends by the source's signedness, int→float rounds to nearest.
    fn cast(&self, v: BasicValueEnum<'ctx>, from: ScalarType, to: ScalarType) -> LResult<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        if from == to {
            return Ok(v);
        }
        Ok(match (from.is_float(), to.is_float()) {
            (true, true) => {
                let target = llvm_type(self.cx, to).into_float_type();
                if to.bits() > from.bits() {
                    b.build_float_ext(v.into_float_value(), target, "fext")?.into()
                } else {
                    b.build_float_trunc(v.into_float_value(), target, "ftrunc")?.into()
                }
            }
            (true, false) => {
                // `fptosi` alone is poison out of range; the `.sat` intrinsics are Rust's `as`.
                let name = if to.is_signed_int() { "llvm.fptosi.sat" } else { "llvm.fptoui.sat" };
                let decl = LlvmIntrinsic::find(name)
                    .and_then(|i| i.get_declaration(self.module, &[self.int_type(to).into(), v.get_type()]))
                    .ok_or_else(|| internal(format!("{name} is missing"), self.func.span))?;
                let call = b.build_call(decl, &[v.into()], "fptoi")?;
                basic_value(call.try_as_basic_value(), self.func.span)?
            }
            (false, true) => {
                let target = llvm_type(self.cx, to).into_float_type();
                if from.is_signed_int() {
                    b.build_signed_int_to_float(v.into_int_value(), target, "itof")?.into()
                } else {
                    // `bool` is unsigned here too (the frontend rejects `bool as f32`).
                    b.build_unsigned_int_to_float(v.into_int_value(), target, "itof")?.into()
                }
            }
            (false, false) => {
                let target = self.int_type(to);
                b.build_int_cast_sign_flag(v.into_int_value(), target, from.is_signed_int(), "icast")?.into()
            }
        })
    }

    fn if_expr(&mut self, e: &Expr, cond: &Expr, then: &Block, els: Option<&Expr>) -> LResult<Value<'ctx>> {
        let slot = match self.value_type(e.ty) {
            Some(t) => Some(self.alloca(t, "if_value")?),
            None => None,
        };
        let Some(c) = self.expr(cond)? else { return Ok(None) };
        let then_bb = self.cx.append_basic_block(self.llfn, "then");
        let else_bb = self.cx.append_basic_block(self.llfn, "else");
        let merge = self.cx.append_basic_block(self.llfn, "endif");
        self.builder.build_conditional_branch(c.into_int_value(), then_bb, else_bb)?;
        self.builder.position_at_end(then_bb);
        let tv = self.block(then)?;
        self.store_opt(slot, tv)?;
        self.builder.build_unconditional_branch(merge)?;
        self.builder.position_at_end(else_bb);
        if let Some(els) = els {
            let ev = self.expr(els)?;
            self.store_opt(slot, ev)?;
        }
        self.builder.build_unconditional_branch(merge)?;
        self.builder.position_at_end(merge);
        self.load_opt(slot, e)
    }

    fn store_opt(&self, slot: Option<PointerValue<'ctx>>, v: Value<'ctx>) -> LResult<()> {
        if let (Some(slot), Some(v)) = (slot, v) {
            self.builder.build_store(slot, v)?;
        }
        Ok(())
    }

    fn load_opt(&self, slot: Option<PointerValue<'ctx>>, e: &Expr) -> LResult<Value<'ctx>> {
        match (slot, self.value_type(e.ty)) {
            (Some(slot), Some(t)) => Ok(Some(self.builder.build_load(t, slot, "value")?)),
            _ => Ok(None),
        }
    }

    /// `while c { body }` as `if c { loop { body; if !c { break } } }`: the condition is
    /// lowered twice, and the loop is in the rotated form LLVM's loop passes want, so they
    /// need not rewrite it (a rewrite updates the dominator tree of everything after the
    /// loop: quadratic in a body of many loops).
    fn while_loop(&mut self, id: LoopId, cond: &Expr, body: &Block) -> LResult<Value<'ctx>> {
        let body_bb = self.cx.append_basic_block(self.llfn, "while_body");
        let latch = self.cx.append_basic_block(self.llfn, "while_cond");
        let exit = self.cx.append_basic_block(self.llfn, "while_end");
        self.branch_on(cond, body_bb, exit)?;
        self.loops.insert(id, LoopTargets { break_bb: exit, continue_bb: latch, result: None });
        self.builder.position_at_end(body_bb);
        self.block(body)?;
        self.builder.build_unconditional_branch(latch)?;
        self.builder.position_at_end(latch);
        self.branch_on(cond, body_bb, exit)?;
        self.builder.position_at_end(exit);
        Ok(None)
    }

    /// Evaluates `cond` and branches to `then` or `otherwise` (to `otherwise` when `cond`
    /// diverges).
    fn branch_on(&mut self, cond: &Expr, then: BasicBlock<'ctx>, otherwise: BasicBlock<'ctx>) -> LResult<()> {
        match self.expr(cond)? {
            Some(c) => self.builder.build_conditional_branch(c.into_int_value(), then, otherwise)?,
            None => self.builder.build_unconditional_branch(otherwise)?,
        };
        Ok(())
    }

    fn loop_expr(&mut self, e: &Expr, id: LoopId, body: &Block) -> LResult<Value<'ctx>> {
        let result = match self.value_type(e.ty) {
            Some(t) => Some(self.alloca(t, "loop_value")?),
            None => None,
        };
        let body_bb = self.cx.append_basic_block(self.llfn, "loop_body");
        let exit = self.cx.append_basic_block(self.llfn, "loop_end");
        self.loops.insert(id, LoopTargets { break_bb: exit, continue_bb: body_bb, result });
        self.builder.build_unconditional_branch(body_bb)?;
        self.builder.position_at_end(body_bb);
        self.block(body)?;
        self.builder.build_unconditional_branch(body_bb)?;
        self.builder.position_at_end(exit);
        if e.ty == Type::Never {
            // No `break`: nothing follows the loop.
            self.builder.build_unreachable()?;
            self.start_dead_block();
        }
        self.load_opt(result, e)
    }

    /// A counted loop over `lo..=hi` (`hi = end - 1` for `..`), by steps of `k`, upwards or
    /// (`.rev()`) downwards. It runs `last + 1` times with `last = (hi - lo) / k` computed
    /// without overflow, so full-range loops such as `0..=u64::MAX` are exact.
    fn for_loop(&mut self, id: LoopId, range: &ForRange, body: &Block) -> LResult<Value<'ctx>> {
        let t = self.scalar_of(&range.start)?;
        let ty = self.int_type(t);
        let i64t = self.cx.i64_type();
        let Some(start) = self.expr(&range.start)? else { return Ok(None) };
        let Some(end) = self.expr(&range.end)? else { return Ok(None) };
        let step = match &range.step {
            Some(s) => match self.expr(s)? {
                Some(v) => Some((v.into_int_value(), ir::step_may_be_zero(s))),
                None => return Ok(None),
            },
            None => None,
        };
        let (start, end) = (start.into_int_value(), end.into_int_value());
        let exit = self.cx.append_basic_block(self.llfn, "for_end");
        if let Some((k, true)) = step {
            // `step_by(0)` panics in Rust.
            let zero = self.builder.build_int_compare(IntPredicate::EQ, k, i64t.const_zero(), "step_zero")?;
            let code = self.cx.i32_type().const_int(Fault::StepByZero.code() as u64, false);
            self.raise_if(zero, code)?;
            let go = self.cx.append_basic_block(self.llfn, "for_step_ok");
            self.builder.build_conditional_branch(zero, exit, go)?;
            self.builder.position_at_end(go);
        }
        let signed = t.is_signed_int();
        let pred = match (range.inclusive, signed) {
            (true, true) => IntPredicate::SLE,
            (true, false) => IntPredicate::ULE,
            (false, true) => IntPredicate::SLT,
            (false, false) => IntPredicate::ULT,
        };
        let nonempty = self.builder.build_int_compare(pred, start, end, "nonempty")?;
        let pre = self.cx.append_basic_block(self.llfn, "for_pre");
        self.builder.build_conditional_branch(nonempty, pre, exit)?;
        self.builder.position_at_end(pre);
        let hi = if range.inclusive { end } else { self.builder.build_int_sub(end, ty.const_int(1, false), "hi")? };
        let diff = self.builder.build_int_sub(hi, start, "span")?;
        let diff = self.builder.build_int_cast_sign_flag(diff, i64t, false, "span64")?;
        let last = match step {
            Some((k, _)) => self.builder.build_int_unsigned_div(diff, k, "last")?,
            None => diff,
        };
        let stride = match step {
            Some((k, _)) => self.builder.build_int_cast_sign_flag(k, ty, false, "stride")?,
            None => ty.const_int(1, false),
        };
        if let Some(trip) = self.unrolled_trip(range, body, last, stride) {
            return self.unrolled_for(id, range, body, if range.reverse { hi } else { start }, stride, trip, exit);
        }
        let k_slot = self.alloca(i64t.into(), "iter")?;
        let cur_slot = self.alloca(ty.into(), "cursor")?;
        self.builder.build_store(k_slot, i64t.const_zero())?;
        self.builder.build_store(cur_slot, if range.reverse { hi } else { start })?;
        let body_bb = self.cx.append_basic_block(self.llfn, "for_body");
        let latch = self.cx.append_basic_block(self.llfn, "for_next");
        self.builder.build_unconditional_branch(body_bb)?;

        self.builder.position_at_end(body_bb);
        let cur = self.builder.build_load(ty, cur_slot, "i")?;
        let var = self.slot(range.var)?;
        self.builder.build_store(var, cur)?;
        self.loops.insert(id, LoopTargets { break_bb: exit, continue_bb: latch, result: None });
        self.block(body)?;
        self.builder.build_unconditional_branch(latch)?;

        // The latch advances and tests in one block: the loop is already in the rotated form
        // LLVM's loop passes want, so they need not rewrite it (a rewrite updates the
        // dominator tree of everything after the loop: quadratic in a body of many loops).
        // After the last iteration the cursor wraps past the range unused.
        self.builder.position_at_end(latch);
        let k = self.builder.build_load(i64t, k_slot, "k")?.into_int_value();
        let k1 = self.builder.build_int_add(k, i64t.const_int(1, false), "k1")?;
        self.builder.build_store(k_slot, k1)?;
        let cur = self.builder.build_load(ty, cur_slot, "cur")?.into_int_value();
        let next = self.step(cur, stride, range.reverse)?;
        self.builder.build_store(cur_slot, next)?;
        let done = self.builder.build_int_compare(IntPredicate::EQ, k, last, "done")?;
        self.builder.build_conditional_branch(done, exit, body_bb)?;
        self.builder.position_at_end(exit);
        Ok(None)
    }

    /// A counted loop's next value: `stride` on from `cur`, down for `.rev()`.
    fn step(&self, cur: IntValue<'ctx>, stride: IntValue<'ctx>, reverse: bool) -> LResult<IntValue<'ctx>> {
        Ok(if reverse {
            self.builder.build_int_sub(cur, stride, "next")?
        } else {
            self.builder.build_int_add(cur, stride, "next")?
        })
    }

    /// How many times to copy a `for` loop's body instead of looping, if at all.
    ///
    /// A local array (`let mut acc = [0.0; 64]`) lives in registers only where every index
    /// into it is a constant; one indexed by a loop's variable stays in the thread's local
    /// memory (off-chip, through the L1), copied in and out around the loop. As nvcc does
    /// for CUDA C, a loop with a constant trip count whose body indexes a local array with
    /// its variable (directly or through a `let` of the body) is unrolled, here before LLVM
    /// sees it, so the array's accesses become constant and SROA keeps it in registers. The
    /// copies of nested unrolled loops multiply; [`UNROLL_BUDGET`] bounds their product.
    fn unrolled_trip(
        &self,
        range: &ForRange,
        body: &Block,
        last: IntValue<'ctx>,
        stride: IntValue<'ctx>,
    ) -> Option<u64> {
        let trip = last.get_zero_extended_constant()?.checked_add(1)?;
        stride.get_zero_extended_constant()?;
        if self.copies.checked_mul(trip)? > UNROLL_BUDGET {
            return None;
        }
        // The loop's variable and the locals the body derives from it.
        let mut derived = vec![range.var];
        for s in &body.stmts {
            if let Stmt::Let { local, init: Some(init) } = s {
                if mentions_any(init, &derived) {
                    derived.push(*local);
                }
            }
        }
        let mut indexed = false;
        ir::visit_block(body, &mut |e| match &e.kind {
            ExprKind::Index { array, index, .. } | ExprKind::AssignIndex { array, index, .. }
                if matches!(self.array_info[*array as usize].kind, ir::ArrayKind::Local { .. }) =>
            {
                indexed |= index.iter().any(|i| mentions_any(i, &derived));
            }
            _ => {}
        });
        indexed.then_some(trip)
    }

    /// A counted loop as `trip` copies of its body, the variable a constant in each.
    #[allow(clippy::too_many_arguments)]
    fn unrolled_for(
        &mut self,
        id: LoopId,
        range: &ForRange,
        body: &Block,
        first: IntValue<'ctx>,
        stride: IntValue<'ctx>,
        trip: u64,
        exit: BasicBlock<'ctx>,
    ) -> LResult<Value<'ctx>> {
        let var = self.slot(range.var)?;
        let outer = self.copies;
        self.copies *= trip;
        let mut cur = first;
        for k in 0..trip {
            self.builder.build_store(var, cur)?;
            let next = if k + 1 < trip { self.cx.append_basic_block(self.llfn, "for_copy") } else { exit };
            self.loops.insert(id, LoopTargets { break_bb: exit, continue_bb: next, result: None });
            self.block(body)?;
            self.builder.build_unconditional_branch(next)?;
            self.builder.position_at_end(next);
            if k + 1 < trip {
                // In range: the loop runs `trip` times, so no step passes its last value.
                cur = self.step(cur, stride, range.reverse)?;
            }
        }
        self.copies = outer;
        Ok(None)
    }
}

/// The most copies of one piece of code that unrolling loops over local arrays makes.
const UNROLL_BUDGET: u64 = 512;

/// Whether `e` reads any of `locals`.
fn mentions_any(e: &Expr, locals: &[LocalId]) -> bool {
    let mut found = false;
    ir::visit_expr(e, &mut |x| {
        if let ExprKind::Local(l) | ExprKind::Assign(l, _) | ExprKind::CompoundAssign(_, l, _) = &x.kind {
            found |= locals.contains(l);
        }
    });
    found
}

pub fn basic_value(v: ValueKind<'_>, span: Span) -> LResult<BasicValueEnum<'_>> {
    match v {
        ValueKind::Basic(b) => Ok(b),
        ValueKind::Instruction(_) => Err(internal("a call that should return a value returned void", span)),
    }
}
