//! 32 × 32 → 64-bit products (`ptx_codegen::wide_products`): emitted as `mul.wide.u32`
//! where both operands are known to fit 32 bits, and as the full multiply where one may not.

use inkwell::context::Context;

use ptx_codegen::emit::{Subnormals, emit_ptx, nvptx_module};

/// Emits a kernel `k(x: i64, y: i64, out: *i64)` storing `mul(f(x), g(y))`, with `f`
/// and `g` built by `operands`.
fn product_ptx(
    operands: impl for<'c> Fn(
        &inkwell::builder::Builder<'c>,
        &'c Context,
        inkwell::values::IntValue<'c>,
        inkwell::values::IntValue<'c>,
    ) -> (inkwell::values::IntValue<'c>, inkwell::values::IntValue<'c>),
) -> String {
    let cx = Context::create();
    let module = nvptx_module(&cx, "m").unwrap();
    let i64t = cx.i64_type();
    let ptr = cx.ptr_type(inkwell::AddressSpace::from(1u16));
    let f = module.add_function("k", cx.void_type().fn_type(&[i64t.into(), i64t.into(), ptr.into()], false), None);
    let b = cx.create_builder();
    b.position_at_end(cx.append_basic_block(f, "entry"));
    let x = f.get_nth_param(0).unwrap().into_int_value();
    let y = f.get_nth_param(1).unwrap().into_int_value();
    let (p, q) = operands(&b, &cx, x, y);
    let m = b.build_int_mul(p, q, "m").unwrap();
    b.build_store(f.get_nth_param(2).unwrap().into_pointer_value(), m).unwrap();
    b.build_return(None).unwrap();
    let entry = cx.metadata_node(&[
        f.as_global_value().as_pointer_value().into(),
        cx.metadata_string("kernel").into(),
        cx.i32_type().const_int(1, false).into(),
    ]);
    module.add_global_metadata("nvvm.annotations", &entry).unwrap();
    emit_ptx(&cx, &module, "sm_70", Subnormals::Keep, &["k"]).unwrap().ptx
}

#[test]
fn masked_operands_become_a_wide_multiply() {
    let ptx = product_ptx(|b, cx, x, y| {
        let mask = cx.i64_type().const_int(0xFFFF_FFFF, false);
        let xy = b.build_xor(x, y, "xy").unwrap();
        (b.build_and(xy, mask, "a").unwrap(), cx.i64_type().const_int(0xD251_1F53, false))
    });
    assert!(ptx.contains("mul.wide.u32"), "{ptx}");
    assert!(!ptx.contains("mul.lo.s64"), "{ptx}");
}

#[test]
fn a_high_half_times_a_mask_becomes_a_wide_multiply() {
    let ptx = product_ptx(|b, cx, x, y| {
        // Computed operands: a parameter's own halves would be loaded narrow instead.
        let xy = b.build_xor(x, y, "xy").unwrap();
        let sum = b.build_int_add(x, y, "sum").unwrap();
        let hi = b.build_right_shift(xy, cx.i64_type().const_int(32, false), false, "hi").unwrap();
        let lo = b.build_and(sum, cx.i64_type().const_int(0xFFFF, false), "lo").unwrap();
        (hi, lo)
    });
    assert!(ptx.contains("mul.wide.u32"), "{ptx}");
    assert!(!ptx.contains("mul.lo.s64"), "{ptx}");
}

/// Philox's form: the high word of one product `xor` a masked word, times a constant.
#[test]
fn an_xor_of_fitting_words_becomes_a_wide_multiply() {
    let ptx = product_ptx(|b, cx, x, y| {
        let i64t = cx.i64_type();
        let p = b.build_int_mul(x, y, "p").unwrap();
        let hi = b.build_right_shift(p, i64t.const_int(32, false), false, "hi").unwrap();
        let sum = b.build_int_add(x, y, "sum").unwrap();
        let lo = b.build_and(sum, i64t.const_int(0xFFFF_FFFF, false), "lo").unwrap();
        (b.build_xor(hi, lo, "w").unwrap(), i64t.const_int(0xCD9E_8D57, false))
    });
    assert!(ptx.contains("mul.wide.u32"), "{ptx}");
    assert_eq!(ptx.matches("mul.lo.s64").count(), 1, "only `x * y` stays 64-bit: {ptx}");
}

/// An operand that may not fit (a plain 64-bit value, a mask wider than 32 bits, a
/// constant of 2^32, an `xor` with a plain value) keeps the 64-bit multiply: its value needs it.
#[test]
fn operands_that_may_not_fit_keep_the_full_multiply() {
    for wide in 0..4 {
        let ptx = product_ptx(move |b, cx, x, y| {
            let i64t = cx.i64_type();
            let a = b.build_and(x, i64t.const_int(0xFFFF_FFFF, false), "a").unwrap();
            let other = match wide {
                0 => y,
                1 => b.build_and(y, i64t.const_int(0x1_FFFF_FFFF, false), "b").unwrap(),
                2 => i64t.const_int(1 << 32, false),
                // An `xor` of a fitting value with one that may not.
                _ => b.build_xor(a, y, "c").unwrap(),
            };
            (a, other)
        });
        assert!(!ptx.contains("mul.wide.u32"), "case {wide}: {ptx}");
    }
}
