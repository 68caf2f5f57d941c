//! Large host arrays in chunks, with the copies to and from the GPU overlapping the
//! kernel and each other.
//!
//! A copy from pageable host memory goes through the driver's own small staging buffers
//! at a fraction of the link's speed, and a single copy-in / kernel / copy-out sequence
//! leaves the link idle while the kernel runs. Here the call is cut into chunks; each of
//! [`SLOTS`] slots has page-locked buffers and its own stream, and while one slot's chunk
//! crosses the link another's runs and a third's results come back. The host side of each
//! copy (user memory to page-locked memory and back) is split over threads.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, result};
use rayon::prelude::*;

use crate::arg::ErasedArg;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernel::{ErasedOut, Kernel, Plan, fault_message, launch};
use crate::memory::alloc_error;
use crate::stream::PinnedBuffer;

/// Chunks in flight at once.
const SLOTS: usize = 3;

/// The page-locked buffer of one host array in one slot.
const CHUNK_BYTES: usize = 16 << 20;

/// Below this much host data a call copies in one piece.
const PIPELINE_MIN_BYTES: usize = 32 << 20;

/// Host memory copies split over threads in pieces of this size.
const COPY_PIECE: usize = 1 << 20;

/// A device's streams and page-locked buffers for chunked calls, made on first use and
/// kept: one chunked call at a time per device uses them.
pub(crate) struct Staging {
    streams: Vec<Arc<CudaStream>>,
    /// Free buffers of `CHUNK_BYTES`.
    buffers: Vec<PinnedBuffer>,
    /// One fault word per slot, read back after each chunk.
    faults: Vec<PinnedBuffer>,
}

impl Staging {
    pub(crate) fn new(device: &Device) -> Result<Staging> {
        let ctx = &device.inner().ctx;
        let streams = (0..SLOTS)
            .map(|_| ctx.new_stream().map_err(|e| Error::driver("creating a stream", e)))
            .collect::<Result<_>>()?;
        let faults = (0..SLOTS).map(|_| PinnedBuffer::new(device, 8)).collect::<Result<_>>()?;
        Ok(Staging { streams, buffers: Vec::new(), faults })
    }

    /// One page-locked chunk buffer per slot, from the free list or new.
    fn take(&mut self, device: &Device) -> Result<Vec<PinnedBuffer>> {
        (0..SLOTS).map(|_| self.buffers.pop().map_or_else(|| PinnedBuffer::new(device, CHUNK_BYTES), Ok)).collect()
    }
}

/// Whether a call moves enough host data to be worth cutting into chunks.
pub(crate) fn worth_it(n: usize, args: &[ErasedArg<'_>], outs: &[ErasedOut]) -> bool {
    let host_in: usize = args.iter().map(|a| if let ErasedArg::Host { bytes, .. } = a { *bytes } else { 0 }).sum();
    let host_out: usize = outs.iter().map(|o| if let ErasedOut::Host { size, .. } = o { n * size } else { 0 }).sum();
    host_in + host_out >= PIPELINE_MIN_BYTES
}

/// `bytes` bytes from `src` to `dst`, split over threads.
///
/// # Safety
/// Both ranges must be valid for `bytes` bytes and must not overlap.
unsafe fn parallel_copy(src: *const u8, dst: *mut u8, bytes: usize) {
    // SAFETY: the caller's promise.
    let (src, dst) = unsafe { (std::slice::from_raw_parts(src, bytes), std::slice::from_raw_parts_mut(dst, bytes)) };
    dst.par_chunks_mut(COPY_PIECE).zip(src.par_chunks(COPY_PIECE)).for_each(|(d, s)| d.copy_from_slice(s));
}

/// One host array of the call: the user's memory and, per slot, a page-locked buffer and
/// a device buffer.
struct HostSide {
    ptr: *mut u8,
    size: usize,
    pinned: Vec<PinnedBuffer>,
    device: Vec<CudaSlice<u8>>,
}

/// A call in flight: what it reads and writes, per slot.
struct Run<'a> {
    n: usize,
    chunk: usize,
    args: &'a [ErasedArg<'a>],
    outs: &'a [ErasedOut],
    inputs: Vec<Option<HostSide>>,
    outputs: Vec<Option<HostSide>>,
    faults_dev: Vec<Option<CudaSlice<u64>>>,
    /// The chunk (start, length) each slot holds until its results are copied out.
    pending: [Option<(usize, usize)>; SLOTS],
    /// The first fault, as `global index << 8 | code`.
    fault: Option<u64>,
}

impl Kernel {
    /// [`Kernel::execute`] in chunks of at most `CHUNK_BYTES` per host array, pipelined
    /// over [`SLOTS`] streams; device arrays are used in place.
    ///
    /// # Safety
    /// As for [`Kernel::execute`].
    pub(crate) unsafe fn run_pipelined(&self, plan: &Plan, args: &[ErasedArg<'_>], outs: &[ErasedOut]) -> Result<()> {
        let (n, device) = (plan.n, &plan.device);
        device.bind()?;
        let mut guard = device.inner().staging.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            *guard = Some(Staging::new(device)?);
        }
        let staging = guard.as_mut().expect("set above");

        // The widest element among the host arrays sets the chunk length.
        let widest = args
            .iter()
            .map(|a| if let ErasedArg::Host { bytes, len, .. } = a { bytes / (*len).max(1) } else { 1 })
            .chain(outs.iter().map(|o| if let ErasedOut::Host { size, .. } = o { *size } else { 1 }))
            .max()
            .unwrap_or(1)
            .max(1);
        let chunk = (CHUNK_BYTES / widest).max(1);
        let streams = staging.streams.clone();
        let side = |staging: &mut Staging, ptr: *mut u8, size: usize| -> Result<HostSide> {
            let device_buffers = streams
                .iter()
                // SAFETY: written by a copy or by the kernel before it is read.
                .map(|s| unsafe { s.alloc::<u8>(CHUNK_BYTES) }.map_err(|e| alloc_error(device, CHUNK_BYTES, e)))
                .collect::<Result<_>>()?;
            Ok(HostSide { ptr, size, pinned: staging.take(device)?, device: device_buffers })
        };
        let mut run = Run {
            n,
            chunk,
            args,
            outs,
            inputs: Vec::new(),
            outputs: Vec::new(),
            faults_dev: Vec::new(),
            pending: [None; SLOTS],
            fault: None,
        };
        let mut prepared: Result<()> = Ok(());
        for a in args {
            run.inputs.push(match *a {
                ErasedArg::Host { ptr, bytes, len, .. } => match side(staging, ptr as *mut u8, bytes / len.max(1)) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        prepared = Err(e);
                        None
                    }
                },
                _ => None,
            });
        }
        for o in outs {
            run.outputs.push(match *o {
                ErasedOut::Host { ptr, size } => match side(staging, ptr, size) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        prepared = Err(e);
                        None
                    }
                },
                ErasedOut::Device { .. } => None,
            });
        }
        if self.spec().error_flag {
            for s in &streams {
                // SAFETY: set before each launch.
                match unsafe { s.alloc::<u64>(1) } {
                    Ok(f) => run.faults_dev.push(Some(f)),
                    Err(e) => prepared = Err(alloc_error(device, 8, e)),
                }
            }
        }
        let outcome = prepared.and_then(|()| unsafe { self.pipeline(device, staging, &mut run) });
        // Whatever happened, nothing may still read or write the buffers when they go back.
        for s in &streams {
            let _ = s.synchronize();
        }
        for side in run.inputs.into_iter().chain(run.outputs).flatten() {
            staging.buffers.extend(side.pinned);
        }
        outcome?;
        match run.fault {
            Some(word) => Err(Error::KernelFault {
                function: self.spec().name,
                index: word >> 8,
                message: fault_message((word & 0xff) as u32),
            }),
            None => Ok(()),
        }
    }

    /// The chunks, in order, each in the slot whose previous chunk is copied out first.
    unsafe fn pipeline(&self, device: &Device, staging: &Staging, run: &mut Run<'_>) -> Result<()> {
        let loaded = self.loaded(device)?;
        let chunks = run.n.div_ceil(run.chunk);
        for c in 0..chunks {
            let s = c % SLOTS;
            // SAFETY: the slot's buffers belong to this call.
            unsafe { finish_slot(staging, run, s)? };
            let stream = &staging.streams[s];
            let start = c * run.chunk;
            let len = run.chunk.min(run.n - start);
            let mut words: Vec<u64> = vec![len as u64];
            for (o, side) in run.outs.iter().zip(&run.outputs) {
                match (o, side) {
                    (ErasedOut::Device { ptr, size }, _) => words.push(ptr + (start * size) as u64),
                    (ErasedOut::Host { .. }, Some(side)) => words.push(side.device[s].device_ptr(stream).0),
                    (ErasedOut::Host { .. }, None) => unreachable!("every host output has a side"),
                }
            }
            for (a, side) in run.args.iter().zip(&run.inputs) {
                match (a, side) {
                    (ErasedArg::Scalar { bits }, _) => words.extend([0, *bits]),
                    (ErasedArg::Device { ptr, size, .. }, _) => words.extend([ptr + (start * size) as u64, 0]),
                    (ErasedArg::Host { ptr, .. }, Some(side)) => {
                        let bytes = len * side.size;
                        let pinned = side.pinned[s].ptr();
                        // SAFETY: the user's array has `n` elements; the page-locked buffer
                        // holds a chunk and is free (its slot's last copy has finished).
                        unsafe { parallel_copy(ptr.add(start * side.size), pinned, bytes) };
                        let dst = side.device[s].device_ptr(stream).0;
                        // SAFETY: page-locked memory of `bytes` bytes, read by the copy
                        // before the slot is reused (the slot waits for its stream).
                        unsafe {
                            result::memcpy_htod_async(
                                dst,
                                std::slice::from_raw_parts(pinned, bytes),
                                stream.cu_stream(),
                            )
                        }
                        .map_err(|e| Error::driver("copying an argument to the GPU", e))?;
                        words.extend([dst, 0]);
                    }
                    (ErasedArg::Host { .. }, None) => unreachable!("every host input has a side"),
                }
            }
            if let Some(Some(f)) = run.faults_dev.get(s) {
                let ptr = f.device_ptr(stream).0;
                // SAFETY: the slot's fault word, set to "no fault" before the launch.
                unsafe { result::memset_d8_async(ptr, 0xff, 8, stream.cu_stream()) }
                    .map_err(|e| Error::driver("initialising the kernel's error flag", e))?;
                words.push(ptr);
            }
            // SAFETY: the words follow the entry's layout; the buffers live until the slot
            // is finished.
            unsafe { launch(&loaded.func, loaded.max_grid, stream, len, &mut words)? };
            for side in run.outputs.iter().flatten() {
                let bytes = len * side.size;
                // SAFETY: the slot's page-locked buffer, read after the stream finishes.
                let dst = unsafe { std::slice::from_raw_parts_mut(side.pinned[s].ptr(), bytes) };
                unsafe { result::memcpy_dtoh_async(dst, side.device[s].device_ptr(stream).0, stream.cu_stream()) }
                    .map_err(|e| Error::driver("copying the results from the GPU", e))?;
            }
            if let Some(Some(f)) = run.faults_dev.get(s) {
                // SAFETY: the slot's page-locked fault word.
                let dst = unsafe { std::slice::from_raw_parts_mut(staging.faults[s].ptr(), 8) };
                unsafe { result::memcpy_dtoh_async(dst, f.device_ptr(stream).0, stream.cu_stream()) }
                    .map_err(|e| Error::driver("reading the kernel's error flag", e))?;
            }
            run.pending[s] = Some((start, len));
        }
        for c in chunks..chunks + SLOTS {
            // SAFETY: as above.
            unsafe { finish_slot(staging, run, c % SLOTS)? };
        }
        Ok(())
    }
}

/// Waits for slot `s`'s chunk, copies its results to the user's outputs and notes a fault.
///
/// # Safety
/// The slot's buffers must belong to `run`.
unsafe fn finish_slot(staging: &Staging, run: &mut Run<'_>, s: usize) -> Result<()> {
    let Some((start, len)) = run.pending[s].take() else { return Ok(()) };
    staging.streams[s].synchronize().map_err(|e| Error::driver("running the kernel", e))?;
    for out in run.outputs.iter().flatten() {
        // SAFETY: the finished copy wrote `len` elements to the page-locked buffer; the
        // user's output has room for `n`.
        unsafe { parallel_copy(out.pinned[s].ptr(), out.ptr.add(start * out.size), len * out.size) };
    }
    if !run.faults_dev.is_empty() {
        // SAFETY: the finished copy wrote the slot's fault word.
        let word = unsafe { staging.faults[s].ptr().cast::<u64>().read_unaligned() };
        if word != u64::MAX {
            let global = ((start as u64 + (word >> 8)) << 8) | (word & 0xff);
            run.fault = Some(run.fault.map_or(global, |f| f.min(global)));
        }
    }
    Ok(())
}
