//! Control flow: `if`, the loops (`while`, `loop`, counted `for`, and `for` unrolled over
//! a local array), `break`/`continue`/`return`, and the unlikely branches by which a fault
//! returns from the function.

use inkwell::IntPredicate;
use inkwell::basic_block::BasicBlock;
use inkwell::intrinsics::Intrinsic as LlvmIntrinsic;
use inkwell::values::{IntValue, PointerValue};
use proc_macro2::Span;

use super::types::ret_type;
use super::{FnLower, LResult, Value, basic_value, internal};
use crate::abi::Fault;
use crate::ir::{self, Block, Expr, ExprKind, ForRange, LocalId, LoopId, Stmt, Type};

pub(super) struct LoopTargets<'ctx> {
    break_bb: BasicBlock<'ctx>,
    continue_bb: BasicBlock<'ctx>,
    result: Option<PointerValue<'ctx>>,
}

impl<'ctx> FnLower<'_, 'ctx> {
    pub(super) fn if_expr(&mut self, e: &Expr, cond: &Expr, then: &Block, els: Option<&Expr>) -> LResult<Value<'ctx>> {
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
    pub(super) fn while_loop(&mut self, id: LoopId, cond: &Expr, body: &Block) -> LResult<Value<'ctx>> {
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

    pub(super) fn loop_expr(&mut self, e: &Expr, id: LoopId, body: &Block) -> LResult<Value<'ctx>> {
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
    pub(super) fn for_loop(&mut self, id: LoopId, range: &ForRange, body: &Block) -> LResult<Value<'ctx>> {
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

    /// `break 'target value`: the value into the loop's result slot, then out of the loop.
    pub(super) fn break_expr(&mut self, target: LoopId, value: Option<&Expr>, span: Span) -> LResult<Value<'ctx>> {
        let (break_bb, result) = {
            let t = self.loops.get(&target).ok_or_else(|| internal("break outside its loop", span))?;
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

    pub(super) fn continue_expr(&mut self, target: LoopId, span: Span) -> LResult<Value<'ctx>> {
        let bb = self.loops.get(&target).ok_or_else(|| internal("continue outside its loop", span))?.continue_bb;
        self.builder.build_unconditional_branch(bb)?;
        self.start_dead_block();
        Ok(None)
    }

    pub(super) fn return_expr(&mut self, value: Option<&Expr>) -> LResult<Value<'ctx>> {
        if let Some(v) = value {
            let Some(v) = self.expr(v)? else { return Ok(None) };
            self.builder.build_store(self.ret_slot.expect("set before the body"), v)?;
        }
        self.builder.build_unconditional_branch(self.ret_bb.expect("set before the body"))?;
        self.start_dead_block();
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
    /// its variable (directly or through a `let` of the body, tuple patterns included) is unrolled, here before LLVM
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
            match s {
                Stmt::Let { local, init: Some(init) } if mentions_any(init, &derived) => derived.push(*local),
                Stmt::LetTuple { locals, init } if mentions_any(init, &derived) => {
                    derived.extend(locals.iter().flatten())
                }
                _ => {}
            }
        }
        if Self::has_mma(body) {
            return Some(trip);
        }
        let mut indexed = false;
        ir::visit_block(body, &mut |e| match &e.kind {
            ExprKind::Index { array, index, .. } | ExprKind::AssignIndex { array, index, .. }
                if matches!(self.array_info[*array as usize].kind, ir::ArrayKind::Local { .. }) =>
            {
                indexed |= index.iter().any(|i| mentions_any(i, &derived));
            }
            // An array field of a local struct (`p.pos[k]`): in registers once unrolled.
            ExprKind::Member { base, path } | ExprKind::AssignMember { place: base, path, .. }
                if matches!(base.kind, ExprKind::Local(_)) =>
            {
                indexed |=
                    path.iter().any(|s| matches!(s, ir::Step::Elem { index, .. } if mentions_any(index, &derived)));
            }
            _ => {}
        });
        indexed.then_some(trip)
    }

    /// Whether `body` has a tensor-core operation (`gpu::mma::*`): a loop over a
    /// fragment's steps is unrolled, as nvcc's users ask with `#pragma unroll`, so that
    /// each load's offsets and the choice of `ldmatrix` fold to constants.
    fn has_mma(body: &Block) -> bool {
        let mut found = false;
        ir::visit_block(body, &mut |e| found |= matches!(e.kind, ExprKind::Mma(..)));
        found
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

    /// `if cond { return <zero> }` (the fault code is already stored), branch unlikely.
    pub(super) fn return_if(&mut self, cond: IntValue<'ctx>) -> LResult<()> {
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

    pub(super) fn unlikely(&self, cond: IntValue<'ctx>) -> LResult<IntValue<'ctx>> {
        let expect = LlvmIntrinsic::find("llvm.expect")
            .and_then(|i| i.get_declaration(self.module, &[self.cx.bool_type().into()]))
            .ok_or_else(|| internal("llvm.expect is missing", self.func.span))?;
        let call =
            self.builder.build_call(expect, &[cond.into(), self.cx.bool_type().const_zero().into()], "unlikely")?;
        Ok(basic_value(call.try_as_basic_value(), self.func.span)?.into_int_value())
    }

    /// `if cond { raise code }`, on a branch marked unlikely.
    pub(super) fn raise_if(&mut self, cond: IntValue<'ctx>, code: IntValue<'ctx>) -> LResult<()> {
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
