//! 32 × 32 → 64-bit products written so that NVPTX selects `mul.wide.u32`.
//!
//! Rust spells a full 32-bit product `a as u64 * b as u64` (Philox's rounds, hashes,
//! `mulhi`). LLVM's optimiser keeps it as a 64-bit `mul` and often rewrites the widened
//! operand `zext(trunc x)` as `and x, 0xFFFFFFFF` (it merges truncations across `xor`s, so
//! a chain of rounds computes in 64 bits). NVPTX selects `mul.wide.u32` only for operands
//! that are zero extensions of 32-bit values or small constants; an `and` gives
//! `mul.lo.s64`, which `ptxas` expands into a wide multiply plus the high words' fix-ups
//! (one extra add per product in Philox's SASS on sm_90).
//!
//! After optimisation, and only there (the optimiser would undo it), each 64-bit `mul`
//! whose two operands are both known to fit in 32 bits gets each operand as an explicit
//! zero extension of its low word. The value is the same: a product of two numbers below
//! 2^32 is below 2^64, so the 64-bit product is exact either way. Nothing else changes.

use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::values::{AnyValue, BasicValueEnum, InstructionOpcode, InstructionValue, IntValue};

/// Rewrites every qualifying product in `module` (see the module's documentation).
pub fn widen_products<'ctx>(cx: &'ctx Context, module: &Module<'ctx>) -> Result<(), String> {
    let builder = cx.create_builder();
    let i32t = cx.i32_type();
    let i64t = cx.i64_type();
    for f in module.get_functions() {
        for bb in f.get_basic_blocks() {
            let products: Vec<InstructionValue<'ctx>> =
                bb.get_instructions().filter(|i| is_i64_mul(*i) && both_fit(*i)).collect();
            for mul in products {
                builder.position_before(&mul);
                for index in 0..2 {
                    let operand = int_operand(mul, index).ok_or_else(|| unexpected(mul))?;
                    if zext_of_narrow(operand) {
                        continue;
                    }
                    let narrow = narrow(&builder, operand, i32t)?;
                    let wide = builder.build_int_z_extend(narrow, i64t, "wide").map_err(|e| e.to_string())?;
                    if !mul.set_operand(index, wide) {
                        return Err(unexpected(mul));
                    }
                }
            }
        }
    }
    Ok(())
}

fn unexpected(mul: InstructionValue<'_>) -> String {
    format!("internal compiler error: could not rewrite the product `{}`", mul.print_to_string())
}

/// A scalar 64-bit `mul` (a vector's operands are no `IntValue`s).
fn is_i64_mul(i: InstructionValue<'_>) -> bool {
    i.get_opcode() == InstructionOpcode::Mul && int_operand(i, 0).is_some_and(|v| v.get_type().get_bit_width() == 64)
}

/// Whether both operands of a 64-bit `mul`, at least one not already a zero extension, fit
/// in 32 bits.
fn both_fit(mul: InstructionValue<'_>) -> bool {
    let (Some(a), Some(b)) = (int_operand(mul, 0), int_operand(mul, 1)) else { return false };
    fits_u32(a) && fits_u32(b) && !(zext_of_narrow(a) && zext_of_narrow(b))
}

fn int_operand<'ctx>(i: InstructionValue<'ctx>, index: u32) -> Option<IntValue<'ctx>> {
    match i.get_operand(index)?.value()? {
        BasicValueEnum::IntValue(v) => Some(v),
        _ => None,
    }
}

/// `v` is a zero extension of a value of at most 32 bits (what NVPTX already takes).
fn zext_of_narrow(v: IntValue<'_>) -> bool {
    v.as_instruction().is_some_and(|i| {
        i.get_opcode() == InstructionOpcode::ZExt
            && int_operand(i, 0).is_some_and(|s| s.get_type().get_bit_width() <= 32)
    })
}

/// Whether the 64-bit value `v` is below 2^32 by its form alone: a constant, a zero
/// extension of at most 32 bits, a right shift by at least 32, an `and` with such a value,
/// or an `xor`/`or` of two (looked through to a small depth).
fn fits_u32(v: IntValue<'_>) -> bool {
    fits_within(v, 4)
}

fn fits_within(v: IntValue<'_>, depth: u32) -> bool {
    if v.is_const() {
        return v.get_zero_extended_constant().is_some_and(|k| k <= u64::from(u32::MAX));
    }
    let Some(i) = v.as_instruction() else { return false };
    let operand_fits = |k: u32| depth > 0 && int_operand(i, k).is_some_and(|o| fits_within(o, depth - 1));
    match i.get_opcode() {
        InstructionOpcode::ZExt => zext_of_narrow(v),
        InstructionOpcode::And => operand_fits(0) || operand_fits(1),
        InstructionOpcode::Xor | InstructionOpcode::Or => operand_fits(0) && operand_fits(1),
        InstructionOpcode::LShr => int_operand(i, 1)
            .and_then(|s| if s.is_const() { s.get_zero_extended_constant() } else { None })
            .is_some_and(|s| (32..64).contains(&s)),
        _ => false,
    }
}

/// `v` (known to fit) as an `i32`: a constant folded; anything else as the low element of
/// its bits seen as `<2 x i32>` (NVPTX is little-endian). A plain `trunc` would not do:
/// the instruction selector folds `zext(trunc v)` back into `v` where `v`'s high word is
/// known to be zero (a right shift by 32), and the product back into `mul.lo.s64`.
fn narrow<'ctx>(
    builder: &Builder<'ctx>,
    v: IntValue<'ctx>,
    i32t: inkwell::types::IntType<'ctx>,
) -> Result<IntValue<'ctx>, String> {
    if v.is_const() {
        let k = v.get_zero_extended_constant().ok_or("internal compiler error: a constant product operand")?;
        return Ok(i32t.const_int(k, false));
    }
    let words = builder.build_bit_cast(v, i32t.vec_type(2), "words").map_err(|e| e.to_string())?;
    let low = builder
        .build_extract_element(words.into_vector_value(), i32t.const_zero(), "low")
        .map_err(|e| e.to_string())?;
    Ok(low.into_int_value())
}
