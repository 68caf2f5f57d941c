//! Lowering of the built-in methods. Each follows the Rust standard library's own
//! definition (release build) so that the GPU computes the same bits: `round` as
//! "trunc, then step away from zero on a half", `rem_euclid` from `%`, `powi` with the
//! repeated squaring of compiler-rt's `__powisf2`, integer `pow` by squaring with wrapping
//! multiplication. Transcendental functions call NVIDIA's libdevice.

use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

use super::arith::Overflow;
use super::types::{bits_type, llvm_type};
use super::{FnLower, LResult, Value, basic_value, internal};
use crate::abi::{BoundsType, Fault, ThreadFault};
use crate::intrinsic::Intrinsic;
use crate::ir::Expr;
use crate::ty::ScalarType;

impl<'ctx> FnLower<'_, 'ctx> {
    pub(super) fn intrinsic(&mut self, i: Intrinsic, args: &[Expr]) -> LResult<Value<'ctx>> {
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            match self.expr(a)? {
                Some(v) => vals.push(v),
                None => return Ok(None),
            }
        }
        let t = self.scalar_of(&args[0])?;
        let v = if t.is_half() {
            self.half_intrinsic(i, t, &vals)?
        } else if t.is_float() {
            self.float_intrinsic(i, t, &vals)?
        } else {
            self.int_intrinsic(i, t, &vals)?
        };
        Ok(Some(v))
    }

    /// A method of `half::f16`/`half::bf16`, as the `half` crate computes it: on the
    /// values widened to `f32` (exactly), the result rounded back where it is a half.
    fn half_intrinsic(
        &mut self,
        i: Intrinsic,
        t: ScalarType,
        vals: &[BasicValueEnum<'ctx>],
    ) -> LResult<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        // The sign is a bit, read and written as `half` does it, on the values' bits (what
        // they are here): widening a NaN may drop its sign (`cvt.f32.f16` makes every NaN
        // canonical).
        let i16t = self.cx.i16_type();
        let sign = i16t.const_int(0x8000, false);
        match i {
            Intrinsic::IsSignNegative | Intrinsic::IsSignPositive => {
                let set = b.build_and(vals[0].into_int_value(), sign, "sign")?;
                let pred =
                    if i == Intrinsic::IsSignNegative { inkwell::IntPredicate::NE } else { inkwell::IntPredicate::EQ };
                return Ok(b.build_int_compare(pred, set, i16t.const_zero(), "is")?.into());
            }
            Intrinsic::Copysign => {
                let magnitude = b.build_and(vals[0].into_int_value(), i16t.const_int(0x7fff, false), "magnitude")?;
                let from = b.build_and(vals[1].into_int_value(), sign, "sign")?;
                return Ok(b.build_or(magnitude, from, "copysign")?.into());
            }
            _ => {}
        }
        let mut wide = Vec::with_capacity(vals.len());
        for v in vals {
            wide.push(BasicValueEnum::from(self.widen_half(*v, t)?));
        }
        let b = &self.builder;
        match i {
            // `half`'s own rule, not `f32::max`'s: `if self.is_nan() || other > self { other }
            // else { self }` (so `max(0, -0)` is `0`, the receiver).
            Intrinsic::Max | Intrinsic::Min => {
                let (x, y) = (wide[0].into_float_value(), wide[1].into_float_value());
                let nan = b.build_float_compare(inkwell::FloatPredicate::UNO, x, x, "nan")?;
                let pred =
                    if i == Intrinsic::Max { inkwell::FloatPredicate::OGT } else { inkwell::FloatPredicate::OLT };
                let other_wins = b.build_float_compare(pred, y, x, "cmp")?;
                let take_other = b.build_or(nan, other_wins, "other")?;
                Ok(b.build_select(take_other, vals[1], vals[0], "pick")?)
            }
            _ => {
                let v = self.float_intrinsic(i, ScalarType::F32, &wide)?;
                if !v.is_float_value() {
                    return Ok(v); // a predicate
                }
                self.round_half(v.into_float_value(), t)
            }
        }
    }

    /// The declaration of the LLVM intrinsic `name`, overloaded on `types`.
    pub(super) fn intrinsic_decl(
        &self,
        name: &str,
        types: &[BasicTypeEnum<'ctx>],
    ) -> LResult<inkwell::values::FunctionValue<'ctx>> {
        inkwell::intrinsics::Intrinsic::find(name)
            .and_then(|i| i.get_declaration(self.module, types))
            .ok_or_else(|| internal(format!("LLVM has no intrinsic {name}"), self.func.span))
    }

    /// Calls the LLVM intrinsic `name`, overloaded on `types`.
    pub(super) fn llvm(
        &self,
        name: &str,
        types: &[BasicTypeEnum<'ctx>],
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> LResult<BasicValueEnum<'ctx>> {
        let decl = self.intrinsic_decl(name, types)?;
        let call = self.builder.build_call(decl, args, "intrinsic")?;
        basic_value(call.try_as_basic_value(), self.func.span)
    }

    /// Calls `name` from libdevice (declared here, linked before optimisation).
    pub(super) fn call_libdevice(
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

    fn f1(&self, name: &str, x: FloatValue<'ctx>) -> LResult<FloatValue<'ctx>> {
        Ok(self.llvm(name, &[x.get_type().into()], &[x.into()])?.into_float_value())
    }

    fn f2(&self, name: &str, x: FloatValue<'ctx>, y: FloatValue<'ctx>) -> LResult<FloatValue<'ctx>> {
        Ok(self.llvm(name, &[x.get_type().into()], &[x.into(), y.into()])?.into_float_value())
    }

    fn fconst(&self, x: FloatValue<'ctx>, t: ScalarType, v: f64) -> FloatValue<'ctx> {
        // An f32 constant is given exactly (as the f32 value widened to f64).
        let v = if t == ScalarType::F32 { v as f32 as f64 } else { v };
        x.get_type().const_float(v)
    }

    fn fcmp(&self, p: FloatPredicate, x: FloatValue<'ctx>, y: FloatValue<'ctx>) -> LResult<IntValue<'ctx>> {
        Ok(self.builder.build_float_compare(p, x, y, "fcmp")?)
    }

    /// `clamp`'s fault where `bad`: in a kernel, its record keeps the bounds (`lo`, `hi` of
    /// type `t`) and their type, so that the message names them as Rust's panic does
    /// (`min > max. min = 3, max = 1`); elsewhere the host gives the message.
    fn raise_clamp(
        &mut self,
        bad: IntValue<'ctx>,
        fault: Fault,
        t: ScalarType,
        lo: BasicValueEnum<'ctx>,
        hi: BasicValueEnum<'ctx>,
    ) -> LResult<()> {
        let kind = bounds_type(t);
        if !self.fault_record || kind.is_none() {
            return self.raise(bad, fault);
        }
        let i64t = self.cx.i64_type();
        let bits = |v: BasicValueEnum<'ctx>| -> LResult<IntValue<'ctx>> {
            let b = &self.builder;
            let v = match v {
                BasicValueEnum::FloatValue(f) => b.build_bit_cast(f, bits_type(self.cx, t), "bits")?.into_int_value(),
                other => other.into_int_value(),
            };
            Ok(b.build_int_z_extend_or_bit_cast(v, i64t, "bound")?)
        };
        let (lo, hi) = (bits(lo)?, bits(hi)?);
        let code = fault.code() | kind.map_or(0, BoundsType::code) << ThreadFault::BOUNDS_SHIFT;
        let code = self.cx.i32_type().const_int(code as u64, false);
        self.raise_record(bad, code, lo, hi)
    }

    fn fselect(&self, c: IntValue<'ctx>, a: FloatValue<'ctx>, b: FloatValue<'ctx>) -> LResult<FloatValue<'ctx>> {
        Ok(self.builder.build_select(c, a, b, "sel")?.into_float_value())
    }

    /// `f32::min` (`better` = `OLT`) or `f32::max` (`OGT`): `y` when `x` is NaN, else `y`
    /// when it is better than `x` (never when `y` is NaN), else `x`. Not `llvm.minnum`/
    /// `llvm.maxnum`: LLVM 19 takes `maxnum(x, y)` to be non-negative when `x` is (say
    /// `fabs(z)`), although a NaN `x` gives `y`, and folds `x.abs().max(-1.0) < 0.0` to
    /// false and `x.abs().max(-1.0).abs()` to the negative `-1.0` for a NaN `x`.
    fn min_max(&self, better: FloatPredicate, x: FloatValue<'ctx>, y: FloatValue<'ctx>) -> LResult<FloatValue<'ctx>> {
        let y_better = self.fcmp(better, y, x)?;
        let ordered = self.fselect(y_better, y, x)?;
        let x_nan = self.fcmp(FloatPredicate::UNO, x, x)?;
        self.fselect(x_nan, y, ordered)
    }

    fn fmod(&self, t: ScalarType, x: FloatValue<'ctx>, y: FloatValue<'ctx>) -> LResult<FloatValue<'ctx>> {
        let name = if t == ScalarType::F32 { "__nv_fmodf" } else { "__nv_fmod" };
        Ok(self.call_libdevice(name, t, &[x.into(), y.into()])?.into_float_value())
    }

    fn float_intrinsic(
        &mut self,
        i: Intrinsic,
        t: ScalarType,
        vals: &[BasicValueEnum<'ctx>],
    ) -> LResult<BasicValueEnum<'ctx>> {
        use Intrinsic::*;
        let b = &self.builder;
        let x = vals[0].into_float_value();
        let y = || vals[1].into_float_value();
        let r: FloatValue<'ctx> = match i {
            Abs => self.f1("llvm.fabs", x)?,
            Signum => {
                let nan = self.fcmp(FloatPredicate::UNO, x, x)?;
                let s = self.f2("llvm.copysign", self.fconst(x, t, 1.0), x)?;
                self.fselect(nan, x, s)?
            }
            Min => self.min_max(FloatPredicate::OLT, x, y())?,
            Max => self.min_max(FloatPredicate::OGT, x, y())?,
            Clamp => {
                let (lo, hi) = (y(), vals[2].into_float_value());
                // Rust asserts `min <= max` (false when either is NaN).
                let ordered = self.fcmp(FloatPredicate::OLE, lo, hi)?;
                let bad = b.build_not(ordered, "bad_bounds")?;
                self.raise_clamp(bad, Fault::FloatClampBounds, t, vals[1], vals[2])?;
                let below = self.fcmp(FloatPredicate::OLT, x, lo)?;
                let r = self.fselect(below, lo, x)?;
                let above = self.fcmp(FloatPredicate::OGT, r, hi)?;
                self.fselect(above, hi, r)?
            }
            RemEuclid => {
                let r = self.fmod(t, x, y())?;
                let neg = self.fcmp(FloatPredicate::OLT, r, self.fconst(x, t, 0.0))?;
                let up = b.build_float_add(r, self.f1("llvm.fabs", y())?, "up")?;
                self.fselect(neg, up, r)?
            }
            DivEuclid => {
                let q = self.f1("llvm.trunc", b.build_float_div(x, y(), "q")?)?;
                let r = self.fmod(t, x, y())?;
                let neg = self.fcmp(FloatPredicate::OLT, r, self.fconst(x, t, 0.0))?;
                let pos_divisor = self.fcmp(FloatPredicate::OGT, y(), self.fconst(x, t, 0.0))?;
                let one = self.fconst(x, t, 1.0);
                let adjusted =
                    self.fselect(pos_divisor, b.build_float_sub(q, one, "q1")?, b.build_float_add(q, one, "q1")?)?;
                self.fselect(neg, adjusted, q)?
            }
            Copysign => self.f2("llvm.copysign", x, y())?,
            Floor => self.f1("llvm.floor", x)?,
            Ceil => self.f1("llvm.ceil", x)?,
            Trunc => self.f1("llvm.trunc", x)?,
            RoundTiesEven => self.f1("llvm.roundeven", x)?,
            Round => {
                // Halfway cases away from zero. `x - trunc(x)` is exact.
                let tr = self.f1("llvm.trunc", x)?;
                let frac = self.f1("llvm.fabs", b.build_float_sub(x, tr, "frac")?)?;
                let half = self.fcmp(FloatPredicate::OGE, frac, self.fconst(x, t, 0.5))?;
                let step = self.f2("llvm.copysign", self.fconst(x, t, 1.0), x)?;
                let away = b.build_float_add(tr, step, "away")?;
                self.fselect(half, away, tr)?
            }
            Fract => {
                let tr = self.f1("llvm.trunc", x)?;
                b.build_float_sub(x, tr, "fract")?
            }
            Sqrt => self.f1("llvm.sqrt", x)?,
            MulAdd => {
                let z = vals[2].into_float_value();
                self.llvm("llvm.fma", &[x.get_type().into()], &[x.into(), y().into(), z.into()])?.into_float_value()
            }
            Recip => b.build_float_div(self.fconst(x, t, 1.0), x, "recip")?,
            ToDegrees => {
                // The standard library's constants: a correctly rounded literal for f32,
                // `180 / π` computed in f64 for f64.
                #[allow(clippy::excessive_precision)]
                let k = if t == ScalarType::F32 {
                    57.2957795130823208767981548141051703_f32 as f64
                } else {
                    180.0f64 / std::f64::consts::PI
                };
                b.build_float_mul(x, self.fconst(x, t, k), "deg")?
            }
            ToRadians => {
                let k = if t == ScalarType::F32 {
                    (std::f32::consts::PI / 180.0f32) as f64
                } else {
                    std::f64::consts::PI / 180.0
                };
                b.build_float_mul(x, self.fconst(x, t, k), "rad")?
            }
            IsNan => return Ok(self.fcmp(FloatPredicate::UNO, x, x)?.into()),
            IsInfinite => {
                let a = self.f1("llvm.fabs", x)?;
                return Ok(self.fcmp(FloatPredicate::OEQ, a, self.fconst(x, t, f64::INFINITY))?.into());
            }
            IsFinite => {
                let a = self.f1("llvm.fabs", x)?;
                return Ok(self.fcmp(FloatPredicate::OLT, a, self.fconst(x, t, f64::INFINITY))?.into());
            }
            IsSignNegative | IsSignPositive => {
                let it = self.int_type(if t == ScalarType::F32 { ScalarType::I32 } else { ScalarType::I64 });
                let bits = b.build_bit_cast(x, it, "bits")?.into_int_value();
                let p = if i == IsSignNegative { IntPredicate::SLT } else { IntPredicate::SGE };
                return Ok(b.build_int_compare(p, bits, it.const_zero(), "sign")?.into());
            }
            Powi => self.powi(t, x, vals[1].into_int_value())?,
            Log => {
                // `self.ln() / base.ln()`, as Rust defines it.
                let ln = |v: FloatValue<'ctx>| -> LResult<FloatValue<'ctx>> {
                    let name = Ln.libdevice_name(t).expect("ln is in libdevice");
                    Ok(self.call_libdevice(&name, t, &[v.into()])?.into_float_value())
                };
                let (a, c) = (ln(x)?, ln(y())?);
                b.build_float_div(a, c, "log")?
            }
            _ => {
                let name = i
                    .libdevice_name(t)
                    .ok_or_else(|| internal(format!("{i:?} has no lowering for {t}"), self.func.span))?;
                // libdevice's fast approximations (single precision only).
                let fast = [
                    "__nv_sinf",
                    "__nv_cosf",
                    "__nv_tanf",
                    "__nv_expf",
                    "__nv_logf",
                    "__nv_log2f",
                    "__nv_log10f",
                    "__nv_powf",
                ];
                let name = if self.fastmath && fast.contains(&name.as_str()) {
                    name.replacen("__nv_", "__nv_fast_", 1)
                } else {
                    name
                };
                let args: Vec<BasicMetadataValueEnum<'ctx>> = vals.iter().map(|v| (*v).into()).collect();
                self.call_libdevice(&name, t, &args)?.into_float_value()
            }
        };
        Ok(r.into())
    }

    /// `x.powi(n)`: compiler-rt's `__powisf2`/`__powidf2` (what the CPU calls), multiply
    /// for each set bit while squaring, then `1 / r` for a negative exponent.
    fn powi(&mut self, t: ScalarType, x: FloatValue<'ctx>, n: IntValue<'ctx>) -> LResult<FloatValue<'ctx>> {
        let i32t = self.cx.i32_type();
        let ft = x.get_type();
        let (r_slot, a_slot, n_slot) =
            (self.alloca(ft.into(), "r")?, self.alloca(ft.into(), "a")?, self.alloca(i32t.into(), "n")?);
        let b = &self.builder;
        b.build_store(r_slot, self.fconst(x, t, 1.0))?;
        b.build_store(a_slot, x)?;
        b.build_store(n_slot, n)?;
        // One block, which squares `a` even after the last bit (unused then): the loop is in
        // the rotated form LLVM's loop passes want, so they need not rewrite it.
        let body = self.cx.append_basic_block(self.llfn, "powi");
        let done = self.cx.append_basic_block(self.llfn, "powi_done");
        b.build_unconditional_branch(body)?;
        b.position_at_end(body);
        let (r, a, k) = (
            b.build_load(ft, r_slot, "r")?.into_float_value(),
            b.build_load(ft, a_slot, "a")?.into_float_value(),
            b.build_load(i32t, n_slot, "n")?.into_int_value(),
        );
        let odd = b.build_int_compare(
            IntPredicate::NE,
            b.build_and(k, i32t.const_int(1, false), "bit")?,
            i32t.const_zero(),
            "odd",
        )?;
        let ra = b.build_float_mul(r, a, "ra")?;
        let r = self.fselect(odd, ra, r)?;
        b.build_store(r_slot, r)?;
        // C's `b /= 2` truncates towards zero.
        let k = b.build_int_signed_div(k, i32t.const_int(2, false), "half")?;
        b.build_store(n_slot, k)?;
        b.build_store(a_slot, b.build_float_mul(a, a, "aa")?)?;
        let finished = b.build_int_compare(IntPredicate::EQ, k, i32t.const_zero(), "finished")?;
        b.build_conditional_branch(finished, done, body)?;
        b.position_at_end(done);
        let r = b.build_load(ft, r_slot, "r")?.into_float_value();
        let negative = b.build_int_compare(IntPredicate::SLT, n, i32t.const_zero(), "negative")?;
        let inv = b.build_float_div(self.fconst(x, t, 1.0), r, "inv")?;
        self.fselect(negative, inv, r)
    }

    fn int_intrinsic(
        &mut self,
        i: Intrinsic,
        t: ScalarType,
        vals: &[BasicValueEnum<'ctx>],
    ) -> LResult<BasicValueEnum<'ctx>> {
        use Intrinsic::*;
        let ty = self.int_type(t);
        let signed = t.is_signed_int();
        let x = vals[0].into_int_value();
        let y = || vals[1].into_int_value();
        if self.overflow == crate::ir::IntOverflow::Panic && i.overflows(t) {
            // A build with overflow checks panics where these wrap.
            if i == Pow {
                let (r, overflowed) = self.int_pow(t, x, y(), true)?;
                self.raise(overflowed, Fault::MulOverflow)?;
                return Ok(r.into());
            }
            let is_min = self.builder.build_int_compare(IntPredicate::EQ, x, self.int_min(t)?, "abs_min")?;
            self.raise(is_min, Fault::NegOverflow)?;
        }
        let (lt, gt) =
            if signed { (IntPredicate::SLT, IntPredicate::SGT) } else { (IntPredicate::ULT, IntPredicate::UGT) };
        let zero = ty.const_zero();
        let (min, max) = match t.int_range() {
            Some((lo, hi)) => (ty.const_int(lo as i64 as u64, false), ty.const_int(hi as i64 as u64, false)),
            None => return Err(internal(format!("{t} is not an integer"), self.func.span)),
        };
        let b = &self.builder;
        let cmp = |p, a: IntValue<'ctx>, c: IntValue<'ctx>| -> LResult<IntValue<'ctx>> {
            Ok(b.build_int_compare(p, a, c, "icmp")?)
        };
        let sel = |c: IntValue<'ctx>, a: IntValue<'ctx>, e: IntValue<'ctx>| -> LResult<IntValue<'ctx>> {
            Ok(b.build_select(c, a, e, "sel")?.into_int_value())
        };
        let to_u32 = |v: IntValue<'ctx>| -> LResult<BasicValueEnum<'ctx>> {
            Ok(b.build_int_cast_sign_flag(v, self.cx.i32_type(), false, "u32")?.into())
        };
        // Wrapping absolute value (`i32::MIN.abs()` is `i32::MIN` in release builds).
        let abs = |v: IntValue<'ctx>| -> LResult<IntValue<'ctx>> {
            let neg = self.int_neg(v)?;
            sel(cmp(IntPredicate::SLT, v, zero)?, neg, v)
        };
        let r: IntValue<'ctx> = match i {
            Abs | WrappingAbs | UnsignedAbs => abs(x)?,
            Signum => {
                let pos = b.build_int_z_extend(cmp(IntPredicate::SGT, x, zero)?, ty, "pos")?;
                let neg = b.build_int_z_extend(cmp(IntPredicate::SLT, x, zero)?, ty, "neg")?;
                b.build_int_sub(pos, neg, "signum")?
            }
            Min => sel(cmp(gt, x, y())?, y(), x)?,
            Max => sel(cmp(lt, x, y())?, y(), x)?,
            Clamp => {
                let (lo, hi) = (y(), vals[2].into_int_value());
                let bad = cmp(gt, lo, hi)?;
                self.raise_clamp(bad, Fault::IntClampBounds, t, vals[1], vals[2])?;
                let b = &self.builder;
                let r = b.build_select(b.build_int_compare(gt, x, hi, "above")?, hi, x, "sel")?.into_int_value();
                b.build_select(b.build_int_compare(lt, x, lo, "below")?, lo, r, "sel")?.into_int_value()
            }
            DivEuclid | RemEuclid => {
                let is_div = i == DivEuclid;
                let guard = self.div_guard(is_div, x, y(), t, Overflow::Fault)?;
                let q = self.raw_div_rem(true, x, guard.divisor, t)?;
                let r = self.raw_div_rem(false, x, guard.divisor, t)?;
                if !signed {
                    if is_div { q } else { r }
                } else {
                    let b = &self.builder;
                    let neg = b.build_int_compare(IntPredicate::SLT, r, zero, "neg")?;
                    if is_div {
                        let one = ty.const_int(1, false);
                        let pos_divisor = b.build_int_compare(IntPredicate::SGT, y(), zero, "pos")?;
                        let adjusted = b
                            .build_select(
                                pos_divisor,
                                b.build_int_sub(q, one, "q1")?,
                                b.build_int_add(q, one, "q1")?,
                                "adj",
                            )?
                            .into_int_value();
                        b.build_select(neg, adjusted, q, "q")?.into_int_value()
                    } else {
                        // `r.wrapping_add(rhs.wrapping_abs())`
                        let neg_y = self.int_neg(y())?;
                        let ay = b.build_select(
                            b.build_int_compare(IntPredicate::SLT, y(), zero, "ny")?,
                            neg_y,
                            y(),
                            "absy",
                        )?;
                        let up = b.build_int_add(r, ay.into_int_value(), "up")?;
                        b.build_select(neg, up, r, "r")?.into_int_value()
                    }
                }
            }
            DivCeil => {
                // `self / rhs`, rounded up: the quotient, plus one where a remainder is left
                // (unsigned only, as in std; a zero divisor panics as `/` does).
                let guard = self.div_guard(true, x, y(), t, Overflow::Fault)?;
                let q = self.raw_div_rem(true, x, guard.divisor, t)?;
                let r = self.raw_div_rem(false, x, guard.divisor, t)?;
                let b = &self.builder;
                let left = b.build_int_compare(IntPredicate::NE, r, zero, "left")?;
                let up = b.build_int_z_extend(left, ty, "up")?;
                b.build_int_add(q, up, "ceil")?
            }
            AbsDiff => {
                let (d1, d2) = (b.build_int_sub(y(), x, "d")?, b.build_int_sub(x, y(), "d")?);
                sel(cmp(lt, x, y())?, d1, d2)?
            }
            CountOnes => return to_u32(self.llvm("llvm.ctpop", &[ty.into()], &[x.into()])?.into_int_value()),
            CountZeros => {
                let inv = b.build_not(x, "inv")?;
                return to_u32(self.llvm("llvm.ctpop", &[ty.into()], &[inv.into()])?.into_int_value());
            }
            LeadingZeros | TrailingZeros => {
                let name = if i == LeadingZeros { "llvm.ctlz" } else { "llvm.cttz" };
                let no_poison = self.cx.bool_type().const_zero();
                return to_u32(self.llvm(name, &[ty.into()], &[x.into(), no_poison.into()])?.into_int_value());
            }
            RotateLeft | RotateRight => {
                // The amount modulo the width, as LLVM's funnel shifts take it.
                let n = b.build_int_cast_sign_flag(y(), ty, false, "n")?;
                let name = if i == RotateLeft { "llvm.fshl" } else { "llvm.fshr" };
                self.llvm(name, &[ty.into()], &[x.into(), x.into(), n.into()])?.into_int_value()
            }
            SwapBytes if t.bits() == 8 => x,
            SwapBytes => self.llvm("llvm.bswap", &[ty.into()], &[x.into()])?.into_int_value(),
            ReverseBits => self.llvm("llvm.bitreverse", &[ty.into()], &[x.into()])?.into_int_value(),
            IsPowerOfTwo => {
                let ones = self.llvm("llvm.ctpop", &[ty.into()], &[x.into()])?.into_int_value();
                return Ok(cmp(IntPredicate::EQ, ones, ty.const_int(1, false))?.into());
            }
            WrappingAdd => b.build_int_add(x, y(), "add")?,
            WrappingSub => b.build_int_sub(x, y(), "sub")?,
            WrappingMul => b.build_int_mul(x, y(), "mul")?,
            WrappingNeg => self.int_neg(x)?,
            WrappingShl | WrappingShr => self.shift(i == WrappingShl, x, t, y(), ScalarType::U32)?,
            WrappingDiv | WrappingRem => {
                let is_div = i == WrappingDiv;
                let guard = self.div_guard(is_div, x, y(), t, Overflow::Wrap)?;
                // `MIN / 1` is `MIN` and `MIN % 1` is 0: the wrapping results of `MIN / -1`.
                self.raw_div_rem(is_div, x, guard.divisor, t)?
            }
            SaturatingDiv => {
                let guard = self.div_guard(true, x, y(), t, Overflow::Wrap)?;
                let q = self.raw_div_rem(true, x, guard.divisor, t)?;
                let b = &self.builder;
                b.build_select(guard.overflow, max, q, "sat")?.into_int_value()
            }
            SaturatingAdd | SaturatingSub => {
                let name = match (i == SaturatingAdd, signed) {
                    (true, true) => "llvm.sadd.sat",
                    (true, false) => "llvm.uadd.sat",
                    (false, true) => "llvm.ssub.sat",
                    (false, false) => "llvm.usub.sat",
                };
                self.llvm(name, &[ty.into()], &[x.into(), y().into()])?.into_int_value()
            }
            SaturatingMul => {
                let (product, overflow) = self.mul_with_overflow(t, x, y())?;
                let b = &self.builder;
                let saturated = if signed {
                    let xn = b.build_int_compare(IntPredicate::SLT, x, zero, "xn")?;
                    let yn = b.build_int_compare(IntPredicate::SLT, y(), zero, "yn")?;
                    let same = b.build_int_compare(IntPredicate::EQ, xn, yn, "same")?;
                    b.build_select(same, max, min, "sat")?.into_int_value()
                } else {
                    max
                };
                b.build_select(overflow, saturated, product, "satmul")?.into_int_value()
            }
            SaturatingNeg => sel(cmp(IntPredicate::EQ, x, min)?, max, self.int_neg(x)?)?,
            SaturatingAbs => sel(cmp(IntPredicate::EQ, x, min)?, max, abs(x)?)?,
            Pow | WrappingPow => self.int_pow(t, x, y(), false)?.0,
            SaturatingPow => {
                let (r, overflow) = self.int_pow(t, x, y(), true)?;
                let b = &self.builder;
                let saturated = if signed {
                    // `None if self < 0 && exp % 2 == 1 => MIN`
                    let neg = b.build_int_compare(IntPredicate::SLT, x, zero, "neg")?;
                    let odd_bit = b.build_and(y(), self.cx.i32_type().const_int(1, false), "odd")?;
                    let odd = b.build_int_compare(IntPredicate::NE, odd_bit, self.cx.i32_type().const_zero(), "odd")?;
                    let to_min = b.build_and(neg, odd, "to_min")?;
                    b.build_select(to_min, min, max, "sat")?.into_int_value()
                } else {
                    max
                };
                b.build_select(overflow, saturated, r, "satpow")?.into_int_value()
            }
            _ => return Err(internal(format!("{i:?} is not an integer method"), self.func.span)),
        };
        // `abs_diff`/`unsigned_abs` return the unsigned type of the same width: the same bits.
        Ok(r.into())
    }

    /// `x * y` and whether it overflowed `t`.
    pub(super) fn mul_with_overflow(
        &self,
        t: ScalarType,
        x: IntValue<'ctx>,
        y: IntValue<'ctx>,
    ) -> LResult<(IntValue<'ctx>, IntValue<'ctx>)> {
        let name = if t.is_signed_int() { "llvm.smul.with.overflow" } else { "llvm.umul.with.overflow" };
        let pair = self.llvm(name, &[self.int_type(t).into()], &[x.into(), y.into()])?.into_struct_value();
        let b = &self.builder;
        Ok((
            b.build_extract_value(pair, 0, "product")?.into_int_value(),
            b.build_extract_value(pair, 1, "overflow")?.into_int_value(),
        ))
    }

    /// `x.pow(e)` as the standard library computes it: by squaring, returning as soon as
    /// the last bit is used (so no needless square can overflow). With `track_overflow`,
    /// also whether a multiplication overflowed (`checked_pow` semantics); the product
    /// wraps either way.
    fn int_pow(
        &mut self,
        t: ScalarType,
        x: IntValue<'ctx>,
        e: IntValue<'ctx>,
        track_overflow: bool,
    ) -> LResult<(IntValue<'ctx>, IntValue<'ctx>)> {
        let ty = self.int_type(t);
        let i32t = self.cx.i32_type();
        let bool_t = self.cx.bool_type();
        let acc_slot = self.alloca(ty.into(), "acc")?;
        let base_slot = self.alloca(ty.into(), "base")?;
        let exp_slot = self.alloca(i32t.into(), "exp")?;
        let ovf_slot = self.alloca(bool_t.into(), "ovf")?;
        let b = &self.builder;
        b.build_store(acc_slot, ty.const_int(1, false))?;
        b.build_store(base_slot, x)?;
        b.build_store(exp_slot, e)?;
        b.build_store(ovf_slot, bool_t.const_zero())?;
        let head = self.cx.append_basic_block(self.llfn, "pow");
        let odd_bb = self.cx.append_basic_block(self.llfn, "pow_odd");
        let next = self.cx.append_basic_block(self.llfn, "pow_next");
        let done = self.cx.append_basic_block(self.llfn, "pow_done");
        let is_zero = b.build_int_compare(IntPredicate::EQ, e, i32t.const_zero(), "e0")?;
        b.build_conditional_branch(is_zero, done, head)?;

        b.position_at_end(head);
        let k = b.build_load(i32t, exp_slot, "k")?.into_int_value();
        let bit = b.build_and(k, i32t.const_int(1, false), "bit")?;
        let odd = b.build_int_compare(IntPredicate::NE, bit, i32t.const_zero(), "odd")?;
        b.build_conditional_branch(odd, odd_bb, next)?;

        b.position_at_end(odd_bb);
        let acc = b.build_load(ty, acc_slot, "acc")?.into_int_value();
        let base = b.build_load(ty, base_slot, "base")?.into_int_value();
        let (product, o) = if track_overflow {
            self.mul_with_overflow(t, acc, base)?
        } else {
            (b.build_int_mul(acc, base, "p")?, bool_t.const_zero())
        };
        let b = &self.builder;
        b.build_store(acc_slot, product)?;
        let seen = b.build_load(bool_t, ovf_slot, "seen")?.into_int_value();
        b.build_store(ovf_slot, b.build_or(seen, o, "ovf")?)?;
        let last = b.build_int_compare(IntPredicate::EQ, k, i32t.const_int(1, false), "last")?;
        b.build_conditional_branch(last, done, next)?;

        b.position_at_end(next);
        let k = b.build_load(i32t, exp_slot, "k")?.into_int_value();
        b.build_store(exp_slot, b.build_right_shift(k, i32t.const_int(1, false), false, "k2")?)?;
        let base = b.build_load(ty, base_slot, "base")?.into_int_value();
        let (square, o) = if track_overflow {
            self.mul_with_overflow(t, base, base)?
        } else {
            (b.build_int_mul(base, base, "sq")?, bool_t.const_zero())
        };
        let b = &self.builder;
        b.build_store(base_slot, square)?;
        let seen = b.build_load(bool_t, ovf_slot, "seen")?.into_int_value();
        b.build_store(ovf_slot, b.build_or(seen, o, "ovf")?)?;
        b.build_unconditional_branch(head)?;

        b.position_at_end(done);
        Ok((
            b.build_load(ty, acc_slot, "pow")?.into_int_value(),
            b.build_load(bool_t, ovf_slot, "overflowed")?.into_int_value(),
        ))
    }
}

/// How a kernel's fault record names bounds of type `t` (`isize`/`usize` print as `i64`/`u64`).
fn bounds_type(t: ScalarType) -> Option<BoundsType> {
    use ScalarType::*;
    Some(match t {
        I8 => BoundsType::I8,
        I16 => BoundsType::I16,
        I32 => BoundsType::I32,
        I64 | Isize => BoundsType::I64,
        U8 => BoundsType::U8,
        U16 => BoundsType::U16,
        U32 => BoundsType::U32,
        U64 | Usize => BoundsType::U64,
        F32 => BoundsType::F32,
        F64 => BoundsType::F64,
        _ => return None,
    })
}
