//! Arguments of a vectorized call: each one a scalar broadcast to every element, a host
//! slice, or an array already in device memory; and the outputs `name::into` writes.

use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::sys::CUdeviceptr;

use super::array::{DeviceSlice, DeviceSliceMut, DeviceVec};
use crate::driver::{Device, DeviceId, Uses};
use crate::error::{Error, Result};
use crate::scalar::{GpuType, value_bytes};

/// One argument of a vectorized function whose parameter has type `T`.
#[derive(Copy, Clone, Debug)]
pub enum ArgRef<'a, T> {
    /// The same value for every element (passed to the kernel by value).
    Scalar(T),
    /// One value per element, in host memory (copied to the device for the call).
    Host(&'a [T]),
    /// One value per element, already on a device (used in place).
    Device(DeviceSlice<'a, T>),
}

#[allow(clippy::len_without_is_empty)] // the macro's plumbing; callers want the length
impl<'a, T: GpuType> ArgRef<'a, T> {
    /// The number of elements, or `None` for a broadcast scalar.
    pub fn len(&self) -> Option<usize> {
        match self {
            ArgRef::Scalar(_) => None,
            ArgRef::Host(s) => Some(s.len()),
            ArgRef::Device(d) => Some(d.len()),
        }
    }

    /// The argument without its element type, as the launch needs it.
    pub fn erase(self) -> ErasedArg<'a> {
        ErasedArg(match self {
            ArgRef::Scalar(v) => value_kind(&v),
            ArgRef::Host(s) => host_kind(s),
            ArgRef::Device(d) => device_kind(d),
        })
    }

    /// The value at element `i` (a broadcast scalar is the same everywhere); an element of
    /// a device array is copied from the GPU. An index past the end is an error.
    pub fn element(&self, i: usize) -> Result<T> {
        match *self {
            ArgRef::Scalar(v) => Ok(v),
            ArgRef::Host(s) => s.get(i).copied().ok_or(Error::OutOfRange { start: i, end: i + 1, len: s.len() }),
            ArgRef::Device(d) => {
                let one = d.slice(i..i + 1)?.to_vec()?;
                one.first().copied().ok_or(Error::OutOfRange { start: i, end: i + 1, len: d.len() })
            }
        }
    }

    /// The argument readable on the host (device data is copied), for the CPU targets.
    pub fn to_host(self) -> Result<HostArg<'a, T>> {
        Ok(match self {
            ArgRef::Scalar(v) => HostArg::Scalar(v),
            ArgRef::Host(s) => HostArg::Slice(Cow::Borrowed(s)),
            ArgRef::Device(d) => HostArg::Slice(Cow::Owned(d.to_vec()?)),
        })
    }
}

impl<'a, T: GpuType> ArgRef<'a, T> {
    /// The device of an array argument (`None` for a scalar or host memory).
    #[inline]
    pub fn device_id(&self) -> Option<DeviceId> {
        match self {
            ArgRef::Device(d) => Some(d.device().id()),
            _ => None,
        }
    }

    /// The argument readable on the host for a call on the CPU device `on`: host data and
    /// the CPU device's arrays are borrowed, never copied; an array on a GPU is
    /// `Error::DeviceMismatch` (data never moves between devices behind the caller's back).
    pub fn host_on(self, function: &'static str, param: &'static str, on: &Device) -> Result<HostArg<'a, T>> {
        Ok(match self {
            ArgRef::Scalar(v) => HostArg::Scalar(v),
            ArgRef::Host(s) => HostArg::Slice(Cow::Borrowed(s)),
            ArgRef::Device(d) => match d.host_slice() {
                Some(s) if d.device() == on => HostArg::Slice(Cow::Borrowed(s)),
                _ => return Err(device_mismatch(function, on, param, d.device())),
            },
        })
    }
}

/// Host memory as the launch passes it.
pub(crate) fn host_kind<T: GpuType>(s: &[T]) -> ArgKind<'_> {
    ArgKind::Host {
        ptr: s.as_ptr().cast(),
        bytes: std::mem::size_of_val(s),
        len: s.len(),
        size: std::mem::size_of::<T>(),
        _borrow: PhantomData,
    }
}

/// A value broadcast to every element, as the launch passes it: its bytes from the start
/// of one 16-byte word (what [`crate::Scalar::to_bits`] gives for a scalar), or of several
/// for a larger struct.
pub(crate) fn value_kind<T: GpuType>(v: &T) -> ArgKind<'static> {
    bytes_kind(value_bytes(v))
}

/// A value given by its bytes, as [`value_kind`] passes it: one word for every scalar (no
/// allocation on the way to the launch), words of its own for a larger struct; from the
/// start of the words, the rest zero.
pub(crate) fn bytes_kind(bytes: &[u8]) -> ArgKind<'static> {
    let word = |chunk: &[u8]| {
        let mut word = [0u8; 16];
        word[..chunk.len()].copy_from_slice(chunk);
        u128::from_le_bytes(word)
    };
    if bytes.len() <= 16 {
        return ArgKind::Scalar { bits: word(bytes) };
    }
    ArgKind::Value { words: bytes.chunks(16).map(word).collect() }
}

impl ArgKind<'_> {
    /// The bytes of a value passed by value (a `Scalar` or a `Value`), from their start;
    /// `None` for an array.
    pub(crate) fn value_ptr(&self) -> Option<*const u8> {
        match self {
            ArgKind::Scalar { bits } => Some((bits as *const u128).cast()),
            ArgKind::Value { words } => Some(words.as_ptr().cast()),
            ArgKind::Host { .. } | ArgKind::Device { .. } => None,
        }
    }
}

/// A device array as the launch passes it.
pub(crate) fn device_kind<T: GpuType>(d: DeviceSlice<'_, T>) -> ArgKind<'_> {
    ArgKind::Device { ptr: d.ptr(), len: d.len(), size: std::mem::size_of::<T>(), device: d.device(), uses: d.uses() }
}

/// `param` is on `other`, but the call runs on `on`.
pub(crate) fn device_mismatch(function: &'static str, on: &Device, param: &'static str, other: &Device) -> Error {
    Error::DeviceMismatch { function, devices: vec![("device", on.id()), (param, other.id())] }
}

/// An argument in host memory: what the CPU targets compute with.
#[derive(Clone, Debug)]
pub enum HostArg<'a, T: Clone> {
    Scalar(T),
    Slice(Cow<'a, [T]>),
}

#[allow(clippy::len_without_is_empty)] // the macro's plumbing; callers want the length
impl<T: GpuType> HostArg<'_, T> {
    pub fn len(&self) -> Option<usize> {
        match self {
            HostArg::Scalar(_) => None,
            HostArg::Slice(s) => Some(s.len()),
        }
    }

    /// Element `i` (a broadcast scalar has the same value everywhere).
    #[inline]
    pub fn get(&self, i: usize) -> T {
        match self {
            HostArg::Scalar(v) => *v,
            HostArg::Slice(s) => s[i],
        }
    }
}

/// What can be passed where a vectorized function takes a `T`: a `T` itself (broadcast),
/// a slice of `T` in any of its usual forms, or an array of `T` on a device.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an argument for a parameter of type `{T}`",
    label = "expected `{T}`, or a slice, `Vec`, array or device array of `{T}`"
)]
pub trait Arg<'a, T: GpuType> {
    fn into_arg(self) -> ArgRef<'a, T>;
}

macro_rules! arg_impls {
    ($($ty:ty => |$v:ident| $e:expr;)*) => {$(
        impl<'a, T: GpuType> Arg<'a, T> for $ty {
            #[inline]
            fn into_arg(self) -> ArgRef<'a, T> {
                let $v = self;
                $e
            }
        }
    )*};
}

arg_impls! {
    T => |v| ArgRef::Scalar(v);
    &'a [T] => |s| ArgRef::Host(s);
    &'a mut [T] => |s| ArgRef::Host(s);
    &'a Vec<T> => |s| ArgRef::Host(s.as_slice());
    &'a DeviceVec<T> => |d| ArgRef::Device(d.as_slice());
    DeviceSlice<'a, T> => |d| ArgRef::Device(d);
    &'a DeviceSlice<'a, T> => |d| ArgRef::Device(*d);
    ArgRef<'a, T> => |a| a;
}

impl<'a, T: GpuType, const N: usize> Arg<'a, T> for &'a [T; N] {
    #[inline]
    fn into_arg(self) -> ArgRef<'a, T> {
        ArgRef::Host(self.as_slice())
    }
}

/// Where `name::into` writes the results: host memory or a device array.
#[derive(Debug)]
pub enum OutRef<'a, T> {
    Host(&'a mut [T]),
    Device(DeviceSliceMut<'a, T>),
}

#[allow(clippy::len_without_is_empty)] // the macro's plumbing; callers want the length
impl<T: GpuType> OutRef<'_, T> {
    pub fn len(&self) -> usize {
        match self {
            OutRef::Host(s) => s.len(),
            OutRef::Device(d) => d.len(),
        }
    }

    /// The device of an output in device memory (`None` for host memory).
    pub fn device_id(&self) -> Option<DeviceId> {
        match self {
            OutRef::Host(_) => None,
            OutRef::Device(d) => Some(d.device().id()),
        }
    }
}

/// What `name::into` can write into: `&mut [T]`, `&mut Vec<T>` (its current length),
/// `&mut [T; N]`, `&mut DeviceVec<T>` or a [`DeviceSliceMut`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive results of type `{T}`",
    label = "expected `&mut [{T}]`, `&mut Vec<{T}>`, `&mut [{T}; N]`, `&mut DeviceVec<{T}>` or a `DeviceSliceMut<{T}>`"
)]
pub trait Out<'a, T: GpuType> {
    fn into_out(self) -> OutRef<'a, T>;
}

impl<'a, T: GpuType> Out<'a, T> for &'a mut [T] {
    fn into_out(self) -> OutRef<'a, T> {
        OutRef::Host(self)
    }
}
impl<'a, T: GpuType> Out<'a, T> for &'a mut Vec<T> {
    fn into_out(self) -> OutRef<'a, T> {
        OutRef::Host(self.as_mut_slice())
    }
}
impl<'a, T: GpuType, const N: usize> Out<'a, T> for &'a mut [T; N] {
    fn into_out(self) -> OutRef<'a, T> {
        OutRef::Host(self.as_mut_slice())
    }
}
impl<'a, T: GpuType> Out<'a, T> for &'a mut DeviceVec<T> {
    fn into_out(self) -> OutRef<'a, T> {
        OutRef::Device(self.as_mut_slice())
    }
}
impl<'a, T: GpuType> Out<'a, T> for DeviceSliceMut<'a, T> {
    fn into_out(self) -> OutRef<'a, T> {
        OutRef::Device(self)
    }
}

/// An argument with its element type erased, as the launch passes it: bytes and
/// pointers. Opaque outside this crate and made only by [`ArgRef::erase`], so its pointers
/// always come from live borrows of the right length.
#[derive(Clone, Debug)]
pub struct ErasedArg<'a>(pub(crate) ArgKind<'a>);

#[derive(Clone, Debug)]
pub(crate) enum ArgKind<'a> {
    /// A value of at most 16 bytes, from the start of the word.
    Scalar { bits: u128 },
    /// A larger value (a user struct): its bytes from the start of the words.
    Value { words: Arc<[u128]> },
    /// `len` elements of `size` bytes (`bytes` in all) of host memory, borrowed for `'a`.
    Host { ptr: *const u8, bytes: usize, len: usize, size: usize, _borrow: PhantomData<&'a [u8]> },
    /// `len` elements of `size` bytes in `device`'s memory, borrowed for `'a`.
    Device { ptr: CUdeviceptr, len: usize, size: usize, device: &'a Device, uses: &'a Uses },
}

// SAFETY: an `ErasedArg` is a shared borrow of plain data (host or device memory) and of
// `Sync` values (`Device`, `Uses`); nothing in it is tied to a thread.
unsafe impl Send for ErasedArg<'_> {}
// SAFETY: as for `Send`; shared references only read.
unsafe impl Sync for ErasedArg<'_> {}

impl<'a> ErasedArg<'a> {
    /// Elements `range` of an array (a broadcast scalar is itself).
    ///
    /// # Panics
    /// When `range` is not within the array (a caller's bug: the runtime slices only
    /// within lengths it checked).
    pub(crate) fn slice(&self, range: std::ops::Range<usize>) -> ErasedArg<'a> {
        let within = |len: usize| {
            assert!(range.start <= range.end && range.end <= len, "{range:?} is outside an argument of {len} elements")
        };
        ErasedArg(match self.0 {
            ArgKind::Scalar { bits } => ArgKind::Scalar { bits },
            ArgKind::Value { ref words } => ArgKind::Value { words: words.clone() },
            ArgKind::Host { ptr, len, size, _borrow, .. } => {
                within(len);
                // SAFETY: `range` is within the `len` elements `ptr` points to.
                let ptr = unsafe { ptr.add(range.start * size) };
                ArgKind::Host { ptr, bytes: range.len() * size, len: range.len(), size, _borrow }
            }
            ArgKind::Device { ptr, len, size, device, uses } => {
                within(len);
                ArgKind::Device { ptr: ptr + (range.start * size) as u64, len: range.len(), size, device, uses }
            }
        })
    }
}

impl<'a> ErasedArg<'a> {
    /// The argument read on the host for a call on the CPU device `on`, as
    /// [`ArgRef::host_on`] reads it (borrowed, never copied; an array on another device is
    /// `Error::DeviceMismatch`), with its element type still erased.
    pub(crate) fn host_view(&self, function: &'static str, param: &'static str, on: &Device) -> Result<HostView<'a>> {
        Ok(match self.0 {
            ArgKind::Scalar { ref bits } => HostView::of_words(std::slice::from_ref(bits)),
            ArgKind::Value { ref words } => HostView::of_words(words),
            ArgKind::Host { ptr, len, .. } => HostView(View::Slice { ptr, len, _borrow: PhantomData }),
            ArgKind::Device { ptr, len, device, .. } if device.is_cpu() && device == on => {
                // On the CPU device the address is host memory (see `DeviceSlice::host_slice`).
                HostView(View::Slice { ptr: ptr as usize as *const u8, len, _borrow: PhantomData })
            }
            ArgKind::Device { device, .. } => return Err(device_mismatch(function, on, param, device)),
        })
    }
}

impl ErasedArg<'_> {
    /// Element `i` read on the host (a broadcast value is itself; an element of a device
    /// array is copied from its device), its type still erased; `None` past the end or
    /// where the copy fails.
    pub(crate) fn element_view(&self, i: usize) -> Option<HostView<'static>> {
        Some(match self.0 {
            ArgKind::Scalar { ref bits } => HostView::of_words(std::slice::from_ref(bits)),
            ArgKind::Value { ref words } => HostView::of_words(words),
            ArgKind::Host { ptr, len, size, .. } => {
                if i >= len {
                    return None;
                }
                // SAFETY: element `i < len` of the borrowed host memory: `size` initialised
                // bytes (a `GpuType` has no padding).
                HostView(View::Value(unsafe { std::slice::from_raw_parts(ptr.add(i * size), size) }.to_vec()))
            }
            ArgKind::Device { ptr, len, size, device, uses } => {
                if i >= len {
                    return None;
                }
                HostView(View::Value(DeviceSlice::bytes_at(ptr + (i * size) as u64, size, device, uses).to_vec().ok()?))
            }
        })
    }
}

/// An argument of a call on the CPU device, readable on the host, its element type erased:
/// the calls bind a function's arguments to host data in one body for all functions, and
/// each function only reads its views as its own types ([`HostView::arg`]).
pub struct HostView<'a>(View<'a>);

enum View<'a> {
    /// A broadcast value's bytes.
    Value(Vec<u8>),
    /// `len` elements borrowed for `'a`.
    Slice { ptr: *const u8, len: usize, _borrow: PhantomData<&'a [u8]> },
}

impl HostView<'_> {
    /// A value passed by value (a `Scalar`'s or a `Value`'s words), its bytes in order.
    fn of_words(words: &[u128]) -> HostView<'static> {
        HostView(View::Value(words.iter().flat_map(|w| w.to_le_bytes()).collect()))
    }
}

impl<'a> HostView<'a> {
    /// The number of elements, or `None` for a broadcast value.
    pub(crate) fn len(&self) -> Option<usize> {
        match self.0 {
            View::Value(_) => None,
            View::Slice { len, .. } => Some(len),
        }
    }

    /// The argument as `T`s.
    ///
    /// # Safety
    /// `T` is the element type of the argument the view was made from.
    pub unsafe fn arg<T: GpuType>(&self) -> HostArg<'a, T> {
        match &self.0 {
            View::Value(bytes) => {
                assert!(bytes.len() >= std::mem::size_of::<T>(), "a value's bytes are shorter than its type");
                // SAFETY: the bytes are a `T`'s (the caller's promise), enough of them.
                HostArg::Scalar(unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<T>()) })
            }
            View::Slice { len: 0, .. } => HostArg::Slice(Cow::Borrowed(&[])),
            View::Slice { ptr, len, .. } => {
                // SAFETY: `ptr` holds `len` initialised `T`s (the caller's promise), borrowed
                // for `'a` from the argument the view was made from.
                let s = unsafe { std::slice::from_raw_parts(ptr.cast::<T>(), *len) };
                HostArg::Slice(Cow::Borrowed(s))
            }
        }
    }
}

// SAFETY: a `HostView` is a shared borrow of plain host data, or bytes it owns.
unsafe impl Send for HostView<'_> {}
// SAFETY: as for `Send`; it only reads.
unsafe impl Sync for HostView<'_> {}

impl ErasedArg<'_> {
    /// The number of elements, or `None` for a broadcast scalar.
    pub(crate) fn len(&self) -> Option<usize> {
        match self.0 {
            ArgKind::Scalar { .. } | ArgKind::Value { .. } => None,
            ArgKind::Host { len, .. } | ArgKind::Device { len, .. } => Some(len),
        }
    }

    /// The device of an array in device memory (`None` for a scalar or host memory).
    pub(crate) fn device_id(&self) -> Option<DeviceId> {
        match self.0 {
            ArgKind::Device { device, .. } => Some(device.id()),
            _ => None,
        }
    }

    /// The use record of a device array.
    pub(crate) fn uses(&self) -> Option<&Uses> {
        match self.0 {
            ArgKind::Device { uses, .. } => Some(uses),
            _ => None,
        }
    }
}

/// The number of elements of a call: the common length of its array arguments and of the
/// outputs it writes into (`outs`, named as `kernel_abi::output_names` says), 1 when all
/// are scalars; or an error naming every array and its length.
pub(crate) fn call_len(
    function: &'static str,
    params: &[&'static str],
    lens: &[Option<usize>],
    outs: &[usize],
) -> Result<usize> {
    call_len_of(function, params, lens.iter().copied(), outs.iter().copied())
}

/// [`call_len`] of lengths given as iterators, which it walks again only to name them
/// in an error: a call that agrees allocates nothing.
pub(crate) fn call_len_of(
    function: &'static str,
    params: &[&'static str],
    lens: impl Iterator<Item = Option<usize>> + Clone,
    outs: impl Iterator<Item = usize> + Clone,
) -> Result<usize> {
    let all = lens.clone().chain(outs.clone().map(Some));
    let mut n = None;
    for len in all.flatten() {
        match n {
            None => n = Some(len),
            Some(m) if m != len => {
                let outs: Vec<usize> = outs.collect();
                let names = params.iter().chain(kernel_abi::output_names(outs.len())).copied();
                let all = lens.chain(outs.iter().map(|&l| Some(l)));
                let lengths = names.zip(all).filter_map(|(name, len)| len.map(|l| (name, l))).collect();
                return Err(Error::LengthMismatch { function, lengths });
            }
            Some(_) => {}
        }
    }
    Ok(n.unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::Scalar;

    fn arg<'a, A: Arg<'a, f32>>(a: A) -> ArgRef<'a, f32> {
        a.into_arg()
    }

    #[test]
    fn every_slice_form_is_an_argument() {
        let v = vec![1.0f32, 2.0];
        let a = [1.0f32, 2.0, 3.0];
        assert_eq!(arg(&v).len(), Some(2));
        assert_eq!(arg(&a).len(), Some(3));
        assert_eq!(arg(&a[1..]).len(), Some(2));
        assert_eq!(arg(2.5).len(), None); // an unsuffixed literal is inferred as f32
        assert_eq!((arg(2.5).element(7).unwrap(), arg(&v).element(1).unwrap()), (2.5, 2.0));
        assert!(matches!(arg(&v).element(2), Err(Error::OutOfRange { start: 2, end: 3, len: 2 })));
        let h = arg(2.5).to_host().unwrap();
        assert_eq!(h.get(7), 2.5);
        assert_eq!(arg(&v).to_host().unwrap().get(1), 2.0);
    }

    #[test]
    fn a_broadcast_value_is_its_bytes() {
        // A scalar: the bits `Scalar::to_bits` gives, in one word.
        for (kind, bits) in [
            (value_kind(&-1i16), Scalar::to_bits(-1i16)),
            (value_kind(&true), Scalar::to_bits(true)),
            (value_kind(&1.5f64), Scalar::to_bits(1.5f64)),
            (
                value_kind(&num_complex::Complex::new(1.0f64, -2.0)),
                Scalar::to_bits(num_complex::Complex::new(1.0f64, -2.0)),
            ),
        ] {
            assert!(matches!(kind, ArgKind::Scalar { bits: b } if b == bits), "{kind:?}");
        }
        // A value of more than a word: its bytes, in order, over as many words as it needs.
        #[derive(Clone, Copy, Debug)]
        #[repr(C)]
        struct Five([u32; 5]);
        // SAFETY: five `u32`s: no padding, no pointers, any bytes valid.
        unsafe impl GpuType for Five {
            const NAME: &'static str = "Five";
        }
        let v = Five([1, 2, 3, 4, 5]);
        match value_kind(&v) {
            ArgKind::Value { words } => {
                assert_eq!(words.len(), 2);
                assert_eq!(words[0], 1 | 2 << 32 | 3 << 64 | 4 << 96);
                assert_eq!(words[1], 5);
            }
            other => panic!("{other:?}"),
        }
        let sliced = ErasedArg(value_kind(&v)).slice(0..0);
        assert!(matches!(sliced.0, ArgKind::Value { ref words } if words.len() == 2));
        assert_eq!(sliced.len(), None);
    }

    #[test]
    fn lengths_broadcast() {
        assert_eq!(call_len("f", &["a", "b"], &[Some(3), None], &[]).unwrap(), 3);
        assert_eq!(call_len("f", &["a", "b"], &[None, None], &[]).unwrap(), 1);
        assert_eq!(call_len("f", &["a", "b"], &[Some(0), Some(0)], &[]).unwrap(), 0);
        let e = call_len("f", &["a", "b", "c"], &[Some(3), None, Some(4)], &[]).unwrap_err();
        match e {
            Error::LengthMismatch { function, lengths } => {
                assert_eq!(function, "f");
                assert_eq!(lengths, vec![("a", 3), ("c", 4)]);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn outputs_are_named_in_length_errors() {
        let e = call_len("f", &["a"], &[Some(3)], &[3, 4]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`f`: the slice arguments must have the same length, but `a` has 3, `out.0` has 3 and `out.1` has 4 elements"
        );
        assert_eq!(call_len("f", &["a"], &[None], &[5]).unwrap(), 5);
    }

    #[test]
    fn erased_scalars_carry_bits() {
        match ArgRef::Scalar(-1i16).erase().0 {
            ArgKind::Scalar { bits } => assert_eq!(bits, 0xffff),
            other => panic!("unexpected {other:?}"),
        }
        let s = [1u64, 2, 3];
        match ArgRef::Host(&s[..]).erase().0 {
            ArgKind::Host { bytes, len, .. } => assert_eq!((bytes, len), (24, 3)),
            other => panic!("unexpected {other:?}"),
        }
    }

    /// The views through which the calls' shared code hands arguments to a function on the
    /// host read each kind of argument back as the value or elements it was.
    #[test]
    fn erased_arguments_read_back_on_the_host() {
        #[derive(Clone, Copy, Debug, PartialEq)]
        #[repr(C)]
        struct Five([u32; 5]);
        // SAFETY: five `u32`s: no padding, no pointers, any bytes valid.
        unsafe impl GpuType for Five {
            const NAME: &'static str = "Five";
        }
        fn slice<T: GpuType>(a: HostArg<'_, T>) -> Vec<T> {
            match a {
                HostArg::Slice(s) => s.into_owned(),
                other => panic!("a slice, not {other:?}"),
            }
        }
        fn value<T: GpuType>(a: HostArg<'_, T>) -> T {
            match a {
                HostArg::Scalar(v) => v,
                other => panic!("a value, not {other:?}"),
            }
        }
        let cpu = Device::cpu();
        let xs = [1.5f64, -2.0, 3.25];
        let on_cpu = DeviceVec::from_slice_on(&cpu, &[7u16, 8, 9]).unwrap();
        let empty: [f64; 0] = [];
        let five = Five([1, 2, 3, 4, 5]);
        let (host, device) = (ArgRef::Host(&xs[..]).erase(), ArgRef::Device(on_cpu.as_slice()).erase());
        let (scalar, big, none) =
            (ArgRef::Scalar(-3i16).erase(), ArgRef::Scalar(five).erase(), ArgRef::Host(&empty[..]).erase());
        fn on<'a>(a: &ErasedArg<'a>, cpu: &Device) -> HostView<'a> {
            a.host_view("f", "a", cpu).unwrap()
        }
        let view = |a| on(a, &cpu);
        // SAFETY: each view is read as its argument's own type.
        unsafe {
            assert_eq!((view(&host).len(), slice(view(&host).arg::<f64>())), (Some(3), xs.to_vec()));
            assert_eq!((view(&device).len(), slice(view(&device).arg::<u16>())), (Some(3), vec![7, 8, 9]));
            assert_eq!((view(&none).len(), slice(view(&none).arg::<f64>())), (Some(0), vec![]));
            assert_eq!((view(&scalar).len(), value(view(&scalar).arg::<i16>())), (None, -3));
            assert_eq!((view(&big).len(), value(view(&big).arg::<Five>())), (None, five));
            // One element, as a GPU fault's message reads it: a value is itself everywhere.
            let at = |a: &ErasedArg<'_>, i| a.element_view(i);
            assert_eq!(value(at(&host, 1).unwrap().arg::<f64>()), -2.0);
            assert_eq!(value(at(&device, 2).unwrap().arg::<u16>()), 9);
            assert_eq!(value(at(&scalar, 1000).unwrap().arg::<i16>()), -3);
            assert_eq!(value(at(&big, 1000).unwrap().arg::<Five>()), five);
        }
        assert!(host.element_view(3).is_none() && device.element_view(3).is_none() && none.element_view(0).is_none());
    }

    #[test]
    fn outputs() {
        let mut v = vec![0.0f32; 4];
        assert_eq!(Out::<f32>::into_out(&mut v).len(), 4);
        let mut a = [0u8; 3];
        assert_eq!(Out::<u8>::into_out(&mut a).len(), 3);
    }
}
