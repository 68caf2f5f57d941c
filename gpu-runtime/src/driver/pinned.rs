//! Page-locked host memory: the GPU copies into and out of it while the host goes on.

use cudarc::driver::result;

use super::Device;
use crate::error::{Error, Result};

/// A page-locked allocation of host memory, freed on drop. Its owner must not let go of it
/// while a queued copy still reads or writes it.
pub(crate) struct PinnedBuffer {
    ptr: *mut u8,
}

// SAFETY: plain memory owned by this value; nothing in it is tied to a thread.
unsafe impl Send for PinnedBuffer {}

impl PinnedBuffer {
    pub(crate) fn new(device: &Device, bytes: usize) -> Result<PinnedBuffer> {
        device.bind()?;
        // SAFETY: a plain allocation of `bytes` (at least one) bytes in the current context.
        let ptr = unsafe { result::malloc_host(bytes.max(1), 0) }
            .map_err(|e| Error::driver("allocating page-locked memory", e))?;
        Ok(PinnedBuffer { ptr: ptr.cast() })
    }

    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr
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
