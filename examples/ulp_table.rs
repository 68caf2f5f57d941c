//! Measures how far the GPU's transcendental functions (NVIDIA's libdevice) are from the
//! CPU's (Rust's standard library; `SpecialMath` from the `libm` crate), in units in the
//! last place, over 2^20 inputs per function and type, edge cases included. Prints a
//! Markdown table (the one in the README).
//!
//! `cargo run --release --example ulp_table` on a machine with a GPU.

use gpu_runtime::{vectorize, SpecialMath};

const N: usize = 1 << 20;

/// A small deterministic generator (xorshift64*).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }

    /// Ordinary ranges, the unit interval, huge and tiny magnitudes, and edge cases.
    fn input(&mut self, i: usize) -> f64 {
        const EDGES: [f64; 16] = [
            0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-300, -1e-300, 1e300, f64::INFINITY, f64::NEG_INFINITY,
            f64::NAN, f64::MIN_POSITIVE, 0.999_999_9, 1.000_000_1,
        ];
        if i < EDGES.len() {
            return EDGES[i];
        }
        match self.next() % 6 {
            0 => self.uniform(-1.0, 1.0),
            1 => self.uniform(-10.0, 10.0),
            2 => self.uniform(-100.0, 100.0),
            3 => self.uniform(0.0, 40.0),
            _ => {
                let m = 10f64.powf(self.uniform(-40.0, 40.0));
                if self.next() & 1 == 0 { m } else { -m }
            }
        }
    }
}

trait Ulp: Copy {
    /// Units in the last place between two finite values; `None` when one is NaN or
    /// infinite and the other is not the same special value.
    fn ulps(self, other: Self) -> Option<u64>;
}

macro_rules! ulp {
    ($t:ty, $bits:ty) => {
        impl Ulp for $t {
            fn ulps(self, other: Self) -> Option<u64> {
                if self.is_nan() || other.is_nan() {
                    return (self.is_nan() && other.is_nan()).then_some(0);
                }
                if self.is_infinite() || other.is_infinite() {
                    return (self == other).then_some(0);
                }
                let key = |v: $t| -> i128 {
                    let mag = (v.to_bits() & !(1 << (<$bits>::BITS - 1))) as i128;
                    if v.is_sign_negative() { -mag } else { mag }
                };
                Some((key(self) - key(other)).unsigned_abs() as u64)
            }
        }
    };
}
ulp!(f32, u32);
ulp!(f64, u64);

/// (max ulps, elements whose special value differs)
fn measure<T: Ulp>(gpu: &[T], cpu: &[T]) -> (u64, usize) {
    let mut max = 0;
    let mut special = 0;
    for (g, c) in gpu.iter().zip(cpu) {
        match g.ulps(*c) {
            Some(u) => max = max.max(u),
            None => special += 1,
        }
    }
    (max, special)
}

macro_rules! table {
    ($( $name:ident [$b32:expr, $b64:expr]: |$x:ident $(, $y:ident)?| $body:expr; )*) => {
        mod f32_kernels {
            use super::*;
            $( #[vectorize] pub fn $name($x: f32 $(, $y: f32)?) -> f32 { $body } )*
        }
        mod f64_kernels {
            use super::*;
            $( #[vectorize] pub fn $name($x: f64 $(, $y: f64)?) -> f64 { $body } )*
        }
        fn rows(xs32: &[f32], ys32: &[f32], xs64: &[f64], ys64: &[f64]) -> gpu_runtime::Result<Vec<(&'static str, (u64, usize), (u64, usize), u64, u64)>> {
            let _ = (ys32, ys64);
            let mut out = Vec::new();
            $({
                let gpu32 = f32_kernels::$name(xs32 $(, { let $y = ys32; $y })?)?;
                let cpu32: Vec<f32> = (0..xs32.len()).map(|i| f32_kernels::$name::scalar(xs32[i] $(, { let $y = ys32[i]; $y })?)).collect();
                let gpu64 = f64_kernels::$name(xs64 $(, { let $y = ys64; $y })?)?;
                let cpu64: Vec<f64> = (0..xs64.len()).map(|i| f64_kernels::$name::scalar(xs64[i] $(, { let $y = ys64[i]; $y })?)).collect();
                out.push((stringify!($name), measure(&gpu32, &cpu32), measure(&gpu64, &cpu64), $b32, $b64));
            })*
            Ok(out)
        }
    };
}

// The bounds are libdevice's documented maximum errors (CUDA Math API documentation).
table! {
    cbrt [1, 1]: |x| x.cbrt();
    exp [2, 1]: |x| x.exp();
    exp2 [2, 1]: |x| x.exp2();
    exp_m1 [1, 1]: |x| x.exp_m1();
    ln [1, 1]: |x| x.ln();
    log2 [1, 1]: |x| x.log2();
    log10 [2, 1]: |x| x.log10();
    ln_1p [1, 1]: |x| x.ln_1p();
    sin [2, 2]: |x| x.sin();
    cos [2, 2]: |x| x.cos();
    tan [4, 2]: |x| x.tan();
    asin [2, 2]: |x| x.asin();
    acos [2, 2]: |x| x.acos();
    atan [2, 2]: |x| x.atan();
    sinh [3, 2]: |x| x.sinh();
    cosh [2, 1]: |x| x.cosh();
    tanh [2, 1]: |x| x.tanh();
    asinh [3, 3]: |x| x.asinh();
    acosh [4, 3]: |x| x.acosh();
    atanh [3, 2]: |x| x.atanh();
    erf [2, 2]: |x| SpecialMath::erf(x);
    erfc [4, 5]: |x| SpecialMath::erfc(x);
    gamma [5, 10]: |x| SpecialMath::gamma(x);
    ln_gamma [6, 4]: |x| SpecialMath::ln_gamma(x);
    powf [4, 2]: |x, y| x.powf(y);
    atan2 [3, 2]: |x, y| x.atan2(y);
    hypot [3, 2]: |x, y| x.hypot(y);
}

fn main() -> gpu_runtime::Result<()> {
    if !gpu_runtime::is_available() {
        println!("no GPU found: the table measures the GPU, so there is nothing to measure here");
        return Ok(());
    }
    let mut g = Gen(0x9E37_79B9_7F4A_7C15);
    let xs64: Vec<f64> = (0..N).map(|i| g.input(i)).collect();
    let ys64: Vec<f64> = (0..N).map(|i| g.input((i + 7) % N)).collect();
    let xs32: Vec<f32> = xs64.iter().map(|&v| v as f32).collect();
    let ys32: Vec<f32> = ys64.iter().map(|&v| v as f32).collect();
    let device = gpu_runtime::default_device()?;
    println!("Maximum difference from the CPU, in ulps, over {N} inputs per function ({}):", device.name());
    println!();
    println!("| function | f32 | f64 | libdevice bound f32 / f64 |");
    println!("| --- | ---: | ---: | ---: |");
    for (name, (u32_, s32), (u64_, s64), b32, b64) in rows(&xs32, &ys32, &xs64, &ys64)? {
        let show = |u: u64, s: usize| if s == 0 { u.to_string() } else { format!("{u} ({s} special values differ)") };
        println!("| `{name}` | {} | {} | {b32} / {b64} |", show(u32_, s32), show(u64_, s64));
    }
    Ok(())
}
