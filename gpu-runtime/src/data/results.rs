//! The results of a vectorized function: one scalar per element, or a tuple of scalars
//! (several output arrays, as CUDA `guvectorize` functions with several outputs give).

use super::huge::host_vec;
use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::CudaStream;
use cudarc::driver::sys::CUdeviceptr;

use super::arg::OutRef;
use super::array::DeviceVec;
use crate::driver::{Device, DeviceId, Uses};
use crate::error::Result;
use crate::scalar::GpuType;

/// Where a launch writes one output, with the destination's length and device. Opaque
/// outside this crate and made only from a borrowed output ([`Results::out_slots`]).
pub struct OutSlot<'a>(pub(crate) SlotKind<'a>);

pub(crate) enum SlotKind<'a> {
    /// Room for `len` elements of host memory, mutably borrowed for `'a`.
    Host { ptr: *mut u8, len: usize, borrow: PhantomData<&'a mut [u8]> },
    /// `len` elements of `device`'s memory, mutably borrowed for `'a`.
    Device { ptr: CUdeviceptr, len: usize, device: &'a Device, uses: &'a Uses },
}

impl OutSlot<'_> {
    pub(crate) fn len(&self) -> usize {
        match self.0 {
            SlotKind::Host { len, .. } | SlotKind::Device { len, .. } => len,
        }
    }
}

// SAFETY: a slot is an exclusive borrow of an output (host or device memory) held by its
// call, with shared references to `Sync` values; nothing in it is tied to a thread.
unsafe impl Send for OutSlot<'_> {}

mod sealed {
    /// Only this crate's scalar types and tuples of them are results: the kernels and the
    /// runtime agree on exactly these layouts.
    pub trait Sealed {}
}

/// One scalar type, or a tuple of them: what each element of a call produces. Sealed;
/// the methods besides `unzip` are the runtime's plumbing.
pub trait Results: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The results in host memory: `Vec<T>`, or `(Vec<A>, Vec<B>)` for a tuple.
    type Host: Send;
    /// The results in device memory: `DeviceVec<T>`, or a tuple of them.
    type Device: Send;
    /// Where `into` writes: an [`OutRef`], or a tuple of them.
    type Outs<'a>: Send;

    /// Per-element results gathered into host vectors (the CPU targets).
    fn unzip(values: Vec<Self>) -> Self::Host;

    /// The per-element results of host vectors (the inverse of [`Results::unzip`]); the
    /// vectors must have one length.
    fn zip(host: Self::Host) -> Vec<Self>;

    /// The size in bytes of each output's elements.
    #[doc(hidden)]
    fn sizes() -> Vec<usize>;

    /// Empty host vectors with room for `n` elements each, and where each one's elements go.
    #[doc(hidden)]
    fn host_with_capacity(n: usize) -> (Self::Host, Vec<*mut u8>);

    /// # Safety
    /// The first `n` elements of every vector must be initialised.
    #[doc(hidden)]
    unsafe fn host_set_len(host: &mut Self::Host, n: usize);

    /// Arrays of `n` uninitialised elements on `device`, in the order of `stream`'s work.
    ///
    /// # Safety
    /// Every element must be written before it is read.
    #[doc(hidden)]
    unsafe fn device_uninit(
        device: &Device,
        stream: &Arc<CudaStream>,
        n: usize,
    ) -> Result<(Self::Device, Vec<CUdeviceptr>)>;

    #[doc(hidden)]
    fn out_slots<'a>(outs: Self::Outs<'a>) -> Vec<OutSlot<'a>>;

    /// The use records of device results (see `driver/event.rs`).
    #[doc(hidden)]
    fn device_uses(device: &Self::Device) -> Vec<&Uses>;

    /// The lengths of the outputs.
    #[doc(hidden)]
    fn out_slots_len(outs: &Self::Outs<'_>) -> Vec<usize>;

    /// `(output name, device)` of every output in device memory.
    fn out_devices(outs: &Self::Outs<'_>) -> Vec<(&'static str, DeviceId)>;

    /// Host results as arrays on `device` (a copy; for the CPU device, into its memory).
    fn host_to_device(host: Self::Host, device: &Device) -> Result<Self::Device>;

    /// Writes per-element results into the outputs, whose lengths are `values.len()`.
    #[doc(hidden)]
    fn write(values: Vec<Self>, outs: Self::Outs<'_>) -> Result<()>;

    /// The results of an N-dimensional call: `ArrayD<T>`, or a tuple of them.
    #[cfg(feature = "ndarray")]
    type Nd;
    /// Where `nd_into` writes: an `ArrayViewMutD`, or a tuple of them.
    #[cfg(feature = "ndarray")]
    type NdOuts<'a>: Send;

    /// Host vectors (C order) shaped as arrays of `shape`.
    #[cfg(feature = "ndarray")]
    fn to_nd(host: Self::Host, shape: &[usize]) -> Self::Nd;

    /// The shapes of the outputs.
    #[cfg(feature = "ndarray")]
    fn nd_shapes(outs: &Self::NdOuts<'_>) -> Vec<Vec<usize>>;

    /// The outputs as flat slices when all of them are contiguous in C order (the kernel
    /// can write there directly), or back unchanged.
    #[cfg(feature = "ndarray")]
    fn nd_direct(outs: Self::NdOuts<'_>) -> std::result::Result<Self::Outs<'_>, Self::NdOuts<'_>>;

    /// Copies host vectors (C order, of `shape`) into the outputs, whatever their strides.
    #[cfg(feature = "ndarray")]
    fn nd_assign(host: Self::Host, shape: &[usize], outs: Self::NdOuts<'_>);
}

/// `values` (C order) as an array of `shape`.
#[cfg(feature = "ndarray")]
fn shaped<T: GpuType>(values: Vec<T>, shape: &[usize]) -> ndarray::ArrayD<T> {
    let n = values.len();
    ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), values)
        .unwrap_or_else(|e| unreachable!("{n} results for shape {shape:?}: {e}"))
}

#[cfg(feature = "ndarray")]
fn assign<T: GpuType>(values: &[T], shape: &[usize], mut out: ndarray::ArrayViewMutD<'_, T>) {
    match ndarray::ArrayViewD::from_shape(ndarray::IxDyn(shape), values) {
        Ok(v) => out.assign(&v),
        Err(e) => unreachable!("{} results for shape {shape:?}: {e}", values.len()),
    }
}

#[cfg(feature = "ndarray")]
fn contiguous<T: GpuType>(out: ndarray::ArrayViewMutD<'_, T>) -> OutRef<'_, T> {
    OutRef::Host(out.into_slice().unwrap_or_default())
}

impl<T: GpuType> sealed::Sealed for T {}

impl<T: GpuType> Results for T {
    type Host = Vec<T>;
    type Device = DeviceVec<T>;
    type Outs<'a> = OutRef<'a, T>;

    fn sizes() -> Vec<usize> {
        vec![std::mem::size_of::<T>()]
    }

    fn host_with_capacity(n: usize) -> (Vec<T>, Vec<*mut u8>) {
        let mut v: Vec<T> = host_vec(n);
        let p = v.as_mut_ptr().cast();
        (v, vec![p])
    }

    unsafe fn host_set_len(host: &mut Vec<T>, n: usize) {
        // SAFETY: the caller's promise.
        unsafe { host.set_len(n) }
    }

    unsafe fn device_uninit(
        device: &Device,
        stream: &Arc<CudaStream>,
        n: usize,
    ) -> Result<(DeviceVec<T>, Vec<CUdeviceptr>)> {
        // SAFETY: the caller's promise.
        let v = unsafe { DeviceVec::uninit_on_stream(device, stream, n)? };
        let p = v.ptr();
        Ok((v, vec![p]))
    }

    fn out_slots<'a>(out: Self::Outs<'a>) -> Vec<OutSlot<'a>> {
        vec![slot(out)]
    }

    fn device_uses(device: &DeviceVec<T>) -> Vec<&Uses> {
        vec![device.uses()]
    }

    fn out_slots_len(out: &OutRef<'_, T>) -> Vec<usize> {
        vec![out.len()]
    }

    fn out_devices(out: &OutRef<'_, T>) -> Vec<(&'static str, DeviceId)> {
        out.device_id().map(|d| ("out", d)).into_iter().collect()
    }

    fn host_to_device(host: Vec<T>, device: &Device) -> Result<DeviceVec<T>> {
        DeviceVec::from_slice_on(device, &host)
    }

    fn unzip(values: Vec<T>) -> Vec<T> {
        values
    }

    fn zip(host: Vec<T>) -> Vec<T> {
        host
    }

    fn write(values: Vec<T>, out: OutRef<'_, T>) -> Result<()> {
        write_one(&values, out)
    }

    #[cfg(feature = "ndarray")]
    type Nd = ndarray::ArrayD<T>;
    #[cfg(feature = "ndarray")]
    type NdOuts<'a> = ndarray::ArrayViewMutD<'a, T>;

    #[cfg(feature = "ndarray")]
    fn to_nd(host: Vec<T>, shape: &[usize]) -> ndarray::ArrayD<T> {
        shaped(host, shape)
    }

    #[cfg(feature = "ndarray")]
    fn nd_shapes(out: &Self::NdOuts<'_>) -> Vec<Vec<usize>> {
        vec![out.shape().to_vec()]
    }

    #[cfg(feature = "ndarray")]
    fn nd_direct(out: Self::NdOuts<'_>) -> std::result::Result<Self::Outs<'_>, Self::NdOuts<'_>> {
        if out.is_standard_layout() { Ok(contiguous(out)) } else { Err(out) }
    }

    #[cfg(feature = "ndarray")]
    fn nd_assign(host: Vec<T>, shape: &[usize], out: Self::NdOuts<'_>) {
        assign(&host, shape, out)
    }
}

fn write_one<T: GpuType>(values: &[T], out: OutRef<'_, T>) -> Result<()> {
    match out {
        OutRef::Host(s) => {
            s.copy_from_slice(values);
            Ok(())
        }
        OutRef::Device(mut d) => d.copy_from(values),
    }
}

fn slot<T: GpuType>(out: OutRef<'_, T>) -> OutSlot<'_> {
    OutSlot(match out {
        OutRef::Host(s) => SlotKind::Host { ptr: s.as_mut_ptr().cast(), len: s.len(), borrow: PhantomData },
        OutRef::Device(d) => SlotKind::Device { ptr: d.ptr(), len: d.len(), device: d.device(), uses: d.uses() },
    })
}

macro_rules! tuple_results {
    ($($t:ident $i:tt),*) => {
        impl<$($t: GpuType),*> sealed::Sealed for ($($t,)*) {}

        impl<$($t: GpuType),*> Results for ($($t,)*) {
            type Host = ($(Vec<$t>,)*);
            type Device = ($(DeviceVec<$t>,)*);
            type Outs<'a> = ($(OutRef<'a, $t>,)*);

            fn sizes() -> Vec<usize> {
                vec![$(std::mem::size_of::<$t>()),*]
            }

            #[allow(non_snake_case)]
            fn host_with_capacity(n: usize) -> (Self::Host, Vec<*mut u8>) {
                let mut host: Self::Host = ($(host_vec::<$t>(n),)*);
                let ptrs = vec![$(host.$i.as_mut_ptr().cast()),*];
                (host, ptrs)
            }

            unsafe fn host_set_len(host: &mut Self::Host, n: usize) {
                // SAFETY: the caller's promise.
                $(unsafe { host.$i.set_len(n) };)*
            }

            unsafe fn device_uninit(device: &Device, stream: &Arc<CudaStream>, n: usize) -> Result<(Self::Device, Vec<CUdeviceptr>)> {
                // SAFETY: the caller's promise.
                let d: Self::Device = ($(unsafe { DeviceVec::<$t>::uninit_on_stream(device, stream, n)? },)*);
                let ptrs = vec![$(d.$i.ptr()),*];
                Ok((d, ptrs))
            }

            fn out_slots<'a>(outs: Self::Outs<'a>) -> Vec<OutSlot<'a>> {
                vec![$(slot(outs.$i)),*]
            }

            fn device_uses(device: &Self::Device) -> Vec<&Uses> {
                vec![$(device.$i.uses()),*]
            }

            fn out_slots_len(outs: &Self::Outs<'_>) -> Vec<usize> {
                vec![$(outs.$i.len()),*]
            }

            fn out_devices(outs: &Self::Outs<'_>) -> Vec<(&'static str, DeviceId)> {
                let names = kernel_abi::output_names(Self::sizes().len());
                let devices = [$(outs.$i.device_id()),*];
                names.iter().zip(devices).filter_map(|(n, d)| Some((*n, d?))).collect()
            }

            fn host_to_device(host: Self::Host, device: &Device) -> Result<Self::Device> {
                Ok(($(DeviceVec::from_slice_on(device, &host.$i)?,)*))
            }

            fn zip(host: Self::Host) -> Vec<Self> {
                let n = host.0.len();
                $(assert_eq!(host.$i.len(), n, "the vectors of a tuple result have one length");)*
                (0..n).map(|k| ($(host.$i[k],)*)).collect()
            }

            fn write(values: Vec<Self>, outs: Self::Outs<'_>) -> Result<()> {
                let host = Self::unzip(values);
                $(write_one(&host.$i, outs.$i)?;)*
                Ok(())
            }

            #[cfg(feature = "ndarray")]
            type Nd = ($(ndarray::ArrayD<$t>,)*);
            #[cfg(feature = "ndarray")]
            type NdOuts<'a> = ($(ndarray::ArrayViewMutD<'a, $t>,)*);

            #[cfg(feature = "ndarray")]
            fn to_nd(host: Self::Host, shape: &[usize]) -> Self::Nd {
                ($(shaped(host.$i, shape),)*)
            }

            #[cfg(feature = "ndarray")]
            fn nd_shapes(outs: &Self::NdOuts<'_>) -> Vec<Vec<usize>> {
                vec![$(outs.$i.shape().to_vec()),*]
            }

            #[cfg(feature = "ndarray")]
            fn nd_direct(outs: Self::NdOuts<'_>) -> std::result::Result<Self::Outs<'_>, Self::NdOuts<'_>> {
                if $(outs.$i.is_standard_layout())&&* {
                    Ok(($(contiguous(outs.$i),)*))
                } else {
                    Err(outs)
                }
            }

            #[cfg(feature = "ndarray")]
            fn nd_assign(host: Self::Host, shape: &[usize], outs: Self::NdOuts<'_>) {
                $(assign(&host.$i, shape, outs.$i);)*
            }

            fn unzip(values: Vec<Self>) -> Self::Host {
                let mut host: Self::Host = ($(Vec::<$t>::with_capacity(values.len()),)*);
                for v in values {
                    $(host.$i.push(v.$i);)*
                }
                host
            }
        }
    };
}

tuple_results!(A 0);
tuple_results!(A 0, B 1);
tuple_results!(A 0, B 1, C 2);
tuple_results!(A 0, B 1, C 2, D 3);
tuple_results!(A 0, B 1, C 2, D 3, E 4);
tuple_results!(A 0, B 1, C 2, D 3, E 4, F 5);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_unzip_into_one_vector_per_element() {
        let (a, b) = <(f32, u8)>::unzip(vec![(1.0, 2), (3.0, 4)]);
        assert_eq!((a.clone(), b.clone()), (vec![1.0, 3.0], vec![2, 4]));
        assert_eq!(<(f32, u8)>::zip((a, b)), vec![(1.0, 2), (3.0, 4)]);
        assert_eq!(<(f64, u8, bool)>::sizes(), vec![8, 1, 1]);
        let (host, ptrs) = <(f32, i64)>::host_with_capacity(10);
        assert_eq!((host.0.capacity() >= 10, host.1.capacity() >= 10, ptrs.len()), (true, true, 2));
    }
}
