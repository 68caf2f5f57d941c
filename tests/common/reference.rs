//! Host references where Rust's own result is not the one to match.
//!
//! - `asinh`, `acosh`, `atanh`: the standard library computes these with short formulas
//!   that lose up to 10^4 ulps near ±1 and overflow to infinity for huge arguments; the GPU
//!   (libdevice) stays within a few ulps. The reference is fdlibm's careful formulation.
//! - `powf`, `hypot`: IEEE 754 / C99 Annex F define `pow(x, ±0) = 1` and `pow(1, y) = 1`
//!   even for NaN, and `hypot(±inf, y) = +inf` even for NaN y; libdevice follows them, the
//!   CPU's `f32::powf`/`hypot` return NaN there.
pub mod f64 {
    use std::f64::consts::LN_2;

    const BIG: f64 = 268_435_456.0; // 2^28

    pub fn asinh(x: f64) -> f64 {
        let a = x.abs();
        let r = if a.is_nan() || a.is_infinite() {
            a
        } else if a > BIG {
            a.ln() + LN_2
        } else if a > 2.0 {
            (2.0 * a + 1.0 / ((a * a + 1.0).sqrt() + a)).ln()
        } else {
            let t = a * a;
            (a + t / (1.0 + (1.0 + t).sqrt())).ln_1p()
        };
        r.copysign(x)
    }

    pub fn acosh(x: f64) -> f64 {
        if x.is_nan() || x < 1.0 {
            f64::NAN
        } else if x.is_infinite() {
            x
        } else if x >= BIG {
            x.ln() + LN_2
        } else if x > 2.0 {
            (2.0 * x - 1.0 / (x + (x * x - 1.0).sqrt())).ln()
        } else {
            let t = x - 1.0;
            (t + (2.0 * t + t * t).sqrt()).ln_1p()
        }
    }

    pub fn atanh(x: f64) -> f64 {
        let a = x.abs();
        let r = if a < 0.5 {
            let t = a + a;
            0.5 * (t + t * a / (1.0 - a)).ln_1p()
        } else {
            0.5 * ((a + a) / (1.0 - a)).ln_1p()
        };
        r.copysign(x)
    }

    pub fn powf(x: f64, y: f64) -> f64 {
        if y == 0.0 || x == 1.0 { 1.0 } else { x.powf(y) }
    }

    pub fn hypot(x: f64, y: f64) -> f64 {
        if x.is_infinite() || y.is_infinite() { f64::INFINITY } else { x.hypot(y) }
    }
}

/// f32: the f64 reference, rounded (nearly correctly rounded).
pub mod f32 {
    pub fn asinh(x: f32) -> f32 {
        super::f64::asinh(x as f64) as f32
    }
    pub fn acosh(x: f32) -> f32 {
        super::f64::acosh(x as f64) as f32
    }
    pub fn atanh(x: f32) -> f32 {
        super::f64::atanh(x as f64) as f32
    }
    pub fn powf(x: f32, y: f32) -> f32 {
        if y == 0.0 || x == 1.0 { 1.0 } else { x.powf(y) }
    }
    pub fn hypot(x: f32, y: f32) -> f32 {
        if x.is_infinite() || y.is_infinite() { f32::INFINITY } else { x.hypot(y) }
    }
}
