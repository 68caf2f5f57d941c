//! Host memory that a GPU reads and writes directly ([`PageLocked`]).

use std::marker::PhantomData;

use crate::driver::{Device, PinnedBuffer};
use crate::error::{Error, Result};
use crate::scalar::GpuType;

/// Page-locked (pinned) host memory of `len` elements: a GPU copies results into it, or
/// arguments out of it, at the link's full speed, where pageable memory goes through the
/// driver's own staging buffers. Pass it where a host slice goes (`&mut v[..]` as an
/// `into` output). Allocating it costs far more than allocating a `Vec` (the driver locks
/// every page): keep and reuse it.
pub struct PageLocked<T: GpuType> {
    buffer: PinnedBuffer,
    len: usize,
    _values: PhantomData<T>,
}

// SAFETY: the buffer is plain memory owned by this value, reached only through its
// borrows (`&`/`&mut` of the slices), as a `Vec<T>`'s is.
unsafe impl<T: GpuType> Sync for PageLocked<T> {}

impl<T: GpuType> PageLocked<T> {
    /// `len` elements with every byte zero (a valid value of every `GpuType`), locked for
    /// `device`'s context (a GPU).
    pub fn zeroed(device: &Device, len: usize) -> Result<PageLocked<T>> {
        if !device.is_cuda() {
            return Err(Error::Interop {
                reason: format!("page-locked memory belongs to a GPU's context; {} has none", device.name()),
            });
        }
        let bytes =
            len.checked_mul(std::mem::size_of::<T>()).ok_or(Error::OutOfMemory { requested: usize::MAX, free: 0 })?;
        let buffer = PinnedBuffer::new(device, bytes)?;
        // SAFETY: the new allocation holds at least `bytes` bytes, used by nothing yet.
        unsafe { std::ptr::write_bytes(buffer.ptr(), 0, bytes) };
        Ok(PageLocked { buffer, len, _values: PhantomData })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `len` initialised `T`s (zeroed, then written only through `&mut`), aligned
        // (the driver's host allocations are page-aligned), borrowed from their owner.
        unsafe { std::slice::from_raw_parts(self.buffer.ptr().cast::<T>(), self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: as for `as_slice`, borrowed mutably from their owner.
        unsafe { std::slice::from_raw_parts_mut(self.buffer.ptr().cast::<T>(), self.len) }
    }
}

impl<T: GpuType> std::ops::Deref for PageLocked<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: GpuType> std::ops::DerefMut for PageLocked<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_slice()
    }
}

impl<T: GpuType> std::fmt::Debug for PageLocked<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PageLocked<{}>[{}]", T::NAME, self.len)
    }
}
