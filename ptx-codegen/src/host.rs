//! The same lowering compiled for the CPU and run through LLVM's JIT: the host
//! differential tests compare it with the native Rust function, which checks the
//! lowering's semantics on a machine without a GPU.
//!
//! The kernel entry is GPU-only; here a small `eval(args, out, err)` wrapper calls the
//! scalar function. libdevice's `__nv_*` functions are whatever the caller maps them to
//! (the tests map them to Rust's own `f32::sin` and friends), so that what is compared is
//! the lowering around them. One operation is lowered otherwise than for the GPU: the
//! rounding to `bf16`, a call here (`Lowering::bf16_round_calls`), because the x86-64
//! back end gets the sign of a rounded `bfloat` wrong.

use std::sync::Once;

use inkwell::context::Context;
use inkwell::execution_engine::{ExecutionEngine, JitFunction};
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, InitializationConfig, RelocMode, Target, TargetMachine};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum};
use inkwell::{AddressSpace, IntPredicate, OptimizationLevel};

use crate::ir::{Function, IntOverflow, Program};
use crate::lower::{self, basic_value, memory_type};
use crate::ty::ScalarType;

type EvalFn = unsafe extern "C" fn(*const u64, *mut u64, *mut u32);

/// A function compiled for the CPU.
pub struct HostFunction<'ctx> {
    // Keeps the compiled code alive.
    _engine: ExecutionEngine<'ctx>,
    eval: JitFunction<'ctx, EvalFn>,
    pub params: Vec<ScalarType>,
    /// The results (a tuple's elements, or one scalar).
    pub rets: Vec<ScalarType>,
}

impl HostFunction<'_> {
    /// Calls the function: each argument's bits sit in the low bytes of a `u64` (as the
    /// runtime passes scalars). Returns the results' bits and the fault code (0: none).
    ///
    /// A value wider than 8 bytes (`Complex<f64>`) takes [`words`] consecutive words, its
    /// bytes in memory order.
    pub fn call(&self, args: &[u64]) -> (Vec<u64>, u32) {
        assert_eq!(args.len(), self.params.iter().map(|t| words(*t)).sum::<usize>(), "argument words");
        let mut out = vec![0u64; self.rets.iter().map(|t| words(*t)).sum()];
        let mut fault = 0u32;
        // SAFETY: `eval` reads the parameters' words from `args`, writes the results' words
        // to `out` and possibly one `u32` to `fault`.
        unsafe { self.eval.call(args.as_ptr(), out.as_mut_ptr(), &mut fault) };
        (out, fault)
    }
}

/// How many 8-byte words a value of type `t` takes in [`HostFunction::call`]'s arguments
/// and results (1 for every type but `Complex<f64>`).
pub fn words(t: ScalarType) -> usize {
    t.size_bytes().div_ceil(8) as usize
}

fn host_machine() -> Result<TargetMachine, String> {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        Target::initialize_native(&InitializationConfig::default()).expect("LLVM supports the host");
    });
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| e.to_string())?;
    target
        .create_target_machine(
            &triple,
            "generic",
            "",
            OptimizationLevel::Default,
            RelocMode::Default,
            CodeModel::JITDefault,
        )
        .ok_or_else(|| "no host target machine".to_string())
}

/// Compiles `f` for the CPU (optimised with the same `default<O3>` pipeline as the PTX).
/// `math` gives the address of a host function for each libdevice function it calls
/// (`__nv_sinf` → an `extern "C" fn(f32) -> f32`).
///
/// # Safety
/// Every address `math` returns must be that of a function with the C signature of the
/// libdevice function it stands for: the compiled code calls it as one.
pub unsafe fn jit<'ctx>(
    cx: &'ctx Context,
    program: &Program,
    math: &dyn Fn(&str) -> Option<usize>,
) -> Result<HostFunction<'ctx>, String> {
    // SAFETY: the caller's promise.
    unsafe { jit_with(cx, program, math, IntOverflow::Wrap) }
}

/// [`jit`], with integer overflow `overflow` (the checked variant panics where a build
/// with overflow checks would: here, a fault code).
///
/// # Safety
/// As for [`jit`].
pub unsafe fn jit_with<'ctx>(
    cx: &'ctx Context,
    program: &Program,
    math: &dyn Fn(&str) -> Option<usize>,
    overflow: IntOverflow,
) -> Result<HostFunction<'ctx>, String> {
    let module = cx.create_module("host");
    let error_flag = program.may_fail_with(overflow);
    let f = program.entry();
    // The host copy checks the IEEE lowering; `fastmath` has no bit-exact reference.
    let how = lower::Lowering {
        fault_code: error_flag,
        fault_record: false,
        fastmath: false,
        overflow,
        bf16_round_calls: true,
    };
    let scalar = lower::lower_program(cx, &module, program, "scalar", how).map_err(|e| e.message)?[0];
    add_eval(cx, &module, f, scalar, error_flag)?;
    let tm = host_machine()?;
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    module.verify().map_err(|e| e.to_string())?;
    module.run_passes("default<O3>", &tm, PassBuilderOptions::create()).map_err(|e| e.to_string())?;
    // The code generator widens and rounds the half types through these runtime
    // functions, which the process does not export: declared here (after the passes,
    // which would drop them unused) so that they can be mapped.
    let half_fns: Vec<_> = half_conversions()
        .into_iter()
        .map(|(name, addr)| {
            let f = module.get_function(name).unwrap_or_else(|| {
                let t = cx.f32_type().fn_type(&[cx.f32_type().into()], false);
                module.add_function(name, t, None)
            });
            (f, addr)
        })
        .collect();
    let engine = module.create_jit_execution_engine(OptimizationLevel::Default).map_err(|e| e.to_string())?;
    for (f, addr) in half_fns {
        engine.add_global_mapping(&f, addr);
    }
    // The lowering's own `bf16` rounding (`Lowering::bf16_round_calls`), where it is used.
    let bf16_rounding: [(&str, usize); 2] = [
        (lower::ROUND_BF16_F32, round_bf16_f32 as *const () as usize),
        (lower::ROUND_BF16_F64, round_bf16_f64 as *const () as usize),
    ];
    for (name, addr) in bf16_rounding {
        if let Some(f) = module.get_function(name) {
            engine.add_global_mapping(&f, addr);
        }
    }
    for decl in
        module.get_functions().filter(|f| f.count_basic_blocks() == 0 && f.get_name().to_bytes().starts_with(b"__nv_"))
    {
        let name = decl.get_name().to_string_lossy();
        let addr = math(&name).ok_or_else(|| format!("no host implementation of {name}"))?;
        engine.add_global_mapping(&decl, addr);
    }
    // SAFETY: `eval` has exactly this signature (built by `add_eval`).
    let eval = unsafe { engine.get_function::<EvalFn>("eval") }.map_err(|e| e.to_string())?;
    Ok(HostFunction {
        _engine: engine,
        eval,
        params: f.params.iter().map(|p| p.ty).collect(),
        rets: f.ret.scalars().to_vec(),
    })
}

/// The conversions x86-64 code calls for `half` and `bfloat` values (which it passes in
/// the low 16 bits of an XMM register, as the bits of an `f32` here), done by the `half`
/// crate: the host copy checks the lowering around them (the GPU's own conversions are
/// checked against the same crate on the GPU).
fn half_conversions() -> [(&'static str, usize); 6] {
    [
        ("__extendhfsf2", extend_hf_sf as *const () as usize),
        ("__extendhfdf2", extend_hf_df as *const () as usize),
        ("__truncsfhf2", trunc_sf_hf as *const () as usize),
        ("__truncdfhf2", trunc_df_hf as *const () as usize),
        ("__truncsfbf2", trunc_sf_bf as *const () as usize),
        ("__truncdfbf2", trunc_df_bf as *const () as usize),
    ]
}

fn in_xmm(bits: u16) -> f32 {
    f32::from_bits(bits as u32)
}

extern "C" fn extend_hf_sf(h: f32) -> f32 {
    half::f16::from_bits(h.to_bits() as u16).to_f32()
}

extern "C" fn extend_hf_df(h: f32) -> f64 {
    half::f16::from_bits(h.to_bits() as u16).to_f64()
}

extern "C" fn trunc_sf_hf(x: f32) -> f32 {
    in_xmm(half::f16::from_f32(x).to_bits())
}

extern "C" fn trunc_df_hf(x: f64) -> f32 {
    in_xmm(half::f16::from_f64(x).to_bits())
}

extern "C" fn trunc_sf_bf(x: f32) -> f32 {
    in_xmm(round_bf16_f32(x))
}

extern "C" fn trunc_df_bf(x: f64) -> f32 {
    in_xmm(round_bf16_f64(x))
}

/// `i16 (float)`: [`lower::ROUND_BF16_F32`], as the `half` crate rounds.
extern "C" fn round_bf16_f32(x: f32) -> u16 {
    half::bf16::from_f32(x).to_bits()
}

/// `i16 (double)`: [`lower::ROUND_BF16_F64`]: `x` rounded to `bf16` once, to nearest, ties
/// to even, as LLVM's `fptrunc` (and the GPU's `cvt.rn.bf16.f64`) round it, as bits; a NaN
/// is a quiet NaN of its sign. Not `half::bf16::from_f64`, which drops the low 32 bits of
/// `x` before it rounds and so rounds some values just past a tie as the tie. Through an
/// `f32` rounded to odd (toward zero, then the last bit set where that was inexact): it
/// keeps 24 bits, enough that rounding it to `bf16`'s 8 rounds as `x` itself would.
extern "C" fn round_bf16_f64(x: f64) -> u16 {
    if x.is_nan() {
        return ((x.to_bits() >> 48) as u16 & 0x8000) | 0x7fc0;
    }
    let near = x as f32;
    let odd = if f64::from(near) == x {
        near
    } else {
        // `near`'s bits are a sign and a magnitude: one less in the magnitude is one step
        // toward zero (from infinity, to the largest finite value).
        let toward_zero = if f64::from(near).abs() > x.abs() { near.to_bits() - 1 } else { near.to_bits() };
        f32::from_bits(toward_zero | 1)
    };
    round_bf16_f32(odd)
}

fn e<T>(r: Result<T, inkwell::builder::BuilderError>) -> Result<T, String> {
    r.map_err(|e| e.to_string())
}

fn add_eval<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    f: &Function,
    scalar: inkwell::values::FunctionValue<'ctx>,
    error_flag: bool,
) -> Result<(), String> {
    let ptr = cx.ptr_type(AddressSpace::default());
    let eval = module.add_function("eval", cx.void_type().fn_type(&[ptr.into(), ptr.into(), ptr.into()], false), None);
    let b = cx.create_builder();
    b.position_at_end(cx.append_basic_block(eval, "entry"));
    let (args, out, err) = (
        eval.get_nth_param(0).unwrap().into_pointer_value(),
        eval.get_nth_param(1).unwrap().into_pointer_value(),
        eval.get_nth_param(2).unwrap().into_pointer_value(),
    );
    let mut call_args: Vec<BasicMetadataValueEnum> = Vec::new();
    let mut word = 0;
    for p in &f.params {
        // SAFETY: the parameter's words of `args`, which holds every parameter's (see `call`).
        let slot = unsafe {
            e(b.build_in_bounds_gep(cx.i64_type(), args, &[cx.i64_type().const_int(word as u64, false)], "arg"))?
        };
        word += words(p.ty);
        let v = e(b.build_load(memory_type(cx, p.ty), slot, "v"))?;
        let v: BasicValueEnum = if p.ty == ScalarType::Bool {
            e(b.build_int_compare(IntPredicate::NE, v.into_int_value(), cx.i8_type().const_zero(), "b"))?.into()
        } else {
            v
        };
        call_args.push(v.into());
    }
    if error_flag {
        call_args.push(err.into());
    }
    let call = e(b.build_call(scalar, &call_args, "r"))?;
    let r = basic_value(call.try_as_basic_value(), f.span).map_err(|e| e.message)?;
    let rets = f.ret.scalars();
    let tuple = matches!(f.ret, crate::ir::RetType::Tuple(_));
    let mut word = 0;
    for (k, t) in rets.iter().enumerate() {
        // A tuple result is a struct, even of one field (`-> (f64,)`); so is one complex.
        let v = if tuple { e(b.build_extract_value(r.into_struct_value(), k as u32, "result"))? } else { r };
        let v: BasicValueEnum = if *t == ScalarType::Bool {
            e(b.build_int_z_extend(v.into_int_value(), cx.i8_type(), "byte"))?.into()
        } else {
            v
        };
        // SAFETY: the result's words of `out`, which holds every result's (see `call`).
        let slot = unsafe {
            e(b.build_in_bounds_gep(cx.i64_type(), out, &[cx.i64_type().const_int(word as u64, false)], "out"))?
        };
        word += words(*t);
        e(b.build_store(slot, cx.i64_type().const_zero()))?;
        e(b.build_store(slot, v))?;
    }
    e(b.build_return(None))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::round_bf16_f64;
    use half::bf16;

    #[test]
    fn an_f64_that_is_an_f32_rounds_as_the_f32_does() {
        let mut bits = 0x0123_4567u32;
        for _ in 0..20_000 {
            bits = bits.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
            let x = f32::from_bits(bits);
            if !x.is_nan() {
                assert_eq!(round_bf16_f64(f64::from(x)), bf16::from_f32(x).to_bits(), "{x:e}");
            }
        }
    }

    #[test]
    fn an_f64_rounds_once() {
        let p = |k: i32| 2f64.powi(k);
        let cases = [
            // Ties go to even; just past a tie, away from it (`half::bf16::from_f64` rounds
            // the first of these down: the `2^-40` is in the bits it drops).
            (1.0 + p(-8), 0x3f80),
            (1.0 + p(-8) + p(-40), 0x3f81),
            (-(1.0 + p(-8) + p(-40)), 0xbf81),
            (1.0 + 3.0 * p(-8), 0x3f82),
            (1.0 + p(-8) - p(-40), 0x3f80),
            // Past the largest finite `bf16` (0x7f7f) by less and by more than half a step.
            (3.396e38, 0x7f7f),
            (3.3962e38, 0x7f80),
            (1e39, 0x7f80),
            (-1e300, 0xff80),
            (f64::INFINITY, 0x7f80),
            // The smallest subnormal is `2^-133`: half of it is a tie (to 0), a little more
            // rounds up; far smaller is a zero of its sign.
            (p(-134), 0x0000),
            (p(-134) + p(-160), 0x0001),
            (-(p(-134) + p(-160)), 0x8001),
            (1e-50, 0x0000),
            (-1e-50, 0x8000),
            (-0.0, 0x8000),
            (f64::NAN, 0x7fc0),
            (-f64::NAN, 0xffc0),
        ];
        for (x, want) in cases {
            assert_eq!(round_bf16_f64(x), want, "{x:e}: {:#06x}", round_bf16_f64(x));
        }
        assert_eq!(bf16::from_f64(1.0 + p(-8) + p(-40)).to_bits(), 0x3f80, "the crate's rounding, which this is not");
    }
}
