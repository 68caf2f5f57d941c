//! The element types of memory that simulated threads share: each scalar type, stored as
//! the atomic integer of its size (read and written with relaxed loads and stores).

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU8, AtomicU16, AtomicU32, AtomicU64, AtomicUsize, Ordering::Relaxed};

use crate::scalar::{GpuType, Scalar};

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

/// A cell of shared memory in the simulator, made zeroed (as shared memory starts here).
#[doc(hidden)]
pub trait SimCell: Send + Sync + 'static {
    fn zeroed() -> Self;
}

impl<A: AtomicBits> SimCell for A {
    fn zeroed() -> Self {
        A::new(0)
    }
}

/// A struct element's cell: one atomic byte per byte of the struct `T` (`N` is its size),
/// read and written with relaxed loads and stores. Writing a field writes only that
/// field's bytes, so threads that write different fields of one element do not undo each
/// other's writes, as on the GPU. Alignment 1: the simulator views a `&mut [T]` in place as
/// these cells (their size is `T`'s, their alignment no more than `T`'s). Typed by `T`, so
/// that only `T` values are ever stored in them.
#[doc(hidden)]
#[repr(transparent)]
pub struct ByteCells<T, const N: usize>([AtomicU8; N], PhantomData<fn() -> T>);

impl<T: GpuType, const N: usize> SimCell for ByteCells<T, N> {
    fn zeroed() -> Self {
        ByteCells(std::array::from_fn(|_| AtomicU8::new(0)), PhantomData)
    }
}

impl<T: GpuType, const N: usize> ByteCells<T, N> {
    /// The element the cells hold.
    pub fn load(&self) -> T {
        const { assert!(size_of::<T>() == N) };
        let bytes: [u8; N] = std::array::from_fn(|i| self.0[i].load(Relaxed));
        // SAFETY: `T` is `N` bytes (checked above) and a `GpuType`. The cells are made
        // zeroed, or are a `&mut [T]`'s bytes, and are written only by `store` of `T`
        // values (they are typed by `T`): every byte is a zero or a byte of a valid `T` in
        // its place, which `GpuType`'s contract makes a valid `T`. The read is unaligned.
        unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<T>()) }
    }

    /// Stores the bytes `range` of `v` (all of it for `0..N`).
    pub fn store(&self, v: T, range: std::ops::Range<usize>) {
        const { assert!(size_of::<T>() == N) };
        // SAFETY: `T` is `N` bytes without padding (its `GpuType` contract): each of its
        // bytes is initialised.
        let bytes: [u8; N] = unsafe { std::mem::transmute_copy(&v) };
        let (start, end) = (range.start.min(N), range.end.min(N));
        for (cell, &byte) in self.0[start..end.max(start)].iter().zip(&bytes[start..end.max(start)]) {
            cell.store(byte, Relaxed);
        }
    }
}

/// An element type of memory that simulated threads share: every [`Scalar`], stored as
/// the atomic integer of its size, and every `#[derive(GpuType)]` struct, stored as
/// [`ByteCells`].
///
/// # Safety
/// `Atomic` has `Self`'s size and no larger alignment, a `Self`'s bytes are valid cells
/// (the simulator views a `&mut [Self]` as cells in place), and the methods store only
/// bytes of valid `Self` values and load what was stored (or zeros).
pub unsafe trait SimScalar: GpuType {
    #[doc(hidden)]
    type Atomic: SimCell;
    /// Whether the race check tracks each byte (a struct, whose fields threads may write
    /// apart) rather than the element as one place (a scalar).
    #[doc(hidden)]
    const BYTEWISE: bool = false;
    #[doc(hidden)]
    fn __load(cell: &Self::Atomic) -> Self;
    #[doc(hidden)]
    fn __store(cell: &Self::Atomic, v: Self);
    /// Stores the bytes `offset..offset + len` of `v` only (a field of a struct); the
    /// whole value for a scalar.
    #[doc(hidden)]
    fn __store_part(cell: &Self::Atomic, v: Self, offset: usize, len: usize) {
        let _ = (offset, len);
        Self::__store(cell, v)
    }
}

macro_rules! sim_scalar {
    ($($t:ty => $a:ty;)*) => {$(
        // SAFETY: the atomic integer of `$t`'s size and alignment (or, for a complex
        // number, two of its parts'), holding `$t`'s bits.
        unsafe impl SimScalar for $t {
            type Atomic = $a;
            fn __load(cell: &$a) -> $t {
                <$t as Scalar>::from_bits(AtomicBits::load(cell))
            }
            fn __store(cell: &$a, v: $t) {
                AtomicBits::store(cell, Scalar::to_bits(v))
            }
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
    T::__load(cell)
}

pub(crate) fn store<T: SimScalar>(cell: &T::Atomic, v: T) {
    T::__store(cell, v)
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
