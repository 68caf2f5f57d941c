//! Host differential tests: each function of the corpus is lowered exactly as for the GPU,
//! compiled for the CPU through LLVM's JIT, and compared with the native Rust function on
//! generated inputs (NaN, ±0, ±inf, subnormals and integer extremes forced in). This checks
//! the lowering's semantics without a GPU. libdevice's functions run as the C library's
//! functions of the same names (what Rust's own `f32::sin` calls), so only the lowering
//! around them is under test here; their accuracy on the GPU is measured separately.

mod corpus;

use corpus::Native;
use inkwell::context::Context;
// The functions the references call for libdevice's, from C's libm, and the host JIT's
// table of them: the fuzzer's, so both differential tests compare against the same ones.
use kernel_fuzz::native::Bits;
use kernel_fuzz::special::{SpecialMath, libdevice_on_host};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use ptx_codegen::{ScalarType, frontend, host};

type Reference = Box<dyn Fn(&[u64]) -> Vec<u64>>;

fn native<Args, F: Native<Args> + 'static>(f: F) -> Reference {
    Box::new(move |args| f.call(args))
}

#[path = "../../tests/support/quiet.rs"]
mod quiet;

/// Runs a reference; `Err` holds Rust's panic message.
fn run_reference(r: &Reference, args: &[u64]) -> Result<Vec<u64>, String> {
    quiet::quietly(|| r(args))
}

fn int_strategy<T>(specials: Vec<T>) -> BoxedStrategy<u64>
where
    T: Arbitrary + Bits + std::fmt::Debug + Clone + 'static,
{
    prop_oneof![
        3 => any::<T>().prop_map(Bits::to_u64),
        2 => proptest::sample::select(specials).prop_map(Bits::to_u64),
        2 => (-300i64..300).prop_map(|v| v as u64).prop_map(|v| T::from_u64(v).to_u64()),
    ]
    .boxed()
}

macro_rules! int_specials {
    ($t:ty) => {
        vec![
            0 as $t,
            1,
            2,
            3,
            <$t>::MAX,
            <$t>::MIN,
            <$t>::MAX - 1,
            <$t>::MIN.wrapping_add(1),
            (0 as $t).wrapping_sub(1),
            7,
            64,
            100,
        ]
    };
}

/// Inputs for a parameter of type `t`. `u32` parameters of methods are shift amounts and
/// exponents, so small values come often; `i32` likewise for `powi`.
fn strategy(t: ScalarType) -> BoxedStrategy<u64> {
    use ScalarType::*;
    match t {
        Bool => any::<bool>().prop_map(Bits::to_u64).boxed(),
        F32 => prop_oneof![
            3 => proptest::num::f32::ANY.prop_map(Bits::to_u64),
            2 => (-1000.0f32..1000.0).prop_map(Bits::to_u64),
            1 => proptest::sample::select(vec![0.0f32, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -1.0, f32::NAN, f32::INFINITY,
                f32::NEG_INFINITY, f32::MIN_POSITIVE, 1e-45, f32::MAX, f32::MIN, 8388607.5, 0.49999997]).prop_map(Bits::to_u64),
        ]
        .boxed(),
        F64 => prop_oneof![
            3 => proptest::num::f64::ANY.prop_map(Bits::to_u64),
            2 => (-1000.0f64..1000.0).prop_map(Bits::to_u64),
            1 => proptest::sample::select(vec![0.0f64, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1.0, -1.0, f64::NAN, f64::INFINITY,
                f64::NEG_INFINITY, f64::MIN_POSITIVE, 5e-324, f64::MAX, f64::MIN, 4503599627370495.5, 0.49999999999999994]).prop_map(Bits::to_u64),
        ]
        .boxed(),
        I8 => int_strategy::<i8>(int_specials!(i8)),
        I16 => int_strategy::<i16>(int_specials!(i16)),
        I32 => prop_oneof![1 => (-40i32..40).prop_map(Bits::to_u64), 2 => int_strategy::<i32>(int_specials!(i32))].boxed(),
        I64 | Isize => int_strategy::<i64>(int_specials!(i64)),
        U8 => int_strategy::<u8>(int_specials!(u8)),
        U16 => int_strategy::<u16>(int_specials!(u16)),
        U32 => prop_oneof![1 => (0u32..70).prop_map(Bits::to_u64), 2 => int_strategy::<u32>(int_specials!(u32))].boxed(),
        U64 | Usize => int_strategy::<u64>(int_specials!(u64)),
        // Every bit pattern (NaNs, infinities and subnormals among them), and the specials.
        F16 | BF16 => prop_oneof![
            3 => any::<u16>().prop_map(u64::from),
            1 => proptest::sample::select(vec![0u16, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x03ff, 0x7bff,
                0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0x007f, 0x7f7f, 0x3800, 0x4000, 0x4200]).prop_map(u64::from),
        ]
        .boxed(),
        // Complex numbers have a test of their own against num-complex (`complex_host.rs`).
        C32 | C64 => unreachable!("the corpus compared here has no complex parameters"),
        Struct(_) => unreachable!("the corpus compared here has no struct parameters"),
    }
}

/// How results are compared.
#[derive(Copy, Clone, PartialEq)]
enum Compare {
    /// Bit for bit (any NaN equals any NaN).
    Exact,
    /// `min`/`max`: Rust leaves the sign of a zero result unspecified for `+0` vs `-0`.
    ZeroSignFree,
    /// Every bit, a NaN's sign and payload included (what works on the bits alone).
    Bits,
}

fn same(t: ScalarType, got: u64, want: u64, how: Compare) -> bool {
    if how == Compare::Bits {
        return got == want;
    }
    let (g, w) = match t {
        ScalarType::F32 => (f32::from_u64(got) as f64, f32::from_u64(want) as f64),
        ScalarType::F64 => (f64::from_u64(got), f64::from_u64(want)),
        ScalarType::F16 => (half::f16::from_bits(got as u16).to_f64(), half::f16::from_bits(want as u16).to_f64()),
        ScalarType::BF16 => (half::bf16::from_bits(got as u16).to_f64(), half::bf16::from_bits(want as u16).to_f64()),
        _ => return got == want,
    };
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    match how {
        Compare::Exact => got == want,
        Compare::ZeroSignFree => got == want || (g == 0.0 && w == 0.0),
        Compare::Bits => unreachable!("compared above"),
    }
}

fn show(t: ScalarType, v: u64) -> String {
    match t {
        ScalarType::F32 => format!("{:e} ({v:#x})", f32::from_u64(v)),
        ScalarType::F64 => format!("{:e} ({v:#x})", f64::from_u64(v)),
        ScalarType::F16 => format!("{:e} ({v:#x})", half::f16::from_bits(v as u16)),
        ScalarType::BF16 => format!("{:e} ({v:#x})", half::bf16::from_bits(v as u16)),
        ScalarType::Bool => format!("{}", v != 0),
        t if t.is_signed_int() => format!("{}", (v << (64 - t.bits())) as i64 >> (64 - t.bits())),
        _ => format!("{v}"),
    }
}

/// Compiles `src` for the host and compares it with `reference` on generated inputs.
fn check(name: &str, src: &str, reference: &Reference, how: Compare, cases: u32) {
    let item: syn::ItemFn = syn::parse_str(src).unwrap_or_else(|e| panic!("{name}: {e}"));
    let program = frontend::check_function(&item).unwrap_or_else(|e| panic!("{name} does not compile: {e}"));
    let cx = Context::create();
    // SAFETY: `libdevice_on_host` maps each libdevice name to an `extern "C"` function of
    // the same signature (its table writes each with its libdevice types).
    let jit =
        unsafe { host::jit(&cx, &program, &libdevice_on_host) }.unwrap_or_else(|e| panic!("{name}: JIT failed: {e}"));
    let strategies: Vec<BoxedStrategy<u64>> = jit.params.iter().map(|t| strategy(*t)).collect();
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let result = runner.run(&strategies, |args| {
        let (got, fault) = jit.call(&args);
        let shown: Vec<String> = args.iter().zip(&jit.params).map(|(a, t)| show(*t, *a)).collect();
        match run_reference(reference, &args) {
            Ok(want) => {
                if fault != 0 {
                    return Err(TestCaseError::fail(format!(
                        "{name}({}) raised fault {fault}, Rust returns {want:?}",
                        shown.join(", ")
                    )));
                }
                for (k, t) in jit.rets.iter().enumerate() {
                    if !same(*t, got[k], want[k], how) {
                        return Err(TestCaseError::fail(format!(
                            "{name}({}): result {k} = {}, Rust says {}",
                            shown.join(", "),
                            show(*t, got[k]),
                            show(*t, want[k])
                        )));
                    }
                }
            }
            Err(msg) => {
                let expected = ptx_codegen::Fault::ALL.iter().find(|f| f.code() == fault).map(|f| f.message());
                match expected {
                    Some(m) if msg.starts_with(m) => {}
                    _ => {
                        return Err(TestCaseError::fail(format!(
                            "{name}({}): Rust panics with {msg:?}, the lowering gives fault {fault} and {got:?}",
                            shown.join(", "),
                        )));
                    }
                }
            }
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn hand_written_corpus_matches_rust() {
    for (name, src, call) in corpus::CORPUS {
        let r: Reference = Box::new(*call);
        check(name, src, &r, Compare::Exact, 300);
    }
}

macro_rules! float_references {
    ($t:ident) => {
        vec![
            ("abs", native(|x: $t| x.abs())),
            ("signum", native(|x: $t| x.signum())),
            ("floor", native(|x: $t| x.floor())),
            ("ceil", native(|x: $t| x.ceil())),
            ("round", native(|x: $t| x.round())),
            ("round_ties_even", native(|x: $t| x.round_ties_even())),
            ("trunc", native(|x: $t| x.trunc())),
            ("fract", native(|x: $t| x.fract())),
            ("sqrt", native(|x: $t| x.sqrt())),
            ("cbrt", native(|x: $t| x.cbrt())),
            ("exp", native(|x: $t| x.exp())),
            ("exp2", native(|x: $t| x.exp2())),
            ("exp_m1", native(|x: $t| x.exp_m1())),
            ("ln", native(|x: $t| x.ln())),
            ("log2", native(|x: $t| x.log2())),
            ("log10", native(|x: $t| x.log10())),
            ("ln_1p", native(|x: $t| x.ln_1p())),
            ("sin", native(|x: $t| x.sin())),
            ("cos", native(|x: $t| x.cos())),
            ("tan", native(|x: $t| x.tan())),
            ("asin", native(|x: $t| x.asin())),
            ("acos", native(|x: $t| x.acos())),
            ("atan", native(|x: $t| x.atan())),
            ("sinh", native(|x: $t| x.sinh())),
            ("cosh", native(|x: $t| x.cosh())),
            ("tanh", native(|x: $t| x.tanh())),
            ("asinh", native(|x: $t| x.asinh())),
            ("acosh", native(|x: $t| x.acosh())),
            ("atanh", native(|x: $t| x.atanh())),
            ("recip", native(|x: $t| x.recip())),
            ("to_degrees", native(|x: $t| x.to_degrees())),
            ("to_radians", native(|x: $t| x.to_radians())),
            ("erf", native(|x: $t| SpecialMath::erf(x))),
            ("erfc", native(|x: $t| SpecialMath::erfc(x))),
            ("gamma", native(|x: $t| SpecialMath::gamma(x))),
            ("ln_gamma", native(|x: $t| SpecialMath::ln_gamma(x))),
            ("copysign", native(|x: $t, y: $t| x.copysign(y))),
            ("powf", native(|x: $t, y: $t| x.powf(y))),
            ("atan2", native(|x: $t, y: $t| x.atan2(y))),
            ("hypot", native(|x: $t, y: $t| x.hypot(y))),
            ("min", native(|x: $t, y: $t| x.min(y))),
            ("max", native(|x: $t, y: $t| x.max(y))),
            ("log", native(|x: $t, y: $t| x.log(y))),
            ("rem_euclid", native(|x: $t, y: $t| x.rem_euclid(y))),
            ("div_euclid", native(|x: $t, y: $t| x.div_euclid(y))),
            ("is_nan", native(|x: $t| x.is_nan())),
            ("is_infinite", native(|x: $t| x.is_infinite())),
            ("is_finite", native(|x: $t| x.is_finite())),
            ("is_sign_negative", native(|x: $t| x.is_sign_negative())),
            ("is_sign_positive", native(|x: $t| x.is_sign_positive())),
            ("mul_add", native(|x: $t, y: $t, z: $t| x.mul_add(y, z))),
            ("clamp", native(|x: $t, y: $t, z: $t| x.clamp(y, z))),
            ("powi", native(|x: $t, n: i32| x.powi(n))),
        ]
    };
}

macro_rules! int_references {
    ($t:ident) => {
        vec![
            ("swap_bytes", native(|x: $t| x.swap_bytes())),
            ("reverse_bits", native(|x: $t| x.reverse_bits())),
            ("wrapping_neg", native(|x: $t| x.wrapping_neg())),
            ("count_ones", native(|x: $t| x.count_ones())),
            ("count_zeros", native(|x: $t| x.count_zeros())),
            ("leading_zeros", native(|x: $t| x.leading_zeros())),
            ("trailing_zeros", native(|x: $t| x.trailing_zeros())),
            ("min", native(|x: $t, y: $t| x.min(y))),
            ("max", native(|x: $t, y: $t| x.max(y))),
            ("rem_euclid", native(|x: $t, y: $t| x.rem_euclid(y))),
            ("div_euclid", native(|x: $t, y: $t| x.div_euclid(y))),
            ("wrapping_add", native(|x: $t, y: $t| x.wrapping_add(y))),
            ("wrapping_sub", native(|x: $t, y: $t| x.wrapping_sub(y))),
            ("wrapping_mul", native(|x: $t, y: $t| x.wrapping_mul(y))),
            ("wrapping_div", native(|x: $t, y: $t| x.wrapping_div(y))),
            ("wrapping_rem", native(|x: $t, y: $t| x.wrapping_rem(y))),
            ("saturating_add", native(|x: $t, y: $t| x.saturating_add(y))),
            ("saturating_sub", native(|x: $t, y: $t| x.saturating_sub(y))),
            ("saturating_mul", native(|x: $t, y: $t| x.saturating_mul(y))),
            ("saturating_div", native(|x: $t, y: $t| x.saturating_div(y))),
            ("pow", native(|x: $t, n: u32| x.pow(n))),
            ("rotate_left", native(|x: $t, n: u32| x.rotate_left(n))),
            ("rotate_right", native(|x: $t, n: u32| x.rotate_right(n))),
            ("wrapping_shl", native(|x: $t, n: u32| x.wrapping_shl(n))),
            ("wrapping_shr", native(|x: $t, n: u32| x.wrapping_shr(n))),
            ("wrapping_pow", native(|x: $t, n: u32| x.wrapping_pow(n))),
            ("saturating_pow", native(|x: $t, n: u32| x.saturating_pow(n))),
            ("abs_diff", native(|x: $t, y: $t| x.abs_diff(y))),
            ("clamp", native(|x: $t, y: $t, z: $t| x.clamp(y, z))),
        ]
    };
}

macro_rules! signed_references {
    ($t:ident) => {
        vec![
            ("abs", native(|x: $t| x.abs())),
            ("signum", native(|x: $t| x.signum())),
            ("wrapping_abs", native(|x: $t| x.wrapping_abs())),
            ("saturating_neg", native(|x: $t| x.saturating_neg())),
            ("saturating_abs", native(|x: $t| x.saturating_abs())),
            ("unsigned_abs", native(|x: $t| x.unsigned_abs())),
        ]
    };
}

macro_rules! unsigned_references {
    ($t:ident) => {
        vec![
            ("is_power_of_two", native(|x: $t| x.is_power_of_two())),
            ("div_ceil", native(|x: $t, y: $t| x.div_ceil(y))),
        ]
    };
}

/// Every generated method function of the corpus, against the Rust method.
#[test]
fn every_method_matches_rust() {
    let mut refs: Vec<(String, Reference)> = Vec::new();
    let mut add = |t: &str, list: Vec<(&str, Reference)>| {
        for (m, r) in list {
            refs.push((format!("{m}_{t}"), r));
        }
    };
    add("f32", float_references!(f32));
    add("f64", float_references!(f64));
    macro_rules! ints {
        ($($t:ident: $extra:ident),*) => {$(
            add(stringify!($t), int_references!($t));
            add(stringify!($t), $extra!($t));
        )*};
    }
    ints!(i8: signed_references, i16: signed_references, i32: signed_references, i64: signed_references,
        isize: signed_references, u8: unsigned_references, u16: unsigned_references, u32: unsigned_references,
        u64: unsigned_references, usize: unsigned_references);
    let sources = corpus::corpus();
    let mut checked = 0;
    for (name, reference) in &refs {
        let (_, src) = sources.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no corpus function {name}"));
        let how =
            if name.starts_with("min_f") || name.starts_with("max_f") { Compare::ZeroSignFree } else { Compare::Exact };
        check(name, src, reference, how, 200);
        checked += 1;
    }
    // Every generated method function has a reference (only hand-written ones are left).
    let generated = sources.len() - corpus::CORPUS.len() - corpus::STRING_ONLY.len();
    assert_eq!(checked, generated);
}

/// The device library (`random::…`), compiled from the source the compiler carries, against
/// the same functions compiled by rustc: bit for bit, normals included (the JIT's `ln`,
/// `sin` and `cos` are the host's own, as in Rust's).
#[test]
fn random_library_matches_rust() {
    use kernel_abi::random as r;
    let cases: Vec<(&str, &str, Reference)> = vec![
        (
            "philox",
            "fn philox(a: u32, b: u32, c: u32, d: u32, k0: u32, k1: u32) -> (u32, u32, u32, u32) { \
             gpu_runtime::random::philox4x32_10(a, b, c, d, k0, k1) }",
            native(|a: u32, b: u32, c: u32, d: u32, k0: u32, k1: u32| r::philox4x32_10(a, b, c, d, k0, k1)),
        ),
        ("u32", "fn u32_(s: u64, q: u64, o: u64) -> u32 { random::uniform_u32(s, q, o) }", native(r::uniform_u32)),
        ("u64", "fn u64_(s: u64, q: u64, o: u64) -> u64 { random::uniform_u64(s, q, o) }", native(r::uniform_u64)),
        ("f32", "fn f32_(s: u64, q: u64, o: u64) -> f32 { random::uniform_f32(s, q, o) }", native(r::uniform_f32)),
        ("f64", "fn f64_(s: u64, q: u64, o: u64) -> f64 { random::uniform_f64(s, q, o) }", native(r::uniform_f64)),
        ("normal_f32", "fn n32(s: u64, q: u64, o: u64) -> f32 { random::normal_f32(s, q, o) }", native(r::normal_f32)),
        ("normal_f64", "fn n64(s: u64, q: u64, o: u64) -> f64 { random::normal_f64(s, q, o) }", native(r::normal_f64)),
        (
            "two_calls",
            "fn two(s: u64, o: u64) -> (f32, u32) { \
             (random::uniform_f32(s, 1, o) + random::normal_f32(s, 2, o), ::gpu_runtime::random::uniform_u32(s, 3, o)) }",
            native(|s: u64, o: u64| (r::uniform_f32(s, 1, o) + r::normal_f32(s, 2, o), r::uniform_u32(s, 3, o))),
        ),
    ];
    for (name, src, reference) in &cases {
        check(name, src, reference, Compare::Exact, 300);
    }
}

/// `half::f16` and `half::bf16`: every operator, conversion and method of the kernel
/// language against the `half` crate's own (bit for bit; any NaN equals any NaN). The
/// reference takes and returns the values' bits (`u16`).
#[test]
fn half_types_match_the_half_crate() {
    macro_rules! cases {
        ($t:ident, $name:literal) => {{
            use half::$t as H;
            let h = H::from_bits;
            let t = $name;
            let src = |f: &str| f.replace("H", t);
            vec![
                (src("fn add(a: H, b: H) -> H { a + b }"), native(move |a: u16, b: u16| (h(a) + h(b)).to_bits())),
                (src("fn sub(a: H, b: H) -> H { a - b }"), native(move |a: u16, b: u16| (h(a) - h(b)).to_bits())),
                (src("fn mul(a: H, b: H) -> H { a * b }"), native(move |a: u16, b: u16| (h(a) * h(b)).to_bits())),
                (src("fn div(a: H, b: H) -> H { a / b }"), native(move |a: u16, b: u16| (h(a) / h(b)).to_bits())),
                (src("fn rem(a: H, b: H) -> H { a % b }"), native(move |a: u16, b: u16| (h(a) % h(b)).to_bits())),
                (src("fn neg(a: H) -> H { -a }"), native(move |a: u16| (-h(a)).to_bits())),
                (
                    src("fn assign(a: H, b: H) -> H { let mut x = a; x += b; x *= a; x -= b; x /= a; x }"),
                    native(move |a: u16, b: u16| {
                        let mut x = h(a);
                        x += h(b);
                        x *= h(a);
                        x -= h(b);
                        x /= h(a);
                        x.to_bits()
                    }),
                ),
                (
                    src("fn cmp(a: H, b: H) -> (bool, bool, bool, bool, bool, bool) { (a < b, a <= b, a == b, a != b, a > b, a >= b) }"),
                    native(move |a: u16, b: u16| {
                        let (a, b) = (h(a), h(b));
                        (a < b, a <= b, a == b, a != b, a > b, a >= b)
                    }),
                ),
                (src("fn f32_in(x: f32) -> H { H::from_f32(x) }"), native(move |x: f32| H::from_f32(x).to_bits())),
                (src("fn f64_in(x: f64) -> H { H::from_f64(x) }"), native(move |x: f64| H::from_f64(x).to_bits())),
                (
                    src("fn out(a: H) -> (f32, f64, f32, f64) { (a.to_f32(), a.to_f64(), f32::from(a), H::to_f64(a)) }"),
                    native(move |a: u16| (h(a).to_f32(), h(a).to_f64(), f32::from(h(a)), f64::from(h(a)))),
                ),
                (
                    src("fn small(u: u8, i: i8) -> (H, H) { (H::from(u), H::from(i)) }"),
                    native(move |u: u8, i: i8| (H::from(u).to_bits(), H::from(i).to_bits())),
                ),
                (
                    src("fn preds(a: H) -> (bool, bool, bool, bool, bool) { (a.is_nan(), a.is_infinite(), a.is_finite(), a.is_sign_negative(), a.is_sign_positive()) }"),
                    native(move |a: u16| {
                        let a = h(a);
                        (a.is_nan(), a.is_infinite(), a.is_finite(), a.is_sign_negative(), a.is_sign_positive())
                    }),
                ),
                (
                    src("fn methods(a: H, b: H) -> (H, H, H, H) { (a.signum(), a.copysign(b), a.max(b), H::min(a, b)) }"),
                    native(move |a: u16, b: u16| {
                        let (a, b) = (h(a), h(b));
                        (a.signum().to_bits(), a.copysign(b).to_bits(), a.max(b).to_bits(), a.min(b).to_bits())
                    }),
                ),
                // The sign of a value rounded to the type, read back as a bit (an x86-64
                // back end once took it for zero: `Lowering::bf16_round_calls`).
                (
                    src("fn rounded_signs(a: H, b: H, x: f32, y: f64) -> (H, bool, H, bool, H) { (H::ONE.copysign(a + b), (a * b).is_sign_negative(), H::ZERO.copysign(H::from_f32(x)), H::from_f64(y).is_sign_negative(), (a - b).copysign(a / b)) }"),
                    native(move |a: u16, b: u16, x: f32, y: f64| {
                        let (a, b) = (h(a), h(b));
                        (
                            H::ONE.copysign(a + b).to_bits(),
                            (a * b).is_sign_negative(),
                            H::ZERO.copysign(H::from_f32(x)).to_bits(),
                            H::from_f64(y).is_sign_negative(),
                            (a - b).copysign(a / b).to_bits(),
                        )
                    }),
                ),
                (
                    src("fn consts(a: H) -> H { a * H::PI + H::ONE - H::EPSILON * H::MAX.min(a) }"),
                    native(move |a: u16| (h(a) * H::PI + H::ONE - H::EPSILON * H::MAX.min(h(a))).to_bits()),
                ),
                (
                    src("fn mixed(a: H, x: f32) -> f32 { let y = if a > H::ZERO { a * H::from_f32(x) } else { -a }; y.to_f32() + x }"),
                    native(move |a: u16, x: f32| {
                        let y = if h(a) > H::ZERO { h(a) * H::from_f32(x) } else { -h(a) };
                        y.to_f32() + x
                    }),
                ),
            ]
        }};
    }
    let mut all: Vec<(String, Reference)> = cases!(f16, "f16");
    all.extend(cases!(bf16, "bf16"));
    for (src, reference) in &all {
        check(src, src, reference, Compare::Exact, 2000);
    }
    // The sign bit alone: bit for bit, a NaN's bits included (the values are their bits in
    // the lowering, so no back end computes these through `f32`).
    let signs = |h: fn(u16) -> u16, c: fn(u16, u16) -> u16, t: &str| {
        let src = format!(
            "fn signs(a: {t}, b: {t}) -> ({t}, bool, bool, {t}) {{ (-a, a.is_sign_negative(), a.is_sign_positive(), a.copysign(b)) }}"
        );
        let reference = native(move |a: u16, b: u16| (h(a), a & 0x8000 != 0, a & 0x8000 == 0, c(a, b)));
        check(&src, &src, &reference, Compare::Bits, 2000);
    };
    signs(
        |a| (-half::f16::from_bits(a)).to_bits(),
        |a, b| half::f16::from_bits(a).copysign(half::f16::from_bits(b)).to_bits(),
        "f16",
    );
    signs(
        |a| (-half::bf16::from_bits(a)).to_bits(),
        |a, b| half::bf16::from_bits(a).copysign(half::bf16::from_bits(b)).to_bits(),
        "bf16",
    );
}
