//! The special functions that Numba offers and Rust's standard library lacks on stable:
//! `erf`, `erfc`, `gamma` and `ln_gamma`, for `f32` and `f64`.
//!
//! In a vectorized function they run on the GPU (NVIDIA's libdevice); on the host, as here,
//! they come from the `libm` crate. Both are accurate to a few ulps, not bit-identical.

/// `x.erf()`, `x.erfc()`, `x.gamma()` and `x.ln_gamma()` on `f32` and `f64`, on the host
/// and in vectorized functions. Import it with `use gpu_runtime::SpecialMath;`.
///
/// Newer standard libraries have unstable inherent methods of the same names, and rustc
/// warns (`unstable_name_collisions`) about method calls that may one day resolve to them;
/// the path form `SpecialMath::erf(x)` avoids the warning and works in vectorized
/// functions too.
pub trait SpecialMath: Sized {
    /// The error function.
    fn erf(self) -> Self;
    /// The complementary error function, `1 - erf(x)` computed without cancellation.
    fn erfc(self) -> Self;
    /// The gamma function.
    fn gamma(self) -> Self;
    /// The natural logarithm of the absolute value of the gamma function.
    fn ln_gamma(self) -> Self;
}

impl SpecialMath for f32 {
    fn erf(self) -> f32 {
        libm::erff(self)
    }
    fn erfc(self) -> f32 {
        libm::erfcf(self)
    }
    fn gamma(self) -> f32 {
        libm::tgammaf(self)
    }
    fn ln_gamma(self) -> f32 {
        libm::lgammaf(self)
    }
}

impl SpecialMath for f64 {
    fn erf(self) -> f64 {
        libm::erf(self)
    }
    fn erfc(self) -> f64 {
        libm::erfc(self)
    }
    fn gamma(self) -> f64 {
        libm::tgamma(self)
    }
    fn ln_gamma(self) -> f64 {
        libm::lgamma(self)
    }
}

#[cfg(test)]
mod tests {
    use super::SpecialMath;

    #[test]
    fn known_values() {
        assert!((SpecialMath::erf(1.0f64) - 0.842_700_792_949_714_9).abs() < 1e-15);
        assert!((SpecialMath::erfc(1.0f32) - 0.157_299_2).abs() < 1e-6);
        assert_eq!(SpecialMath::gamma(5.0f64), 24.0);
        assert!((SpecialMath::ln_gamma(10.0f64) - 362_880f64.ln()).abs() < 1e-12);
    }
}
