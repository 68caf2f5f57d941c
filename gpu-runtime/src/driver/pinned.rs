//! Page-locked host memory: the GPU copies into and out of it while the host goes on.

use std::sync::Mutex;

use cudarc::driver::result;
use cudarc::driver::sys::{CU_MEMHOSTALLOC_DEVICEMAP, CUdeviceptr, cuMemHostGetDevicePointer_v2};

use super::Device;
use crate::error::{Error, Result};

/// A page-locked allocation of host memory, freed on drop. Its owner must not let go of it
/// while a queued copy still reads or writes it.
pub(crate) struct PinnedBuffer {
    ptr: *mut u8,
    /// Where kernels read and write it, for a buffer mapped into the device's address
    /// space ([`PinnedBuffer::mapped`]).
    device_ptr: Option<CUdeviceptr>,
}

// SAFETY: plain memory owned by this value; nothing in it is tied to a thread.
unsafe impl Send for PinnedBuffer {}

impl PinnedBuffer {
    pub(crate) fn new(device: &Device, bytes: usize) -> Result<PinnedBuffer> {
        device.bind()?;
        // SAFETY: a plain allocation of `bytes` (at least one) bytes in the current context.
        let ptr = unsafe { result::malloc_host(bytes.max(1), 0) }
            .map_err(|e| Error::driver("allocating page-locked memory", e))?;
        Ok(PinnedBuffer { ptr: ptr.cast(), device_ptr: None })
    }

    /// A page-locked allocation that kernels on `device` also write directly (mapped into
    /// its address space): a kernel's writes are seen by the host once the work is waited
    /// for, with no copy queued after it.
    pub(crate) fn mapped(device: &Device, bytes: usize) -> Result<PinnedBuffer> {
        device.bind()?;
        // SAFETY: a plain allocation of `bytes` (at least one) bytes in the current
        // context, mapped for its devices.
        let ptr = unsafe { result::malloc_host(bytes.max(1), CU_MEMHOSTALLOC_DEVICEMAP) }
            .map_err(|e| Error::driver("allocating page-locked memory", e))?;
        // Freed on drop if the mapping fails.
        let mut buffer = PinnedBuffer { ptr: ptr.cast(), device_ptr: None };
        let mut device_ptr: CUdeviceptr = 0;
        // SAFETY: `ptr` was just allocated with `CU_MEMHOSTALLOC_DEVICEMAP`; the call
        // writes the device address of it (flags must be 0).
        unsafe { cuMemHostGetDevicePointer_v2(&mut device_ptr, ptr, 0) }
            .result()
            .map_err(|e| Error::driver("mapping page-locked memory for the GPU", e))?;
        buffer.device_ptr = Some(device_ptr);
        Ok(buffer)
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// The device address of a mapped buffer (`None` for one that is not mapped).
    pub(crate) fn device_ptr(&self) -> Option<CUdeviceptr> {
        self.device_ptr
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by `malloc_host`; its owner lets go only once no queued copy
        // uses it (see the type's contract).
        if let Err(e) = unsafe { result::free_host(self.ptr.cast()) } {
            super::report_drop_error(
                "page-locked host memory could not be freed",
                &Error::driver("freeing page-locked memory", e),
            );
        }
    }
}

/// A small page-locked buffer, mapped for its device, for what a call reads back after its
/// work (a reduction's value, fault words): a copy into page-locked memory is one DMA,
/// where a copy into pageable memory is staged through the driver's own buffer, and a
/// kernel may write it directly. From a pool kept per device (one per call in flight,
/// made on first use). Dropped, it is freed; a caller gives it back to the pool only once
/// no queued work writes it, and on an error before that leaks it (`ManuallyDrop`).
pub(crate) struct ReadBack {
    buffer: PinnedBuffer,
    ordinal: usize,
}

/// The free read-back buffers, with their device's ordinal.
static READ_BACKS: Mutex<Vec<(usize, PinnedBuffer)>> = Mutex::new(Vec::new());

impl ReadBack {
    /// The size of every read-back buffer, in bytes.
    /// (A reduction's value, at most `REDUCE_MAX_BYTES`, and its fault word after it.)
    pub(crate) const BYTES: usize = 256;

    pub(crate) fn take(device: &Device) -> Result<ReadBack> {
        let ordinal = device.ordinal();
        let mut free = READ_BACKS.lock().unwrap_or_else(|p| p.into_inner());
        let buffer = match free.iter().position(|(o, _)| *o == ordinal) {
            Some(k) => free.swap_remove(k).1,
            None => {
                drop(free);
                let buffer = PinnedBuffer::mapped(device, Self::BYTES)?;
                // Initialised once, so that `bytes` never hands out uninitialised memory.
                // SAFETY: the new allocation's `BYTES` bytes, used by nothing yet.
                unsafe { std::ptr::write_bytes(buffer.ptr(), 0, Self::BYTES) };
                buffer
            }
        };
        Ok(ReadBack { buffer, ordinal })
    }

    /// The buffer's `len` bytes from `offset` (within [`ReadBack::BYTES`]), for a copy
    /// from the device to write (the host reads them only after the copy is waited for).
    pub(crate) fn bytes(&mut self, offset: usize, len: usize) -> &mut [u8] {
        assert!(offset + len <= Self::BYTES, "a read-back of {len} bytes at {offset} overruns its buffer");
        // SAFETY: inside the allocation (checked above), borrowed mutably from its owner.
        unsafe { std::slice::from_raw_parts_mut(self.buffer.ptr().add(offset), len) }
    }

    /// The value of type `T` at `offset`, once what wrote it is waited for.
    ///
    /// # Safety
    /// A copy or kernel that is finished must have written a valid `T` there.
    pub(crate) unsafe fn read<T: Copy>(&self, offset: usize) -> T {
        assert!(offset + std::mem::size_of::<T>() <= Self::BYTES, "a read-back overruns its buffer");
        // SAFETY: inside the allocation; the caller's promise for the contents.
        unsafe { self.buffer.ptr().add(offset).cast::<T>().read_unaligned() }
    }

    /// Where a kernel writes the buffer.
    pub(crate) fn device_ptr(&self) -> Result<CUdeviceptr> {
        self.buffer.device_ptr().ok_or_else(|| Error::internal("a read-back buffer is not mapped for the GPU"))
    }

    /// Back to the pool, once nothing queued writes it any more.
    pub(crate) fn give_back(self) {
        READ_BACKS.lock().unwrap_or_else(|p| p.into_inner()).push((self.ordinal, self.buffer));
    }
}
