//! Programs that once crashed the compiler, were refused although valid Rust, or compiled
//! to something other than what rustc computes. Each runs through the whole compiler (to
//! PTX) and through the host JIT of the same lowering, compared with the value rustc gives.

use inkwell::context::Context;
use ptx_codegen::{Options, compile_kernel_str, compile_str, frontend, host};

/// Compiles `src` to PTX (no error), then evaluates it on the host for each `(args, want)`
/// pair; arguments and results are the bits of each value in the low bytes of a `u64`.
fn check(src: &str, cases: &[(&[u64], u64)]) {
    compile_str(src, &Options::default()).unwrap_or_else(|e| panic!("{src}\ndoes not compile: {e}"));
    let item: syn::ItemFn = syn::parse_str(src).unwrap();
    let program = frontend::check_function(&item).unwrap();
    let cx = Context::create();
    // SAFETY: no function here calls libdevice, so `math` maps nothing.
    let f = unsafe { host::jit(&cx, &program, &|_| None) }.unwrap_or_else(|e| panic!("{src}: {e}"));
    for (args, want) in cases {
        let (got, fault) = f.call(args);
        assert_eq!((got[0], fault), (*want, 0), "{src} at {args:?}");
    }
}

fn i(v: i64) -> u64 {
    v as u64
}

#[test]
fn a_literal_step_needs_no_fault_word() {
    // The fallibility analysis and the lowering's `step == 0` check once disagreed: an
    // internal compiler error for every literal step.
    let src = "fn f(n: u32) -> u32 { let mut s = 0u32; for i in (0..n).step_by(3) { s += i; } s }";
    check(src, &[(&[10], 3 + 6 + 9), (&[0], 0)]);
    let src = "fn f(n: i64) -> i64 { let mut s = 0; for i in (0..=n).rev().step_by(7) { s += i; } s }";
    check(src, &[(&[20], i(20 + 13 + 6))]);
}

#[test]
fn a_local_const_in_a_pattern_is_a_constant_not_a_binding() {
    let src = "fn cpat(x: i64) -> i32 { const K: i64 = 36; match x { K => 1, _ => 2 } }";
    check(src, &[(&[36], 1), (&[35], 2), (&[i(-36)], 2)]);
    let src = "fn cor(x: i64) -> i32 { const K: i64 = 36; match x { K | 5 => 1, n if n > 100 => 3, _ => 2 } }";
    check(src, &[(&[36], 1), (&[5], 1), (&[101], 3), (&[6], 2)]);
}

#[test]
fn a_const_may_name_one_declared_after_it() {
    let src = "fn f(x: i32) -> i32 { const A: i32 = B * 2; const B: i32 = 3; x.wrapping_add(A) }";
    check(src, &[(&[1], 7)]);
    let src = "fn f(x: i32) -> i32 { const A: i32 = B * 2; const B: i32 = C + 1; const C: i32 = 2; let v = A; v + x }";
    check(src, &[(&[0], 6)]);
}

#[test]
fn constants_that_refer_to_themselves_are_an_error() {
    let item: syn::ItemFn =
        syn::parse_str("fn f(x: i32) -> i32 { const A: i32 = B + 1; const B: i32 = A; x + A }").unwrap();
    let e = frontend::check_function(&item).expect_err("a cycle is an error").to_string();
    assert!(e.contains("depends on itself"), "{e}");
}

#[test]
fn an_unknown_constant_in_a_pattern_is_not_taken_as_a_binding() {
    let item: syn::ItemFn = syn::parse_str("fn f(x: i64) -> i32 { match x { LIMIT => 1, _ => 2 } }").unwrap();
    let e = frontend::check_function(&item).expect_err("refused").to_string();
    assert!(e.contains("no constant `LIMIT` is in sight"), "{e}");
}

#[test]
fn special_functions_take_their_type_from_the_context() {
    let src = "fn f(x: f32) -> f32 { let y: f32 = gpu_runtime::SpecialMath::erf(1.0); y + x }";
    // `erf` goes through libdevice: compiling is what this checks (the value is compared
    // on the GPU and in the host differential tests).
    compile_str(src, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let src = "fn g(x: f64) -> f64 { let y: f64 = SpecialMath::ln_gamma(2.5); y * x }";
    compile_str(src, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn deferred_initialisation_is_valid_rust() {
    let src = "fn f(c: bool, x: i32) -> i32 { let y; if c { y = x } else { y = -x } y }";
    check(src, &[(&[1, 5], 5), (&[0, 5], i(-5) as u32 as u64)]);
    let src = "fn g(x: f64) -> f64 { let y: f64; let z; y = x * 2.0; z = y + 1.0; z }";
    check(src, &[(&[2.0f64.to_bits()], 5.0f64.to_bits())]);
}

#[test]
fn a_compound_assignment_to_an_immutable_variable_is_still_refused() {
    let item: syn::ItemFn = syn::parse_str("fn f(x: i32) -> i32 { let y; y = 1; y += x; y }").unwrap();
    let e = frontend::check_function(&item).expect_err("refused").to_string();
    assert!(e.contains("not mutable"), "{e}");
}

/// `neg.s16` or `abs.s16` in the PTX, which the driver's compiler folds with a widening as
/// if they could not wrap (`(-i16::MIN) as i32` gave 32768 on an H200): the emitter
/// rewrites them as 32-bit operations. Each of these negates an 8- or 16-bit value.
#[test]
fn narrow_negations_never_reach_the_ptx_as_16_bit_negations() {
    let sources = [
        "fn f(t: i16) -> i32 { (-t) as i32 }",
        "fn f(t: i8) -> i64 { (-t) as i64 }",
        "fn f(t: i16) -> i32 { t.wrapping_neg() as i32 }",
        "fn f(t: i16) -> i32 { t.wrapping_abs() as i32 }",
        "fn f(t: i8) -> i32 { t.wrapping_abs() as i32 }",
        "fn f(t: i16) -> u32 { t.unsigned_abs() as u32 }",
        "fn f(t: i16, u: i16) -> i32 { u.saturating_add(-t) as i32 }",
        "fn f(t: i16) -> i32 { t.saturating_neg() as i32 }",
        "fn f(t: i16) -> i32 { (0i16).wrapping_sub(t) as i32 }",
        "fn f(t: i16) -> i32 { t.wrapping_mul(-1) as i32 }",
        "fn f(t: u16) -> i32 { t.wrapping_neg() as i32 }",
        "fn f(t: i16, u: i16) -> i32 { t.rem_euclid(u) as i32 }",
    ];
    let mut found = Vec::new();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("narrow-negations");
    std::fs::create_dir_all(&dir).unwrap();
    for (n, src) in sources.iter().enumerate() {
        for arch in ["sm_70", "sm_90"] {
            let options = Options { arch: arch.to_string(), ..Options::default() };
            let k = compile_str(src, &options).unwrap_or_else(|e| panic!("{src}: {e}"));
            if k.ptx.contains("neg.s16") || k.ptx.contains("abs.s16") {
                found.push(*src);
            }
            // The rewritten PTX is valid PTX.
            let ptxas = ptx_codegen::toolkit::find_ptxas(arch).expect("ptxas (scripts/setup installs it)");
            let file = dir.join(format!("{n}-{arch}.ptx"));
            std::fs::write(&file, &k.ptx).unwrap();
            let out = std::process::Command::new(&ptxas)
                .args([&format!("-arch={arch}"), file.to_str().unwrap(), "-o", "/dev/null"])
                .output()
                .unwrap();
            assert!(out.status.success(), "{src} ({arch}): {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    assert!(found.is_empty(), "neg.s16 or abs.s16 in the PTX of:\n{}", found.join("\n"));
}

#[test]
fn a_cast_types_only_the_literal_it_reaches() {
    // Found by the fuzzer: the cast's type reached the literal through `<<`, so the shift
    // ran in 64 bits. rustc shifts an `i32`: 0x1FFFF << 16 wraps to -65536.
    check("fn f(x: i64) -> isize { -((0x1FFFF << 16) as isize) + x as isize }", &[(&[0], 65536), (&[i(-1)], 65535)]);
    check("fn f(x: u8) -> u8 { ((255 + 1) / 2) as u8 + x }", &[(&[0], 128)]);
    check("fn f(x: u8) -> u8 { let y = 300; (y >> 1) as u8 + x }", &[(&[0], 150)]);
}

#[test]
fn a_raw_identifier_and_its_plain_spelling_are_one_name() {
    // Found by the fuzzer: `r#x` declared and `x` used were two names to the frontend.
    check("fn f(r#x: i64) -> i64 { fn r#h(a: i64) -> i64 { r#a + 1 } h(x) * r#x }", &[(&[3], 12)]);
}

/// Evaluates `src` on the host JIT with integer overflow `overflow`: results and fault
/// code for each argument list.
fn run_with(src: &str, overflow: ptx_codegen::IntOverflow, args: &[&[u64]]) -> Vec<(u64, u32)> {
    let item: syn::ItemFn = syn::parse_str(src).unwrap();
    let program = frontend::check_function(&item).unwrap();
    let cx = Context::create();
    // SAFETY: no function here calls libdevice, so `math` maps nothing.
    let f = unsafe { host::jit_with(&cx, &program, &|_| None, overflow) }.unwrap_or_else(|e| panic!("{src}: {e}"));
    args.iter().map(|a| f.call(a)).map(|(r, fault)| (r[0], fault)).collect()
}

/// Overflow checks, as a build with `debug_assertions` has them: rustc's panics become
/// faults with the same message; without them everything wraps, as before.
#[test]
fn overflow_checks_fault_where_a_debug_build_panics() {
    use ptx_codegen::IntOverflow::{Panic, Wrap};
    use ptx_codegen::abi::Fault;
    let code = |f: Fault| f.code();
    let cases: &[(&str, &[u64], u32)] = &[
        ("fn f(a: i32, b: i32) -> i32 { a + b }", &[i32::MAX as u64, 1], code(Fault::AddOverflow)),
        ("fn f(a: i32, b: i32) -> i32 { a - b }", &[i32::MIN as u32 as u64, 1], code(Fault::SubOverflow)),
        ("fn f(a: u8, b: u8) -> u8 { a * b }", &[16, 16], code(Fault::MulOverflow)),
        ("fn f(a: u64, b: u64) -> u64 { let mut x = a; x += b; x }", &[u64::MAX, 1], code(Fault::AddOverflow)),
        ("fn f(a: i16) -> i16 { -a }", &[i16::MIN as u16 as u64], code(Fault::NegOverflow)),
        ("fn f(a: i64) -> i64 { a.abs() }", &[i64::MIN as u64], code(Fault::NegOverflow)),
        ("fn f(a: i32) -> i32 { a.pow(31) }", &[2], code(Fault::MulOverflow)),
        ("fn f(a: u32, n: u32) -> u32 { a << n }", &[1, 32], code(Fault::ShlOverflow)),
        ("fn f(a: i32, n: i32) -> i32 { a >> n }", &[8, (-1i32) as u32 as u64], code(Fault::ShrOverflow)),
    ];
    for (src, args, fault) in cases {
        assert_eq!(run_with(src, Panic, &[args])[0].1, *fault, "{src} with overflow checks");
        assert_eq!(run_with(src, Wrap, &[args])[0].1, 0, "{src} wraps without them");
        compile_str(src, &Options::default()).unwrap_or_else(|e| panic!("{src}: {e}"));
    }
    // In range, the checked variant computes the same values.
    assert_eq!(run_with("fn f(a: i32, b: i32) -> i32 { a * b - 7 }", Panic, &[&[6, 7]]), vec![(35, 0)]);
    assert_eq!(run_with("fn f(a: u32, n: u32) -> u32 { a << n }", Panic, &[&[1, 31]]), vec![(1 << 31, 0)]);
    assert_eq!(run_with("fn f(a: i32) -> i32 { a.pow(30) }", Panic, &[&[2]]), vec![(1 << 30, 0)]);
    // A literal shift amount below the width needs no check; float arithmetic none at all.
    let shift: syn::ItemFn = syn::parse_str("fn f(a: u32) -> u32 { (a << 3) ^ (a >> 31) }").unwrap();
    assert!(!frontend::check_function(&shift).unwrap().checks_overflow());
    let float: syn::ItemFn = syn::parse_str("fn f(a: f32) -> f32 { -a * 2.0 + 1.0 }").unwrap();
    assert!(!frontend::check_function(&float).unwrap().checks_overflow());
}

#[test]
fn min_and_max_of_a_nan_give_the_other_operand_and_its_sign() {
    // Found by the fuzzer: LLVM 19 takes `maxnum(x, y)` to be non-negative when `x` is
    // (`x.abs()`), although a NaN `x` gives `y`: `x.abs().max(-1.0) < 0.0` was false and
    // `x.abs().max(-1.0).abs()` was -1.0 for a NaN `x`. min and max are compares now.
    let (nan, nanf) = (f64::NAN.to_bits(), f32::NAN.to_bits() as u64);
    let f = |v: f64| v.to_bits();
    check("fn f(x: f64) -> bool { x.abs().max(-1.0) < 0.0 }", &[(&[nan], 1), (&[f(0.5)], 0)]);
    check("fn f(y: f64) -> bool { (-1.0f64).max(y.abs()) < 0.0 }", &[(&[nan], 1)]);
    check("fn f(x: f64) -> f64 { x.abs().max(-1.0).abs() }", &[(&[nan], f(1.0))]);
    check("fn f(x: f64) -> bool { (-x.abs()).min(f64::INFINITY).is_sign_positive() }", &[(&[nan], 1)]);
    check("fn f(x: f32) -> bool { x.abs().max(f32::NEG_INFINITY).is_sign_negative() }", &[(&[nanf], 1)]);
    let max = "fn f(x: f64, y: f64) -> f64 { x.max(y) }";
    check(max, &[(&[f(1.0), f(2.0)], f(2.0)), (&[nan, f(2.0)], f(2.0)), (&[f(2.0), nan], f(2.0))]);
    let min = "fn f(x: f32, y: f32) -> f32 { x.min(y) }";
    let g = |v: f32| v.to_bits() as u64;
    check(min, &[(&[g(1.0), g(2.0)], g(1.0)), (&[nanf, g(-2.0)], g(-2.0)), (&[g(-2.0), nanf], g(-2.0))]);
}

#[test]
fn a_value_from_a_function_the_precheck_does_not_see_takes_any_use() {
    // The macro checks a function before the definitions of the functions it calls arrive:
    // their results have no type yet, and using one must not be an error. The random-program
    // generator found `v.im` refused as "field access is not supported here" where `v` came
    // out of a tuple that a device function returned.
    for body in [
        "let (v, _) = pair(x); v.im",
        "let (v, _) = pair(x); v.re + v.conj().im + v.norm()",
        "let v = pair(x).0; v.pos[1]",
        "let (v, w) = pair(x); fn g(a: f64) -> f64 { a } g(v.im) * w",
    ] {
        let src = format!("fn f(x: i8) -> f64 {{ {body} }}");
        let item: syn::ItemFn = syn::parse_str(&src).unwrap();
        frontend::precheck(&item, &["pair".to_string()]).unwrap_or_else(|e| panic!("{src}: {e}"));
    }
    let helper: syn::ItemFn =
        syn::parse_str("fn pair(a: i8) -> (Complex<f64>, f64) { (Complex::new(a as f64, 2.0), 1.0) }").unwrap();
    let helpers = vec![frontend::HelperDef { id: "pair".into(), item: helper, callees: vec![] }];
    let callees = [("pair".to_string(), "pair".to_string())];
    let item: syn::ItemFn = syn::parse_str("fn f(x: i8) -> f64 { let (v, w) = pair(x); v.im + w }").unwrap();
    ptx_codegen::compile_with_helpers(&item, &callees, &helpers, &Options::default()).unwrap();
}

/// An atomic is a call: its arguments are evaluated in order, the index before the values,
/// and the index is checked after them. Found by the random explicit kernels on the GPU
/// (seed 21874, 2026-12-07): the lowering evaluated the values first, so a value that
/// changed a variable moved the index (here the `compare_and_swap` went to `4t + 4`). The
/// kernel whose values change `k` must compile to the PTX of the one with the indices
/// written out (`tests/gpu_kernels.rs` runs it on the GPU).
#[test]
fn an_atomic_evaluates_its_index_before_its_values() {
    let with_blocks = "fn order(out: &mut [u32]) {
        let t = gpu::grid1();
        if t * 4 + 3 < out.len() {
            let mut k = t * 4;
            gpu::atomic::add(out, k, { k += 1; 5u32 });
            gpu::atomic::xor(out, { k += 1; k }, { k += 10; k as u32 });
            let old = gpu::atomic::compare_and_swap(out, k - 9, 0u32, { k += 1; k as u32 });
            out[t * 4 + 1] = old + 100;
        }
    }";
    let written_out = "fn order(out: &mut [u32]) {
        let t = gpu::grid1();
        if t * 4 + 3 < out.len() {
            gpu::atomic::add(out, t * 4, 5u32);
            gpu::atomic::xor(out, t * 4 + 2, (t * 4 + 12) as u32);
            let old = gpu::atomic::compare_and_swap(out, t * 4 + 3, 0u32, (t * 4 + 13) as u32);
            out[t * 4 + 1] = old + 100;
        }
    }";
    let ptx = |src: &str| compile_kernel_str(src, &Options::default()).unwrap_or_else(|e| panic!("{src}: {e}")).ptx;
    assert_eq!(ptx(with_blocks), ptx(written_out));
}
