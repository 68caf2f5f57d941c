//! Atomic read-modify-write operations on shared arrays and `&mut [T]` parameters
//! (Numba: `cuda.atomic.*`). Each returns the value the element held before. `array` is
//! a `&mut [T]` kernel parameter, a shared array or a view of one (or a reference to one);
//! `index` a `usize`, or a tuple for a 2-D or 3-D shared array. An index out of bounds
//! panics as indexing does.
//!
//! Float `min` and `max` follow Numba's `cuda.atomic.min`/`max`: the value is stored only
//! when it compares below (above) the element, so a NaN element stays NaN and a NaN value
//! is ignored; `nanmin`/`nanmax` treat NaN as a missing value on both sides (a NaN element
//! is replaced, a NaN value ignored). `-0.0` and `0.0` compare equal, so neither replaces
//! the other.
//!
//! In the simulator they are real atomics (a compare-and-swap loop on the element's
//! bits), so concurrent threads never lose an update.

use super::memory::Cells;
use super::race::AccessKind;
use super::scalar::{AtomicBits, SimScalar};
use crate::scalar::Scalar;

/// Element types of the atomic operations: the scalars (a struct element has none).
#[doc(hidden)]
pub trait AtomicElem: Scalar + SimScalar<Atomic: AtomicBits> {}

impl<T: Scalar + SimScalar<Atomic: AtomicBits>> AtomicElem for T {}

/// Element types with atomic arithmetic: the integers (wrapping, as on the GPU) and the
/// floats.
pub trait AtomicNum: AtomicElem {
    #[doc(hidden)]
    fn __add(self, v: Self) -> Self;
    #[doc(hidden)]
    fn __sub(self, v: Self) -> Self;
    #[doc(hidden)]
    fn __min(self, v: Self) -> Self;
    #[doc(hidden)]
    fn __max(self, v: Self) -> Self;
    #[doc(hidden)]
    fn __nanmin(self, v: Self) -> Self;
    #[doc(hidden)]
    fn __nanmax(self, v: Self) -> Self;
}

/// Element types of CUDA's wrapping counters, `inc` and `dec`: `u32` and `u64`.
pub trait AtomicCounter: AtomicElem {
    #[doc(hidden)]
    fn __inc(self, v: Self) -> Self;
    #[doc(hidden)]
    fn __dec(self, v: Self) -> Self;
}

macro_rules! counters {
    ($($t:ty)*) => {$(
        impl AtomicCounter for $t {
            fn __inc(self, v: Self) -> Self { if self >= v { 0 } else { self + 1 } }
            fn __dec(self, v: Self) -> Self { if self == 0 || self > v { v } else { self - 1 } }
        }
    )*};
}

counters!(u32 u64);

/// Element types with atomic bitwise operations: the integers.
pub trait AtomicBitwise: AtomicElem {
    #[doc(hidden)]
    fn __and(self, v: Self) -> Self;
    #[doc(hidden)]
    fn __or(self, v: Self) -> Self;
    #[doc(hidden)]
    fn __xor(self, v: Self) -> Self;
}

macro_rules! ints {
    ($($t:ty)*) => {$(
        impl AtomicNum for $t {
            fn __add(self, v: Self) -> Self { self.wrapping_add(v) }
            fn __sub(self, v: Self) -> Self { self.wrapping_sub(v) }
            fn __min(self, v: Self) -> Self { Ord::min(self, v) }
            fn __max(self, v: Self) -> Self { Ord::max(self, v) }
            fn __nanmin(self, v: Self) -> Self { Ord::min(self, v) }
            fn __nanmax(self, v: Self) -> Self { Ord::max(self, v) }
        }
        impl AtomicBitwise for $t {
            fn __and(self, v: Self) -> Self { self & v }
            fn __or(self, v: Self) -> Self { self | v }
            fn __xor(self, v: Self) -> Self { self ^ v }
        }
    )*};
}

ints!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

macro_rules! floats {
    ($($t:ty)*) => {$(
        /// Numba's rules (see the module's documentation): not `f32::min`, which would
        /// replace a NaN element.
        impl AtomicNum for $t {
            fn __add(self, v: Self) -> Self { self + v }
            fn __sub(self, v: Self) -> Self { self - v }
            fn __min(self, v: Self) -> Self { if v < self { v } else { self } }
            fn __max(self, v: Self) -> Self { if v > self { v } else { self } }
            fn __nanmin(self, v: Self) -> Self { if !v.is_nan() && (self.is_nan() || v < self) { v } else { self } }
            fn __nanmax(self, v: Self) -> Self { if !v.is_nan() && (self.is_nan() || v > self) { v } else { self } }
        }
    )*};
}

floats!(f32 f64);

/// Replaces the element with `f(old)` atomically; returns `old`.
#[track_caller]
fn update<I, A: Cells<I>>(array: A, index: I, f: impl Fn(A::Elem) -> A::Elem) -> A::Elem
where
    A::Elem: AtomicElem,
{
    let cell = array.__cell(index, AccessKind::Atomic);
    let mut current = cell.load();
    loop {
        let new = Scalar::to_bits(f(A::Elem::from_bits(current)));
        match cell.compare_exchange(current, new) {
            Ok(old) => return A::Elem::from_bits(old),
            Err(actual) => current = actual,
        }
    }
}

/// `array[index] += value` (Numba: `cuda.atomic.add`).
#[track_caller]
pub fn add<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicNum,
{
    update(array, index, |old| old.__add(value))
}

/// `array[index] -= value` (Numba: `cuda.atomic.sub`).
#[track_caller]
pub fn sub<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicNum,
{
    update(array, index, |old| old.__sub(value))
}

/// `array[index] = min(array[index], value)` (Numba: `cuda.atomic.min`).
#[track_caller]
pub fn min<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicNum,
{
    update(array, index, |old| old.__min(value))
}

/// `array[index] = max(array[index], value)` (Numba: `cuda.atomic.max`).
#[track_caller]
pub fn max<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicNum,
{
    update(array, index, |old| old.__max(value))
}

/// `array[index] = min(array[index], value)`, NaN a missing value (Numba:
/// `cuda.atomic.nanmin`; on integers, [`min`]).
#[track_caller]
pub fn nanmin<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicNum,
{
    update(array, index, |old| old.__nanmin(value))
}

/// `array[index] = max(array[index], value)`, NaN a missing value (Numba:
/// `cuda.atomic.nanmax`; on integers, [`max`]).
#[track_caller]
pub fn nanmax<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicNum,
{
    update(array, index, |old| old.__nanmax(value))
}

/// `array[index] = if old >= value { 0 } else { old + 1 }`: a counter that wraps to 0 past
/// `value` (Numba: `cuda.atomic.inc`; CUDA's `atomicInc`).
#[track_caller]
pub fn inc<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicCounter,
{
    update(array, index, |old| old.__inc(value))
}

/// `array[index] = if old == 0 || old > value { value } else { old - 1 }`: a counter that
/// wraps to `value` below 0 (Numba: `cuda.atomic.dec`; CUDA's `atomicDec`).
#[track_caller]
pub fn dec<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicCounter,
{
    update(array, index, |old| old.__dec(value))
}

/// `array[index] = value` (Numba: `cuda.atomic.exch`).
#[track_caller]
pub fn exchange<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicElem,
{
    update(array, index, |_| value)
}

/// `array[index] = new` if it holds `expected` (compared bit for bit); returns what it
/// held (Numba: `cuda.atomic.compare_and_swap`, with the index made explicit).
#[track_caller]
pub fn compare_and_swap<I, A: Cells<I>>(array: A, index: I, expected: A::Elem, new: A::Elem) -> A::Elem
where
    A::Elem: AtomicElem,
{
    let cell = array.__cell(index, AccessKind::Atomic);
    match cell.compare_exchange(Scalar::to_bits(expected), Scalar::to_bits(new)) {
        Ok(old) | Err(old) => A::Elem::from_bits(old),
    }
}

/// `array[index] &= value` (Numba: `cuda.atomic.and_`).
#[track_caller]
pub fn and<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicBitwise,
{
    update(array, index, |old| old.__and(value))
}

/// `array[index] |= value` (Numba: `cuda.atomic.or_`).
#[track_caller]
pub fn or<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicBitwise,
{
    update(array, index, |old| old.__or(value))
}

/// `array[index] ^= value` (Numba: `cuda.atomic.xor`).
#[track_caller]
pub fn xor<I, A: Cells<I>>(array: A, index: I, value: A::Elem) -> A::Elem
where
    A::Elem: AtomicBitwise,
{
    update(array, index, |old| old.__xor(value))
}
