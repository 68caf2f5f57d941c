//! Integer overflow gives one answer on the GPU and the CPU, in either build: a release
//! build wraps everywhere; a build with `debug_assertions` (and overflow checks) faults on
//! the GPU where the CPU panics, at the same first element with Rust's message. The GPU
//! host runs this binary built both ways (`cargo test --release` and
//! `cargo test --profile gpu-checked`).

mod common;

use common::Gen;
use gpu_runtime::{Error, vectorize};

macro_rules! overflow_ops {
    ($m:ident: $t:ty, signed: $($signed:ident),*) => {
        pub mod $m {
            use super::*;
            #[vectorize] pub fn add(a: $t, b: $t) -> $t { a + b }
            #[vectorize] pub fn sub(a: $t, b: $t) -> $t { a - b }
            #[vectorize] pub fn mul(a: $t, b: $t) -> $t { a * b }
            #[vectorize] pub fn compound(a: $t, b: $t) -> $t { let mut x = a; x += b; x -= 1; x *= 2; x }
            #[vectorize] pub fn shl(a: $t, b: u32) -> $t { a << b }
            #[vectorize] pub fn shr(a: $t, b: u32) -> $t { a >> b }
            #[vectorize] pub fn pow(a: $t, b: u32) -> $t { a.pow(b % 70) }
            $(
                #[vectorize] pub fn $signed(a: $t, _b: $t) -> $t { -a }
                #[vectorize] pub fn abs(a: $t, _b: $t) -> $t { a.abs() }
            )*
        }
    };
}

overflow_ops!(i8s: i8, signed: neg);
overflow_ops!(i16s: i16, signed: neg);
overflow_ops!(i32s: i32, signed: neg);
overflow_ops!(i64s: i64, signed: neg);
overflow_ops!(u8s: u8, signed:);
overflow_ops!(u32s: u32, signed:);
overflow_ops!(u64s: u64, signed:);

/// The GPU's answer and the CPU's, equal: the same values, or the same fault.
fn same<R: PartialEq + std::fmt::Debug>(
    name: &str,
    gpu: gpu_runtime::Result<Vec<R>>,
    cpu: gpu_runtime::Result<Vec<R>>,
) -> Result<(), String> {
    match (gpu, cpu) {
        (Ok(g), Ok(c)) if g == c => Ok(()),
        (Ok(g), Ok(c)) => {
            let i = (0..g.len()).find(|&i| g[i] != c[i]).unwrap_or(0);
            Err(format!("{name}: element {i}: GPU {:?}, CPU {:?}", g.get(i), c.get(i)))
        }
        (
            Err(Error::KernelFault { index: gi, message: gm, .. }),
            Err(Error::KernelFault { index: ci, message: cm, .. }),
        ) if (gi, &gm) == (ci, &cm) => Ok(()),
        (g, c) => Err(format!("{name}: GPU {:?}, CPU {:?}", g.map(|v| v.len()), c.map(|v| v.len()))),
    }
}

/// Inputs where overflow happens here and there (and a clean set, which must agree too).
fn inputs<T: Copy>(n: usize, seed: u64, edges: &[T], random: impl Fn(&mut Gen) -> T) -> Vec<T> {
    let mut g = Gen::new(seed);
    (0..n).map(|i| if i % 997 == 996 { edges[(i / 997) % edges.len()] } else { random(&mut g) }).collect()
}

macro_rules! check_type {
    ($failures:ident, $m:ident: $t:ty, small: $small:expr, edges: $edges:expr, signed: $($signed:ident),*) => {{
        let n = 50_000;
        let big = inputs::<$t>(n, 1, &$edges, |g| g.next_u64() as $t);
        let other = inputs::<$t>(n, 2, &$edges, |g| g.next_u64() as $t);
        let small: Vec<$t> = (0..n).map(|i| ((i % 7) as $t) & $small).collect();
        let amounts: Vec<u32> = (0..n).map(|i| if i % 1000 == 999 { 77 } else { (i % 8) as u32 }).collect();
        let cases: Vec<(&str, gpu_runtime::Result<Vec<$t>>, gpu_runtime::Result<Vec<$t>>)> = vec![
            ("add", $m::add(&big, &other), $m::add::cpu(&big, &other)),
            ("add (no overflow)", $m::add(&small, &small), $m::add::cpu(&small, &small)),
            ("sub", $m::sub(&big, &other), $m::sub::cpu(&big, &other)),
            ("mul", $m::mul(&big, &other), $m::mul::cpu(&big, &other)),
            ("compound", $m::compound(&big, &other), $m::compound::cpu(&big, &other)),
            ("shl", $m::shl(&big, &amounts), $m::shl::cpu(&big, &amounts)),
            ("shr", $m::shr(&big, &amounts), $m::shr::cpu(&big, &amounts)),
            ("pow", $m::pow(&small, &amounts), $m::pow::cpu(&small, &amounts)),
            $(
                (stringify!($signed), $m::$signed(&big, &other), $m::$signed::cpu(&big, &other)),
                ("abs", $m::abs(&big, &other), $m::abs::cpu(&big, &other)),
            )*
        ];
        for (op, gpu, cpu) in cases {
            if let Err(e) = same(&format!("{}::{op}", stringify!($t)), gpu, cpu) {
                $failures.push(e);
            }
        }
    }};
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn overflow_is_one_answer_in_either_build() {
    let mut failures = Vec::new();
    check_type!(failures, i8s: i8, small: 3, edges: [i8::MIN, i8::MAX, -1], signed: neg);
    check_type!(failures, i16s: i16, small: 3, edges: [i16::MIN, i16::MAX, -1], signed: neg);
    check_type!(failures, i32s: i32, small: 3, edges: [i32::MIN, i32::MAX, -1], signed: neg);
    check_type!(failures, i64s: i64, small: 3, edges: [i64::MIN, i64::MAX, -1], signed: neg);
    check_type!(failures, u8s: u8, small: 3, edges: [u8::MAX, 0, 1], signed:);
    check_type!(failures, u32s: u32, small: 3, edges: [u32::MAX, 0, 1], signed:);
    check_type!(failures, u64s: u64, small: 3, edges: [u64::MAX, 0, 1], signed:);
    let mode = if cfg!(debug_assertions) { "with overflow checks" } else { "wrapping" };
    assert!(failures.is_empty(), "{} differ ({mode}):\n{}", failures.len(), failures.join("\n"));
}
