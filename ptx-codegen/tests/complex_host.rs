//! `Complex<f32>` and `Complex<f64>` against num-complex: every operator, constructor and
//! method of the kernel language, lowered as for the GPU, compiled for the CPU and run on
//! inputs with zeros of both signs, infinities, NaNs, subnormals and ordinary values. The
//! parts' math functions are the C library's here (as in Rust's own `f32::sin`), so every
//! result is compared bit for bit (any NaN equals any NaN): what is under test is that the
//! written-out arithmetic is num-complex's, operation for operation. How far libdevice's
//! functions move the results on the GPU is measured on the GPU.

use inkwell::context::Context;
use kernel_fuzz::special::libdevice_on_host;
use num_complex::Complex;
use ptx_codegen::{ScalarType, frontend, host};

/// A part type: f32 or f64, with its bits in a `u64`.
trait Part: num_complex::ComplexFloat + Copy + std::fmt::Debug + 'static {
    const NAME: &'static str;
    fn to_u64(self) -> u64;
    fn from_u64(b: u64) -> Self;
    fn specials() -> Vec<Self>;
    fn from_f64(x: f64) -> Self;
}

impl Part for f32 {
    const NAME: &'static str = "f32";
    fn to_u64(self) -> u64 {
        self.to_bits() as u64
    }
    fn from_u64(b: u64) -> f32 {
        f32::from_bits(b as u32)
    }
    fn specials() -> Vec<f32> {
        vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            1e-45,
            f32::MIN_POSITIVE,
            f32::MAX,
            1e20,
            -3.5,
        ]
    }
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
}

impl Part for f64 {
    const NAME: &'static str = "f64";
    fn to_u64(self) -> u64 {
        self.to_bits()
    }
    fn from_u64(b: u64) -> f64 {
        f64::from_bits(b)
    }
    fn specials() -> Vec<f64> {
        vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            5e-324,
            f64::MIN_POSITIVE,
            f64::MAX,
            1e200,
            -3.5,
        ]
    }
    fn from_f64(x: f64) -> f64 {
        x
    }
}

/// A value as the host function's words take it: `Complex<f32>` in one word (`re` in the
/// low half), `Complex<f64>` in two.
#[derive(Clone, Copy, Debug)]
enum Value<T> {
    C(Complex<T>),
    R(T),
    I(i32),
    U(u32),
    B(bool),
}

fn words<T: Part>(v: Value<T>) -> Vec<u64> {
    match v {
        Value::C(z) if T::NAME == "f32" => vec![z.re.to_u64() | (z.im.to_u64() << 32)],
        Value::C(z) => vec![z.re.to_u64(), z.im.to_u64()],
        Value::R(x) => vec![x.to_u64()],
        Value::I(i) => vec![i as u32 as u64],
        Value::U(u) => vec![u as u64],
        Value::B(b) => vec![b as u64],
    }
}

fn same<T: Part>(got: Value<T>, want: Value<T>) -> bool {
    let eq = |a: T, b: T| a.to_u64() == b.to_u64() || (a.is_nan() && b.is_nan());
    match (got, want) {
        (Value::C(a), Value::C(b)) => eq(a.re, b.re) && eq(a.im, b.im),
        (Value::R(a), Value::R(b)) => eq(a, b),
        (Value::B(a), Value::B(b)) => a == b,
        _ => false,
    }
}

/// A small deterministic generator (xorshift), so that a failure reproduces.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn part<T: Part>(&mut self) -> T {
        let specials = T::specials();
        match self.next() % 8 {
            0 | 1 => specials[(self.next() % specials.len() as u64) as usize],
            2 => T::from_u64(self.next() >> if T::NAME == "f32" { 32 } else { 0 }),
            _ => T::from_f64((self.next() % 2_000_001) as f64 / 1000.0 - 1000.0),
        }
    }

    fn value<T: Part>(&mut self, kind: char) -> Value<T> {
        match kind {
            'c' => Value::C(Complex::new(self.part(), self.part())),
            'r' => Value::R(self.part()),
            'i' => Value::I(
                match self.next() % 3 {
                    0 => (self.next() % 21) as i32 - 10,
                    1 => [i32::MIN, i32::MAX, 0, -1, 1][(self.next() % 5) as usize],
                    _ => self.next() as i32,
                } % if self.next() % 4 == 0 { i32::MAX } else { 40 },
            ),
            'u' => Value::U((self.next() % 40) as u32),
            _ => unreachable!("kinds are c, r, i and u"),
        }
    }
}

type Reference<T> = Box<dyn Fn(&[Value<T>]) -> Value<T>>;

/// Compiles `src` (with `T` for the part type) and compares it with `reference` on 3,000
/// inputs whose kinds are `kinds` (`c` complex, `r` a part, `i` an `i32`, `u` a `u32`).
fn check<T: Part>(src: &str, kinds: &str, reference: Reference<T>) {
    let src = src.replace('T', T::NAME);
    let item: syn::ItemFn = syn::parse_str(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
    let program = frontend::check_function(&item).unwrap_or_else(|e| panic!("{src} does not compile: {e}"));
    let cx = Context::create();
    // SAFETY: `libdevice_on_host` maps each libdevice name to an `extern "C"` function of
    // the same signature.
    let jit =
        unsafe { host::jit(&cx, &program, &libdevice_on_host) }.unwrap_or_else(|e| panic!("{src}: JIT failed: {e}"));
    let ret = jit.rets[0];
    let mut g = Gen(0x9e37_79b9_7f4a_7c15 ^ src.len() as u64);
    for _ in 0..3000 {
        let args: Vec<Value<T>> = kinds.chars().map(|k| g.value(k)).collect();
        let flat: Vec<u64> = args.iter().flat_map(|a| words(*a)).collect();
        let (out, fault) = jit.call(&flat);
        assert_eq!(fault, 0, "{src} faulted on {args:?}");
        let got = match ret {
            ScalarType::C32 => Value::C(Complex::new(T::from_u64(out[0] & 0xffff_ffff), T::from_u64(out[0] >> 32))),
            ScalarType::C64 => Value::C(Complex::new(T::from_u64(out[0]), T::from_u64(out[1]))),
            ScalarType::Bool => Value::B(out[0] != 0),
            _ => Value::R(T::from_u64(out[0])),
        };
        let want = reference(&args);
        assert!(same(got, want), "{src}\n  on {args:?}\n  gives {got:?}\n  num-complex says {want:?}");
    }
}

fn c<T: Copy>(v: &Value<T>) -> Complex<T> {
    match v {
        Value::C(z) => *z,
        _ => panic!("not complex"),
    }
}

fn r<T: Copy>(v: &Value<T>) -> T {
    match v {
        Value::R(x) => *x,
        _ => panic!("not a part"),
    }
}

fn i<T>(v: &Value<T>) -> i32 {
    match v {
        Value::I(x) => *x,
        _ => panic!("not an i32"),
    }
}

fn u<T>(v: &Value<T>) -> u32 {
    match v {
        Value::U(x) => *x,
        _ => panic!("not a u32"),
    }
}

macro_rules! unary {
    ($T:ty, $($m:ident),*) => {$(
        check::<$T>(concat!("fn f(z: Complex<T>) -> Complex<T> { z.", stringify!($m), "() }"), "c", Box::new(|a| Value::C(c(&a[0]).$m())));
    )*};
}

macro_rules! to_part {
    ($T:ty, $($m:ident),*) => {$(
        check::<$T>(concat!("fn f(z: Complex<T>) -> T { z.", stringify!($m), "() }"), "c", Box::new(|a| Value::R(c(&a[0]).$m())));
    )*};
}

macro_rules! predicate {
    ($T:ty, $($m:ident),*) => {$(
        check::<$T>(concat!("fn f(z: Complex<T>) -> bool { z.", stringify!($m), "() }"), "c", Box::new(|a| Value::B(c(&a[0]).$m())));
    )*};
}

macro_rules! all_for {
    ($T:ty) => {{
        // Operators: complex with complex, with a part on either side; negation; compound
        // assignment; comparison.
        check::<$T>("fn f(a: Complex<T>, b: Complex<T>) -> Complex<T> { a + b }", "cc", Box::new(|a| Value::C(c(&a[0]) + c(&a[1]))));
        check::<$T>("fn f(a: Complex<T>, b: Complex<T>) -> Complex<T> { a - b }", "cc", Box::new(|a| Value::C(c(&a[0]) - c(&a[1]))));
        check::<$T>("fn f(a: Complex<T>, b: Complex<T>) -> Complex<T> { a * b }", "cc", Box::new(|a| Value::C(c(&a[0]) * c(&a[1]))));
        check::<$T>("fn f(a: Complex<T>, b: Complex<T>) -> Complex<T> { a / b }", "cc", Box::new(|a| Value::C(c(&a[0]) / c(&a[1]))));
        check::<$T>("fn f(a: Complex<T>, x: T) -> Complex<T> { a + x }", "cr", Box::new(|a| Value::C(c(&a[0]) + r(&a[1]))));
        check::<$T>("fn f(a: Complex<T>, x: T) -> Complex<T> { a - x }", "cr", Box::new(|a| Value::C(c(&a[0]) - r(&a[1]))));
        check::<$T>("fn f(a: Complex<T>, x: T) -> Complex<T> { a * x }", "cr", Box::new(|a| Value::C(c(&a[0]) * r(&a[1]))));
        check::<$T>("fn f(a: Complex<T>, x: T) -> Complex<T> { a / x }", "cr", Box::new(|a| Value::C(c(&a[0]) / r(&a[1]))));
        check::<$T>("fn f(x: T, a: Complex<T>) -> Complex<T> { x + a }", "rc", Box::new(|a| Value::C(r(&a[0]) + c(&a[1]))));
        check::<$T>("fn f(x: T, a: Complex<T>) -> Complex<T> { x - a }", "rc", Box::new(|a| Value::C(r(&a[0]) - c(&a[1]))));
        check::<$T>("fn f(x: T, a: Complex<T>) -> Complex<T> { x * a }", "rc", Box::new(|a| Value::C(r(&a[0]) * c(&a[1]))));
        check::<$T>("fn f(x: T, a: Complex<T>) -> Complex<T> { x / a }", "rc", Box::new(|a| Value::C(r(&a[0]) / c(&a[1]))));
        check::<$T>("fn f(a: Complex<T>) -> Complex<T> { -a }", "c", Box::new(|a| Value::C(-c(&a[0]))));
        check::<$T>("fn f(a: Complex<T>, b: Complex<T>) -> bool { a == b }", "cc", Box::new(|a| Value::B(c(&a[0]) == c(&a[1]))));
        check::<$T>("fn f(a: Complex<T>, b: Complex<T>) -> bool { a != b }", "cc", Box::new(|a| Value::B(c(&a[0]) != c(&a[1]))));
        check::<$T>(
            "fn f(a: Complex<T>, b: Complex<T>) -> Complex<T> { let mut z = a; z += b; z *= a; z -= b; z /= a; z *= 2.0; z += 1.0; z /= 3.0; z -= 0.5; z }",
            "cc",
            Box::new(|a| {
                let (x, y) = (c(&a[0]), c(&a[1]));
                let mut z = x;
                z += y;
                z *= x;
                z -= y;
                z /= x;
                z *= 2.0 as $T;
                z += 1.0 as $T;
                z /= 3.0 as $T;
                z -= 0.5 as $T;
                Value::C(z)
            }),
        );
        // Construction and the parts.
        check::<$T>("fn f(x: T, y: T) -> Complex<T> { Complex::new(x, y) }", "rr", Box::new(|a| Value::C(Complex::new(r(&a[0]), r(&a[1])))));
        check::<$T>("fn f(x: T, y: T) -> Complex<T> { Complex { re: y, im: x } }", "rr", Box::new(|a| Value::C(Complex { re: r(&a[1]), im: r(&a[0]) })));
        check::<$T>(
            "fn f(z: Complex<T>, x: T) -> Complex<T> { let mut w = z; w.re = x; w.im *= x; w.im += w.re; w }",
            "cr",
            Box::new(|a| {
                let mut w = c(&a[0]);
                w.re = r(&a[1]);
                w.im *= r(&a[1]);
                w.im += w.re;
                Value::C(w)
            }),
        );
        check::<$T>("fn f(z: Complex<T>) -> T { z.re * 2.0 - z.im }", "c", Box::new(|a| Value::R(c(&a[0]).re * 2.0 - c(&a[0]).im)));
        check::<$T>(
            "fn f(r: T, t: T) -> Complex<T> { Complex::from_polar(r, t) + Complex::cis(t) * Complex::i() - Complex::ONE + Complex::from(r) * Complex::I }",
            "rr",
            Box::new(|a| {
                let (x, t) = (r(&a[0]), r(&a[1]));
                Value::C(Complex::from_polar(x, t) + Complex::cis(t) * Complex::i() - Complex::ONE + Complex::from(x) * Complex::I)
            }),
        );
        check::<$T>("fn f(z: Complex<T>) -> T { let (r, t) = z.to_polar(); r - t }", "c", Box::new(|a| {
            let (x, t) = c(&a[0]).to_polar();
            Value::R(x - t)
        }));
        // Methods.
        unary!($T, conj, inv, finv, exp, ln, sqrt, cbrt, log2, log10, exp2, sin, cos, tan, sinh, cosh, tanh, asin, acos, atan, asinh, acosh, atanh);
        to_part!($T, norm_sqr, norm, arg, l1_norm);
        predicate!($T, is_nan, is_infinite, is_finite, is_normal);
        check::<$T>("fn f(z: Complex<T>, x: T) -> Complex<T> { z.scale(x) }", "cr", Box::new(|a| Value::C(c(&a[0]).scale(r(&a[1])))));
        check::<$T>("fn f(z: Complex<T>, x: T) -> Complex<T> { z.unscale(x) }", "cr", Box::new(|a| Value::C(c(&a[0]).unscale(r(&a[1])))));
        check::<$T>("fn f(z: Complex<T>, x: T) -> Complex<T> { z.powf(x) }", "cr", Box::new(|a| Value::C(c(&a[0]).powf(r(&a[1])))));
        check::<$T>("fn f(z: Complex<T>, x: T) -> Complex<T> { z.log(x) }", "cr", Box::new(|a| Value::C(c(&a[0]).log(r(&a[1])))));
        check::<$T>("fn f(z: Complex<T>, x: T) -> Complex<T> { z.expf(x) }", "cr", Box::new(|a| Value::C(c(&a[0]).expf(r(&a[1])))));
        check::<$T>("fn f(z: Complex<T>, w: Complex<T>) -> Complex<T> { z.powc(w) }", "cc", Box::new(|a| Value::C(c(&a[0]).powc(c(&a[1])))));
        check::<$T>("fn f(z: Complex<T>, w: Complex<T>) -> Complex<T> { z.fdiv(w) }", "cc", Box::new(|a| Value::C(c(&a[0]).fdiv(c(&a[1])))));
        check::<$T>("fn f(z: Complex<T>, n: i32) -> Complex<T> { z.powi(n) }", "ci", Box::new(|a| Value::C(c(&a[0]).powi(i(&a[1])))));
        check::<$T>("fn f(z: Complex<T>, n: u32) -> Complex<T> { z.powu(n) }", "cu", Box::new(|a| Value::C(c(&a[0]).powu(u(&a[1])))));
        check::<$T>("fn f(z: Complex<T>) -> T { Complex::norm(z) + Complex::arg(z) }", "c", Box::new(|a| Value::R(c(&a[0]).norm() + c(&a[0]).arg())));
    }};
}

#[test]
fn complex_f32_matches_num_complex() {
    all_for!(f32);
}

#[test]
fn complex_f64_matches_num_complex() {
    all_for!(f64);
}
