//! The fault flags kernels write: their kinds, sizes and cleared contents.

use cudarc::driver::CudaStream;
use cudarc::driver::result;
use cudarc::driver::sys::CUdeviceptr;
use kernel_abi::{FaultWord, THREAD_FAULT_WORDS};

use crate::error::{Error, Result};

/// What a call reports its faults through: an elementwise entry's fault word or an
/// explicit kernel's fault record, each written only at a fault.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum FaultKind {
    Word,
    Record,
}

impl FaultKind {
    pub(crate) fn bytes(self) -> usize {
        match self {
            FaultKind::Word => 8,
            FaultKind::Record => 8 * THREAD_FAULT_WORDS,
        }
    }

    /// The byte every byte of a cleared one holds.
    pub(crate) fn clear_byte(self) -> u8 {
        match self {
            FaultKind::Word => FaultWord::CLEAR_BYTE,
            FaultKind::Record => 0,
        }
    }

    /// Queues the clearing of the one at `ptr` on `stream`.
    ///
    /// # Safety
    /// `ptr` must be a live device allocation of at least this kind's bytes in the
    /// stream's context, which no other queued work reads or writes meanwhile.
    pub(crate) unsafe fn clear(self, ptr: CUdeviceptr, stream: &CudaStream) -> Result<()> {
        // SAFETY: the caller's promise.
        unsafe { result::memset_d8_async(ptr, self.clear_byte(), self.bytes(), stream.cu_stream()) }
            .map_err(|e| Error::driver("initialising the kernel's error flag", e))
    }
}
