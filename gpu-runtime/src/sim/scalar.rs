//! The element types of memory that simulated threads share: each scalar type, stored as
//! the atomic integer of its size (read and written with relaxed loads and stores).

use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

use crate::scalar::Scalar;

/// An atomic integer that holds one element's bytes (the low bytes of a `u64`, as
/// [`Scalar::to_bits`] puts them).
#[doc(hidden)]
pub trait AtomicBits: Send + Sync + 'static {
    fn new(bits: u64) -> Self;
    fn load(&self) -> u64;
    fn store(&self, bits: u64);
    /// Replaces `current` with `new`; the value found either way.
    fn compare_exchange(&self, current: u64, new: u64) -> Result<u64, u64>;
}

macro_rules! atomic_bits {
    ($($a:ty => $t:ty;)*) => {$(
        impl AtomicBits for $a {
            fn new(bits: u64) -> Self {
                <$a>::new(bits as $t)
            }
            fn load(&self) -> u64 {
                <$a>::load(self, Relaxed) as u64
            }
            fn store(&self, bits: u64) {
                <$a>::store(self, bits as $t, Relaxed)
            }
            fn compare_exchange(&self, current: u64, new: u64) -> Result<u64, u64> {
                <$a>::compare_exchange(self, current as $t, new as $t, Relaxed, Relaxed)
                    .map(|v| v as u64)
                    .map_err(|v| v as u64)
            }
        }
    )*};
}

atomic_bits! {
    AtomicU8 => u8;
    AtomicU16 => u16;
    AtomicU32 => u32;
    AtomicU64 => u64;
    AtomicUsize => usize;
}

/// An element type of memory that simulated threads share: every [`Scalar`], each
/// stored as the atomic integer of its size.
pub trait SimScalar: Scalar {
    #[doc(hidden)]
    type Atomic: AtomicBits;
}

macro_rules! sim_scalar {
    ($($t:ty => $a:ty;)*) => {$(
        impl SimScalar for $t {
            type Atomic = $a;
        }
    )*};
}

sim_scalar! {
    bool => AtomicU8;
    i8 => AtomicU8;
    u8 => AtomicU8;
    i16 => AtomicU16;
    u16 => AtomicU16;
    i32 => AtomicU32;
    u32 => AtomicU32;
    f32 => AtomicU32;
    i64 => AtomicU64;
    u64 => AtomicU64;
    f64 => AtomicU64;
    half::f16 => AtomicU16;
    half::bf16 => AtomicU16;
    isize => AtomicUsize;
    usize => AtomicUsize;
}

pub(crate) fn load<T: SimScalar>(cell: &T::Atomic) -> T {
    T::from_bits(cell.load())
}

pub(crate) fn store<T: SimScalar>(cell: &T::Atomic, v: T) {
    cell.store(v.to_bits())
}
