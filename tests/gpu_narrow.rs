//! 8- and 16-bit integer arithmetic on the GPU, its results widened. PTX computes in
//! registers of 16 bits or more, and the driver's PTX compiler has folded a 16-bit
//! operation followed by a widening as if the operation could not wrap (`(-i16::MIN) as
//! i32` gave 32768). Every operation here runs on every pair of 8-bit values, and on the
//! extremes and random pairs of 16-bit ones, and is compared with its `::scalar` on the CPU,
//! in either build (where the CPU panics on overflow, the GPU must fault alike).
//! All failures are collected, so one run shows every operation that is wrong.

mod common;

use common::{Gen, SameAs, catch, verify};
use gpu_runtime::vectorize;

macro_rules! signed_ops {
    ($m:ident: $t:ty) => {
        pub mod $m {
            use super::*;
            #[vectorize]
            pub fn neg(a: $t, _b: $t) -> i64 {
                (-a) as i64
            }
            #[vectorize]
            pub fn neg_gt(a: $t, b: $t) -> bool {
                -a > b
            }
            #[vectorize]
            pub fn wrapping_neg(a: $t, _b: $t) -> i64 {
                a.wrapping_neg() as i64
            }
            #[vectorize]
            pub fn zero_minus(a: $t, _b: $t) -> i64 {
                (0 as $t).wrapping_sub(a) as i64
            }
            #[vectorize]
            pub fn times_minus_one(a: $t, _b: $t) -> i64 {
                a.wrapping_mul(-1) as i64
            }
            #[vectorize]
            pub fn abs(a: $t, _b: $t) -> i64 {
                a.wrapping_abs() as i64
            }
            #[vectorize]
            pub fn unsigned_abs(a: $t, _b: $t) -> i64 {
                a.unsigned_abs() as i64
            }
            #[vectorize]
            pub fn saturating_add_neg(a: $t, b: $t) -> i64 {
                b.saturating_add(-a) as i64
            }
            #[vectorize]
            pub fn neg_div(a: $t, _b: $t) -> i64 {
                ((-a) / 7) as i64
            }
            #[vectorize]
            pub fn neg_shr(a: $t, _b: $t) -> i64 {
                ((-a) >> 3) as i64
            }
            #[vectorize]
            pub fn add(a: $t, b: $t) -> i64 {
                a.wrapping_add(b) as i64
            }
            #[vectorize]
            pub fn sub(a: $t, b: $t) -> i64 {
                a.wrapping_sub(b) as i64
            }
            #[vectorize]
            pub fn mul(a: $t, b: $t) -> i64 {
                a.wrapping_mul(b) as i64
            }
            #[vectorize]
            pub fn add_gt(a: $t, b: $t) -> bool {
                a.wrapping_add(b) > b
            }
            #[vectorize]
            pub fn shl(a: $t, b: $t) -> i64 {
                a.wrapping_shl(b as u32) as i64
            }
            #[vectorize]
            pub fn shr(a: $t, b: $t) -> i64 {
                a.wrapping_shr(b as u32) as i64
            }
            #[vectorize]
            pub fn div(a: $t, b: $t) -> i64 {
                if b == 0 { 0 } else { a.wrapping_div(b) as i64 }
            }
            #[vectorize]
            pub fn rem(a: $t, b: $t) -> i64 {
                if b == 0 { 0 } else { a.wrapping_rem(b) as i64 }
            }
            #[vectorize]
            pub fn not(a: $t, _b: $t) -> i64 {
                (!a) as i64
            }
            #[vectorize]
            pub fn saturating_sub(a: $t, b: $t) -> i64 {
                a.saturating_sub(b) as i64
            }
            #[vectorize]
            pub fn saturating_mul(a: $t, b: $t) -> i64 {
                a.saturating_mul(b) as i64
            }
            #[vectorize]
            pub fn saturating_neg(a: $t, _b: $t) -> i64 {
                a.saturating_neg() as i64
            }
            #[vectorize]
            pub fn pow2(a: $t, _b: $t) -> i64 {
                a.wrapping_pow(2) as i64
            }
            #[vectorize]
            pub fn to_f32(a: $t, b: $t) -> f32 {
                a.wrapping_sub(b) as f32
            }

            pub fn all() -> Vec<(&'static str, super::Op<$t>)> {
                vec![
                    ("neg", super::wide(|a: &[$t], b: &[$t]| neg(a, b), neg::scalar)),
                    ("neg_gt", super::wide(|a: &[$t], b: &[$t]| neg_gt(a, b), neg_gt::scalar)),
                    ("wrapping_neg", super::wide(|a: &[$t], b: &[$t]| wrapping_neg(a, b), wrapping_neg::scalar)),
                    ("zero_minus", super::wide(|a: &[$t], b: &[$t]| zero_minus(a, b), zero_minus::scalar)),
                    (
                        "times_minus_one",
                        super::wide(|a: &[$t], b: &[$t]| times_minus_one(a, b), times_minus_one::scalar),
                    ),
                    ("abs", super::wide(|a: &[$t], b: &[$t]| abs(a, b), abs::scalar)),
                    ("unsigned_abs", super::wide(|a: &[$t], b: &[$t]| unsigned_abs(a, b), unsigned_abs::scalar)),
                    (
                        "saturating_add_neg",
                        super::wide(|a: &[$t], b: &[$t]| saturating_add_neg(a, b), saturating_add_neg::scalar),
                    ),
                    ("neg_div", super::wide(|a: &[$t], b: &[$t]| neg_div(a, b), neg_div::scalar)),
                    ("neg_shr", super::wide(|a: &[$t], b: &[$t]| neg_shr(a, b), neg_shr::scalar)),
                    ("add", super::wide(|a: &[$t], b: &[$t]| add(a, b), add::scalar)),
                    ("sub", super::wide(|a: &[$t], b: &[$t]| sub(a, b), sub::scalar)),
                    ("mul", super::wide(|a: &[$t], b: &[$t]| mul(a, b), mul::scalar)),
                    ("add_gt", super::wide(|a: &[$t], b: &[$t]| add_gt(a, b), add_gt::scalar)),
                    ("shl", super::wide(|a: &[$t], b: &[$t]| shl(a, b), shl::scalar)),
                    ("shr", super::wide(|a: &[$t], b: &[$t]| shr(a, b), shr::scalar)),
                    ("div", super::wide(|a: &[$t], b: &[$t]| div(a, b), div::scalar)),
                    ("rem", super::wide(|a: &[$t], b: &[$t]| rem(a, b), rem::scalar)),
                    ("not", super::wide(|a: &[$t], b: &[$t]| not(a, b), not::scalar)),
                    ("saturating_sub", super::wide(|a: &[$t], b: &[$t]| saturating_sub(a, b), saturating_sub::scalar)),
                    ("saturating_mul", super::wide(|a: &[$t], b: &[$t]| saturating_mul(a, b), saturating_mul::scalar)),
                    ("saturating_neg", super::wide(|a: &[$t], b: &[$t]| saturating_neg(a, b), saturating_neg::scalar)),
                    ("pow2", super::wide(|a: &[$t], b: &[$t]| pow2(a, b), pow2::scalar)),
                    ("to_f32", super::wide(|a: &[$t], b: &[$t]| to_f32(a, b), to_f32::scalar)),
                ]
            }
        }
    };
}

macro_rules! unsigned_ops {
    ($m:ident: $t:ty) => {
        pub mod $m {
            use super::*;
            #[vectorize]
            pub fn wrapping_neg(a: $t, _b: $t) -> i64 {
                a.wrapping_neg() as i64
            }
            #[vectorize]
            pub fn zero_minus(a: $t, _b: $t) -> i64 {
                (0 as $t).wrapping_sub(a) as i64
            }
            #[vectorize]
            pub fn add(a: $t, b: $t) -> i64 {
                a.wrapping_add(b) as i64
            }
            #[vectorize]
            pub fn sub(a: $t, b: $t) -> i64 {
                a.wrapping_sub(b) as i64
            }
            #[vectorize]
            pub fn mul(a: $t, b: $t) -> i64 {
                a.wrapping_mul(b) as i64
            }
            #[vectorize]
            pub fn sub_as_signed(a: $t, b: $t) -> i64 {
                a.wrapping_sub(b) as i32 as i64
            }
            #[vectorize]
            pub fn add_lt(a: $t, b: $t) -> bool {
                a.wrapping_add(b) < b
            }
            #[vectorize]
            pub fn shl(a: $t, b: $t) -> i64 {
                a.wrapping_shl(b as u32) as i64
            }
            #[vectorize]
            pub fn shr(a: $t, b: $t) -> i64 {
                a.wrapping_shr(b as u32) as i64
            }
            #[vectorize]
            pub fn div(a: $t, b: $t) -> i64 {
                if b == 0 { 0 } else { (a / b) as i64 }
            }
            #[vectorize]
            pub fn rem(a: $t, b: $t) -> i64 {
                if b == 0 { 0 } else { (a % b) as i64 }
            }
            #[vectorize]
            pub fn not(a: $t, _b: $t) -> i64 {
                (!a) as i64
            }
            #[vectorize]
            pub fn abs_diff(a: $t, b: $t) -> i64 {
                a.abs_diff(b) as i64
            }
            #[vectorize]
            pub fn saturating_sub(a: $t, b: $t) -> i64 {
                a.saturating_sub(b) as i64
            }
            #[vectorize]
            pub fn saturating_mul(a: $t, b: $t) -> i64 {
                a.saturating_mul(b) as i64
            }
            #[vectorize]
            pub fn pow2(a: $t, _b: $t) -> i64 {
                a.wrapping_pow(2) as i64
            }

            pub fn all() -> Vec<(&'static str, super::Op<$t>)> {
                vec![
                    ("wrapping_neg", super::wide(|a: &[$t], b: &[$t]| wrapping_neg(a, b), wrapping_neg::scalar)),
                    ("zero_minus", super::wide(|a: &[$t], b: &[$t]| zero_minus(a, b), zero_minus::scalar)),
                    ("add", super::wide(|a: &[$t], b: &[$t]| add(a, b), add::scalar)),
                    ("sub", super::wide(|a: &[$t], b: &[$t]| sub(a, b), sub::scalar)),
                    ("mul", super::wide(|a: &[$t], b: &[$t]| mul(a, b), mul::scalar)),
                    ("sub_as_signed", super::wide(|a: &[$t], b: &[$t]| sub_as_signed(a, b), sub_as_signed::scalar)),
                    ("add_lt", super::wide(|a: &[$t], b: &[$t]| add_lt(a, b), add_lt::scalar)),
                    ("shl", super::wide(|a: &[$t], b: &[$t]| shl(a, b), shl::scalar)),
                    ("shr", super::wide(|a: &[$t], b: &[$t]| shr(a, b), shr::scalar)),
                    ("div", super::wide(|a: &[$t], b: &[$t]| div(a, b), div::scalar)),
                    ("rem", super::wide(|a: &[$t], b: &[$t]| rem(a, b), rem::scalar)),
                    ("not", super::wide(|a: &[$t], b: &[$t]| not(a, b), not::scalar)),
                    ("abs_diff", super::wide(|a: &[$t], b: &[$t]| abs_diff(a, b), abs_diff::scalar)),
                    ("saturating_sub", super::wide(|a: &[$t], b: &[$t]| saturating_sub(a, b), saturating_sub::scalar)),
                    ("saturating_mul", super::wide(|a: &[$t], b: &[$t]| saturating_mul(a, b), saturating_mul::scalar)),
                    ("pow2", super::wide(|a: &[$t], b: &[$t]| pow2(a, b), pow2::scalar)),
                ]
            }
        }
    };
}

signed_ops!(ops_i8: i8);
signed_ops!(ops_i16: i16);
unsigned_ops!(ops_u8: u8);
unsigned_ops!(ops_u16: u16);

/// One operation: its GPU call over two slices and its CPU original, as a check that says
/// where it differs.
pub type Op<T> = Box<dyn Fn(&[T], &[T]) -> Result<(), String>>;

/// The check of a vectorized function `gpu` against its original `cpu`, in either build:
/// where the CPU panics (overflow, in a build with `debug_assertions`) the call must fail
/// at the same first element with the same message, and the other elements must agree.
pub fn wide<T, R>(gpu: impl Fn(&[T], &[T]) -> gpu_runtime::Result<Vec<R>> + 'static, cpu: fn(T, T) -> R) -> Op<T>
where
    T: Copy + std::fmt::Debug + 'static,
    R: SameAs + 'static,
{
    Box::new(move |a: &[T], b: &[T]| {
        let want: Vec<Result<R, String>> = a.iter().zip(b).map(|(&x, &y)| catch(|| cpu(x, y))).collect();
        let run = |keep: Option<&[usize]>| match keep {
            None => gpu(a, b),
            Some(idx) => {
                let (a, b): (Vec<T>, Vec<T>) = idx.iter().map(|&i| (a[i], b[i])).unzip();
                gpu(&a, &b)
            }
        };
        verify(&want, run, |i| format!("a = {:?}, b = {:?}", a[i], b[i]))
    })
}

/// Every pair of 8-bit values.
fn all_pairs<T: Copy>(values: impl Fn(u8) -> T) -> (Vec<T>, Vec<T>) {
    let (mut a, mut b) = (Vec::with_capacity(1 << 16), Vec::with_capacity(1 << 16));
    for x in 0..=255u8 {
        for y in 0..=255u8 {
            a.push(values(x));
            b.push(values(y));
        }
    }
    (a, b)
}

/// The extremes and their neighbours paired with each other, then random pairs.
fn edge_pairs<T: Copy>(edges: &[T], random: impl Fn(&mut Gen) -> T) -> (Vec<T>, Vec<T>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for &x in edges {
        for &y in edges {
            a.push(x);
            b.push(y);
        }
    }
    let mut g = Gen::new(16);
    for _ in 0..200_000 {
        a.push(random(&mut g));
        b.push(random(&mut g));
    }
    (a, b)
}

fn run<T>(label: &str, ops: Vec<(&'static str, Op<T>)>, a: &[T], b: &[T], failures: &mut Vec<String>) {
    for (name, op) in ops {
        if let Err(e) = op(a, b) {
            failures.push(format!("{label}::{name}: {e}"));
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn narrow_integer_operations_widen_as_on_the_cpu() {
    let mut failures = Vec::new();
    let (a, b) = all_pairs(|x| x as i8);
    run("i8", ops_i8::all(), &a, &b, &mut failures);
    let (a, b) = all_pairs(|x| x);
    run("u8", ops_u8::all(), &a, &b, &mut failures);
    let edges16: Vec<i16> = vec![
        i16::MIN,
        i16::MIN + 1,
        -256,
        -255,
        -129,
        -128,
        -127,
        -2,
        -1,
        0,
        1,
        2,
        7,
        15,
        16,
        127,
        128,
        255,
        256,
        i16::MAX - 1,
        i16::MAX,
    ];
    let (a, b) = edge_pairs(&edges16, |g| g.next_u64() as i16);
    run("i16", ops_i16::all(), &a, &b, &mut failures);
    let (a, b) = edge_pairs(&edges16.iter().map(|&v| v as u16).collect::<Vec<_>>(), |g| g.next_u64() as u16);
    run("u16", ops_u16::all(), &a, &b, &mut failures);
    assert!(failures.is_empty(), "{} operations differ from the CPU:\n{}", failures.len(), failures.join("\n"));
}
