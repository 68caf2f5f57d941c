//! `name::reduce`: folding an array with a function `(T, T) -> T` in one launch of its
//! reduction entry over the data and one single-block launch over the blocks' results.
//! The order of the folds is not the sequential one: the function must be associative
//! (as for Numba's `reduce`).

use std::mem::MaybeUninit;
use std::sync::Mutex;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, DevicePtr, result};
use kernel_abi::{FaultWord, REDUCE_BLOCK};

use super::enqueue::Completion;
use super::enqueue::{fault_result, launch, new_fault_word};
use super::params::ReduceWords;
use super::{Kernel, Launch, plan, trace};
use crate::data::{ArgKind, ErasedArg, alloc_error};
use crate::driver::{Device, PinnedBuffer};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// A 16-byte page-locked buffer for a reduction's value and fault word, mapped for the
/// device so that the reduction's last launch writes the value there itself; from a pool
/// kept per device (one per call in flight, made on first use).
struct ResultBuffer(PinnedBuffer);

/// The free buffers, with their device's ordinal.
static RESULT_BUFFERS: Mutex<Vec<(usize, PinnedBuffer)>> = Mutex::new(Vec::new());

impl ResultBuffer {
    fn take(device: &Device) -> Result<ResultBuffer> {
        let ordinal = device.ordinal();
        let mut free = RESULT_BUFFERS.lock().unwrap_or_else(|p| p.into_inner());
        match free.iter().position(|(o, _)| *o == ordinal) {
            Some(k) => Ok(ResultBuffer(free.swap_remove(k).1)),
            None => {
                drop(free);
                Ok(ResultBuffer(PinnedBuffer::mapped(device, 16)?))
            }
        }
    }

    fn ptr(&self) -> *mut u8 {
        self.0.ptr()
    }

    /// Where the device writes the buffer.
    fn device_ptr(&self) -> Result<CUdeviceptr> {
        self.0.device_ptr().ok_or_else(|| Error::internal("a reduction's result buffer is not mapped for the GPU"))
    }

    /// Back to the pool, once no copy writes it any more.
    fn give_back(self, device: &Device) {
        RESULT_BUFFERS.lock().unwrap_or_else(|p| p.into_inner()).push((device.ordinal(), self.0));
    }
}

/// Folds `arg` with `kernel`'s function on `device` (or the array's, or the default).
///
/// # Safety
/// `T` must be the kernel's element type, and `arg` an argument of that type.
pub(crate) unsafe fn reduce<T: Scalar>(
    kernel: &Kernel,
    device: Option<&Device>,
    arg: ErasedArg<'_>,
    identity: Option<T>,
) -> Result<T> {
    let spec = kernel.spec();
    let empty = || identity.ok_or(Error::EmptyReduce { function: spec.name });
    let n = match arg.0 {
        ArgKind::Scalar { bits } => return Ok(T::from_bits(bits)),
        ArgKind::Host { len, .. } | ArgKind::Device { len, .. } => len,
    };
    let args = std::slice::from_ref(&arg);
    // `plan` names the parameters; a reduction has one argument, the array.
    let Some(plan) = plan(spec, device, args, &[])? else { return empty() };
    debug_assert_eq!(plan.n, n);
    let device = &plan.device;
    device.bind()?;
    let loaded = kernel.loaded(device)?;
    let Some(entry) = &loaded.reduce else {
        return Err(Error::internal(format!("`{}` has no reduction entry, but `reduce` was called", spec.name)));
    };
    let stream = device.stream()?;
    if let Some(uses) = arg.uses() {
        uses.order_before(stream)?;
    }
    let size = std::mem::size_of::<T>();
    let alloc = |bytes: usize| -> Result<CudaSlice<u8>> {
        // SAFETY: bytes are plain data, written by a copy or the kernel before they are read.
        unsafe { stream.alloc::<u8>(bytes) }.map_err(|e| alloc_error(device, bytes, e))
    };
    let (input, _staged) = match arg.0 {
        ArgKind::Device { ptr, .. } => (ptr, None),
        ArgKind::Host { ptr, bytes, .. } => {
            let buf = alloc(bytes)?;
            let dst = buf.device_ptr(stream).0;
            // SAFETY: `ptr` is a live borrow of `bytes` bytes (an `ErasedArg` is made only
            // from one); `dst` has room for them; the copy is waited for below.
            let src = unsafe { std::slice::from_raw_parts(ptr, bytes) };
            // SAFETY: as above.
            unsafe { result::memcpy_htod_async(dst, src, stream.cu_stream()) }
                .map_err(|e| Error::driver("copying an argument to the GPU", e))?;
            (dst, Some(buf))
        }
        ArgKind::Scalar { .. } => return Err(Error::internal("a scalar reached the reduction launch")),
    };
    let fault = if spec.error_flag { Some(new_fault_word(device, stream)?) } else { None };
    let fault_ptr = fault.as_ref().map(|f| f.device_ptr(stream).0);
    let launch_fold = |n: usize, partials: CUdeviceptr, input: CUdeviceptr, grid: u32| -> Result<()> {
        let mut words = ReduceWords::new(n, partials, input, fault_ptr);
        // SAFETY: the reduction entry's parameters (`kernel_abi::ReduceParams`), launched
        // with its required block (`Entry::block` is `REDUCE_BLOCK`) and at most
        // `ceil(n / REDUCE_BLOCK)` blocks; the buffers outlive the wait below.
        unsafe { launch(entry, grid, stream, &mut words.params()) }
    };
    // The value and the fault word come back through a small page-locked buffer that the
    // last launch writes directly (a copy queued after it costs several microseconds,
    // more for pageable memory). From the first launch queued until the wait succeeds,
    // the GPU may still write the buffer: on any error before that it is leaked, never
    // freed or reused.
    let back = std::mem::ManuallyDrop::new(ResultBuffer::take(device)?);
    let back_on_device = back.device_ptr()?;
    // Every block gets at least one element, so no identity is needed on the device.
    let grid = n.div_ceil(REDUCE_BLOCK as usize).min(entry.max_grid as usize * super::knobs::reduce_waves()).max(1);
    let _partials = if grid > 1 {
        let partials = alloc(grid * size)?;
        let partials_ptr = partials.device_ptr(stream).0;
        launch_fold(n, partials_ptr, input, grid as u32)?;
        launch_fold(grid, back_on_device, partials_ptr, 1)?;
        Some(partials)
    } else {
        launch_fold(n, back_on_device, input, 1)?;
        None
    };
    let size_word = std::mem::size_of::<u64>();
    if let Some(p) = fault_ptr {
        // SAFETY: the fault word (8 bytes) into the buffer's second 8 bytes of 16 (the
        // value, at most 8 bytes, is in the first), read after the wait.
        let word_bytes = unsafe { std::slice::from_raw_parts_mut(back.ptr().add(size_word), size_word) };
        // SAFETY: as above.
        unsafe { result::memcpy_dtoh_async(word_bytes, p, stream.cu_stream()) }
            .map_err(|e| Error::driver("reading the kernel's error flag", e))?;
    }
    stream.synchronize().map_err(|e| Error::driver("running the reduction", e))?;
    let back = std::mem::ManuallyDrop::into_inner(back);
    let mut value = MaybeUninit::<T>::uninit();
    // SAFETY: the completed last launch wrote `size` bytes of a `T` at the buffer's start
    // (its writes to mapped memory are seen once the stream is waited for).
    unsafe { std::ptr::copy_nonoverlapping(back.ptr(), value.as_mut_ptr().cast::<u8>(), size) };
    let word = match fault_ptr {
        // SAFETY: the completed copy wrote the fault word's 8 bytes.
        Some(_) => unsafe { back.ptr().add(size_word).cast::<u64>().read_unaligned() },
        None => FaultWord::NONE.0,
    };
    back.give_back(device);
    fault_result(spec.name, FaultWord(word))?;
    trace::call_if_enabled(&Launch { spec, plan: &plan, args, outs: &[] }, Completion::Waited);
    // SAFETY: the completed last launch wrote it (no fault: every block folded at least
    // one element and wrote its result).
    Ok(unsafe { value.assume_init() })
}
