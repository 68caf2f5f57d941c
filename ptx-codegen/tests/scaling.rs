//! Compile time grows linearly with a function's body. Some of LLVM's steps grow with the
//! square of the libdevice copies inlined into one function (see
//! `libdevice::INLINED_CALLS_MAX`): a body of 3,000 `sin()` statements took 25 s where 500
//! took 2.7 s. These tests count what those steps scale with instead of timing them (the
//! times are `cargo run --release -p ptx-codegen --example compile_time`).

use ptx_codegen::libdevice::INLINED_CALLS_MAX;
use ptx_codegen::{CompiledKernel, Options, compile_str};

/// `fn waves(x: f32) -> f32` of `n` statements `y = y.sin();`.
fn sines(n: usize) -> CompiledKernel {
    let src = format!("fn waves(x: f32) -> f32 {{ let mut y = x; {} y }}", "y = y.sin(); ".repeat(n));
    compile_str(&src, &Options::default()).unwrap_or_else(|e| panic!("{n} statements: {e}"))
}

/// The copies of libdevice's `sinf` in the PTX: each reduces its argument with a multiply
/// by 2/π.
fn sinf_copies(ptx: &str) -> usize {
    ptx.matches("0f3F22F983").count()
}

/// The lines of the function that starts with `header` in `text` (PTX or LLVM IR).
fn function<'a>(text: &'a str, header: &str) -> impl Iterator<Item = &'a str> {
    let start = text.find(header).unwrap_or_else(|| panic!("no `{header}` in\n{text}"));
    let end = start + text[start..].find("\n}\n").expect("the function's end");
    text[start..end].lines()
}

/// The instructions of the scalar function in the PTX, and in the optimised LLVM IR: what
/// grows with the body (the entries call it, or inline it while it is small).
fn scalar_size(k: &CompiledKernel) -> (usize, usize) {
    let is_instruction = |l: &&str| {
        let l = l.trim();
        l.ends_with(';') && !l.starts_with('.') && !l.starts_with("//")
    };
    let ptx = function(&k.ptx, ") waves_scalar(").filter(is_instruction).count();
    let ir = function(&k.llvm_ir, "@waves_scalar(").filter(|l| l.starts_with("  ")).count();
    (ptx, ir)
}

#[test]
fn a_few_math_calls_are_inlined() {
    let k = sines(8);
    assert!(!k.ptx.contains("__nv_sinf"), "{}", k.ptx);
    assert!(sinf_copies(&k.ptx) >= 8, "{}", k.ptx);
}

#[test]
fn many_math_calls_call_one_copy() {
    let n = 4 * INLINED_CALLS_MAX;
    let k = sines(n);
    assert_eq!(sinf_copies(&k.ptx), 1, "one copy of sinf");
    assert_eq!(k.ptx.matches(".func  (.param .b32 func_retval0) __nv_sinf(").count(), 1, "{}", k.ptx);
    let calls = k.ptx.matches("\t__nv_sinf, ").count();
    assert!(calls >= n, "{calls} calls for {n} statements");
}

/// What LLVM's super-linear steps scale with stays put as the body grows: one copy of the
/// math, whatever the number of calls; and the code LLVM optimises and emits grows in
/// proportion to the body.
#[test]
fn the_work_grows_linearly_with_the_body() {
    let n = 2 * INLINED_CALLS_MAX;
    let (small, large) = (sines(n), sines(4 * n));
    assert_eq!((sinf_copies(&small.ptx), sinf_copies(&large.ptx)), (1, 1));
    let ((ptx_small, ir_small), (ptx_large, ir_large)) = (scalar_size(&small), scalar_size(&large));
    for (what, ratio) in [("PTX", ptx_large as f64 / ptx_small as f64), ("LLVM IR", ir_large as f64 / ir_small as f64)]
    {
        assert!((3.5..=4.5).contains(&ratio), "4x the statements, {ratio:.2}x the instructions of the {what}");
    }
}

/// Every call counts towards the bound, whichever function it calls, plain or `fastmath`.
#[test]
fn the_bound_counts_every_math_call() {
    let half = INLINED_CALLS_MAX / 2 + 1;
    let src = format!(
        "fn mix(x: f32) -> f32 {{ let mut y = x; {} {} y }}",
        "y = y.sin();".repeat(half),
        "y = y.exp();".repeat(half)
    );
    for options in [Options::default(), Options { fastmath: true, ..Options::default() }] {
        let k = compile_str(&src, &options).unwrap();
        let prefix = if options.fastmath { "__nv_fast_" } else { "__nv_" };
        for f in ["sinf", "expf"] {
            let name = format!(") {prefix}{f}(");
            assert_eq!(k.ptx.matches(&name).count(), 1, "{name} (fastmath: {})\n{}", options.fastmath, k.ptx);
        }
    }
}
