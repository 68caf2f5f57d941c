//! The LLVM types of the kernel language's values: scalars (as values and as stored in
//! memory), tuples and function results.

use inkwell::context::Context;
use inkwell::types::{BasicType, BasicTypeEnum, IntType};

use crate::ir::RetType;
use crate::ty::ScalarType;

/// The LLVM type of a scalar as a value (`bool` is `i1`).
pub fn llvm_type<'ctx>(cx: &'ctx Context, t: ScalarType) -> BasicTypeEnum<'ctx> {
    match t {
        ScalarType::Bool => cx.bool_type().into(),
        ScalarType::F32 => cx.f32_type().into(),
        ScalarType::F64 => cx.f64_type().into(),
        // The half types are their bits (`i16`) everywhere but inside arithmetic, so that
        // what works on the sign bit (`-x`, `copysign`) stays an integer operation: as a
        // `half` value, LLVM would turn it into `fneg`/`fabs`, which some targets compute
        // through `f32`, losing a NaN's bits.
        ScalarType::F16 | ScalarType::BF16 => cx.i16_type().into(),
        // `#[repr(C)] struct Complex<T> { re: T, im: T }`: under NVPTX's data layout (and
        // the host's) a struct of two floats has the size and alignment Rust gives it.
        ScalarType::C32 | ScalarType::C64 => {
            let part = llvm_type(cx, t.complex_part().expect("a complex type has parts"));
            cx.struct_type(&[part, part], false).into()
        }
        // A user struct is its memory layout as a value too (a `bool` field is its byte):
        // `#[repr(C)]` places each field at the next multiple of its alignment, as LLVM's
        // unpacked structs do under NVPTX's data layout and the host's (checked against
        // the table's offsets where the lowering starts, `check_struct_layouts`).
        ScalarType::Struct(id) => {
            let fields: Vec<BasicTypeEnum<'ctx>> = id
                .def()
                .fields
                .iter()
                .map(|f| {
                    let elem = memory_type(cx, f.ty);
                    match f.len {
                        Some(n) => elem.array_type(n as u32).into(),
                        None => elem,
                    }
                })
                .collect();
            cx.struct_type(&fields, false).into()
        }
        _ => int_type(cx, t).into(),
    }
}

/// The LLVM float type a half type's bits are read as for arithmetic (`half`, `bfloat`).
pub(super) fn half_float_type(cx: &Context, t: ScalarType) -> inkwell::types::FloatType<'_> {
    if t == ScalarType::F16 { cx.f16_type() } else { cx.bf16_type() }
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

pub(super) fn tuple_type<'ctx>(cx: &'ctx Context, ts: &[ScalarType]) -> BasicTypeEnum<'ctx> {
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

/// The integer type of a scalar's bits (`bool` is `i1`).
pub(super) fn bits_type(cx: &Context, t: ScalarType) -> IntType<'_> {
    match t {
        ScalarType::F32 => cx.i32_type(),
        ScalarType::F64 => cx.i64_type(),
        ScalarType::F16 | ScalarType::BF16 => cx.i16_type(),
        t => int_type(cx, t),
    }
}
