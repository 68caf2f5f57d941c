//! Drops the warp checks that earlier checks on every path already answer.
//!
//! A tensor-core operation (`gpu::mma`) needs the whole warp (`activemask()` all ones) and
//! the same tile in every lane (`match.all.sync` of its start and row length); each
//! operation checks both, and a failed check records its fault and returns. In a run of
//! loads such as `load_a(s, base, ld)`, `load_a(s, base + 16 * ld, ld)`, … every check
//! after the first is already answered: the lanes that passed `base`'s check agree on
//! `base`, so they agree on `base + 16 * ld` when they agree on `ld`. The pass walks a
//! function's blocks in reverse post-order and tracks, on each edge:
//!
//! - values known to be the same in every active lane: constants, a kernel's parameters,
//!   the block and grid sizes and the block index, a value whose `match.all.sync` came out
//!   true on the edge taken (and what it is a one-to-one function of, given values known
//!   the same: `zext x`, `x + y`, `x - y`, `x ^ y`, a disjoint `x | y`), and any pure
//!   operation or arithmetic intrinsic of such values;
//! - whether all 32 lanes are active: after `activemask() == -1` held on the edge taken,
//!   kept across branches whose condition is the same in every lane (so no lane leaves),
//!   lost at a call of a function of the program (which may diverge inside).
//!
//! A block knows what holds on every edge into it; at the head of a loop (an edge not yet
//! walked) it starts afresh, so a value known there was computed once on every path
//! since. A marked `match.all.sync` of a value known the same is true, and a marked
//! `activemask()` where all lanes are known active is all ones: both are replaced by their
//! constant, and LLVM's cleanup removes the branches they decided. Nothing else changes: a
//! check whose answer is not known stays, and so does a program's own `match_all_sync`.
//!
//! It runs twice: on SSA values before optimisation, where their relations are as the
//! program wrote them, and after, where LLVM may have rewritten them (`base + 640` for
//! `base + 16 * 40`).

use std::collections::{HashMap, HashSet};

use inkwell::basic_block::BasicBlock;
use inkwell::context::Context;
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::module::Module;
use inkwell::values::{
    AnyValue, AnyValueEnum, AsValueRef, BasicValue, BasicValueEnum, CallSiteValue, FunctionValue, InstructionOpcode,
    InstructionValue, IntValue,
};

/// The metadata that marks the checks the lowering of `gpu::mma` adds (the only ones this
/// pass answers; a program's own `gpu::match_all_sync` stays as written).
pub const CHECK: &str = "gpu.warp_check";

/// Marks `v`, a call the lowering adds, as a check this pass may answer.
pub fn mark_check<'ctx>(cx: &'ctx Context, v: BasicValueEnum<'ctx>) -> Result<(), String> {
    let call = v.as_instruction_value().ok_or("internal compiler error: a warp check that is no call")?;
    call.set_metadata(cx.metadata_node(&[]), cx.get_kind_id(CHECK)).map_err(|e| e.to_string())
}

/// Whether `module` has checks for [`drop_answered_checks`] to answer (a module without
/// goes through the optimiser as before).
pub fn has_checks(module: &Module<'_>) -> bool {
    // A marked check is a call of one of these: without them, nothing to look through.
    let declared = [ACTIVEMASK, "llvm.nvvm.match.all.sync.i32p", "llvm.nvvm.match.all.sync.i64p"]
        .iter()
        .any(|n| module.get_function(n).is_some());
    let kind = module.get_context().get_kind_id(CHECK);
    declared
        && module.get_functions().any(|f| {
            f.get_basic_blocks().iter().any(|bb| bb.get_instructions().any(|i| i.get_metadata(kind).is_some()))
        })
}

/// The intrinsic that reads the mask of active lanes.
const ACTIVEMASK: &str = "llvm.nvvm.activemask";

/// What the names of `match.all.sync`'s intrinsics (`i32p`, `i64p`) start with.
const MATCH_ALL: &str = "llvm.nvvm.match.all.sync.";

/// How far a value's operands are followed.
const DEPTH: u32 = 12;

/// LLVM intrinsics whose result is a function of their operands alone.
const ARITHMETIC: [&str; 23] = [
    "expect",
    "uadd.sat",
    "usub.sat",
    "sadd.sat",
    "ssub.sat",
    "umin",
    "umax",
    "smin",
    "smax",
    "uadd.with.overflow",
    "usub.with.overflow",
    "umul.with.overflow",
    "sadd.with.overflow",
    "ssub.with.overflow",
    "smul.with.overflow",
    "abs",
    "fshl",
    "fshr",
    "ctlz",
    "cttz",
    "ctpop",
    "bswap",
    "bitreverse",
];

/// Answers the warp checks of `module`'s functions that earlier checks decide (see the
/// module's documentation); `kernels` are the entry symbols, whose parameters are the
/// same in every thread. Returns whether anything changed.
pub fn drop_answered_checks<'ctx>(cx: &'ctx Context, module: &Module<'ctx>, kernels: &[&str]) -> Result<bool, String> {
    let mut changed = false;
    for f in module.get_functions().filter(|f| f.count_basic_blocks() > 0) {
        let kernel = f.get_name().to_str().is_ok_and(|n| kernels.contains(&n));
        changed |= Walk::new(cx, f, kernel).run()?;
    }
    Ok(changed)
}

/// What is known at a point of a function.
#[derive(Clone, Default)]
struct Known {
    /// Values that are the same in every active lane.
    same: HashSet<LLVMValueRef>,
    /// All 32 lanes of the warp are active.
    whole_warp: bool,
}

struct Walk<'ctx> {
    cx: &'ctx Context,
    f: FunctionValue<'ctx>,
    /// What holds at the entry and at the head of a loop.
    start: Known,
    /// The kind of [`CHECK`].
    check: u32,
    /// Answered checks, erased after the walk (their addresses stay keys until then).
    dead: Vec<InstructionValue<'ctx>>,
}

impl<'ctx> Walk<'ctx> {
    fn new(cx: &'ctx Context, f: FunctionValue<'ctx>, kernel: bool) -> Self {
        let mut start = Known::default();
        if kernel {
            start.same.extend(f.get_param_iter().map(|p| p.as_value_ref()));
        }
        Walk { cx, f, start, check: cx.get_kind_id(CHECK), dead: Vec::new() }
    }

    fn run(mut self) -> Result<bool, String> {
        let Some(entry) = self.f.get_first_basic_block() else { return Ok(false) };
        let mut edges: HashMap<BasicBlock<'ctx>, usize> = HashMap::new();
        for bb in self.f.get_basic_blocks() {
            for s in successors(bb) {
                *edges.entry(s).or_default() += 1;
            }
        }
        // What holds on each edge into a block, as the blocks before it are walked.
        let mut incoming: HashMap<BasicBlock<'ctx>, Vec<Known>> = HashMap::new();
        for bb in reverse_post_order(entry) {
            let arrived = incoming.remove(&bb).unwrap_or_default();
            // In reverse post-order every edge into a block has been walked but those that
            // close a loop (and those from unreachable blocks): there, start afresh.
            let mut known = if bb != entry && arrived.len() == edges.get(&bb).copied().unwrap_or(0) {
                meet(arrived)
            } else {
                self.start.clone()
            };
            self.block(bb, &mut known)?;
            let Some(term) = bb.get_terminator() else { continue };
            // An unconditional `br` has no value operand: no condition.
            let cond = matches!(term.get_opcode(), InstructionOpcode::Br | InstructionOpcode::Switch)
                .then(|| operand(term, 0))
                .flatten();
            let uniform_exit = cond.is_none_or(|c| self.same(c, &mut known, DEPTH));
            for (k, s) in successor_operands(term) {
                let mut next = known.clone();
                next.whole_warp &= uniform_exit;
                // `br i1 c, label %t, label %f` holds `f` at operand 1 and `t` at 2.
                if let (InstructionOpcode::Br, Some(c)) = (term.get_opcode(), cond) {
                    self.holds(c, k == 2, &mut next, DEPTH);
                }
                incoming.entry(s).or_default().push(next);
            }
        }
        // Unreachable blocks keep their checks.
        let changed = !self.dead.is_empty();
        for i in self.dead {
            i.erase_from_basic_block();
        }
        Ok(changed)
    }

    /// Answers the checks in `bb` that `known` decides, and learns from what it computes.
    fn block(&mut self, bb: BasicBlock<'ctx>, known: &mut Known) -> Result<(), String> {
        let mut next = bb.get_first_instruction();
        while let Some(i) = next {
            next = i.get_next_instruction();
            if i.get_opcode() != InstructionOpcode::Call {
                continue;
            }
            // A call through a pointer or of inline assembly may diverge inside.
            let Some(callee) = callee(i) else {
                known.whole_warp = false;
                continue;
            };
            let ours = i.get_metadata(self.check).is_some();
            match callee.as_str() {
                ACTIVEMASK if ours && known.whole_warp => {
                    let all = IntValue::try_from(i).map_err(|()| unexpected(i))?;
                    all.replace_all_uses_with(self.cx.i32_type().const_all_ones());
                    self.dead.push(i);
                }
                name if ours && name.starts_with(MATCH_ALL) => {
                    let full_mask = operand(i, 0).is_some_and(|m| is_all_ones(m));
                    let Some(x) = operand(i, 1) else { return Err(unexpected(i)) };
                    // (No lane gets here without the whole warp: the lowering checks it first.)
                    if full_mask && self.same(x, known, DEPTH) {
                        self.answer_match(i);
                    }
                }
                name if !name.starts_with("llvm.") => known.whole_warp = false,
                _ => {}
            }
        }
        Ok(())
    }

    /// Replaces `match.all.sync`'s results (`{mask, same}`) where they are read: all lanes
    /// match, so the mask is the full one given and `same` is true. A call read in any
    /// other way stays.
    fn answer_match(&mut self, call: InstructionValue<'ctx>) {
        let mut reads = Vec::new();
        let mut u = call.get_first_use();
        while let Some(use_) = u {
            let read = match use_.get_user() {
                AnyValueEnum::IntValue(v) => v.as_instruction().map(|i| (v, i)),
                _ => None,
            };
            let answer = read.filter(|(_, i)| i.get_opcode() == InstructionOpcode::ExtractValue).and_then(|(_, i)| {
                match i.get_indices().as_slice() {
                    [0] => Some(self.cx.i32_type().const_all_ones()),
                    [1] => Some(self.cx.bool_type().const_all_ones()),
                    _ => None,
                }
            });
            let (Some(read), Some(answer)) = (read, answer) else { return };
            reads.push((read, answer));
            u = use_.get_next_use();
        }
        for ((value, read), answer) in reads {
            value.replace_all_uses_with(answer);
            self.dead.push(read);
        }
        self.dead.push(call);
    }

    /// Whether `v` is the same in every active lane, given `known` (remembered there when
    /// it is).
    fn same(&self, v: BasicValueEnum<'ctx>, known: &mut Known, depth: u32) -> bool {
        if is_const(v) || known.same.contains(&v.as_value_ref()) {
            return true;
        }
        let Some(i) = v.as_instruction_value() else { return false };
        let same = match i.get_opcode() {
            InstructionOpcode::Add
            | InstructionOpcode::Sub
            | InstructionOpcode::Mul
            | InstructionOpcode::UDiv
            | InstructionOpcode::SDiv
            | InstructionOpcode::URem
            | InstructionOpcode::SRem
            | InstructionOpcode::Shl
            | InstructionOpcode::LShr
            | InstructionOpcode::AShr
            | InstructionOpcode::And
            | InstructionOpcode::Or
            | InstructionOpcode::Xor
            | InstructionOpcode::Trunc
            | InstructionOpcode::ZExt
            | InstructionOpcode::SExt
            | InstructionOpcode::ICmp
            | InstructionOpcode::Select
            | InstructionOpcode::GetElementPtr
            | InstructionOpcode::PtrToInt
            | InstructionOpcode::IntToPtr
            | InstructionOpcode::AddrSpaceCast => self.operands_same(i, i.get_num_operands(), known, depth),
            // The block index and sizes; the active lanes' mask, which every lane that runs
            // it reads alike; whether all lanes match, which all of them learn alike; and
            // LLVM's arithmetic of values known the same.
            // (A call's last operand is the function.)
            InstructionOpcode::Call => callee(i).is_some_and(|n| {
                n == ACTIVEMASK
                    || n.starts_with(MATCH_ALL)
                    || ["ctaid", "nctaid", "ntid"]
                        .iter()
                        .any(|s| n.starts_with(&format!("llvm.nvvm.read.ptx.sreg.{s}.")))
                    || (ARITHMETIC.iter().any(|s| n.starts_with(&format!("llvm.{s}.")))
                        && self.operands_same(i, i.get_num_operands() - 1, known, depth))
            }),
            InstructionOpcode::ExtractValue => self.operands_same(i, 1, known, depth),
            _ => false,
        };
        if same {
            known.same.insert(v.as_value_ref());
        }
        same
    }

    /// Whether the first `n` operands of `i` are the same in every active lane (followed
    /// `depth` levels down).
    fn operands_same(&self, i: InstructionValue<'ctx>, n: u32, known: &mut Known, depth: u32) -> bool {
        depth > 0 && (0..n).all(|k| operand(i, k).is_some_and(|o| self.same(o, known, depth - 1)))
    }

    /// Learns that `v` is the same in every active lane, and so is what it is a one-to-one
    /// function of.
    fn learn_same(&self, v: BasicValueEnum<'ctx>, known: &mut Known, depth: u32) {
        known.same.insert(v.as_value_ref());
        let Some(i) = v.as_instruction_value().filter(|_| depth > 0) else { return };
        match i.get_opcode() {
            InstructionOpcode::ZExt | InstructionOpcode::SExt => {
                if let Some(x) = operand(i, 0) {
                    self.learn_same(x, known, depth - 1);
                }
            }
            op @ (InstructionOpcode::Add | InstructionOpcode::Sub | InstructionOpcode::Xor | InstructionOpcode::Or) => {
                // `or disjoint` is an addition.
                if op == InstructionOpcode::Or && i.get_disjoint_flag() != Ok(true) {
                    return;
                }
                let (Some(x), Some(y)) = (operand(i, 0), operand(i, 1)) else { return };
                if self.same(y, known, depth - 1) {
                    self.learn_same(x, known, depth - 1);
                } else if self.same(x, known, depth - 1) {
                    self.learn_same(y, known, depth - 1);
                }
            }
            _ => {}
        }
    }

    /// Learns what the `i1` value `c` being `truth` on the path tells.
    fn holds(&self, c: BasicValueEnum<'ctx>, truth: bool, known: &mut Known, depth: u32) {
        let Some(i) = c.as_instruction_value().filter(|_| depth > 0) else { return };
        let (x, y) = (operand(i, 0), operand(i, 1));
        match (i.get_opcode(), x, y) {
            (InstructionOpcode::And, Some(x), Some(y)) if truth => {
                self.holds(x, true, known, depth - 1);
                self.holds(y, true, known, depth - 1);
            }
            (InstructionOpcode::Or, Some(x), Some(y)) if !truth => {
                self.holds(x, false, known, depth - 1);
                self.holds(y, false, known, depth - 1);
            }
            (InstructionOpcode::Xor, Some(x), Some(y)) if is_all_ones(y) => self.holds(x, !truth, known, depth - 1),
            (InstructionOpcode::ICmp, Some(x), Some(y)) => {
                let all_active = match i.get_icmp_predicate() {
                    Some(inkwell::IntPredicate::EQ) => truth,
                    Some(inkwell::IntPredicate::NE) => !truth,
                    _ => false,
                };
                let mask = |v: BasicValueEnum<'ctx>| {
                    v.as_instruction_value().and_then(callee).is_some_and(|n| n == ACTIVEMASK)
                };
                if all_active && ((mask(x) && is_all_ones(y)) || (mask(y) && is_all_ones(x))) {
                    known.whole_warp = true;
                }
            }
            // `llvm.expect(x, likely)` is `x`.
            (InstructionOpcode::Call, Some(x), _) if callee(i).is_some_and(|n| n.starts_with("llvm.expect.")) => {
                self.holds(x, truth, known, depth - 1)
            }
            (InstructionOpcode::ExtractValue, Some(pair), _) if truth && i.get_indices() == [1] => {
                let Some(call) = pair.as_instruction_value() else { return };
                let is_match = callee(call).is_some_and(|n| n.starts_with(MATCH_ALL));
                if is_match && operand(call, 0).is_some_and(is_all_ones) {
                    if let Some(x) = operand(call, 1) {
                        self.learn_same(x, known, DEPTH);
                    }
                }
            }
            _ => {}
        }
    }
}

fn unexpected(i: InstructionValue<'_>) -> String {
    format!("internal compiler error: a warp check of unexpected form: `{}`", i.print_to_string())
}

fn operand<'ctx>(i: InstructionValue<'ctx>, k: u32) -> Option<BasicValueEnum<'ctx>> {
    i.get_operand(k)?.value()
}

/// The name of the function `i` calls, if it is a direct call.
fn callee(i: InstructionValue<'_>) -> Option<String> {
    if i.get_opcode() != InstructionOpcode::Call {
        return None;
    }
    let f = CallSiteValue::try_from(i).ok()?.get_called_fn_value()?;
    Some(f.get_name().to_str().ok()?.to_owned())
}

fn is_const(v: BasicValueEnum<'_>) -> bool {
    match v {
        BasicValueEnum::IntValue(x) => x.is_const(),
        BasicValueEnum::PointerValue(x) => x.is_const(),
        BasicValueEnum::FloatValue(x) => x.is_const(),
        _ => false,
    }
}

fn is_all_ones(v: BasicValueEnum<'_>) -> bool {
    matches!(v, BasicValueEnum::IntValue(x) if x.is_const() && x.get_sign_extended_constant() == Some(-1))
}

/// What holds on every one of `paths` (at least one).
fn meet(paths: Vec<Known>) -> Known {
    let mut paths = paths.into_iter();
    let mut all = paths.next().unwrap_or_default();
    for p in paths {
        all.same.retain(|v| p.same.contains(v));
        all.whole_warp &= p.whole_warp;
    }
    all
}

/// The blocks reachable from `entry`, each after those before it on every path that does
/// not close a loop.
fn reverse_post_order(entry: BasicBlock<'_>) -> Vec<BasicBlock<'_>> {
    let mut seen = HashSet::from([entry]);
    let mut order = Vec::new();
    let mut stack = vec![(entry, successors(entry), 0)];
    while let Some((bb, next, k)) = stack.last_mut() {
        if let Some(&s) = next.get(*k) {
            *k += 1;
            if seen.insert(s) {
                stack.push((s, successors(s), 0));
            }
        } else {
            order.push(*bb);
            stack.pop();
        }
    }
    order.reverse();
    order
}

/// The blocks a terminator may go to, with their operand positions.
fn successor_operands(term: InstructionValue<'_>) -> Vec<(u32, BasicBlock<'_>)> {
    (0..term.get_num_operands()).filter_map(|k| Some((k, term.get_operand(k)?.block()?))).collect()
}

fn successors(bb: BasicBlock<'_>) -> Vec<BasicBlock<'_>> {
    bb.get_terminator().map(|t| successor_operands(t).into_iter().map(|(_, s)| s).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use inkwell::context::Context;
    use inkwell::memory_buffer::MemoryBuffer;

    /// The module with `k`'s `body` after the pass.
    fn answered(body: &str) -> String {
        let ir = format!(
            "declare i32 @llvm.nvvm.activemask()
             declare {{ i32, i1 }} @llvm.nvvm.match.all.sync.i32p(i32, i32)
             declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
             declare void @elsewhere()
             define void @k(i32 %p) {{
             {body}
             fault:
               ret void
             }}
             !0 = !{{}}"
        );
        let cx = Context::create();
        let buf = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "k");
        let module = cx.create_module_from_ir(buf).unwrap();
        super::drop_answered_checks(&cx, &module, &["k"]).unwrap();
        module.verify().unwrap();
        module.print_to_string().to_string()
    }

    const CHECKED: &str = "entry:
          %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
          %w = lshr i32 %t, 5
          %m = call i32 @llvm.nvvm.activemask(), !gpu.warp_check !0
          %whole = icmp eq i32 %m, -1
          br i1 %whole, label %a, label %fault
        a:
          %c1 = call { i32, i1 } @llvm.nvvm.match.all.sync.i32p(i32 -1, i32 %w), !gpu.warp_check !0
          %s1 = extractvalue { i32, i1 } %c1, 1
          %d1 = xor i1 %s1, true
          br i1 %d1, label %fault, label %b
        b:
          %w2 = add i32 %w, %p
          %m2 = call i32 @llvm.nvvm.activemask(), !gpu.warp_check !0
          %whole2 = icmp ne i32 %m2, -1
          br i1 %whole2, label %fault, label %b2
        b2:
          %c2 = call { i32, i1 } @llvm.nvvm.match.all.sync.i32p(i32 -1, i32 %w2), !gpu.warp_check !0
          %s2 = extractvalue { i32, i1 } %c2, 1
          br i1 %s2, label %c, label %fault";

    #[test]
    fn what_earlier_checks_answer_goes() {
        let f = answered(&format!("{CHECKED}\n c:\n ret void"));
        // The first of each stays; the second check of the warp, and the start `w + p`
        // (`w` checked, `p` a kernel parameter), are answered.
        assert_eq!(f.matches("call i32 @llvm.nvvm.activemask()").count(), 1, "{f}");
        assert_eq!(f.matches("call { i32, i1 } @llvm.nvvm.match.all.sync.i32p(").count(), 1, "{f}");
        assert!(f.contains("match.all.sync.i32p(i32 -1, i32 %w)"), "{f}");
    }

    #[test]
    fn only_on_the_edge_where_the_check_held() {
        // `w` is learnt on the false edge of `br %d1`, not on its true edge (the fault) nor
        // after a join with it.
        let f = answered(
            "entry:
               %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
               %w = lshr i32 %t, 5
               %c1 = call { i32, i1 } @llvm.nvvm.match.all.sync.i32p(i32 -1, i32 %w), !gpu.warp_check !0
               %s1 = extractvalue { i32, i1 } %c1, 1
               %d1 = xor i1 %s1, true
               br i1 %d1, label %bad, label %join
             bad:
               br label %join
             join:
               %c2 = call { i32, i1 } @llvm.nvvm.match.all.sync.i32p(i32 -1, i32 %w), !gpu.warp_check !0
               ret void",
        );
        assert_eq!(f.matches("call { i32, i1 } @llvm.nvvm.match.all.sync.i32p(").count(), 2, "{f}");
    }

    #[test]
    fn what_they_do_not_answer_stays() {
        let f = answered(&format!(
            "{CHECKED}
             c:
               call void @elsewhere()
               %m3 = call i32 @llvm.nvvm.activemask(), !gpu.warp_check !0
               %t1 = add i32 %t, 1
               %c3 = call {{ i32, i1 }} @llvm.nvvm.match.all.sync.i32p(i32 -1, i32 %t1), !gpu.warp_check !0
               %c4 = call {{ i32, i1 }} @llvm.nvvm.match.all.sync.i32p(i32 -1, i32 %p)
               %odd = and i32 %t, 1
               %even = icmp eq i32 %odd, 0
               br i1 %even, label %d, label %e
             d:
               br label %e
             e:
               %m4 = call i32 @llvm.nvvm.activemask(), !gpu.warp_check !0
               ret void"
        ));
        // The warp after a call of a function (`m3`) and after a branch that depends on
        // the lane (`m4`); a start that depends on the lane (`t + 1`); a program's own
        // `match_all_sync` (no mark), though `p` is the same in every lane.
        assert_eq!(f.matches("call i32 @llvm.nvvm.activemask()").count(), 3, "{f}");
        assert_eq!(f.matches("call { i32, i1 } @llvm.nvvm.match.all.sync.i32p(").count(), 3, "{f}");
        assert!(f.contains("i32 %t1)") && f.contains("i32 %p)"), "{f}");
    }
}
