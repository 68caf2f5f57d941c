//! Fault words and fault records kept cleared between calls. A kernel writes its fault
//! word (or an explicit kernel its record) only when an element faults, so after a call
//! without a fault it still reads as cleared: it goes back to a pool as it is, and the
//! next call on that device takes it without allocating, clearing or freeing anything on
//! its stream. Only a word that reported a fault is cleared again (and waited for) before
//! it goes back. A device's context lives as long as the process (the device registry
//! keeps it), so the pooled addresses stay valid.

use std::sync::Mutex;

use cudarc::driver::CudaStream;
use cudarc::driver::result;
use cudarc::driver::sys::CUdeviceptr;

use crate::data::alloc_error;
use crate::driver::{Device, FaultKind};
use crate::error::{Error, Result};

/// The cleared allocations that no queued work uses: (device ordinal, kind, address).
static FREE: Mutex<Vec<(usize, FaultKind, CUdeviceptr)>> = Mutex::new(Vec::new());

/// A fault word or record of one device, cleared before the work that uses it runs.
/// Dropped without [`Cleared::give_back`] (an error on the way, its state unknown) it is
/// leaked: a few bytes, never reused dirty, never freed under queued work.
pub(crate) struct Cleared {
    ptr: CUdeviceptr,
    kind: FaultKind,
    ordinal: usize,
}

impl Cleared {
    /// One from `device`'s pool, or a new one cleared on `stream` (before anything queued
    /// after this reads it). The device's context must be current.
    pub(crate) fn take(device: &Device, kind: FaultKind, stream: &CudaStream) -> Result<Cleared> {
        let ordinal = device.ordinal();
        let pooled = {
            let mut free = FREE.lock().unwrap_or_else(|p| p.into_inner());
            free.iter().position(|&(o, k, _)| o == ordinal && k == kind).map(|i| free.swap_remove(i).2)
        };
        if let Some(ptr) = pooled {
            return Ok(Cleared { ptr, kind, ordinal });
        }
        // SAFETY: a plain allocation in the current context (the caller's promise).
        let ptr = unsafe { result::malloc_sync(kind.bytes()) }.map_err(|e| alloc_error(device, kind.bytes(), e))?;
        let cleared = Cleared { ptr, kind, ordinal };
        cleared.clear(stream)?;
        Ok(cleared)
    }

    pub(crate) fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }

    fn clear(&self, stream: &CudaStream) -> Result<()> {
        // SAFETY: `ptr` is a live allocation of `kind.bytes()` bytes of the stream's
        // context, which this value owns: no other work uses it.
        unsafe { self.kind.clear(self.ptr, stream) }
    }

    /// Back to the pool, once the work that used it on `stream` has been waited for:
    /// as it is if it read back `clean` (no fault written), else cleared again and waited
    /// for first.
    pub(crate) fn give_back(self, clean: bool, stream: &CudaStream) -> Result<()> {
        if !clean {
            self.clear(stream)?;
            stream.synchronize().map_err(|e| Error::driver("clearing the kernel's error flag", e))?;
        }
        FREE.lock().unwrap_or_else(|p| p.into_inner()).push((self.ordinal, self.kind, self.ptr));
        Ok(())
    }
}
