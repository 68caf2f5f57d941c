//! The element types of memory that simulated threads share: each scalar type, stored as
//! the atomic integer of its size (read and written with relaxed loads and stores).

use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

use crate::scalar::Scalar;

/// An atomic cell that holds one element's bytes (the low bytes of a `u128`, as
/// [`Scalar::to_bits`] puts them).
#[doc(hidden)]
pub trait AtomicBits: Send + Sync + 'static {
    fn new(bits: u128) -> Self;
    fn load(&self) -> u128;
    fn store(&self, bits: u128);
    /// Replaces `current` with `new`; the value found either way.
    fn compare_exchange(&self, current: u128, new: u128) -> Result<u128, u128>;
}

macro_rules! atomic_bits {
    ($($a:ty => $t:ty;)*) => {$(
        impl AtomicBits for $a {
            fn new(bits: u128) -> Self {
                <$a>::new(bits as $t)
            }
            fn load(&self) -> u128 {
                <$a>::load(self, Relaxed) as u128
            }
            fn store(&self, bits: u128) {
                <$a>::store(self, bits as $t, Relaxed)
            }
            fn compare_exchange(&self, current: u128, new: u128) -> Result<u128, u128> {
                <$a>::compare_exchange(self, current as $t, new as $t, Relaxed, Relaxed)
                    .map(|v| v as u128)
                    .map_err(|v| v as u128)
            }
        }
    )*};
}

/// A complex element: two atomics of its parts' size (`re`, then `im`), so that the cell
/// has the element's size and alignment, each part read and written with relaxed loads
/// and stores. A racing reader may see parts of two writes, as two threads' unsynchronised
/// accesses of a GPU can; the race checker reports such races where it is on.
/// `repr(transparent)`: the cell is its two atomics, `re` at offset 0, as num-complex's
/// `#[repr(C)]` places it (the simulator views a `&mut [Complex<T>]` as these cells).
#[doc(hidden)]
#[repr(transparent)]
pub struct AtomicPair<A>([A; 2]);

/// Serialises [`AtomicPair::compare_exchange`] (the kernel language has no atomic
/// operation on complex elements, so nothing reaches it but this module's tests).
static PAIR_EXCHANGE: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl<A: AtomicBits> AtomicBits for AtomicPair<A> {
    fn new(bits: u128) -> Self {
        let half = 8 * std::mem::size_of::<A>() as u32;
        AtomicPair([A::new(bits & low_mask(half)), A::new(bits >> half)])
    }
    fn load(&self) -> u128 {
        let half = 8 * std::mem::size_of::<A>() as u32;
        self.0[0].load() | self.0[1].load() << half
    }
    fn store(&self, bits: u128) {
        let half = 8 * std::mem::size_of::<A>() as u32;
        self.0[0].store(bits & low_mask(half));
        self.0[1].store(bits >> half);
    }
    fn compare_exchange(&self, current: u128, new: u128) -> Result<u128, u128> {
        let _guard = PAIR_EXCHANGE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let found = self.load();
        if found == current {
            self.store(new);
            Ok(found)
        } else {
            Err(found)
        }
    }
}

fn low_mask(bits: u32) -> u128 {
    (1u128 << bits) - 1
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
    num_complex::Complex<f32> => AtomicPair<AtomicU32>;
    num_complex::Complex<f64> => AtomicPair<AtomicU64>;
}

pub(crate) fn load<T: SimScalar>(cell: &T::Atomic) -> T {
    T::from_bits(cell.load())
}

pub(crate) fn store<T: SimScalar>(cell: &T::Atomic, v: T) {
    cell.store(v.to_bits())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complex_cells_hold_both_parts_in_memory_order() {
        let z = num_complex::Complex::new(1.5f32, -2.25);
        let cell = <AtomicPair<AtomicU32> as AtomicBits>::new(z.to_bits());
        assert_eq!(load::<num_complex::Complex<f32>>(&cell), z);
        let w = num_complex::Complex::new(-0.0f32, f32::INFINITY);
        store(&cell, w);
        assert_eq!(load::<num_complex::Complex<f32>>(&cell).im, f32::INFINITY);
        assert_eq!(load::<num_complex::Complex<f32>>(&cell).re.to_bits(), (-0.0f32).to_bits());
        // The memory order is num-complex's: `re` first.
        // SAFETY: `AtomicPair<AtomicU32>` is two `AtomicU32`s (`repr(transparent)` over an
        // array), so reading its first 4 bytes as a `u32` reads `re`'s cell.
        let first = unsafe { std::ptr::from_ref(&cell).cast::<u32>().read() };
        assert_eq!(first, (-0.0f32).to_bits());
        assert_eq!(cell.compare_exchange(w.to_bits(), z.to_bits()), Ok(w.to_bits()));
        assert_eq!(cell.compare_exchange(w.to_bits(), z.to_bits()), Err(z.to_bits()));
        let big = num_complex::Complex::new(f64::MAX, -1.0);
        let cell = <AtomicPair<AtomicU64> as AtomicBits>::new(big.to_bits());
        assert_eq!(load::<num_complex::Complex<f64>>(&cell), big);
        assert_eq!(std::mem::size_of::<AtomicPair<AtomicU64>>(), 16);
        assert_eq!(std::mem::align_of::<AtomicPair<AtomicU32>>(), 4);
    }
}
