//! Measures how far the GPU's transcendental functions (NVIDIA's libdevice) are from the
//! CPU's (Rust's standard library; `SpecialMath` from the `libm` crate), in units in the
//! last place, over 2^20 inputs per function and type, edge cases included. Prints a
//! Markdown table (the one in docs/language.md).
//!
//! `cargo run --release --example ulp_table` on a machine with a GPU.

use gpu_runtime::{SpecialMath, vectorize};

/// Careful host versions where Rust's own result is not a good reference.
#[path = "../tests/common/reference.rs"]
#[allow(dead_code)]
mod reference;

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
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            2.0,
            1e-300,
            -1e-300,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MIN_POSITIVE,
            0.999_999_9,
            1.000_000_1,
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
    /// The same, in units of the last place of `max(|other|, 1)` (an absolute error).
    fn ulps_of_one(self, other: Self) -> Option<u64>;
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

            fn ulps_of_one(self, other: Self) -> Option<u64> {
                let exact = self.ulps(other)?;
                let unit = other.abs().max(1.0);
                let ulp = <$t>::from_bits(unit.to_bits() + 1) - unit;
                Some(exact.min(((self - other).abs() / ulp).ceil() as u64))
            }
        }
    };
}
ulp!(f32, u32);
ulp!(f64, u64);

/// How far the GPU is from a reference over all elements.
#[derive(Default)]
struct Distance {
    max_ulps: u64,
    /// The element where the distance is largest.
    worst: usize,
    /// Elements where one side is NaN or infinite and the other is not the same.
    special: usize,
    first_special: Option<usize>,
}

fn measure<T: Ulp>(gpu: &[T], reference: &[T], absolute: bool) -> Distance {
    let mut d = Distance::default();
    for (i, (g, r)) in gpu.iter().zip(reference).enumerate() {
        let u = if absolute { g.ulps_of_one(*r) } else { g.ulps(*r) };
        match u {
            Some(u) if u > d.max_ulps => {
                d.max_ulps = u;
                d.worst = i;
            }
            Some(_) => {}
            None => {
                d.special += 1;
                d.first_special.get_or_insert(i);
            }
        }
    }
    d
}

macro_rules! table {
    ($( $name:ident [$b32:expr, $b64:expr] $reference:expr, $absolute:expr; |$x:ident $(, $y:ident)?| $body:expr; )*) => {
        mod f32_kernels {
            use super::*;
            $( #[vectorize] pub fn $name($x: f32 $(, $y: f32)?) -> f32 { $body } )*
        }
        mod f64_kernels {
            use super::*;
            $( #[vectorize] pub fn $name($x: f64 $(, $y: f64)?) -> f64 { $body } )*
        }
        /// For each function: its name, the f32 GPU results against the f32 CPU results and
        /// against the f64 CPU results rounded to f32 (a reference nearly correctly rounded),
        /// the f64 GPU results against the f64 CPU results, and libdevice's bounds.
        fn rows(xs32: &[f32], ys32: &[f32], xs64: &[f64], ys64: &[f64]) -> gpu_runtime::Result<Vec<Row>> {
            let _ = (ys32, ys64);
            let mut out = Vec::new();
            $({
                let gpu32 = f32_kernels::$name(xs32 $(, { let $y = ys32; $y })?)?;
                let cpu32: Vec<f32> = (0..xs32.len()).map(|i| f32_kernels::$name::scalar(xs32[i] $(, { let $y = ys32[i]; $y })?)).collect();
                let wide32: Vec<f32> = (0..xs32.len())
                    .map(|i| $reference(xs32[i] as f64 $(, { let $y = ys32[i] as f64; $y })?) as f32)
                    .collect();
                let gpu64 = f64_kernels::$name(xs64 $(, { let $y = ys64; $y })?)?;
                let cpu64: Vec<f64> = (0..xs64.len()).map(|i| $reference(xs64[i] $(, { let $y = ys64[i]; $y })?)).collect();
                let d32 = measure(&gpu32, &cpu32, $absolute);
                let w32 = measure(&gpu32, &wide32, $absolute);
                let d64 = measure(&gpu64, &cpu64, $absolute);
                let two = <[&str]>::len(&[$(stringify!($y))?]) == 1;
                let show32 = |i: usize| format!("x = {:e}{}: GPU {:e}, CPU {:e}, f64 {:e}", xs32[i], if two { format!(", y = {:e}", ys32[i]) } else { String::new() }, gpu32[i], cpu32[i], wide32[i]);
                let show64 = |i: usize| format!("x = {:e}{}: GPU {:e}, CPU {:e}", xs64[i], if two { format!(", y = {:e}", ys64[i]) } else { String::new() }, gpu64[i], cpu64[i]);
                let mut notes = vec![format!("f32 worst at {}", show32(d32.worst)), format!("f64 worst at {}", show64(d64.worst))];
                if let Some(i) = d32.first_special { notes.push(format!("f32 special value differs at {}", show32(i))); }
                if let Some(i) = d64.first_special { notes.push(format!("f64 special value differs at {}", show64(i))); }
                out.push(Row { name: stringify!($name), f32_cpu: d32, f32_wide: w32, f64_cpu: d64, bounds: ($b32, $b64), notes });
            })*
            Ok(out)
        }
    };
}

struct Row {
    name: &'static str,
    f32_cpu: Distance,
    f32_wide: Distance,
    f64_cpu: Distance,
    bounds: (u64, u64),
    notes: Vec<String>,
}

// The bounds are libdevice's documented maximum errors (CUDA Math API documentation).
// Each row: the f64 reference (the CPU's f64 function, or a careful one where Rust's is
// not good: see `reference`) and whether the error is absolute (ulps of 1).
table! {
    cbrt [1, 1] f64_kernels::cbrt::scalar, false; |x| x.cbrt();
    exp [2, 1] f64_kernels::exp::scalar, false; |x| x.exp();
    exp2 [2, 1] f64_kernels::exp2::scalar, false; |x| x.exp2();
    exp_m1 [1, 1] f64_kernels::exp_m1::scalar, false; |x| x.exp_m1();
    ln [1, 1] f64_kernels::ln::scalar, false; |x| x.ln();
    log2 [1, 1] f64_kernels::log2::scalar, false; |x| x.log2();
    log10 [2, 1] f64_kernels::log10::scalar, false; |x| x.log10();
    ln_1p [1, 1] f64_kernels::ln_1p::scalar, false; |x| x.ln_1p();
    sin [2, 2] f64_kernels::sin::scalar, false; |x| x.sin();
    cos [2, 2] f64_kernels::cos::scalar, false; |x| x.cos();
    tan [4, 2] f64_kernels::tan::scalar, false; |x| x.tan();
    asin [2, 2] f64_kernels::asin::scalar, false; |x| x.asin();
    acos [2, 2] f64_kernels::acos::scalar, false; |x| x.acos();
    atan [2, 2] f64_kernels::atan::scalar, false; |x| x.atan();
    sinh [3, 2] f64_kernels::sinh::scalar, false; |x| x.sinh();
    cosh [2, 1] f64_kernels::cosh::scalar, false; |x| x.cosh();
    tanh [2, 1] f64_kernels::tanh::scalar, false; |x| x.tanh();
    asinh [3, 3] reference::f64::asinh, false; |x| x.asinh();
    acosh [4, 3] reference::f64::acosh, false; |x| x.acosh();
    atanh [3, 2] reference::f64::atanh, false; |x| x.atanh();
    erf [2, 2] f64_kernels::erf::scalar, false; |x| SpecialMath::erf(x);
    erfc [4, 5] f64_kernels::erfc::scalar, false; |x| SpecialMath::erfc(x);
    gamma [5, 10] f64_kernels::gamma::scalar, false; |x| SpecialMath::gamma(x);
    ln_gamma [6, 4] f64_kernels::ln_gamma::scalar, true; |x| SpecialMath::ln_gamma(x);
    powf [4, 2] reference::f64::powf, false; |x, y| x.powf(y);
    atan2 [3, 2] f64_kernels::atan2::scalar, false; |x, y| x.atan2(y);
    hypot [3, 2] reference::f64::hypot, false; |x, y| x.hypot(y);
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
    let rows = rows(&xs32, &ys32, &xs64, &ys64)?;
    println!(
        "| function | f32 vs CPU f32 | f32 vs f64 reference, rounded | f64 vs f64 reference | libdevice bound f32 / f64 |"
    );
    println!("| --- | ---: | ---: | ---: | ---: |");
    let show = |d: &Distance| {
        if d.special == 0 { d.max_ulps.to_string() } else { format!("{} ({} special)", d.max_ulps, d.special) }
    };
    for r in &rows {
        println!(
            "| `{}` | {} | {} | {} | {} / {} |",
            r.name,
            show(&r.f32_cpu),
            show(&r.f32_wide),
            show(&r.f64_cpu),
            r.bounds.0,
            r.bounds.1
        );
    }
    println!();
    for r in &rows {
        for n in &r.notes {
            println!("{}: {n}", r.name);
        }
    }
    Ok(())
}
