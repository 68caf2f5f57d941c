//! Inputs and comparisons shared by the cross-crate tests.
#![allow(dead_code)]

/// A small deterministic generator (xorshift64*), so failures reproduce.
pub struct Gen(u64);

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [lo, hi).
    pub fn f64_in(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// Values that break careless arithmetic; the first elements of every generated input.
pub trait Special: Sized + Copy {
    fn specials() -> Vec<Self>;
    fn random(g: &mut Gen) -> Self;
}

impl Special for f32 {
    fn specials() -> Vec<f32> {
        vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            1e-40,
            f32::MAX,
            f32::MIN,
            0.1,
            3.5,
        ]
    }
    fn random(g: &mut Gen) -> f32 {
        if g.next_u64() % 8 == 0 { f32::from_bits(g.next_u64() as u32) } else { wide_float(g) as f32 }
    }
}

impl Special for f64 {
    fn specials() -> Vec<f64> {
        vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            1e-310,
            f64::MAX,
            f64::MIN,
            0.1,
            3.5,
        ]
    }
    fn random(g: &mut Gen) -> f64 {
        wide_float(g)
    }
}

/// A float from a mix that reaches every region a function may treat differently: near
/// zero, around the unit interval, ordinary magnitudes, any exponent, and any bit pattern.
fn wide_float(g: &mut Gen) -> f64 {
    match g.next_u64() % 8 {
        0 | 1 => g.f64_in(-1.0, 1.0),
        2 => g.f64_in(-10.0, 10.0),
        3 | 4 => g.f64_in(-1000.0, 1000.0),
        5 | 6 => {
            // log-uniform magnitude from 1e-30 to 1e30, either sign
            let m = 10f64.powf(g.f64_in(-30.0, 30.0));
            if g.next_u64() & 1 == 0 { m } else { -m }
        }
        _ => {
            let v = f64::from_bits(g.next_u64());
            if v.is_nan() { g.f64_in(-1e6, 1e6) } else { v }
        }
    }
}

impl Special for bool {
    fn specials() -> Vec<bool> {
        vec![false, true]
    }
    fn random(g: &mut Gen) -> bool {
        g.next_u64() & 1 == 1
    }
}

macro_rules! int_special {
    ($($t:ty),*) => {$(
        impl Special for $t {
            fn specials() -> Vec<$t> {
                vec![0, 1, 2, <$t>::MAX, <$t>::MIN, <$t>::MAX - 1, (<$t>::MIN).wrapping_add(1), 7, 100]
            }
            fn random(g: &mut Gen) -> $t {
                if g.next_u64() % 4 == 0 { g.next_u64() as $t } else { ((g.next_u64() % 2001) as i64 - 1000) as $t }
            }
        }
    )*};
}
int_special!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

/// The half types: their own edge values (zeros, ones, halves, NaN, infinities, the
/// smallest normal and subnormal, the largest finite) and then conversions of wide floats
/// or any bit pattern.
macro_rules! half_special {
    ($($t:ident),*) => {$(
        impl Special for gpu_runtime::$t {
            fn specials() -> Vec<gpu_runtime::$t> {
                use gpu_runtime::$t;
                vec![
                    $t::ZERO, $t::NEG_ZERO, $t::ONE, $t::NEG_ONE, $t::from_f32(0.5), $t::from_f32(1.5),
                    $t::NAN, $t::INFINITY, $t::NEG_INFINITY, $t::MIN_POSITIVE,
                    $t::MIN_POSITIVE_SUBNORMAL, $t::MAX, $t::MIN, $t::from_f32(0.1), $t::from_f32(3.5),
                ]
            }
            fn random(g: &mut Gen) -> gpu_runtime::$t {
                if g.next_u64() % 4 == 0 {
                    gpu_runtime::$t::from_bits(g.next_u64() as u16)
                } else {
                    gpu_runtime::$t::from_f32(wide_float(g) as f32)
                }
            }
        }
        impl SameAs for gpu_runtime::$t {
            fn same_as(self, o: gpu_runtime::$t) -> bool {
                (self.is_nan() && o.is_nan()) || self.to_bits() == o.to_bits()
            }
        }
    )*};
}
half_special!(f16, bf16);

/// Complex numbers: each special part as `re` beside another as `im`, then random parts
/// (one of them zero a quarter of the time each).
impl<T: Special + Part> Special for gpu_runtime::Complex<T> {
    fn specials() -> Vec<gpu_runtime::Complex<T>> {
        let parts = T::specials();
        let n = parts.len();
        (0..n).map(|i| gpu_runtime::Complex::new(parts[i], parts[(i * 7 + 3) % n])).collect()
    }
    fn random(g: &mut Gen) -> gpu_runtime::Complex<T> {
        let (re, im) = (T::random(g), T::random(g));
        match g.next_u64() % 4 {
            0 => gpu_runtime::Complex::new(re, T::ZERO),
            1 => gpu_runtime::Complex::new(T::ZERO, im),
            _ => gpu_runtime::Complex::new(re, im),
        }
    }
}

impl<T: SameAs> SameAs for gpu_runtime::Complex<T> {
    fn same_as(self, o: gpu_runtime::Complex<T>) -> bool {
        self.re.same_as(o.re) && self.im.same_as(o.im)
    }
}

/// A complex number's part, with its zero.
pub trait Part {
    const ZERO: Self;
}
impl Part for f32 {
    const ZERO: f32 = 0.0;
}
impl Part for f64 {
    const ZERO: f64 = 0.0;
}

/// `n` values: the specials first (as many as fit), then random ones.
pub fn inputs<T: Special>(n: usize, seed: u64) -> Vec<T> {
    let mut g = Gen::new(seed);
    let mut v: Vec<T> = T::specials().into_iter().take(n).collect();
    while v.len() < n {
        v.push(T::random(&mut g));
    }
    v
}

/// `n` uniform `f32` values in [-1, 1), from `seed`.
pub fn floats(n: usize, seed: u64) -> Vec<f32> {
    let mut g = Gen::new(seed);
    (0..n).map(|_| g.f64_in(-1.0, 1.0) as f32).collect()
}

/// Equality as the tests mean it: bit for bit, except that any NaN equals any NaN.
pub trait SameAs: Copy + std::fmt::Debug {
    fn same_as(self, other: Self) -> bool;
}

impl SameAs for f32 {
    fn same_as(self, o: f32) -> bool {
        (self.is_nan() && o.is_nan()) || self.to_bits() == o.to_bits()
    }
}
impl SameAs for f64 {
    fn same_as(self, o: f64) -> bool {
        (self.is_nan() && o.is_nan()) || self.to_bits() == o.to_bits()
    }
}
macro_rules! exact { ($($t:ty),*) => {$( impl SameAs for $t { fn same_as(self, o: $t) -> bool { self == o } } )*}; }
exact!(bool, i8, i16, i32, i64, u8, u16, u32, u64, isize, usize);

#[path = "../support/quiet.rs"]
mod quiet;

/// Runs the CPU's version of one element; `Err` holds Rust's panic message.
#[allow(unused_imports)]
pub use quiet::quietly as catch;

/// Compares the GPU with the CPU (`cpu[i]`, or the panic of element `i`); `gpu` runs the
/// kernel on every element, or on the listed ones. Where the CPU panics, the call must
/// fail at the CPU's first panicking element with Rust's message; the elements that do
/// not panic are then run on their own and compared bit for bit.
pub fn verify<R: SameAs>(
    cpu: &[Result<R, String>],
    gpu: impl Fn(Option<&[usize]>) -> gpu_runtime::Result<Vec<R>>,
    inputs_of: impl Fn(usize) -> String,
) -> Result<(), String> {
    let kept: Vec<usize> = match cpu.iter().position(Result::is_err) {
        None => (0..cpu.len()).collect(),
        Some(k) => {
            let msg = cpu[k].as_ref().unwrap_err();
            match gpu(None) {
                Err(gpu_runtime::Error::KernelFault { index, message, .. })
                    if index as usize == k && *msg == message => {}
                Err(e) => {
                    return Err(format!("the CPU panics first at element {k}, {} ({msg}); the GPU: {e}", inputs_of(k)));
                }
                Ok(_) => {
                    return Err(format!(
                        "the CPU panics at element {k}, {} ({msg}); the GPU returned results",
                        inputs_of(k)
                    ));
                }
            }
            (0..cpu.len()).filter(|&i| cpu[i].is_ok()).collect()
        }
    };
    if kept.is_empty() {
        return Ok(());
    }
    let got = if kept.len() == cpu.len() { gpu(None) } else { gpu(Some(&kept)) };
    let got = got.map_err(|e| e.to_string())?;
    if got.len() != kept.len() {
        return Err(format!("{} results for {} elements", got.len(), kept.len()));
    }
    let mut bad = kept.iter().zip(&got).filter(|(i, g)| !g.same_as(*cpu[**i].as_ref().unwrap()));
    if let Some((i, g)) = bad.next() {
        return Err(format!(
            "{} of {} elements differ; first at element {i}, {}: GPU {g:?}, CPU {:?}",
            1 + bad.count(),
            kept.len(),
            inputs_of(*i),
            cpu[*i].as_ref().unwrap()
        ));
    }
    Ok(())
}

/// Panics with the first differing elements (and the count) unless `got` equals `want`.
pub fn assert_same<T: SameAs>(what: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let bad: Vec<usize> = (0..got.len()).filter(|&i| !got[i].same_as(want[i])).collect();
    if let Some(&i) = bad.first() {
        panic!(
            "{what}: {} of {} elements differ; first at {i}: got {:?}, want {:?}",
            bad.len(),
            got.len(),
            got[i],
            want[i]
        );
    }
}
