//! Arguments of an explicit kernel (`#[kernel]`): scalars by value, slices read by the
//! kernel (`&[T]`), and slices it writes (`&mut [T]`: copied in and, after a successful
//! launch, back, as Numba does with host arrays; device arrays are used in place). Each
//! erased into a [`KArg`], opaque and made only from a live borrow.

use std::marker::PhantomData;

use cudarc::driver::sys::CUdeviceptr;

use super::arg::{ArgKind, OutRef, device_kind, device_mismatch, host_kind, value_kind};
use super::array::{DeviceSlice, DeviceSliceMut, DeviceVec};
use crate::driver::{Device, DeviceId, Uses};
use crate::error::{Error, Result};
use crate::scalar::GpuType;

/// What a kernel parameter `&[T]` accepts: `&[T]`, `&Vec<T>`, `&[T; N]` (copied to the
/// device for the launch), `&DeviceVec<T>` and [`DeviceSlice`] (used in place).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed where a kernel takes `&[{T}]`",
    label = "expected `&[{T}]`, `&Vec<{T}>`, `&[{T}; N]`, `&DeviceVec<{T}>` or a `DeviceSlice<{T}>`"
)]
pub trait KernelIn<'a, T: GpuType> {
    fn into_kernel_in(self) -> KernelInRef<'a, T>;
}

/// A `&[T]` kernel argument: host memory or a device array.
#[derive(Copy, Clone, Debug)]
pub struct KernelInRef<'a, T>(SliceRef<'a, T>);

#[derive(Copy, Clone, Debug)]
enum SliceRef<'a, T> {
    Host(&'a [T]),
    Device(DeviceSlice<'a, T>),
}

/// What a kernel parameter `&mut [T]` accepts: `&mut [T]`, `&mut Vec<T>` (its current
/// length), `&mut [T; N]` (copied in, and back after a successful launch),
/// `&mut DeviceVec<T>` and [`DeviceSliceMut`] (written in place).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed where a kernel takes `&mut [{T}]`",
    label = "expected `&mut [{T}]`, `&mut Vec<{T}>`, `&mut [{T}; N]`, `&mut DeviceVec<{T}>` or a `DeviceSliceMut<{T}>`"
)]
pub trait KernelInOut<'a, T: GpuType> {
    fn into_kernel_in_out(self) -> KernelInOutRef<'a, T>;
}

/// A `&mut [T]` kernel argument: host memory or a device array.
#[derive(Debug)]
pub struct KernelInOutRef<'a, T>(OutRef<'a, T>);

macro_rules! kernel_in {
    ($($ty:ty => |$v:ident| $e:expr;)*) => {$(
        impl<'a, T: GpuType> KernelIn<'a, T> for $ty {
            fn into_kernel_in(self) -> KernelInRef<'a, T> {
                let $v = self;
                KernelInRef($e)
            }
        }
    )*};
}

kernel_in! {
    &'a [T] => |s| SliceRef::Host(s);
    &'a Vec<T> => |s| SliceRef::Host(s.as_slice());
    &'a DeviceVec<T> => |d| SliceRef::Device(d.as_slice());
    DeviceSlice<'a, T> => |d| SliceRef::Device(d);
    &'a DeviceSlice<'a, T> => |d| SliceRef::Device(*d);
}

impl<'a, T: GpuType, const N: usize> KernelIn<'a, T> for &'a [T; N] {
    fn into_kernel_in(self) -> KernelInRef<'a, T> {
        KernelInRef(SliceRef::Host(self.as_slice()))
    }
}

macro_rules! kernel_in_out {
    ($($ty:ty => |$v:ident| $e:expr;)*) => {$(
        impl<'a, T: GpuType> KernelInOut<'a, T> for $ty {
            fn into_kernel_in_out(self) -> KernelInOutRef<'a, T> {
                let $v = self;
                KernelInOutRef($e)
            }
        }
    )*};
}

kernel_in_out! {
    &'a mut [T] => |s| OutRef::Host(s);
    &'a mut Vec<T> => |s| OutRef::Host(s.as_mut_slice());
    &'a mut DeviceVec<T> => |d| OutRef::Device(d.as_mut_slice());
    DeviceSliceMut<'a, T> => |d| OutRef::Device(d);
}

impl<'a, T: GpuType, const N: usize> KernelInOut<'a, T> for &'a mut [T; N] {
    fn into_kernel_in_out(self) -> KernelInOutRef<'a, T> {
        KernelInOutRef(OutRef::Host(self.as_mut_slice()))
    }
}

impl<'a, T: GpuType> KernelIn<'a, T> for KernelInRef<'a, T> {
    fn into_kernel_in(self) -> KernelInRef<'a, T> {
        self
    }
}

impl<'a, T: GpuType> KernelInOut<'a, T> for KernelInOutRef<'a, T> {
    fn into_kernel_in_out(self) -> KernelInOutRef<'a, T> {
        self
    }
}

impl<'a, T: GpuType> KernelInRef<'a, T> {
    /// The device of an array argument (`None` for host memory).
    pub fn device_id(&self) -> Option<DeviceId> {
        match &self.0 {
            SliceRef::Device(d) => Some(d.device().id()),
            SliceRef::Host(_) => None,
        }
    }

    /// The argument as a host slice, for a launch on the CPU device `on` (an array on a
    /// GPU is `DeviceMismatch`).
    pub fn host_on(self, kernel: &'static str, param: &'static str, on: &Device) -> Result<&'a [T]> {
        match self.0 {
            SliceRef::Host(s) => Ok(s),
            SliceRef::Device(d) => match d.host_slice() {
                Some(s) if d.device() == on => Ok(s),
                _ => Err(device_mismatch(kernel, on, param, d.device())),
            },
        }
    }
}

impl<'a, T: GpuType> KernelInOutRef<'a, T> {
    /// The device of an array argument (`None` for host memory).
    pub fn device_id(&self) -> Option<DeviceId> {
        self.0.device_id()
    }

    /// The argument as a mutable host slice, for a launch on the CPU device `on` (an
    /// array on a GPU is `DeviceMismatch`).
    pub fn host_on(self, kernel: &'static str, param: &'static str, on: &Device) -> Result<&'a mut [T]> {
        match self.0 {
            OutRef::Host(s) => Ok(s),
            OutRef::Device(d) if d.device() != on => Err(device_mismatch(kernel, on, param, d.device())),
            OutRef::Device(d) => {
                let device = d.device();
                d.into_host_slice().ok_or_else(|| device_mismatch(kernel, on, param, device))
            }
        }
    }
}

/// One argument of an explicit kernel with its element type erased: opaque, made only by
/// [`KArg::scalar`], [`KArg::input`] and [`KArg::output`] from values and live borrows,
/// so its pointers always name memory of the right length, borrowed for `'a`.
#[derive(Debug)]
pub struct KArg<'a>(pub(crate) KArgKind<'a>);

#[derive(Debug)]
pub(crate) enum KArgKind<'a> {
    /// A parameter by value: `ArgKind::Scalar` (at most 16 bytes, every scalar) or
    /// `ArgKind::Value` (a larger struct).
    Value(ArgKind<'static>),
    /// A `&[T]` parameter: `ArgKind::Host` or `ArgKind::Device`.
    In { name: &'static str, arg: ArgKind<'a> },
    /// A `&mut [T]` parameter.
    InOut { name: &'static str, mem: InOutMem<'a> },
}

/// The memory of a `&mut [T]` argument, exclusively borrowed for `'a`.
#[derive(Debug)]
pub(crate) enum InOutMem<'a> {
    /// `len` elements (`bytes` bytes) of host memory.
    Host { ptr: *mut u8, bytes: usize, len: usize, _borrow: PhantomData<&'a mut [u8]> },
    /// `len` elements of `size` bytes in `device`'s memory.
    Device { ptr: CUdeviceptr, len: usize, size: usize, device: &'a Device, uses: &'a Uses },
}

// SAFETY: a `KArg` is a borrow of plain data (host or device memory; exclusive for a
// `&mut` argument) and of `Sync` values (`Device`, `Uses`); nothing in it is tied to a
// thread.
unsafe impl Send for KArg<'_> {}
// SAFETY: as for `Send`; `&KArg` only reads the addresses.
unsafe impl Sync for KArg<'_> {}

impl<'a> KArg<'a> {
    /// A parameter by value (a scalar, or a `#[derive(GpuType)]` struct): its bytes.
    pub fn scalar<T: GpuType>(value: T) -> KArg<'a> {
        KArg(KArgKind::Value(value_kind(&value)))
    }

    /// A `&[T]` parameter named `name` (for messages).
    pub fn input<T: GpuType>(name: &'static str, x: impl KernelIn<'a, T>) -> KArg<'a> {
        let arg = match x.into_kernel_in().0 {
            SliceRef::Host(s) => host_kind(s),
            SliceRef::Device(d) => device_kind(d),
        };
        KArg(KArgKind::In { name, arg })
    }

    /// A `&mut [T]` parameter named `name` (for messages).
    pub fn output<T: GpuType>(name: &'static str, y: impl KernelInOut<'a, T>) -> KArg<'a> {
        let mem = match y.into_kernel_in_out().0 {
            OutRef::Host(s) => InOutMem::Host {
                ptr: s.as_mut_ptr().cast(),
                bytes: std::mem::size_of_val(s),
                len: s.len(),
                _borrow: PhantomData,
            },
            OutRef::Device(d) => InOutMem::Device {
                ptr: d.ptr(),
                len: d.len(),
                size: std::mem::size_of::<T>(),
                device: d.device(),
                uses: d.uses(),
            },
        };
        KArg(KArgKind::InOut { name, mem })
    }

    /// The parameter's name (`None` for a scalar).
    pub(crate) fn name(&self) -> Option<&'static str> {
        match self.0 {
            KArgKind::Value(_) => None,
            KArgKind::In { name, .. } | KArgKind::InOut { name, .. } => Some(name),
        }
    }

    /// Where the argument's memory lies: `(None, ..)` for the host (the CPU device's
    /// arrays included), `(Some(ordinal), ..)` for a GPU, with its byte range; `None` for a
    /// scalar.
    pub(crate) fn span(&self) -> Option<(Option<usize>, u64, u64)> {
        match self.0 {
            KArgKind::Value(_) | KArgKind::In { arg: ArgKind::Scalar { .. } | ArgKind::Value { .. }, .. } => None,
            KArgKind::In { arg: ArgKind::Host { ptr, bytes, .. }, .. } => {
                let start = ptr as usize as u64;
                Some((None, start, start + bytes as u64))
            }
            KArgKind::InOut { mem: InOutMem::Host { ptr, bytes, .. }, .. } => {
                let start = ptr as usize as u64;
                Some((None, start, start + bytes as u64))
            }
            KArgKind::In { arg: ArgKind::Device { ptr, len, size, device, .. }, .. }
            | KArgKind::InOut { mem: InOutMem::Device { ptr, len, size, device, .. }, .. } => {
                // The CPU device's arrays are host memory: the host's address space.
                let space = match device.id() {
                    DeviceId::Cpu => None,
                    DeviceId::Cuda(n) => Some(n),
                };
                Some((space, ptr, ptr + (len * size) as u64))
            }
        }
    }

    /// The device the argument's memory is on, if any.
    pub(crate) fn device(&self) -> Option<&'a Device> {
        match self.0 {
            KArgKind::In { arg: ArgKind::Device { device, .. }, .. }
            | KArgKind::InOut { mem: InOutMem::Device { device, .. }, .. } => Some(device),
            _ => None,
        }
    }

    /// The use record of a device array argument.
    pub(crate) fn uses(&self) -> Option<&'a Uses> {
        match self.0 {
            KArgKind::In { arg: ArgKind::Device { uses, .. }, .. }
            | KArgKind::InOut { mem: InOutMem::Device { uses, .. }, .. } => Some(uses),
            _ => None,
        }
    }
}

/// Checks Rust's rule for `&mut` at the launch: no `&mut` argument overlaps another
/// argument (in host memory or on one device). Empty slices overlap nothing; the same
/// array passed twice as `&[T]` is fine.
pub(crate) fn check_aliasing(kernel: &'static str, args: &[KArg<'_>]) -> Result<()> {
    let overlap = |a: (Option<usize>, u64, u64), b: (Option<usize>, u64, u64)| {
        a.0 == b.0 && a.1 < a.2 && b.1 < b.2 && a.1 < b.2 && b.1 < a.2
    };
    for (i, a) in args.iter().enumerate() {
        let (KArgKind::InOut { name, .. }, Some(sa)) = (&a.0, a.span()) else { continue };
        for (j, b) in args.iter().enumerate() {
            if i == j {
                continue;
            }
            if let (Some(sb), Some(other)) = (b.span(), b.name())
                && overlap(sa, sb)
            {
                return Err(Error::Aliasing { kernel, first: name, second: other });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_erase_to_their_spans() {
        let x = [1.0f32, 2.0, 3.0];
        let mut y = vec![0u16; 5];
        let a = KArg::input("x", &x);
        let start = x.as_ptr() as u64;
        assert_eq!(a.span(), Some((None, start, start + 12)));
        assert_eq!(a.name(), Some("x"));
        let ys = y.as_ptr() as u64;
        let b = KArg::output("y", &mut y);
        assert_eq!(b.span(), Some((None, ys, ys + 10)));
        // The CPU device's arrays are in the host's address space.
        let on_cpu = DeviceVec::from_slice_on(&Device::cpu(), &[1.0f32, 2.0]).unwrap();
        let c = KArg::input("c", &on_cpu);
        let cs = on_cpu.as_slice().ptr();
        assert_eq!(c.span(), Some((None, cs, cs + 8)));
        let s = KArg::scalar(-1i8);
        assert!(matches!(s.0, KArgKind::Value(ArgKind::Scalar { bits: 0xff })));
        assert_eq!((s.span(), s.name()), (None, None));
        assert!(matches!(
            KArg::input("v", &vec![1u64]).0,
            KArgKind::In { arg: ArgKind::Host { len: 1, bytes: 8, .. }, .. }
        ));
        let mut arr = [0i32; 4];
        assert!(matches!(
            KArg::output("a", &mut arr).0,
            KArgKind::InOut { mem: InOutMem::Host { len: 4, bytes: 16, .. }, .. }
        ));
    }

    /// An argument over `bytes` bytes at `at` of host memory: `&mut` or not. (Safe code
    /// cannot make overlapping borrows; this builds what a bug could.)
    fn host(name: &'static str, at: &[u8], mutable: bool) -> KArg<'static> {
        let (ptr, bytes) = (at.as_ptr(), at.len());
        KArg(if mutable {
            KArgKind::InOut {
                name,
                mem: InOutMem::Host { ptr: ptr.cast_mut(), bytes, len: bytes, _borrow: PhantomData },
            }
        } else {
            KArgKind::In { name, arg: ArgKind::Host { ptr, bytes, len: bytes, size: 1, _borrow: PhantomData } }
        })
    }

    #[test]
    fn a_mut_argument_may_not_overlap_another() {
        let buf = [0u8; 64];
        let overlapping = [host("x", &buf[..32], false), KArg::scalar(1u32), host("y", &buf[16..48], true)];
        let e = check_aliasing("k", &overlapping).unwrap_err();
        assert!(matches!(e, Error::Aliasing { kernel: "k", first: "y", second: "x" }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "`k`: the argument `y` overlaps `x`, but a `&mut` argument must not overlap any other"
        );
        let two_mut = [host("a", &buf[..8], true), host("b", &buf[7..9], true)];
        assert!(matches!(check_aliasing("k", &two_mut), Err(Error::Aliasing { first: "a", second: "b", .. })));
        // Adjacent ranges, empty ranges and one input passed twice are fine.
        let fine = [
            host("x", &buf[..32], false),
            host("x2", &buf[..32], false),
            host("y", &buf[32..], true),
            host("e", &buf[40..40], true),
            host("f", &buf[..0], false),
        ];
        assert!(check_aliasing("k", &fine).is_ok());
    }

    #[test]
    fn distinct_host_buffers_do_not_alias() {
        let x = vec![1.0f32; 8];
        let mut y = vec![0.0f32; 8];
        let mut z = vec![0.0f32; 8];
        let args = [KArg::input("x", &x), KArg::output("y", &mut y), KArg::input("x", &x), KArg::output("z", &mut z)];
        assert!(check_aliasing("k", &args).is_ok());
    }
}
