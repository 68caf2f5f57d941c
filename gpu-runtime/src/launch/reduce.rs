//! `name::reduce`: folding an array with a function `(T, T) -> T` in one launch of its
//! reduction entry over the data and one single-block launch over the blocks' results.
//! The order of the folds is not the sequential one: the function must be associative
//! (as for Numba's `reduce`).

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, DevicePtr, result};
use kernel_abi::{FaultWord, REDUCE_BLOCK, REDUCE_MAX_BYTES};

use super::enqueue::Completion;
use super::enqueue::{fault_result, launch};
use super::faults::Cleared;
use super::params::ReduceWords;
use super::{Kernel, Launch, plan, trace};
use crate::data::{ArgKind, DeviceSliceMut, ErasedArg, alloc_error};
use crate::driver::FaultKind;
use crate::driver::{Device, ReadBack};
use crate::error::{Error, Result};
use crate::scalar::{GpuType, value_bytes};

/// Folds `arg` with `kernel`'s function on `device` (or the array's, or the default),
/// after `init` where there is one (Numba's `init=`: the fold is `init ⊕ x0 ⊕ x1 ⊕ …`).
/// The result comes back to the host, or with `res` (Numba's `res=`) stays on the GPU in
/// `res[0]` and `Ok(None)` is returned.
///
/// # Safety
/// `T` must be the kernel's element type, and `arg` an argument of that type.
pub(crate) unsafe fn reduce<T: GpuType>(
    kernel: &Kernel,
    device: Option<&Device>,
    arg: ErasedArg<'_>,
    identity: Option<T>,
    init: Option<T>,
    res: Option<DeviceSliceMut<'_, T>>,
) -> Result<Option<T>> {
    let spec = kernel.spec();
    let n = match arg.0 {
        ArgKind::Scalar { .. } | ArgKind::Value { .. } => {
            return Err(Error::internal(format!("`{}`: a scalar reached the reduction launch", spec.name)));
        }
        ArgKind::Host { len, .. } | ArgKind::Device { len, .. } => len,
    };
    if let Some(r) = res.as_ref().filter(|r| r.len() != 1) {
        return Err(Error::LengthMismatch { function: spec.name, lengths: vec![("res", r.len()), ("result", 1)] });
    }
    let args = std::slice::from_ref(&arg);
    // `res` chooses the device as a device named by the call does: the array must be there.
    let device = device.or(res.as_ref().map(|r| r.device()));
    // `plan` names the parameters; a reduction has one argument, the array.
    let Some(plan) = plan(spec, device, args, &[])? else {
        let value = init.or(identity).ok_or(Error::EmptyReduce { function: spec.name })?;
        return match res {
            Some(mut r) => r.copy_from(&[value]).map(|()| None),
            None => Ok(Some(value)),
        };
    };
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
    if let Some(r) = &res {
        r.uses().order_before(stream)?;
    }
    let size = std::mem::size_of::<T>();
    if size > REDUCE_MAX_BYTES as usize {
        // The compiler gives no reduction entry for such a type; checked again because the
        // read-back buffer below holds no more.
        return Err(Error::internal(format!("`{}` folds {size}-byte values, more than a reduction takes", spec.name)));
    }
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
        ArgKind::Scalar { .. } | ArgKind::Value { .. } => {
            return Err(Error::internal("a scalar reached the reduction launch"));
        }
    };
    let fault = if spec.error_flag { Some(Cleared::take(device, FaultKind::Word, stream)?) } else { None };
    let fault_ptr = fault.as_ref().map(Cleared::ptr);
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
    let mut back = std::mem::ManuallyDrop::new(ReadBack::take(device)?);
    let back_on_device = back.device_ptr()?;
    // The last launch writes the value there: the read-back buffer, or `res`.
    let dest = res.as_ref().map_or(back_on_device, DeviceSliceMut::ptr);
    // Every block gets at least one element, so no identity is needed on the device.
    let grid = n.div_ceil(REDUCE_BLOCK as usize).min(entry.max_grid as usize * super::knobs::reduce_waves()).max(1);
    let _partials = match init {
        None if grid == 1 => {
            launch_fold(n, dest, input, 1)?;
            None
        }
        None => {
            let partials = alloc(grid * size)?;
            let partials_ptr = partials.device_ptr(stream).0;
            launch_fold(n, partials_ptr, input, grid as u32)?;
            launch_fold(grid, dest, partials_ptr, 1)?;
            Some(partials)
        }
        Some(init) => {
            // `init` first, then the blocks' results: the last launch folds them in order.
            let partials = alloc((grid + 1) * size)?;
            let partials_ptr = partials.device_ptr(stream).0;
            // SAFETY: `size` bytes of `init` into the first slot; the source is pageable
            // host memory, which the driver copies before this call returns.
            unsafe { result::memcpy_htod_async(partials_ptr, value_bytes(&init), stream.cu_stream()) }
                .map_err(|e| Error::driver("copying the reduction's initial value to the GPU", e))?;
            launch_fold(n, partials_ptr + size as u64, input, grid as u32)?;
            launch_fold(grid + 1, dest, partials_ptr, 1)?;
            Some(partials)
        }
    };
    // The value is at the buffer's start, the fault word after it (never over it: a
    // `Complex<f64>` or a struct is more than 8 bytes).
    let word_at = size.next_multiple_of(8);
    if let Some(p) = fault_ptr {
        // SAFETY: the fault word (8 bytes) into the buffer, read after the wait.
        unsafe { result::memcpy_dtoh_async(back.bytes(word_at, 8), p, stream.cu_stream()) }
            .map_err(|e| Error::driver("reading the kernel's error flag", e))?;
    }
    stream.synchronize().map_err(|e| Error::driver("running the reduction", e))?;
    let back = std::mem::ManuallyDrop::into_inner(back);
    let word = match fault_ptr {
        // SAFETY: the completed copy wrote the fault word's 8 bytes.
        Some(_) => unsafe { back.read::<u64>(word_at) },
        None => FaultWord::NONE.0,
    };
    // Read only without a fault: then every block folded at least one element and the
    // last launch wrote the value (its writes to mapped memory are seen once the stream
    // is waited for).
    let value = fault_result(spec.name, FaultWord(word)).map(|()| {
        // SAFETY: as above: a `T` (`GpuType`: plain data) at the buffer's start, unless
        // the value went to `res`.
        res.is_none().then(|| unsafe { back.read::<T>(0) })
    });
    back.give_back();
    if let Some(f) = fault {
        f.give_back(word == FaultWord::NONE.0, stream)?;
    }
    let value = value?;
    trace::call_if_enabled(&Launch { spec, plan: &plan, args, outs: &[] }, Completion::Waited);
    Ok(value)
}
