//! Device memory shared with cudarc, and taken from elsewhere: a [`DeviceVec`] made from a
//! cudarc `CudaSlice` (taken, or borrowed for a while), a cudarc view of a `DeviceVec` for
//! cudarc's own kernels and copies, a `CudaSlice` made from a `DeviceVec`, and a vector over
//! a raw device pointer (`unsafe`, the CUDA Array Interface's case).
//!
//! The ordering of the work across the boundary is the runtime's [`Uses`]: work queued
//! through cudarc on a stream the memory is shared with is waited for by every later use of
//! the runtime's, and that stream waits for every use of the runtime's as soon as it is
//! queued. So no kernel of either side overtakes the other's, and nothing is freed under a
//! kernel, even where a borrow is leaked.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::sync::Arc;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut};

use super::array::{Buf, DeviceSlice, DeviceSliceMut, DeviceVec};
use crate::driver::Device;
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// `device`'s CUDA context must be `stream`'s; the error says which function asked.
fn same_context(device: &Device, stream: &CudaStream, what: &str) -> Result<()> {
    if !device.is_cuda() {
        return Err(Error::Interop {
            reason: format!("{what}: {} is the CPU device, which has no CUDA memory", device.name()),
        });
    }
    let ours = device.context()?.cu_ctx();
    if stream.context().cu_ctx() != ours {
        return Err(Error::Interop {
            reason: format!(
                "{what}: the cudarc memory or stream belongs to another CUDA context than {}'s (device {} of cudarc, {} of the runtime); create cudarc's context with `CudaContext::new({})`, which shares the device's primary context",
                device.name(),
                stream.context().ordinal(),
                device.ordinal(),
                device.ordinal()
            ),
        });
    }
    Ok(())
}

impl<T: Scalar> DeviceVec<T> {
    /// Takes a cudarc slice of `device`'s CUDA context (`CudaContext::new(ordinal)` shares
    /// it): no copy. The work cudarc queued on the slice's stream before this call runs
    /// before any use of the vector's; the vector frees the memory when dropped. A slice of
    /// another context, or on the per-thread default stream, is an error (the slice is
    /// dropped).
    pub fn from_cudarc(device: &Device, slice: CudaSlice<T>) -> Result<DeviceVec<T>> {
        same_context(device, slice.stream(), "DeviceVec::from_cudarc")?;
        // Refused before the slice is taken apart: on an error it is dropped as cudarc drops
        // its own (freed in its stream's order).
        crate::driver::shareable(slice.stream())?;
        device.bind()?;
        let (len, owner) = (slice.len(), slice.stream().clone());
        if len == 0 {
            // SAFETY: no element to write.
            return unsafe { DeviceVec::uninit_on(device, 0) };
        }
        let bytes = len * std::mem::size_of::<T>();
        // cudarc makes its stream wait for the slice's tracked reads and writes, then lets
        // go of the allocation without freeing it.
        let ptr = slice.leak();
        // SAFETY: `ptr` is a live allocation of `bytes` bytes of this context, owned by
        // nobody else now, and it holds `len` valid `T`s.
        let buf = unsafe { device.stream()?.upgrade_device_ptr::<u8>(ptr, bytes) };
        let vec = DeviceVec::from_buf(Buf::Cuda(ManuallyDrop::new(buf)), len, device);
        // Every use from another stream first waits for what the owner's stream queued.
        vec.uses().share(&owner)?;
        Ok(vec)
    }

    /// Gives the vector to cudarc, for its work on `stream` (a stream of this device's
    /// context): no copy. The runtime's work on the vector runs before anything queued on
    /// `stream` afterwards; the slice frees the memory when dropped, as cudarc's own do.
    pub fn into_cudarc(self, stream: &Arc<CudaStream>) -> Result<CudaSlice<T>> {
        let device = self.device().clone();
        same_context(&device, stream, "DeviceVec::into_cudarc")?;
        if self.cuda_buf().is_none() {
            // Dropped as it is: borrowed memory waits for the runtime's work first.
            return Err(Error::Interop { reason: "DeviceVec::into_cudarc: the vector does not own its memory".into() });
        }
        device.bind()?;
        // No graph queues a replay over the memory once cudarc owns it.
        self.uses().retire();
        self.uses().order_before(stream)?;
        let len = self.len();
        let (buf, _uses) = self.take_buf();
        match buf {
            Buf::Cuda(buf) => {
                let ptr = ManuallyDrop::into_inner(buf).leak();
                // SAFETY: `ptr` is a live allocation of this context holding `len` valid
                // `T`s (and at least one element's bytes), owned by nobody else now.
                Ok(unsafe { stream.upgrade_device_ptr::<T>(ptr, len) })
            }
            _ => unreachable!("checked above: the vector owns a driver allocation"),
        }
    }

    /// A cudarc view of the vector, for cudarc's work on `stream` (a stream of this
    /// device's context, not the per-thread default stream). The runtime's earlier work on
    /// the vector runs before anything queued on `stream` afterwards; from now on, every
    /// use of the runtime's waits for what `stream` has queued by then.
    pub fn cudarc_view(&self, stream: &Arc<CudaStream>) -> Result<CudaView<'_, T>> {
        let buf = self.lend(stream, "DeviceVec::cudarc_view")?;
        // SAFETY: the allocation holds `len` valid `T`s.
        unsafe { buf.transmute::<T>(self.len()) }
            .ok_or_else(|| Error::Interop { reason: "DeviceVec::cudarc_view: the allocation is too short".into() })
    }

    /// A mutable cudarc view of the vector, for cudarc's work on `stream`; see
    /// [`DeviceVec::cudarc_view`].
    pub fn cudarc_view_mut(&mut self, stream: &Arc<CudaStream>) -> Result<CudaViewMut<'_, T>> {
        self.lend(stream, "DeviceVec::cudarc_view_mut")?;
        let len = self.len();
        let Some(buf) = self.cuda_buf_mut() else {
            return Err(Error::Interop {
                reason: "DeviceVec::cudarc_view_mut: the vector does not own its memory".into(),
            });
        };
        // SAFETY: the allocation holds `len` valid `T`s, and whatever cudarc writes through
        // the view is plain data (`Scalar`), valid as a `T`.
        unsafe { buf.transmute_mut::<T>(len) }
            .ok_or_else(|| Error::Interop { reason: "DeviceVec::cudarc_view_mut: the allocation is too short".into() })
    }

    /// Shares the vector with `stream` (see [`crate::driver::Uses`]) after ordering the
    /// runtime's work before it; the vector's own allocation.
    fn lend(&self, stream: &Arc<CudaStream>, what: &str) -> Result<&CudaSlice<u8>> {
        same_context(self.device(), stream, what)?;
        self.device().bind()?;
        self.uses().order_before(stream)?;
        self.uses().share(stream)?;
        self.cuda_buf().ok_or_else(|| Error::Interop { reason: format!("{what}: the vector does not own its memory") })
    }

    /// A vector over `len` elements at `ptr`, memory that something else owns and frees
    /// (another library's array, Numba's CUDA Array Interface): no copy. Dropping the vector
    /// waits on the host for the runtime's work on it, and never frees the memory.
    ///
    /// # Safety
    /// - `ptr` is the address of `len` initialised `T`s in the memory of `device`'s CUDA
    ///   context (device memory or memory mapped into it), aligned for `T`.
    /// - The memory stays allocated until the vector is dropped, and for ever if it is
    ///   leaked.
    /// - While the vector lives, nothing else writes the memory, and nothing else reads it
    ///   while the runtime may be writing it (a call's output, a kernel's `&mut`), unless
    ///   that work is ordered after the runtime's (`device.synchronize()` first).
    pub unsafe fn from_raw_parts(device: &Device, ptr: CUdeviceptr, len: usize) -> Result<DeviceVec<T>> {
        if !device.is_cuda() {
            return Err(Error::Interop {
                reason: format!(
                    "DeviceVec::from_raw_parts: {} is the CPU device, which has no CUDA memory",
                    device.name()
                ),
            });
        }
        if len > 0 && ptr % std::mem::align_of::<T>() as u64 != 0 {
            return Err(Error::Interop {
                reason: format!("DeviceVec::from_raw_parts: {ptr:#x} is not aligned for `{}`", T::NAME),
            });
        }
        Ok(DeviceVec::from_buf(Buf::Foreign(ptr), len, device))
    }
}

/// A cudarc slice lent to the runtime for a while (a read-only one:
/// [`DeviceVec::borrow_cudarc`]): [`CudarcBorrow::as_slice`] is a [`DeviceSlice`] to pass to
/// any call. The work cudarc queued on the slice's stream before the borrow runs before the
/// runtime's; the slice's stream waits for each use of the runtime's as soon as it is
/// queued; dropping the borrow waits on the host for that work.
pub struct CudarcBorrow<'a, T: Scalar> {
    vec: DeviceVec<T>,
    _borrow: PhantomData<&'a CudaSlice<T>>,
}

/// A cudarc slice lent to the runtime mutably ([`DeviceVec::borrow_cudarc_mut`]), as
/// [`CudarcBorrow`], with [`CudarcBorrowMut::as_mut_slice`] for outputs.
pub struct CudarcBorrowMut<'a, T: Scalar> {
    vec: DeviceVec<T>,
    _borrow: PhantomData<&'a mut CudaSlice<T>>,
}

impl<T: Scalar> DeviceVec<T> {
    /// Lends a cudarc slice of `device`'s context to the runtime, read-only: no copy.
    pub fn borrow_cudarc<'a>(device: &Device, slice: &'a CudaSlice<T>) -> Result<CudarcBorrow<'a, T>> {
        same_context(device, slice.stream(), "DeviceVec::borrow_cudarc")?;
        device.bind()?;
        // With cudarc's event tracking on, the slice's stream waits for its tracked writes
        // (the runtime only reads).
        let (ptr, record) = slice.device_ptr(slice.stream());
        drop(record);
        Ok(CudarcBorrow { vec: borrowed(device, slice.stream(), ptr, slice.len())?, _borrow: PhantomData })
    }

    /// Lends a cudarc slice of `device`'s context to the runtime, to read and write: no
    /// copy.
    pub fn borrow_cudarc_mut<'a>(device: &Device, slice: &'a mut CudaSlice<T>) -> Result<CudarcBorrowMut<'a, T>> {
        same_context(device, slice.stream(), "DeviceVec::borrow_cudarc_mut")?;
        device.bind()?;
        // With cudarc's event tracking on, the slice's stream waits for its tracked reads
        // and writes (the runtime may write).
        let stream = slice.stream().clone();
        let len = slice.len();
        let (ptr, record) = slice.device_ptr_mut(&stream);
        drop(record);
        Ok(CudarcBorrowMut { vec: borrowed(device, &stream, ptr, len)?, _borrow: PhantomData })
    }
}

/// A vector over `len` elements at `ptr`, a cudarc slice's memory, shared with the slice's
/// stream `owner` (the caller has checked the context and bound it).
fn borrowed<T: Scalar>(device: &Device, owner: &Arc<CudaStream>, ptr: CUdeviceptr, len: usize) -> Result<DeviceVec<T>> {
    let vec = DeviceVec::from_buf(Buf::Foreign(ptr), len, device);
    vec.uses().share(owner)?;
    Ok(vec)
}

impl<T: Scalar> CudarcBorrow<'_, T> {
    /// The borrowed memory, to pass to a call.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        self.vec.as_slice()
    }
}

impl<T: Scalar> CudarcBorrowMut<'_, T> {
    /// The borrowed memory, to read.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        self.vec.as_slice()
    }

    /// The borrowed memory, to write.
    pub fn as_mut_slice(&mut self) -> DeviceSliceMut<'_, T> {
        self.vec.as_mut_slice()
    }
}
