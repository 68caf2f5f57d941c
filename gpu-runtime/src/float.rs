//! The `Float` bound of generic vectorized functions: `fn f<T: Float>(x: T) -> T`, compiled
//! for each type of `#[vectorize(types(f32, f64))]`. On the host the bound makes the
//! generic original compile; on the GPU each listed type gets its own kernel.

use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign};

use crate::scalar::Scalar;
use crate::special::SpecialMath;

macro_rules! float_trait {
    (
        unary { $($u:ident),* }
        binary { $($b:ident),* }
        predicates { $($p:ident),* }
    ) => {
        /// `f32` or `f64`, with the arithmetic operators and the float methods a vectorized
        /// function may call. Write literals through [`Float::from_f64`] (`T::from_f64(0.5)`)
        /// or the constants (`T::ONE`).
        pub trait Float:
            Scalar
            + SpecialMath
            + PartialOrd
            + Add<Output = Self>
            + Sub<Output = Self>
            + Mul<Output = Self>
            + Div<Output = Self>
            + Rem<Output = Self>
            + Neg<Output = Self>
            + AddAssign
            + SubAssign
            + MulAssign
            + DivAssign
            + RemAssign
        {
            const ZERO: Self;
            const ONE: Self;
            const EPSILON: Self;
            const INFINITY: Self;
            const NEG_INFINITY: Self;
            const NAN: Self;
            const MAX: Self;
            const MIN: Self;
            const MIN_POSITIVE: Self;

            /// `v as Self`: a literal or an `f64` value in the function's type.
            fn from_f64(v: f64) -> Self;

            $( fn $u(self) -> Self; )*
            $( fn $b(self, other: Self) -> Self; )*
            $( fn $p(self) -> bool; )*
            fn mul_add(self, a: Self, b: Self) -> Self;
            fn clamp(self, min: Self, max: Self) -> Self;
            fn powi(self, n: i32) -> Self;
        }

        float_trait!(@impl f32; $($u),*; $($b),*; $($p),*);
        float_trait!(@impl f64; $($u),*; $($b),*; $($p),*);
    };
    (@impl $t:ident; $($u:ident),*; $($b:ident),*; $($p:ident),*) => {
        impl Float for $t {
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            const EPSILON: $t = $t::EPSILON;
            const INFINITY: $t = $t::INFINITY;
            const NEG_INFINITY: $t = $t::NEG_INFINITY;
            const NAN: $t = $t::NAN;
            const MAX: $t = $t::MAX;
            const MIN: $t = $t::MIN;
            const MIN_POSITIVE: $t = $t::MIN_POSITIVE;

            #[inline]
            fn from_f64(v: f64) -> $t {
                v as $t
            }
            $( #[inline] fn $u(self) -> $t { <$t>::$u(self) } )*
            $( #[inline] fn $b(self, other: $t) -> $t { <$t>::$b(self, other) } )*
            $( #[inline] fn $p(self) -> bool { <$t>::$p(self) } )*
            #[inline]
            fn mul_add(self, a: $t, b: $t) -> $t {
                <$t>::mul_add(self, a, b)
            }
            #[inline]
            fn clamp(self, min: $t, max: $t) -> $t {
                <$t>::clamp(self, min, max)
            }
            #[inline]
            fn powi(self, n: i32) -> $t {
                <$t>::powi(self, n)
            }
        }
    };
}

float_trait! {
    unary {
        abs, signum, floor, ceil, round, round_ties_even, trunc, fract, sqrt, cbrt, exp, exp2, exp_m1, ln,
        log2, log10, ln_1p, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, recip,
        to_degrees, to_radians
    }
    binary { copysign, powf, atan2, hypot, min, max, log, rem_euclid, div_euclid }
    predicates { is_nan, is_infinite, is_finite, is_sign_negative, is_sign_positive }
}

#[cfg(test)]
mod tests {
    use super::Float;

    fn hypot2<T: Float>(x: T, y: T) -> T {
        (x * x + y * y).sqrt() * T::from_f64(0.5) + T::ZERO
    }

    #[test]
    fn generic_code_compiles_for_both_types() {
        assert_eq!(hypot2(3.0f32, 4.0), 2.5);
        assert_eq!(hypot2(3.0f64, 4.0), 2.5);
        assert_eq!(Float::max(1.0f64, 2.0), 2.0);
    }
}
