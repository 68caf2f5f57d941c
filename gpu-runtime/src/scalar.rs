//! The element types a vectorized function computes with.

mod sealed {
    pub trait Sealed {}
}

/// An element type of device memory: every [`Scalar`], and the structs marked
/// `#[derive(GpuType)]`. Slices, `DeviceVec`s and kernel parameters hold elements; the
/// kernel and the host read the same bytes.
///
/// # Safety
///
/// An implementation promises that `Self` is plain data that kernels and the host lay out
/// alike: a primitive, or a `#[repr(C)]` struct of elements (arrays of them included) with
/// no padding bytes, holding no pointer or reference; that all-zero bytes are a valid
/// value (memory starts zeroed: `DeviceVec::zeros`, the simulator's shared arrays); and
/// that any value made byte by byte from bytes of valid values (as racing writes of single
/// fields can leave an element) is valid. `#[derive(GpuType)]` checks all of this at compile time; implement it by hand
/// only with the same guarantees.
pub unsafe trait GpuType: Copy + Send + Sync + std::fmt::Debug + 'static {
    /// The type's name in Rust.
    const NAME: &'static str;
}

/// The bytes of `v`, as memory and a by-value kernel parameter hold it.
pub(crate) fn value_bytes<T: GpuType>(v: &T) -> &[u8] {
    // SAFETY: a `GpuType` has no padding (its contract), so each of its bytes is
    // initialised; the slice borrows `v`.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

/// The value of all-zero bytes (zero for a scalar, every field zero for a struct).
pub fn zeroed<T: GpuType>() -> T {
    // SAFETY: all-zero bytes are a valid value of every `GpuType` (its contract).
    unsafe { std::mem::zeroed() }
}

/// A scalar type of the kernel language: `bool`, the integers and the floats.
///
/// Sealed: the kernels and the runtime agree on exactly these types.
pub trait Scalar: sealed::Sealed + GpuType {
    /// The value's bytes, in the low bytes of a `u128` (how a by-value kernel parameter of
    /// this type is passed: one 8-byte word, two for `Complex<f64>`).
    fn to_bits(self) -> u128;

    /// The value whose bytes are the low bytes of `bits`.
    fn from_bits(bits: u128) -> Self;
}

macro_rules! scalar {
    ($($t:ty => $bits:expr, $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        // SAFETY: a primitive (or num-complex's `#[repr(C)]` pair of floats): no padding,
        // no pointers, every byte of a valid value is valid in its place.
        unsafe impl GpuType for $t {
            const NAME: &'static str = stringify!($t);
        }
        impl Scalar for $t {
            #[inline]
            fn to_bits(self) -> u128 {
                let f: fn($t) -> u128 = $bits;
                f(self)
            }
            #[inline]
            fn from_bits(bits: u128) -> $t {
                let f: fn(u128) -> $t = $from;
                f(bits)
            }
        }
    )*};
}

scalar! {
    bool => |v| v as u128, |b| b as u8 != 0;
    i8 => |v| v as u8 as u128, |b| b as u8 as i8;
    i16 => |v| v as u16 as u128, |b| b as u16 as i16;
    i32 => |v| v as u32 as u128, |b| b as u32 as i32;
    i64 => |v| v as u64 as u128, |b| b as u64 as i64;
    isize => |v| v as usize as u128, |b| b as usize as isize;
    u8 => |v| v as u128, |b| b as u8;
    u16 => |v| v as u128, |b| b as u16;
    u32 => |v| v as u128, |b| b as u32;
    u64 => |v| v as u128, |b| b as u64;
    usize => |v| v as u128, |b| b as usize;
    f32 => |v| v.to_bits() as u128, |b| f32::from_bits(b as u32);
    f64 => |v| v.to_bits() as u128, |b| f64::from_bits(b as u64);
    half::f16 => |v| v.to_bits() as u128, |b| half::f16::from_bits(b as u16);
    half::bf16 => |v| v.to_bits() as u128, |b| half::bf16::from_bits(b as u16);
    // `#[repr(C)]`: `re` in the low bytes, as in memory.
    num_complex::Complex<f32> => |v| v.re.to_bits() as u128 | (v.im.to_bits() as u128) << 32,
        |b| num_complex::Complex::new(f32::from_bits(b as u32), f32::from_bits((b >> 32) as u32));
    num_complex::Complex<f64> => |v| v.re.to_bits() as u128 | (v.im.to_bits() as u128) << 64,
        |b| num_complex::Complex::new(f64::from_bits(b as u64), f64::from_bits((b >> 64) as u64));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_sit_in_the_low_bytes() {
        assert_eq!((-1i8).to_bits(), 0xff);
        assert_eq!((-2i32).to_bits(), 0xffff_fffe);
        assert_eq!(1.5f32.to_bits(), 0x3fc0_0000);
        assert_eq!(Scalar::to_bits(true), 1);
        assert_eq!(<f64 as GpuType>::NAME, "f64");
        assert_eq!(<half::bf16 as GpuType>::NAME, "half::bf16");
        assert_eq!(Scalar::to_bits(half::f16::ONE), 0x3c00);
        assert_eq!(<i16 as Scalar>::from_bits((-5i16).to_bits()), -5);
        assert_eq!(<f32 as Scalar>::from_bits(1.5f32.to_bits() as u128), 1.5);
        // A complex value's parts in memory order: `re` in the low bytes.
        let z = num_complex::Complex::new(1.5f32, -2.0);
        assert_eq!(Scalar::to_bits(z), 0xc000_0000_3fc0_0000);
        assert_eq!(<num_complex::Complex<f32> as Scalar>::from_bits(Scalar::to_bits(z)), z);
        let w = num_complex::Complex::new(1.0f64, -0.5);
        assert_eq!(Scalar::to_bits(w), (1.0f64.to_bits() as u128) | ((-0.5f64).to_bits() as u128) << 64);
        assert_eq!(<num_complex::Complex<f64> as Scalar>::from_bits(Scalar::to_bits(w)), w);
        // Negative integers fill only their own width.
        assert_eq!(Scalar::to_bits(-1i64), u64::MAX as u128);
    }
}
