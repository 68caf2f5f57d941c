//! Arithmetic with Rust's semantics: unary and binary operators, their overflow checks
//! (a build with `debug_assertions` panics where a release build wraps), integer division
//! and its faults, shifts, `as` casts and the short-circuiting `&&`/`||`.

use inkwell::intrinsics::Intrinsic as LlvmIntrinsic;
use inkwell::values::{BasicValueEnum, FastMathFlags, FloatValue, InstructionOpcode, InstructionValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

use super::types::llvm_type;
use super::{FnLower, LResult, Value, basic_value, internal};
use crate::abi::Fault;
use crate::ir::{self, BinaryOp, Expr, LogicalOp, Type, UnaryOp};
use crate::ty::ScalarType;

/// What `MIN / -1` does: panic (`/`, `%`, `div_euclid`), wrap (`wrapping_div`) or
/// saturate (`saturating_div`).
#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) enum Overflow {
    Fault,
    Wrap,
}

pub(super) struct DivGuard<'ctx> {
    /// The divisor, or 1 where dividing would be undefined.
    pub(super) divisor: IntValue<'ctx>,
    /// Whether this is `MIN / -1`.
    pub(super) overflow: IntValue<'ctx>,
}

impl<'ctx> FnLower<'_, 'ctx> {
    /// `-v`, wrapping (`-i32::MIN == i32::MIN`), as in release builds.
    pub(super) fn int_neg(&self, v: IntValue<'ctx>) -> LResult<IntValue<'ctx>> {
        Ok(self.builder.build_int_neg(v, "neg")?)
    }

    pub(super) fn unary(
        &mut self,
        op: UnaryOp,
        v: BasicValueEnum<'ctx>,
        t: ScalarType,
    ) -> LResult<BasicValueEnum<'ctx>> {
        if op == UnaryOp::Neg && t.is_signed_int() && self.overflow == ir::IntOverflow::Panic {
            // `-MIN` overflows: a build with overflow checks panics.
            let x = v.into_int_value();
            let min = self.int_min(t)?;
            let is_min = self.builder.build_int_compare(IntPredicate::EQ, x, min, "neg_min")?;
            self.raise(is_min, Fault::NegOverflow)?;
        }
        let b = &self.builder;
        if op == UnaryOp::Neg && t.is_half() {
            // `half`'s `Neg` flips the sign bit, a NaN's too: done on the bits, since the
            // GPU's `neg.f16` need not keep a NaN's sign.
            let x = v.into_int_value();
            return Ok(b.build_xor(x, x.get_type().const_int(0x8000, false), "neg")?.into());
        }
        Ok(match (op, t.is_float()) {
            (UnaryOp::Neg, true) => b.build_float_neg(v.into_float_value(), "neg")?.into(),
            // Wrapping negation, as in release builds (`-i32::MIN == i32::MIN`).
            (UnaryOp::Neg, false) => self.int_neg(v.into_int_value())?.into(),
            (UnaryOp::Not, _) => b.build_not(v.into_int_value(), "not")?.into(),
        })
    }

    pub(super) fn binary(
        &mut self,
        op: BinaryOp,
        l: BasicValueEnum<'ctx>,
        lt: ScalarType,
        r: BasicValueEnum<'ctx>,
        rt: ScalarType,
        rhs: &Expr,
    ) -> LResult<BasicValueEnum<'ctx>> {
        if lt.is_half() {
            // As the `half` crate computes: in `f32`, rounded once to the half type (exact
            // for `+ - * / %`, since `f32` has more than twice the bits); comparisons of the
            // widened values are the half values' own.
            let x = self.widen_half(l, lt)?;
            let y = self.widen_half(r, lt)?;
            let v = self.binary(op, x.into(), ScalarType::F32, y.into(), ScalarType::F32, rhs)?;
            if op.is_comparison() {
                return Ok(v);
            }
            return self.round_half(v.into_float_value(), lt);
        }
        let b = &self.builder;
        if lt.is_float() {
            let (x, y) = (l.into_float_value(), r.into_float_value());
            let pred = |p| -> LResult<BasicValueEnum<'ctx>> { Ok(b.build_float_compare(p, x, y, "cmp")?.into()) };
            // No fast-math flags: IEEE results, bit for bit what the CPU computes (but for
            // `contract` where a product is exact, which changes no bit: `exact_contract`).
            return match op {
                BinaryOp::Add => Ok(exact_contract(b.build_float_add(x, y, "add")?, x, y).into()),
                BinaryOp::Sub => Ok(exact_contract(b.build_float_sub(x, y, "sub")?, x, y).into()),
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
    pub(super) fn int_min(&self, t: ScalarType) -> LResult<IntValue<'ctx>> {
        match t.int_range() {
            Some((lo, _)) => Ok(self.int_type(t).const_int(lo as i64 as u64, false)),
            None => Err(internal(format!("{t} is not an integer"), self.func.span)),
        }
    }

    /// Raises `fault` where `cond` holds (see [`FnLower::raise_if`]).
    pub(super) fn raise(&mut self, cond: IntValue<'ctx>, fault: Fault) -> LResult<()> {
        let code = self.cx.i32_type().const_int(fault.code() as u64, false);
        self.raise_if(cond, code)
    }

    /// `x << y` / `x >> y`: the amount is taken modulo the width, as `wrapping_shl` does
    /// (and as release builds do): reduced in its own type, then brought to `x`'s width.
    pub(super) fn shift(
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
    pub(super) fn raw_div_rem(
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
    pub(super) fn div_guard(
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

    pub(super) fn logical(&mut self, op: LogicalOp, a: &Expr, b: &Expr) -> LResult<Value<'ctx>> {
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

    /// A half type's bits as an `f32` (exact).
    pub(super) fn widen_half(
        &self,
        v: BasicValueEnum<'ctx>,
        t: ScalarType,
    ) -> LResult<inkwell::values::FloatValue<'ctx>> {
        let b = &self.builder;
        let h = b.build_bit_cast(v, super::types::half_float_type(self.cx, t), "half")?.into_float_value();
        Ok(b.build_float_ext(h, self.cx.f32_type(), "wide")?)
    }

    /// An `f32` or `f64` rounded to the half type `t` (to nearest, ties to even), as its
    /// bits.
    pub(super) fn round_half(
        &self,
        v: inkwell::values::FloatValue<'ctx>,
        t: ScalarType,
    ) -> LResult<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        if t == ScalarType::BF16 && self.bf16_round_calls {
            let wide = v.get_type();
            let name = if wide == self.cx.f64_type() { super::ROUND_BF16_F64 } else { super::ROUND_BF16_F32 };
            let f = self.module.get_function(name).unwrap_or_else(|| {
                self.module.add_function(name, self.cx.i16_type().fn_type(&[wide.into()], false), None)
            });
            let call = b.build_call(f, &[v.into()], "round")?;
            return super::basic_value(call.try_as_basic_value(), self.func.span);
        }
        let h = b.build_float_trunc(v, super::types::half_float_type(self.cx, t), "round")?;
        Ok(b.build_bit_cast(h, self.cx.i16_type(), "bits")?)
    }

    /// `as`, with Rust's semantics: float→int saturates and maps NaN to 0, int→int
    /// truncates or extends by the source's signedness, int→float rounds to nearest.
    pub(super) fn cast(
        &self,
        v: BasicValueEnum<'ctx>,
        from: ScalarType,
        to: ScalarType,
    ) -> LResult<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        if from == to {
            return Ok(v);
        }
        if to.is_half() {
            // `f16::from(u8)`: exact in `f32`, and so in the half type; `from_f32` and
            // `from_f64` round once, to nearest, ties to even (LLVM's `fptrunc`).
            let v = if from.is_half() {
                self.widen_half(v, from)?.into()
            } else if from.is_float() {
                v
            } else {
                self.cast(v, from, ScalarType::F32)?
            };
            return self.round_half(v.into_float_value(), to);
        }
        if from.is_half() {
            // `to_f32`, `to_f64`: exact.
            let wide = self.widen_half(v, from)?;
            let target = llvm_type(self.cx, to).into_float_type();
            return Ok(if to == ScalarType::F32 {
                wide.into()
            } else {
                b.build_float_ext(wide, target, "fext")?.into()
            });
        }
        // Between floats of every width (a half type only with `f32`/`f64`: `from_f32`,
        // `from_f64`, `to_f32`, `to_f64`), rounding once to nearest, ties to even.
        Ok(match (from.is_floating(), to.is_floating()) {
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
}

/// `sum` (`x + y` or `x - y`), allowed to fuse with an operand that is an exact product
/// into one `fma` (LLVM's `contract` on both). Exact: `fma(a, b, c)` rounds `a * b + c`
/// once, and where `a * b` needs no rounding that is what the two operations give, so no
/// bit of any result changes (Rust's semantics), while the GPU saves an instruction. The
/// product is known exact when it scales an integer converted to a float by a power of two
/// that keeps every such value normal (`x as f32 * 2^-32`, how random floats are made).
fn exact_contract<'ctx>(sum: FloatValue<'ctx>, x: FloatValue<'ctx>, y: FloatValue<'ctx>) -> FloatValue<'ctx> {
    let products: Vec<InstructionValue<'ctx>> =
        [x, y].into_iter().filter_map(|v| v.as_instruction()).filter(|m| exact_product(*m)).collect();
    if let (false, Some(add)) = (products.is_empty(), sum.as_instruction()) {
        for inst in products.into_iter().chain([add]) {
            // Both carry the flag (LLVM fuses only then); nothing else is allowed.
            let _ = inst.set_fast_math_flags(FastMathFlags::AllowContract);
        }
    }
    sum
}

/// Whether `m` is `c * 2^k` or `2^k * c` with `c` an integer converted to a float, and the
/// product of every such value normal and finite (so exact): with `c`'s integer of `w`
/// bits, `|c|` is 0 or in `[1, 2^w]`, and `[2^k, 2^(w + k)]` must lie within the float's
/// normal range.
fn exact_product(m: InstructionValue<'_>) -> bool {
    if m.get_opcode() != InstructionOpcode::FMul {
        return false;
    }
    let (Some(p), Some(q)) = (m.get_operand(0).and_then(|o| o.value()), m.get_operand(1).and_then(|o| o.value()))
    else {
        return false;
    };
    let (Ok(p), Ok(q)) = (FloatValue::try_from(p), FloatValue::try_from(q)) else { return false };
    let double = p.get_type().get_bit_width() == 64;
    let (min_exp, max_exp) = if double { (-1022, 1023) } else { (-126, 127) };
    let scaled = |c: FloatValue<'_>, k: FloatValue<'_>| -> bool {
        let Some((factor, _)) = k.get_constant() else { return false };
        let Some(conv) = c.as_instruction() else { return false };
        if !matches!(conv.get_opcode(), InstructionOpcode::UIToFP | InstructionOpcode::SIToFP) {
            return false;
        }
        let Some(width) = conv
            .get_operand(0)
            .and_then(|o| o.value())
            .filter(|v| v.is_int_value())
            .map(|v| v.into_int_value().get_type().get_bit_width() as i32)
        else {
            return false;
        };
        // `factor` a positive power of two: 2^k.
        let (mantissa, exp) = frexp(factor);
        let k = exp - 1;
        mantissa == 0.5 && k >= min_exp && width + k <= max_exp
    };
    scaled(p, q) || scaled(q, p)
}

/// `x` as `m * 2^e` with `m` in `[0.5, 1)` (for a finite, nonzero `x`; `(0, 0)` else).
fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (0.0, 0);
    }
    let bits = x.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // Subnormal: no power of two in the range this is used for.
        return (0.0, 0);
    }
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (if x < 0.0 { -m } else { m }, exp - 1022)
}
