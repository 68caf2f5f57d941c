//! num-complex 0.4's arithmetic on `(re, im)` pairs, operation for operation as its source
//! writes it (no `mul_add`, which Rust never contracts to): the interpreter's complex
//! numbers. The crate has no dependencies, so these are written out; its tests hold them to
//! num-complex itself.

use std::ops::{Add, Div, Mul, Neg, Sub};

/// `f32` or `f64`: a complex number's part.
pub trait Part:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn is_finite(self) -> bool;
    fn is_normal(self) -> bool;
    fn abs(self) -> Self;
}

macro_rules! part {
    ($($t:ty),*) => {$(
        impl Part for $t {
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            fn is_normal(self) -> bool {
                <$t>::is_normal(self)
            }
            fn abs(self) -> $t {
                <$t>::abs(self)
            }
        }
    )*};
}
part!(f32, f64);

/// A complex number: `(re, im)`.
pub type C<T> = (T, T);

pub fn add<T: Part>((a, b): C<T>, (c, d): C<T>) -> C<T> {
    (a + c, b + d)
}

pub fn sub<T: Part>((a, b): C<T>, (c, d): C<T>) -> C<T> {
    (a - c, b - d)
}

/// `re = a c - b d`, `im = a d + b c`.
pub fn mul<T: Part>((a, b): C<T>, (c, d): C<T>) -> C<T> {
    (a * c - b * d, a * d + b * c)
}

/// `((a c + b d) / n, (b c - a d) / n)` with `n = c² + d²`: no scaling, so `n` overflows
/// and underflows where a careful division would not (num-complex's choice).
pub fn div<T: Part>((a, b): C<T>, w: C<T>) -> C<T> {
    let (c, d) = w;
    let n = norm_sqr(w);
    ((a * c + b * d) / n, (b * c - a * d) / n)
}

/// `z + x` of a part `x`.
pub fn add_part<T: Part>((a, b): C<T>, x: T) -> C<T> {
    (a + x, b)
}

pub fn sub_part<T: Part>((a, b): C<T>, x: T) -> C<T> {
    (a - x, b)
}

pub fn mul_part<T: Part>((a, b): C<T>, x: T) -> C<T> {
    (a * x, b * x)
}

pub fn div_part<T: Part>((a, b): C<T>, x: T) -> C<T> {
    (a / x, b / x)
}

/// `x + z` of a part `x`.
pub fn part_add<T: Part>(x: T, (c, d): C<T>) -> C<T> {
    (x + c, d)
}

/// `x - z`: `(x - c, 0 - d)` (so `0 - (+0)` is `+0`, where `-d` would be `-0`).
pub fn part_sub<T: Part>(x: T, (c, d): C<T>) -> C<T> {
    (x - c, T::ZERO - d)
}

pub fn part_mul<T: Part>(x: T, (c, d): C<T>) -> C<T> {
    (x * c, x * d)
}

/// `x / z`: `(x c / n, 0 - x d / n)` with `n = c² + d²`.
pub fn part_div<T: Part>(x: T, w: C<T>) -> C<T> {
    let (c, d) = w;
    let n = norm_sqr(w);
    (x * c / n, T::ZERO - x * d / n)
}

pub fn neg<T: Part>((a, b): C<T>) -> C<T> {
    (-a, -b)
}

pub fn eq<T: Part>((a, b): C<T>, (c, d): C<T>) -> bool {
    a == c && b == d
}

pub fn conj<T: Part>((a, b): C<T>) -> C<T> {
    (a, -b)
}

pub fn norm_sqr<T: Part>((a, b): C<T>) -> T {
    a * a + b * b
}

pub fn l1_norm<T: Part>((a, b): C<T>) -> T {
    a.abs() + b.abs()
}

pub fn scale<T: Part>(z: C<T>, x: T) -> C<T> {
    mul_part(z, x)
}

pub fn unscale<T: Part>(z: C<T>, x: T) -> C<T> {
    div_part(z, x)
}

/// `(a / n, -b / n)` with `n = a² + b²`.
pub fn inv<T: Part>(z: C<T>) -> C<T> {
    let n = norm_sqr(z);
    (z.0 / n, -z.1 / n)
}

/// `z^e` by num-traits' squaring: `1` for `e = 0`, else the squares of `z` multiplied in
/// from the lowest set bit of `e` up.
pub fn powu<T: Part>(z: C<T>, mut e: u32) -> C<T> {
    if e == 0 {
        return (T::ONE, T::ZERO);
    }
    let mut base = z;
    while e & 1 == 0 {
        base = mul(base, base);
        e >>= 1;
    }
    if e == 1 {
        return base;
    }
    let mut acc = base;
    while e > 1 {
        e >>= 1;
        base = mul(base, base);
        if e & 1 == 1 {
            acc = mul(acc, base);
        }
    }
    acc
}

/// `z^e`: a negative `e` raises `inv(z)` to `|e|` (`i32::MIN` to 2^31).
pub fn powi<T: Part>(z: C<T>, e: i32) -> C<T> {
    if e < 0 { powu(inv(z), e.wrapping_neg() as u32) } else { powu(z, e as u32) }
}

pub fn is_nan<T: Part>((a, b): C<T>) -> bool {
    a.is_nan() || b.is_nan()
}

pub fn is_infinite<T: Part>(z: C<T>) -> bool {
    !is_nan(z) && (z.0.is_infinite() || z.1.is_infinite())
}

pub fn is_finite<T: Part>((a, b): C<T>) -> bool {
    a.is_finite() && b.is_finite()
}

pub fn is_normal<T: Part>((a, b): C<T>) -> bool {
    a.is_normal() && b.is_normal()
}
