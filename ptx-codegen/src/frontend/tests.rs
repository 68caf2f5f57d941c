//! Frontend unit tests: a Rust function in, kernel IR or diagnostics out.

use super::*;
use crate::ir::{ExprKind, Function, Literal, Type, visit_block};
use crate::ty::ScalarType::*;

fn check(src: &str) -> Result<Function, Vec<String>> {
    check_all(src).map(|p| p.functions.into_iter().next().unwrap())
}

fn check_all(src: &str) -> Result<Program, Vec<String>> {
    let item: syn::ItemFn = syn::parse_str(src).expect("test source parses");
    check_function(&item).map_err(|e| e.into_iter().map(|e| e.to_string()).collect())
}

fn ok(src: &str) -> Function {
    check(src).unwrap_or_else(|e| panic!("expected no errors, got {e:#?}"))
}

fn errors(src: &str) -> Vec<String> {
    match check(src) {
        Ok(_) => panic!("expected errors for {src}"),
        Err(e) => e,
    }
}

/// The single error of `src`, which must contain `needle`.
fn error_containing(src: &str, needle: &str) -> String {
    let e = errors(src);
    assert_eq!(e.len(), 1, "expected one error, got {e:#?}");
    assert!(e[0].contains(needle), "error {:?} does not contain {needle:?}", e[0]);
    e[0].clone()
}

/// Types of every literal in the body, in source order.
fn literal_types(f: &Function) -> Vec<Type> {
    let mut out = Vec::new();
    visit_block(&f.body, &mut |e| {
        if let ExprKind::Lit(_) = e.kind {
            out.push(e.ty);
        }
    });
    out
}

fn local_type(f: &Function, name: &str) -> Type {
    f.locals.iter().rev().find(|l| l.name == name).unwrap_or_else(|| panic!("no local {name}")).ty
}

#[test]
fn the_seed_function() {
    let f = ok("fn add_gpu(a: f32, b: f32) -> f32 { a + b }");
    assert_eq!(f.name, "add_gpu");
    assert_eq!(f.params.iter().map(|p| p.ty).collect::<Vec<_>>(), [F32, F32]);
    assert_eq!(f.ret, RetType::Scalar(F32));
    assert!(!f.may_fail());
}

#[test]
fn literals_take_their_type_from_the_other_operand() {
    let f = ok("fn f(x: f32) -> f32 { x * 2.0 + 1.5 }");
    assert_eq!(literal_types(&f), [Type::Scalar(F32), Type::Scalar(F32)]);
    let f = ok("fn f(x: u8) -> u8 { let y = 3; x + y }");
    assert_eq!(local_type(&f, "y"), Type::Scalar(U8));
}

#[test]
fn unconstrained_literals_fall_back_like_rustc() {
    let f = ok("fn f(x: f64) -> f64 { let a = 1; let b = 2.5; x + a as f64 + b }");
    assert_eq!(local_type(&f, "a"), Type::Scalar(I32));
    assert_eq!(local_type(&f, "b"), Type::Scalar(F64));
    // `1.5 as i32`: the literal cannot become an integer, so it is an f64.
    let f = ok("fn f() -> i32 { 1.5 as i32 }");
    assert_eq!(literal_types(&f), [Type::Scalar(F64)]);
}

#[test]
fn a_cast_types_its_literal_as_rustc_does() {
    // rustc types `300 as u8`'s literal as u8, and rejects it; also through parentheses,
    // `-`, `!` and a block's value.
    error_containing("fn f() -> u8 { 300 as u8 }", "literal out of range for `u8`");
    error_containing("fn f() -> u8 { ({ 300 }) as u8 }", "literal out of range for `u8`");
    error_containing("fn f() -> u8 { (!(300)) as u8 }", "literal out of range for `u8`");
    error_containing("fn f() -> u8 { (-1) as u8 }", "cannot negate an unsigned `u8`");
    let f = ok("fn f(x: f32) -> f32 { x + 2 as f32 }");
    assert_eq!(literal_types(&f), [Type::Scalar(I32)]);
}

#[test]
fn a_cast_does_not_type_what_its_literal_is_computed_with() {
    // Found by the fuzzer: the cast's type reached literals through binary operators,
    // branches and variables (`-((0x1FFFF << 16) as isize)` was computed in 64 bits:
    // -8589869056 instead of rustc's 65536).
    let i32s = |src: &str, n: usize| assert_eq!(literal_types(&ok(src)), vec![Type::Scalar(I32); n], "{src}");
    i32s("fn f() -> isize { -((0x1FFFF << 16) as isize) }", 2);
    i32s("fn f() -> u8 { ((255 + 1) / 2) as u8 }", 3);
    i32s("fn f() -> u8 { ((-2147483647) >> 24) as u8 }", 2);
    i32s("fn f(c: bool) -> u8 { (if c { 300 } else { 1 }) as u8 }", 2);
    let f = ok("fn f() -> u8 { let x = 300; x as u8 }");
    assert_eq!(local_type(&f, "x"), Type::Scalar(I32));
    let f = ok("fn f() -> f32 { ((16777216.0 + 1.0) - 16777216.0) as f32 }");
    assert_eq!(literal_types(&f), [Type::Scalar(F64); 3]);
}

#[test]
fn negative_literals_fit_their_type() {
    let f = ok("fn f(x: i8) -> i8 { x + -128 }");
    let mut v = Vec::new();
    visit_block(&f.body, &mut |e| {
        if let ExprKind::Lit(Literal::Int(i)) = e.kind {
            v.push(i)
        }
    });
    assert_eq!(v, [-128]);
    error_containing("fn f(x: i8) -> i8 { x + 128 }", "literal out of range for `i8`");
    error_containing("fn f(x: u32) -> u32 { x + -1 }", "cannot negate an unsigned `u32`");
}

#[test]
fn float_literals_are_parsed_once_per_width() {
    let f = ok("fn f() -> f32 { 0.1 }");
    let mut got = None;
    visit_block(&f.body, &mut |e| {
        if let ExprKind::Lit(Literal::Float { as_f32, as_f64 }) = e.kind {
            got = Some((as_f32, as_f64));
        }
    });
    assert_eq!(got, Some((0.1f32, 0.1f64)));
}

#[test]
fn mixed_float_types_say_which_cast_to_write() {
    let e = error_containing("fn f(a: f32, b: f64) -> f64 { a + b }", "cannot apply `+` to `f32` and `f64`");
    assert!(e.contains("`a as f64 + b`"), "{e}");
    let e = error_containing("fn f(a: f64, b: f32) -> f64 { a * (b + b) }", "`f64` and `f32`");
    assert!(e.contains("`a * (b + b) as f64`"), "{e}");
}

#[test]
fn an_integer_literal_next_to_a_float_gets_a_hint() {
    error_containing("fn f(x: f32) -> f32 { x + 1 }", "write the literal as a float, `1.0`");
    error_containing("fn f(x: f32) -> f32 { let y: f32 = 2; x + y }", "write the literal as a float, `2.0`");
}

#[test]
fn return_type_mismatches() {
    error_containing("fn f(x: f32) -> f64 { x }", "returns `f64` but its body evaluates to `f32`");
    error_containing("fn f(x: f32) -> f32 { x; }", "ends without a value");
    error_containing("fn f(x: i32) -> f32 { return x; }", "convert it with `x as f32`");
    error_containing("fn f(x: i32) -> i32 { return; }", "`return` needs a value");
}

#[test]
fn early_return_and_if_else() {
    let f = ok("fn f(x: f32) -> f32 { if x < 0.0 { return -x; } x }");
    assert_eq!(f.ret, RetType::Scalar(F32));
    ok("fn f(x: f32) -> f32 { if x < 0.0 { -x } else if x > 1.0 { 1.0 } else { x } }");
    error_containing("fn f(x: f32) -> f32 { if x < 0.0 { 1.0 } else { 1 } }", "`if` and `else` have different types");
    error_containing("fn f(x: f32) -> f32 { if x < 0.0 { 1.0 } x }", "`if` without `else` cannot produce a value");
    error_containing("fn f(x: f32) -> f32 { if x { 1.0 } else { 2.0 } }", "must be `bool`, found `f32`");
}

#[test]
fn loops_and_their_values() {
    let f = ok("fn f(n: u32) -> u32 { let mut i = 0; let r = loop { i += 1; if i > n { break i * 2; } }; r }");
    assert_eq!(local_type(&f, "r"), Type::Scalar(U32));
    ok("fn f(n: i64) -> i64 { let mut s = 0; let mut i = 0; while i < n { s += i; i += 1; } s }");
    ok(
        "fn f(n: u8) -> u32 { let mut s = 0u32; 'outer: for i in 0..n { for j in (0..=i).rev().step_by(2) { if j == 3 { continue 'outer; } s += j as u32; } } s }",
    );
    error_containing("fn f(x: i32) -> i32 { break; x }", "`break` outside of a loop");
    error_containing("fn f(x: i32) -> i32 { while x > 0 { break 3; } x }", "only allowed in a `loop`");
    error_containing("fn f(x: f32) -> f32 { for i in 0.0..x { } x }", "a `for` range needs an integer type");
    error_containing("fn f(x: i32) -> i32 { for i in 0.. { } x }", "an open range cannot be iterated");
}

#[test]
fn shadowing_and_mutability() {
    let f = ok("fn f(x: i32) -> f32 { let x = x * 2; let x = x as f32 + 0.5; x }");
    assert_eq!(f.locals.iter().filter(|l| l.name == "x").count(), 3);
    error_containing("fn f(x: i32) -> i32 { let y = 1; y = 2; x + y }", "declare it with `let mut y`");
    error_containing("fn f(x: i32) -> i32 { x += 1; x }", "make the parameter mutable: `mut x`");
    ok("fn f(mut x: i32) -> i32 { x += 1; x }");
}

#[test]
fn operators_check_their_operand_types() {
    ok("fn f(a: u32, b: u8) -> u32 { (a << b) | (a >> 3) ^ !a & 7 }");
    ok("fn f(a: bool, b: bool) -> bool { a & !b | (a ^ b) && a || b }");
    error_containing("fn f(a: f32) -> f32 { a << 1 }", "needs an integer type, found `f32`");
    error_containing("fn f(a: f32, b: f32) -> f32 { a & b }", "bitwise operators need an integer or `bool`");
    error_containing("fn f(a: bool) -> bool { a + a }", "arithmetic needs an integer or float type");
    error_containing("fn f(a: i32) -> bool { a && true }", "must be `bool`, found `i32`");
}

#[test]
fn casts_follow_rust() {
    ok("fn f(a: bool, b: f64, c: i8) -> u64 { a as u64 + b as u64 + c as u64 }");
    error_containing("fn f(a: i32) -> bool { a as bool }", "compare instead, e.g. `x != 0`");
    error_containing("fn f(a: bool) -> f32 { a as f32 }", "cast to an integer first");
}

#[test]
fn division_by_a_variable_can_fail() {
    assert!(ok("fn f(a: i32, b: i32) -> i32 { a / b }").may_fail());
    assert!(ok("fn f(a: u64, b: u64) -> u64 { let mut x = a; x %= b; x }").may_fail());
    assert!(!ok("fn f(a: i32) -> i32 { a / 2 + a % 7 }").may_fail());
    assert!(ok("fn f(a: i32) -> i32 { a / -1 }").may_fail());
    assert!(!ok("fn f(a: f32, b: f32) -> f32 { a / b }").may_fail());
    assert!(ok("fn f(n: u32, k: usize) -> u32 { let mut s = 0; for i in (0..n).step_by(k) { s += i; } s }").may_fail());
}

#[test]
fn signatures_outside_the_language() {
    error_containing("fn f(x: &[f32]) -> f32 { 0.0 }", "`&[f32]` cannot be a parameter");
    error_containing("fn f(x: Vec<f32>) -> f32 { 0.0 }", "cannot be a parameter");
    error_containing("fn f(x: String) -> f32 { 0.0 }", "`String` is not a scalar type");
    error_containing("fn f(x: f32) { }", "must return a value: add a return type such as `-> f32`");
    let e = errors("fn f(x: f32) -> (f32, [f32; 2]) { (x, [x, x]) }");
    assert!(e[0].contains("cannot be part of a result") && e[1].contains("arrays are not supported"), "{e:?}");
    error_containing("fn f<T>(x: T) -> T { x }", "write `#[vectorize(types(f32, f64))]`");
    error_containing("async fn f(x: f32) -> f32 { x }", "`async fn` cannot be vectorized");
    error_containing("unsafe fn f(x: f32) -> f32 { x }", "`unsafe fn` cannot be vectorized");
    error_containing("fn f((a, b): (f32, f32)) -> f32 { a }", "destructuring is not supported");
}

#[test]
fn bodies_outside_the_language() {
    error_containing("fn f(x: f32) -> f32 { println!(\"{x}\"); x }", "macros such as `println!` cannot run on the GPU");
    error_containing("fn f(x: f32) -> f32 { let v = vec![x]; x }", "`vec!`");
    error_containing("fn f(x: f32) -> f32 { let g = |y: f32| y; x }", "closures are not supported");
    error_containing("fn f(x: f32) -> f32 { unsafe { x } }", "`unsafe` blocks cannot appear");
    error_containing("fn f(x: f32) -> f32 { y }", "cannot find `y`");
    error_containing("fn f(x: f32) -> f32 { x.frobnicate() }", "unknown method `frobnicate`");
    error_containing("fn f(x: f32) -> f32 { foo(x) }", "cannot find function `foo`");
    error_containing("fn f(x: f32) -> f32 { let s = \"a\"; x }", "only numeric and `bool` literals");
    let e = errors("fn f(x: f32) -> f32 { let [a, b] = [x, x]; a + b }");
    assert!(e[0].contains("arrays are not supported") && e[1].contains("destructuring is not supported"), "{e:?}");
}

#[test]
fn every_error_of_a_function_is_reported() {
    // (`y.b`, not `a.b`: `a`'s type is already an error, and a use of such a value gets no
    // second message, as rustc gives none.)
    let e = errors("fn f(x: &f32, y: f32) -> f32 { let a = y + 1; println!(); y.b }");
    assert_eq!(e.len(), 4, "{e:#?}");
    assert!(e[0].contains("cannot be a parameter"));
    assert!(e[1].contains("write the literal as a float"));
    assert!(e[2].contains("`println!`"));
    assert!(e[3].contains("field access"));
}

#[test]
fn signature_types_survive_body_errors() {
    let item: syn::ItemFn = syn::parse_str("fn f(a: f64, n: i32) -> f32 { println!() }").unwrap();
    let (params, ret) = signature_types(&item.sig).unwrap();
    assert_eq!((params, ret), (vec![F64, I32], RetType::Scalar(F32)));
    let item: syn::ItemFn = syn::parse_str("fn f(a: &f64) -> f32 { 0.0 }").unwrap();
    assert!(signature_types(&item.sig).is_err());
}

#[test]
fn match_on_integers_and_bools() {
    ok(
        "fn f(x: i32) -> i32 { match x { 0 => 1, 1 | 2 => 2, 3..=9 => 3, -9..=-1 => 4, i32::MIN..-9 => 5, n if n > 100 => n, _ => 0 } }",
    );
    ok("fn f(b: bool) -> u8 { match b { true => 1, false => 0 } }");
    let f = ok("fn f(x: u8) -> u8 { match x { n @ 1..=9 => n * 2, n => n } }");
    assert_eq!(local_type(&f, "n"), Type::Scalar(U8));
    error_containing("fn f(x: f32) -> i32 { match x { _ => 1 } }", "`match` on `f32` is not supported");
    error_containing("fn f(x: i32) -> i32 { match x { 0 => 1.0, _ => 2 } }", "`match` arms have different types");
    error_containing("fn f(x: i32) -> i32 { match x { (a, b) => 1 } }", "this pattern is not supported");
    error_containing(
        "fn f(x: u8) -> u8 { match x { 1.5 => 1, _ => 0 } }",
        "this pattern is `{float}` but the value matched is `u8`",
    );
}

#[test]
fn methods_and_constants() {
    let f = ok("fn f(x: f32) -> f32 { x.sqrt().max(f32::EPSILON) * std::f32::consts::PI + f32::powi(x, 3) }");
    assert_eq!(f.ret, RetType::Scalar(F32));
    ok("fn f(x: u32) -> u32 { x.count_ones() + x.rotate_left(3).leading_zeros() + u32::BITS }");
    ok("fn f(x: i16) -> u16 { x.abs_diff(-3) + x.unsigned_abs() }");
    error_containing(
        "fn f(x: u32) -> u32 { x.abs() }",
        "`abs` is a method of floats and signed integers, not of `u32`",
    );
    error_containing("fn f(x: f32) -> f32 { x.sqrtt() }", "unknown method `sqrtt` on `f32`");
    error_containing("fn f(x: f32) -> f32 { x.powi(2.0) }", "`powi` expects a `i32` here, found `{float}`");
    error_containing("fn f(x: f32) -> f32 { x.max() }", "takes 1 argument besides the receiver, but 0 were given");
    error_containing("fn f() -> f32 { 2.0.sqrt() }", "can't call method `sqrt` on ambiguous numeric type `{float}`");
    error_containing("fn f(x: f64) -> f64 { x * PI }", "`std::f32::consts::PI` or `std::f64::consts::PI`");
    error_containing("fn f(x: f64) -> f64 { x * SCALE }", "define the constant inside the function");
    error_containing("fn f(x: f64) -> f64 { x * f64::PI }", "unknown path `f64::PI`");
    error_containing("fn f(x: f64) -> f64 { f64::sqrt(x as f32) }", "`f64::sqrt` takes a `f64`, found `f32`");
}

#[test]
fn nested_functions_and_constants() {
    let p = check_all(
        "fn f(x: f32) -> f32 {
            const SCALE: f32 = 2.5;
            const OFFSET: f32 = SCALE * 2.0;
            fn square(v: f32) -> f32 { v * v }
            fn poly(v: f32) -> f32 { square(v) * SCALE + OFFSET }
            poly(x) + square(2.0)
        }",
    )
    .unwrap();
    assert_eq!(p.functions.len(), 3);
    assert_eq!(p.functions[1].name, "square");
    assert!(!p.may_fail());
    // A fault in a helper makes the program fallible.
    let p = check_all("fn f(a: i32, b: i32) -> i32 { fn d(a: i32, b: i32) -> i32 { a / b } d(a, b) + 1 }").unwrap();
    assert!(p.may_fail() && !p.entry().may_fail());
    error_containing(
        "fn f(x: f32) -> f32 { fn g(v: f32) -> f32 { v } g(x, x) }",
        "`g` takes 1 argument, but 2 were given",
    );
    error_containing("fn f(x: f64) -> f32 { fn g(v: f32) -> f32 { v } g(x) }", "`g` takes a `f32` here, found `f64`");
    error_containing("fn f(x: f32) -> f32 { const K: f32 = 1; x * K }", "`K` is a `f32`, found `{integer}`");
    error_containing("fn f(x: f32) -> f32 { const K: f32 = x; K }", "cannot find `x`");
    // Nested functions see items, not the variables around them.
    error_containing(
        "fn f(x: f32) -> f32 { let y = 2.0; fn g(v: f32) -> f32 { v * y } g(x) }",
        "`y` is a variable of the function around this one",
    );
}

#[test]
fn recursion_is_reported() {
    let e = error_containing(
        "fn f(n: u32) -> u32 { fn fact(n: u32) -> u32 { if n < 2 { 1 } else { n * fact(n - 1) } } fact(n) }",
        "recursion is not supported on the GPU",
    );
    assert!(e.contains("`fact` calls `fact`"), "{e}");
    let e = error_containing(
        "fn f(n: u32) -> u32 { fn even(n: u32) -> bool { if n == 0 { true } else { odd(n - 1) } } fn odd(n: u32) -> bool { if n == 0 { false } else { even(n - 1) } } even(n) as u32 }",
        "recursion",
    );
    assert!(e.contains("`even` calls `odd` calls `even`"), "{e}");
}

#[test]
fn tuples_as_results_and_values() {
    let p = check_all(
        "fn polar(x: f32, y: f32) -> (f32, f32) { if x == 0.0 { (y.abs(), 1.5) } else { (x.hypot(y), y.atan2(x)) } }",
    )
    .unwrap();
    assert_eq!(p.entry().ret, RetType::Tuple(vec![F32, F32]));
    let p = check_all(
        "fn f(x: f64, n: i32) -> (f64, i32, bool) {
            fn split(v: f64) -> (f64, f64) { (v.trunc(), v.fract()) }
            let (whole, frac) = split(x);
            let t = (frac, n);
            let (_, m) = t;
            (whole + t.0, m * 2, frac > 0.5)
        }",
    )
    .unwrap();
    assert_eq!(p.entry().ret, RetType::Tuple(vec![F64, I32, Bool]));
    assert!(p.tuples.contains(&vec![F64, F64]) && p.tuples.contains(&vec![F64, I32]));
    error_containing(
        "fn f(x: f32) -> (f32, f32) { (x, 1) }",
        "returns `(f32, f32)` but its body evaluates to `(f32, {integer})`",
    );
    error_containing("fn f(x: f32) -> f32 { let t = (x, x); t.2 }", "no field `2`: the tuple has 2 elements");
    error_containing(
        "fn f(x: f32) -> f32 { let (a, b, c) = (x, x); a }",
        "this pattern has 3 elements but the tuple has 2",
    );
    error_containing("fn f(x: f32) -> f32 { x.0 }", "`.0` takes an element of a tuple, but this is `f32`");
    let e = errors("fn f(x: f32) -> f32 { let t = (x, x); t + t }");
    assert!(e.iter().any(|m| m.contains("`+` does not apply to the tuple `(f32, f32)`")), "{e:?}");
}

#[test]
fn a_raw_identifier_is_the_name_it_stands_for() {
    // Found by the fuzzer: `r#x` declared and `x` used (or the other way round) were two
    // names to the frontend, one to Rust.
    let f = ok("fn f(r#x: f32) -> f32 { x + r#x }");
    assert_eq!(f.params[0].name, "x");
    ok("fn f(x: i32) -> i32 { fn r#h(r#a: i32) -> i32 { a * 2 } let r#y = h(x); r#h(y) }");
    ok("fn f(r#type: i32) -> i32 { const r#K: i32 = 2; match r#type { K => 1, r#n => n + r#K } }");
    ok("fn f(mut x: u8) -> u8 { r#x += 1; x }");
}
