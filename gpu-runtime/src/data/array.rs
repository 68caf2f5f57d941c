//! Arrays in device memory: [`DeviceVec`] owns one, [`DeviceSlice`] and [`DeviceSliceMut`]
//! borrow a range of one. Data stays on the GPU between vectorized calls: an argument that
//! is already there is not copied again.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::{Bound, RangeBounds};

use cudarc::driver::sys::{CUdeviceptr, CUresult};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, result};

use crate::driver::{Device, Uses, default_device, report_drop_error, staged};
use crate::error::{Error, Result};
use crate::scalar::GpuType;

/// A vector in the memory of one device: a GPU's, or host memory for the CPU device
/// ([`Device::cpu`]). Dropping it frees the memory once the work queued on it has finished
/// (the host does not wait).
pub struct DeviceVec<T: GpuType> {
    buf: Buf<T>,
    len: usize,
    device: Device,
    /// Queued work that uses the vector (see `driver/event.rs`).
    uses: Uses,
}

pub(super) enum Buf<T: GpuType> {
    /// The bytes of at least one element even for an empty vector (the driver allocates no
    /// zero bytes). Freed by `Drop`, after the work that uses it. Untyped, so that element
    /// types cudarc does not know (num-complex's) are stored alike.
    Cuda(ManuallyDrop<CudaSlice<u8>>),
    /// The CPU device's memory.
    Host(HostBuf<T>),
    /// Device memory another owner frees (borrowed from cudarc, or given as a raw
    /// pointer): never freed here; dropping the vector waits for the work that uses it.
    Foreign(CUdeviceptr),
}

/// Host memory owned through a raw pointer, so that views may write through addresses
/// taken from it (a `Vec` would tie every write to a borrow of itself).
pub(super) struct HostBuf<T> {
    ptr: std::ptr::NonNull<T>,
    len: usize,
}

impl<T: GpuType> HostBuf<T> {
    /// `len` elements with every byte zero (a valid value of every `Scalar`).
    fn zeroed(len: usize) -> Result<HostBuf<T>> {
        let layout =
            std::alloc::Layout::array::<T>(len).map_err(|_| Error::OutOfMemory { requested: usize::MAX, free: 0 })?;
        if layout.size() == 0 {
            return Ok(HostBuf { ptr: std::ptr::NonNull::dangling(), len });
        }
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr =
            std::ptr::NonNull::new(raw.cast::<T>()).ok_or(Error::OutOfMemory { requested: layout.size(), free: 0 })?;
        Ok(HostBuf { ptr, len })
    }
}

impl<T> Drop for HostBuf<T> {
    fn drop(&mut self) {
        let layout = std::alloc::Layout::array::<T>(self.len).expect("the layout was valid when allocated");
        if layout.size() != 0 {
            // SAFETY: allocated by `zeroed` with this layout, and freed only here.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), layout) };
        }
    }
}

// SAFETY: the buffer owns plain data (`Scalar`) and is only reached through its vector,
// whose borrows (`&`/`&mut`, and views that hold them) order every access.
unsafe impl<T: GpuType> Send for HostBuf<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: GpuType> Sync for HostBuf<T> {}

impl<T: GpuType> Drop for DeviceVec<T> {
    fn drop(&mut self) {
        // No graph queues a replay over the vector from here on.
        self.uses.retire();
        if let Buf::Foreign(_) = self.buf {
            // The owner may free the memory as soon as this returns.
            if let Err(e) = self.device.bind().and_then(|()| self.uses.wait_all()) {
                report_drop_error("borrowed device memory may still be in use after its borrow ended", &e);
            }
            return;
        }
        let Buf::Cuda(buf) = &mut self.buf else { return };
        // The free is queued on the stream the vector was allocated on, after the work of
        // other streams that still uses it. Where that order cannot be set up, the memory
        // is leaked: freed, it could be handed out again while a kernel still writes it.
        let ordered = self.device.bind().and_then(|()| self.uses.order_before(buf.stream()));
        match ordered {
            // SAFETY: `buf` is not used after this.
            Ok(()) => unsafe { ManuallyDrop::drop(buf) },
            Err(e) => report_drop_error("a device array could not be freed in order, so it is leaked", &e),
        }
    }
}

impl<T: GpuType> std::fmt::Debug for DeviceVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceVec<{}>[{}] on {}", T::NAME, self.len, self.device.id())
    }
}

pub(crate) fn alloc_error(device: &Device, requested: usize, e: cudarc::driver::DriverError) -> Error {
    if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        let free = device.memory_info().map(|(free, _)| free).unwrap_or(0);
        return Error::OutOfMemory { requested, free };
    }
    Error::driver("allocating GPU memory", e)
}

impl<T: GpuType> DeviceVec<T> {
    pub(crate) fn uses(&self) -> &Uses {
        &self.uses
    }

    /// `len` elements on `device`, not initialised: every element must be written before
    /// it is read.
    pub(crate) unsafe fn uninit_on(device: &Device, len: usize) -> Result<DeviceVec<T>> {
        if device.is_cpu() {
            let buf = Buf::Host(HostBuf::zeroed(len)?);
            return Ok(DeviceVec { buf, len, device: device.clone(), uses: Uses::default() });
        }
        // SAFETY: the caller's promise.
        unsafe { DeviceVec::uninit_on_stream(device, device.stream()?, len) }
    }

    /// Like [`DeviceVec::uninit_on`], allocated in the order of `stream`'s work (and freed
    /// in it).
    pub(crate) unsafe fn uninit_on_stream(
        device: &Device,
        stream: &std::sync::Arc<CudaStream>,
        len: usize,
    ) -> Result<DeviceVec<T>> {
        device.bind()?;
        let bytes = len
            .max(1)
            .checked_mul(std::mem::size_of::<T>())
            .ok_or(Error::OutOfMemory { requested: usize::MAX, free: 0 })?;
        // SAFETY: `T` is plain data (`Scalar`) and the caller writes every element before
        // it is read. The driver's allocations are aligned to at least 256 bytes, more
        // than any `Scalar` needs.
        let buf = unsafe { stream.alloc::<u8>(bytes) }.map_err(|e| alloc_error(device, bytes, e))?;
        Ok(DeviceVec { buf: Buf::Cuda(ManuallyDrop::new(buf)), len, device: device.clone(), uses: Uses::default() })
    }

    /// A vector of no elements that owns no memory, left in the place of a vector of
    /// `device` lent out for a while (`std::mem::replace`) and swapped back before anything
    /// reads it.
    #[cfg_attr(not(feature = "ndarray"), allow(dead_code))] // used by the N-dimensional API
    pub(crate) fn placeholder(device: &Device) -> DeviceVec<T> {
        let buf = Buf::Host(HostBuf { ptr: std::ptr::NonNull::dangling(), len: 0 });
        DeviceVec { buf, len: 0, device: device.clone(), uses: Uses::default() }
    }

    /// A copy of `data` on the default device.
    pub fn from_slice(data: &[T]) -> Result<DeviceVec<T>> {
        DeviceVec::from_slice_on(&default_device()?, data)
    }

    /// A copy of `data` on `device`.
    pub fn from_slice_on(device: &Device, data: &[T]) -> Result<DeviceVec<T>> {
        // SAFETY: the copy below writes every element before anything reads one.
        let mut v = unsafe { DeviceVec::uninit_on(device, data.len())? };
        v.copy_from(data)?;
        Ok(v)
    }

    /// `len` zeros on the default device.
    pub fn zeros(len: usize) -> Result<DeviceVec<T>> {
        DeviceVec::zeros_on(&default_device()?, len)
    }

    /// `len` zeros on `device`.
    pub fn zeros_on(device: &Device, len: usize) -> Result<DeviceVec<T>> {
        // SAFETY: the memset below writes every byte before anything reads one.
        let v = unsafe { DeviceVec::uninit_on(device, len)? };
        // Host memory comes zeroed.
        if len > 0 && device.is_cuda() {
            let stream = device.stream()?;
            // SAFETY: `len` elements of `T` lie at `v.ptr()`, allocated on this stream.
            unsafe { result::memset_d8_async(v.ptr(), 0, len * std::mem::size_of::<T>(), stream.cu_stream()) }
                .map_err(|e| Error::driver("zeroing GPU memory", e))?;
            stream.synchronize().map_err(|e| Error::driver("zeroing GPU memory", e))?;
        }
        Ok(v)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device that holds the data.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The address of the first element: in device memory, or in host memory for the CPU
    /// device.
    pub(crate) fn ptr(&self) -> CUdeviceptr {
        match &self.buf {
            // With cudarc's event tracking off (see `Device::open`) this only reads the
            // address; the stream it is given is not used.
            Buf::Cuda(buf) => buf.device_ptr(buf.stream()).0,
            Buf::Host(h) => h.ptr.as_ptr() as u64,
            Buf::Foreign(ptr) => *ptr,
        }
    }

    /// A vector over `buf` (of `len` elements) on `device`, with no use yet.
    pub(super) fn from_buf(buf: Buf<T>, len: usize, device: &Device) -> DeviceVec<T> {
        DeviceVec { buf, len, device: device.clone(), uses: Uses::default() }
    }

    /// The buffer, taken out of the vector (which then owns nothing), with the vector's
    /// uses; for handing the memory to another owner.
    pub(super) fn take_buf(mut self) -> (Buf<T>, Uses) {
        let placeholder = Buf::Host(HostBuf { ptr: std::ptr::NonNull::dangling(), len: 0 });
        let buf = std::mem::replace(&mut self.buf, placeholder);
        (buf, std::mem::take(&mut self.uses))
    }

    /// The driver's allocation behind the vector (`None` for host or borrowed memory).
    pub(super) fn cuda_buf(&self) -> Option<&CudaSlice<u8>> {
        match &self.buf {
            Buf::Cuda(buf) => Some(buf),
            _ => None,
        }
    }

    /// [`DeviceVec::cuda_buf`], mutably.
    pub(super) fn cuda_buf_mut(&mut self) -> Option<&mut CudaSlice<u8>> {
        match &mut self.buf {
            Buf::Cuda(buf) => Some(buf),
            _ => None,
        }
    }

    /// The whole vector as a borrowed view.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice { ptr: self.ptr(), len: self.len, device: &self.device, uses: &self.uses, _borrow: PhantomData }
    }

    /// The whole vector as a mutable view.
    pub fn as_mut_slice(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut { ptr: self.ptr(), len: self.len, device: &self.device, uses: &self.uses, _borrow: PhantomData }
    }

    /// The elements in `range`, borrowed; an out-of-bounds range is an error.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'_, T>> {
        self.as_slice().slice(range)
    }

    /// The elements in `range`, mutably borrowed.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>> {
        let (start, end) = bounds(range, self.len)?;
        let ptr = self.ptr() + (start * std::mem::size_of::<T>()) as u64;
        Ok(DeviceSliceMut { ptr, len: end - start, device: &self.device, uses: &self.uses, _borrow: PhantomData })
    }

    /// The data, copied to the host.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.as_slice().to_vec()
    }

    /// Overwrites every element with `data`, which must have the same length.
    pub fn copy_from(&mut self, data: &[T]) -> Result<()> {
        self.as_mut_slice().copy_from(data)
    }

    /// Copies every element into `out`, which must have the same length.
    pub fn copy_to(&self, out: &mut [T]) -> Result<()> {
        self.as_slice().copy_to(out)
    }
}

/// `start..end` of a range over `len` elements, checked.
fn bounds(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::OutOfRange { start, end, len });
    }
    Ok((start, end))
}

fn same_len(function: &'static str, a: (&'static str, usize), b: (&'static str, usize)) -> Result<()> {
    if a.1 != b.1 {
        return Err(Error::LengthMismatch { function, lengths: vec![a, b] });
    }
    Ok(())
}

/// A borrowed range of a [`DeviceVec`]; pass it wherever a vectorized function takes an
/// argument, like a `&DeviceVec`.
pub struct DeviceSlice<'a, T> {
    ptr: CUdeviceptr,
    len: usize,
    device: &'a Device,
    uses: &'a Uses,
    _borrow: PhantomData<&'a [T]>,
}

impl<T> Clone for DeviceSlice<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DeviceSlice<'_, T> {}

impl<T> std::fmt::Debug for DeviceSlice<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceSlice<{}>[{}] on {}", std::any::type_name::<T>(), self.len, self.device.id())
    }
}

impl<'a> DeviceSlice<'a, u8> {
    /// The `bytes` bytes at `ptr` in `device`'s memory, which an erased argument of a call
    /// borrows (with its use record `uses`) for `'a`: one element of it, to read back.
    pub(super) fn bytes_at(ptr: CUdeviceptr, bytes: usize, device: &'a Device, uses: &'a Uses) -> Self {
        DeviceSlice { ptr, len: bytes, device, uses, _borrow: PhantomData }
    }
}

impl<'a, T: GpuType> DeviceSlice<'a, T> {
    /// A view of `len` elements at `ptr` on `device`, whose use is noted in `uses`.
    ///
    /// # Safety
    /// They must be a live device array's elements (of type `T`), borrowed for `'a`.
    #[cfg_attr(not(feature = "ndarray"), allow(dead_code))] // used by the N-dimensional API
    pub(crate) unsafe fn raw(ptr: CUdeviceptr, len: usize, device: &'a Device, uses: &'a Uses) -> DeviceSlice<'a, T> {
        DeviceSlice { ptr, len, device, uses, _borrow: PhantomData }
    }

    pub(crate) fn uses(&self) -> &'a Uses {
        self.uses
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn device(&self) -> &'a Device {
        self.device
    }

    pub(crate) fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    /// The elements as a host slice, for a view of the CPU device's memory (`None` for a
    /// GPU's).
    pub(crate) fn host_slice(&self) -> Option<&'a [T]> {
        if !self.device.is_cpu() {
            return None;
        }
        if self.len == 0 {
            return Some(&[]);
        }
        // SAFETY: on the CPU device the address is host memory holding `len` initialised
        // elements, shared-borrowed for `'a` from its vector (no `&mut` to it can exist
        // meanwhile).
        Some(unsafe { std::slice::from_raw_parts(self.ptr as *const T, self.len) })
    }

    /// A narrower view; an out-of-bounds range is an error.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<DeviceSlice<'a, T>> {
        let (start, end) = bounds(range, self.len)?;
        Ok(DeviceSlice { ptr: self.ptr + (start * std::mem::size_of::<T>()) as u64, len: end - start, ..*self })
    }

    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = super::huge::host_vec(self.len);
        self.read_into(&mut out.spare_capacity_mut()[..self.len])?;
        // SAFETY: all `len` elements were written by the completed copy.
        unsafe { out.set_len(self.len) };
        Ok(out)
    }

    pub fn copy_to(&self, out: &mut [T]) -> Result<()> {
        same_len("copy_to", ("self", self.len), ("out", out.len()))?;
        self.read_into(out)
    }

    /// Copies the view into `dst` (exactly `len` elements of `T`'s layout: `T` itself or
    /// `MaybeUninit<T>`) once earlier work on it is done, and waits for the copy.
    fn read_into<U>(&self, dst: &mut [U]) -> Result<()> {
        debug_assert!(dst.len() == self.len && size_of::<U>() == size_of::<T>());
        if self.len == 0 {
            return Ok(());
        }
        if self.device.is_cpu() {
            // SAFETY: the view borrows `len` elements of host memory at `ptr` (shared), and
            // `dst` has room for as many of the same size; they do not overlap (`dst` is
            // exclusively borrowed).
            unsafe { std::ptr::copy_nonoverlapping(self.ptr as *const U, dst.as_mut_ptr(), self.len) };
            return Ok(());
        }
        self.device.bind()?;
        let stream = self.device.stream()?;
        self.uses.order_before(stream)?;
        let bytes = std::mem::size_of_val(dst);
        if bytes >= staged::STAGED_MIN_BYTES {
            // The staged copy runs on streams of its own, after the work queued so far.
            stream.synchronize().map_err(|e| Error::driver("copying from the GPU", e))?;
            // SAFETY: `dst` has room for `bytes` bytes, the view holds as many at `ptr`, and
            // nothing queued writes it (waited for above; the view borrows it shared).
            return unsafe { staged::from_device(self.device, self.ptr, dst.as_mut_ptr().cast(), bytes) };
        }
        // SAFETY: `dst` holds `len` elements of `T`'s size, the view `len` elements at
        // `ptr`, and the copy is waited for before `dst` is given back.
        unsafe { result::memcpy_dtoh_async(dst, self.ptr, stream.cu_stream()) }
            .map_err(|e| Error::driver("copying from the GPU", e))?;
        stream.synchronize().map_err(|e| Error::driver("copying from the GPU", e))
    }
}

/// A mutably borrowed range of a [`DeviceVec`]: an output of `name::into`.
pub struct DeviceSliceMut<'a, T> {
    ptr: CUdeviceptr,
    len: usize,
    device: &'a Device,
    uses: &'a Uses,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> std::fmt::Debug for DeviceSliceMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceSliceMut<{}>[{}] on {}", std::any::type_name::<T>(), self.len, self.device.id())
    }
}

impl<'a, T: GpuType> DeviceSliceMut<'a, T> {
    pub(crate) fn uses(&self) -> &'a Uses {
        self.uses
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn device(&self) -> &'a Device {
        self.device
    }

    pub(crate) fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    /// The elements as a mutable host slice, for a view of the CPU device's memory
    /// (`None` for a GPU's).
    pub(crate) fn into_host_slice(self) -> Option<&'a mut [T]> {
        if !self.device.is_cpu() {
            return None;
        }
        if self.len == 0 {
            return Some(&mut []);
        }
        // SAFETY: on the CPU device the address is host memory holding `len` initialised
        // elements, exclusively borrowed for `'a` from its vector by this view, which the
        // slice replaces.
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut T, self.len) })
    }

    /// A shared view of the same elements.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        DeviceSlice { ptr: self.ptr, len: self.len, device: self.device, uses: self.uses, _borrow: PhantomData }
    }

    /// A narrower mutable view.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<DeviceSliceMut<'_, T>> {
        let (start, end) = bounds(range, self.len)?;
        Ok(DeviceSliceMut {
            ptr: self.ptr + (start * std::mem::size_of::<T>()) as u64,
            len: end - start,
            device: self.device,
            uses: self.uses,
            _borrow: PhantomData,
        })
    }

    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.as_slice().to_vec()
    }

    pub fn copy_from(&mut self, data: &[T]) -> Result<()> {
        same_len("copy_from", ("data", data.len()), ("self", self.len))?;
        if self.len > 0 && self.device.is_cpu() {
            // SAFETY: the view exclusively borrows `len` elements of host memory at `ptr`,
            // and `data` is a live slice of as many (not the same memory: one is borrowed
            // shared, the other exclusively).
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr as *mut T, self.len) };
        } else if self.len > 0 {
            self.device.bind()?;
            let stream = self.device.stream()?;
            self.uses.order_before(stream)?;
            let bytes = std::mem::size_of_val(data);
            if bytes >= staged::STAGED_MIN_BYTES {
                // The staged copy runs on streams of its own, after the work queued so far.
                stream.synchronize().map_err(|e| Error::driver("copying to the GPU", e))?;
                // SAFETY: `data` holds `bytes` bytes, the view has room for as many and is
                // exclusively borrowed, and nothing queued uses it (waited for above).
                return unsafe { staged::to_device(self.device, data.as_ptr().cast(), self.ptr, bytes) };
            }
            // SAFETY: `data` is a live slice of `len` elements and the view has room for
            // them; the copy is waited for below.
            unsafe { result::memcpy_htod_async(self.ptr, data, stream.cu_stream()) }
                .map_err(|e| Error::driver("copying to the GPU", e))?;
            stream.synchronize().map_err(|e| Error::driver("copying to the GPU", e))?;
        }
        Ok(())
    }
}

// SAFETY: a view is a borrow of device memory (an address, which any thread may use: the
// context is bound per call) with shared references to its vector's `Device` and `Uses`,
// both `Sync`; the element types are plain data.
unsafe impl<T: GpuType> Send for DeviceSlice<'_, T> {}
// SAFETY: as for `Send`; `&DeviceSlice` only reads.
unsafe impl<T: GpuType> Sync for DeviceSlice<'_, T> {}
// SAFETY: as for `DeviceSlice`; the `&mut` borrow of the vector it came from is exclusive.
unsafe impl<T: GpuType> Send for DeviceSliceMut<'_, T> {}
// SAFETY: `&DeviceSliceMut` gives only shared access (`as_slice`, `to_vec`).
unsafe impl<T: GpuType> Sync for DeviceSliceMut<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::reversed_empty_ranges)] // a reversed range is what it checks
    fn ranges_are_checked() {
        assert_eq!(bounds(.., 5).unwrap(), (0, 5));
        assert_eq!(bounds(1..=3, 5).unwrap(), (1, 4));
        assert_eq!(bounds(2.., 5).unwrap(), (2, 5));
        assert!(matches!(bounds(3..9, 5), Err(Error::OutOfRange { start: 3, end: 9, len: 5 })));
        assert!(matches!(bounds(4..2, 5), Err(Error::OutOfRange { .. })));
    }
}
