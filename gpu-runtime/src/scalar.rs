//! The element types a vectorized function computes with.

use cudarc::driver::DeviceRepr;

mod sealed {
    pub trait Sealed {}
}

/// A scalar type of the kernel language: `bool`, the integers and the floats.
///
/// Sealed: the kernels and the runtime agree on exactly these types.
pub trait Scalar: sealed::Sealed + Copy + Send + Sync + std::fmt::Debug + DeviceRepr + 'static {
    /// The type's name in Rust.
    const NAME: &'static str;

    /// The value's bytes, in the low bytes of a `u64` (how a by-value kernel parameter of
    /// this type is passed).
    fn to_bits(self) -> u64;
}

macro_rules! scalar {
    ($($t:ty => $bits:expr),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Scalar for $t {
            const NAME: &'static str = stringify!($t);
            #[inline]
            fn to_bits(self) -> u64 {
                let f: fn($t) -> u64 = $bits;
                f(self)
            }
        }
    )*};
}

scalar! {
    bool => |v| v as u64,
    i8 => |v| v as u8 as u64,
    i16 => |v| v as u16 as u64,
    i32 => |v| v as u32 as u64,
    i64 => |v| v as u64,
    isize => |v| v as u64,
    u8 => |v| v as u64,
    u16 => |v| v as u64,
    u32 => |v| v as u64,
    u64 => |v| v,
    usize => |v| v as u64,
    f32 => |v| v.to_bits() as u64,
    f64 => |v| v.to_bits(),
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
        assert_eq!(<f64 as Scalar>::NAME, "f64");
    }
}
