//! Page-locked host memory: the GPU copies into and out of it while the host goes on.

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
