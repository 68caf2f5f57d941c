//! One launch of an elementwise entry, queued on a stream: host arguments copied in, the
//! kernel launched, host results copied out, and the launch noted in every device array
//! it uses ([`Uses`]), so that later uses and frees of those arrays wait for it whatever
//! becomes of the handle ([`Queued`]) that is returned.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, result};
use kernel_abi::{EntryParams, FaultWord, THREAD_FAULT_WORDS, ThreadFault};

use super::KernelSpec;
use super::faults::Cleared;
use super::kernel::Entry;
use super::params::{EntryWords, StridedLayout};
use super::plan::Plan;
use crate::data::{ArgKind, ErasedArg, OutSlot, Results, SlotKind, alloc_error};
use crate::driver::FaultKind;
use crate::driver::graph::{Recording, Shape};
use crate::driver::{Device, ReadBack, Uses, note_uses, report_drop_error};
use crate::error::{Error, Result};

/// Where a launch writes one of its outputs.
#[derive(Copy, Clone, Debug)]
pub(crate) enum ErasedOut<'a> {
    /// Host memory with room for `n` elements of `size` bytes: the results are copied there.
    /// `keep`: the caller's memory (`into`), which a fault must leave as it was; else new
    /// memory (a result vector, a page-locked buffer), whose contents are not yet set.
    Host { ptr: *mut u8, size: usize, keep: bool },
    /// Device memory with room for `n` elements of `size` bytes: the kernel writes there.
    Device { ptr: CUdeviceptr, size: usize, uses: &'a Uses },
}

impl<'a> ErasedOut<'a> {
    /// Where the kernel writes each of `R`'s outputs.
    pub(crate) fn of_slots<R: Results>(slots: &[OutSlot<'a>]) -> Vec<ErasedOut<'a>> {
        slots
            .iter()
            .zip(R::sizes())
            .map(|(slot, size)| match slot.0 {
                SlotKind::Host { ptr, .. } => ErasedOut::Host { ptr, size, keep: true },
                SlotKind::Device { ptr, uses, .. } => ErasedOut::Device { ptr, size, uses },
            })
            .collect()
    }

    /// New device arrays (`R::device_uninit`) as the outputs.
    pub(crate) fn of_device<R: Results>(ptrs: Vec<CUdeviceptr>, uses: Vec<&'a Uses>) -> Vec<ErasedOut<'a>> {
        ptrs.into_iter()
            .zip(R::sizes())
            .zip(uses)
            .map(|((ptr, size), uses)| ErasedOut::Device { ptr, size, uses })
            .collect()
    }

    /// Host memory (new vectors, or page-locked buffers) as the outputs.
    pub(crate) fn of_host<R: Results>(ptrs: Vec<*mut u8>) -> Vec<ErasedOut<'static>> {
        ptrs.into_iter().zip(R::sizes()).map(|(ptr, size)| ErasedOut::Host { ptr, size, keep: false }).collect()
    }
}

/// One launch of a function's elementwise entry: what it computes, where, over what.
pub(crate) struct Launch<'a> {
    pub(crate) spec: &'a KernelSpec,
    pub(crate) plan: &'a Plan,
    /// The kernel's inputs, in order; they match its parameter types (the caller's promise).
    pub(crate) args: &'a [ErasedArg<'a>],
    /// The kernel's outputs, in order, each with room for `plan.n` elements.
    pub(crate) outs: &'a [ErasedOut<'a>],
}

impl<'a> Launch<'a> {
    /// The use records of the device arrays the launch reads or writes.
    pub(crate) fn device_uses(&self) -> impl Iterator<Item = &'a Uses> + 'a {
        let (args, outs) = (self.args, self.outs);
        args.iter().filter_map(ErasedArg::uses).chain(outs.iter().filter_map(|o| match o {
            ErasedOut::Device { uses, .. } => Some(*uses),
            ErasedOut::Host { .. } => None,
        }))
    }

    /// Whether any result goes to host memory.
    pub(crate) fn has_host_outputs(&self) -> bool {
        self.outs.iter().any(|o| matches!(o, ErasedOut::Host { .. }))
    }

    /// Bytes of host arguments copied to the device.
    pub(crate) fn bytes_to_device(&self) -> usize {
        self.args.iter().map(|a| if let ArgKind::Host { bytes, .. } = a.0 { bytes } else { 0 }).sum()
    }

    /// Bytes of results copied to host memory.
    pub(crate) fn bytes_from_device(&self) -> usize {
        self.outs.iter().map(|o| if let ErasedOut::Host { size, .. } = o { size * self.plan.n } else { 0 }).sum()
    }

    /// Queues the launch of `entry` (the plain entry, or the strided one with `layout`)
    /// on `stream` and returns without waiting for the GPU: host arguments are copied to
    /// temporaries, the kernel is launched, results bound for host memory are copied
    /// there, and the launch is noted in every device array it uses.
    ///
    /// # Safety
    /// `entry` must be this function's entry of the kind `layout` says; `args` and `outs`
    /// must match its inputs and outputs in number, order and element type, each output
    /// with room for `plan.n` elements. Host outputs must stay valid and unread until the
    /// returned [`Queued`] is finished (device arrays are kept safe by their noted uses).
    pub(crate) unsafe fn enqueue(
        &self,
        entry: &Entry,
        stream: &Arc<CudaStream>,
        layout: Option<&StridedLayout>,
    ) -> Result<Queued> {
        let Plan { n, device } = self.plan;
        let n = *n;
        device.bind()?;
        // Device data that work on other streams still uses is ready first.
        for uses in self.device_uses() {
            uses.order_before(stream)?;
        }
        // From here on, an early return waits for whatever was queued (see `Queued::drop`).
        let mut queued = Queued::new(stream.clone(), self.spec.name);
        let slots = EntryParams {
            inputs: self.args.len(),
            outputs: self.outs.len(),
            strided: layout.is_some(),
            fault_word: self.spec.error_flag,
        };
        let mut words = EntryWords::new(slots, n);
        let origin = |i: usize| layout.map_or(0, |l| l.origins[i]);
        let mut host_outs: Vec<(CUdeviceptr, *mut u8, usize)> = Vec::new();
        for (k, out) in self.outs.iter().enumerate() {
            match *out {
                ErasedOut::Device { ptr, .. } => words.output(k, ptr),
                ErasedOut::Host { ptr, size, .. } => {
                    let staged = queued.temporary(device, n * size)?;
                    words.output(k, staged);
                    host_outs.push((staged, ptr, n * size));
                }
            }
        }
        for (i, arg) in self.args.iter().enumerate() {
            if words.in_place(i, &arg.0, origin(i)) {
                continue;
            }
            let ArgKind::Host { ptr, bytes, size, .. } = arg.0 else {
                return Err(Error::internal("an argument read in place was not"));
            };
            words.value_size(i, size);
            let dst = queued.temporary(device, bytes)?;
            // SAFETY: `ptr` is a live borrow of `bytes` bytes (an `ErasedArg` is made only
            // from one) and `dst` has room for them. A copy from pageable memory is staged
            // by the driver before the call returns, so the borrow may end before the copy
            // runs.
            let src = unsafe { std::slice::from_raw_parts(ptr, bytes) };
            // SAFETY: as above; the stream belongs to the bound context.
            unsafe { result::memcpy_htod_async(dst, src, stream.cu_stream()) }
                .map_err(|e| Error::driver("copying an argument to the GPU", e))?;
            words.array(i, dst + origin(i));
        }
        if let Some(l) = layout {
            words.layout(l);
        }
        if self.spec.error_flag {
            words.fault(queued.fault_word(device)?);
        }
        // SAFETY: the words follow the entry's parameter layout (`kernel_abi`, the one the
        // compiler lowered it with) and, by the caller's promise, its types; the memory
        // they point to stays valid until the work is done: temporaries live in `queued`,
        // device arrays wait for the use noted below, host outputs by the caller's promise.
        unsafe { launch(entry, elementwise_grid(entry, n), stream, &mut words.params())? };
        if self.spec.error_flag {
            // Copied once the fault word says the call succeeded (`Queued::finish`).
            queued.after.0.extend(host_outs);
            queued.note(device, self.device_uses())?;
            return Ok(queued);
        }
        for (src, host, bytes) in host_outs {
            // SAFETY: `host` has room for `n` results of its type (the caller's promise),
            // `src` holds them once the kernel is done (stream order).
            let dst = unsafe { std::slice::from_raw_parts_mut(host, bytes) };
            // SAFETY: as above.
            unsafe { result::memcpy_dtoh_async(dst, src, stream.cu_stream()) }
                .map_err(|e| Error::driver("copying the results from the GPU", e))?;
        }
        queued.note(device, self.device_uses())?;
        Ok(queued)
    }
}

impl Launch<'_> {
    /// Records the launch of `entry` (the plain entry) in `recording` instead of queuing
    /// it: the arguments and outputs must all be in device memory, or scalars, since a
    /// replay copies nothing.
    ///
    /// # Safety
    /// As for [`Launch::enqueue`] without a layout; the device arrays are checked at each
    /// replay through their uses, which the recording keeps.
    pub(crate) unsafe fn record(&self, entry: &Entry, recording: &mut Recording) -> Result<()> {
        let name = self.spec.name;
        let host = self.outs.iter().any(|o| matches!(o, ErasedOut::Host { .. }))
            || self.args.iter().any(|a| matches!(a.0, ArgKind::Host { .. }));
        if host {
            return Err(Error::Graph {
                reason: format!(
                    "`{name}`: a call in a graph reads and writes device arrays (and scalars) only: host memory is copied by each call, which a replay does not do"
                ),
            });
        }
        if recording.device() != &self.plan.device {
            return Err(Error::DeviceMismatch {
                function: name,
                devices: vec![("graph", recording.device().id()), ("arguments", self.plan.device.id())],
            });
        }
        let n = self.plan.n;
        let slots = EntryParams {
            inputs: self.args.len(),
            outputs: self.outs.len(),
            strided: false,
            fault_word: self.spec.error_flag,
        };
        let mut words = EntryWords::new(slots, n);
        for (k, out) in self.outs.iter().enumerate() {
            if let ErasedOut::Device { ptr, .. } = *out {
                words.output(k, ptr);
            }
        }
        for (i, arg) in self.args.iter().enumerate() {
            words.in_place(i, &arg.0, 0);
        }
        let fault = match self.spec.error_flag {
            true => {
                let (ptr, offset) = recording.fault(FaultKind::Word)?;
                words.fault(ptr);
                Some((FaultKind::Word, offset))
            }
            false => None,
        };
        let shape = Shape {
            func: entry.func.cu_function(),
            grid: (elementwise_grid(entry, n), 1, 1),
            block: (entry.block, 1, 1),
            shared: 0,
        };
        // SAFETY: the words follow the entry's layout and, by the caller's promise, its
        // types; they point to device arrays, all in `device_uses`, and the fault word.
        unsafe { recording.add(name, shape, &mut words.params(), fault, self.device_uses()) }
    }
}

/// The grid of an elementwise launch over `n` elements: enough blocks for `n`, at most a
/// few waves of what fits on the device (the grid-stride loop covers the rest).
pub(crate) fn elementwise_grid(entry: &Entry, n: usize) -> u32 {
    n.div_ceil(entry.block as usize).min(entry.max_grid as usize * super::knobs::waves()).max(1) as u32
}

/// Launches `entry` with `grid` blocks of its block size on `stream`.
///
/// # Safety
/// `params` must point to one word per parameter of the entry, in its layout, and the
/// memory the words point to must stay valid until the work is finished.
pub(crate) unsafe fn launch(
    entry: &Entry,
    grid: u32,
    stream: &Arc<CudaStream>,
    params: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: the caller's promise; the function and stream belong to the bound context.
    unsafe {
        result::launch_kernel(
            entry.func.cu_function(),
            (grid, 1, 1),
            (entry.block, 1, 1),
            0,
            stream.cu_stream(),
            params,
        )
    }
    .map_err(|e| Error::driver("launching the kernel", e))
}

/// The error a fault word read back after `function`'s launch reports, if any.
pub(crate) fn fault_result(function: &'static str, word: FaultWord) -> Result<()> {
    match word.decode() {
        None => Ok(()),
        Some((index, code)) => {
            Err(Error::KernelFault { function, index, message: FaultWord::message(code).to_string() })
        }
    }
}

/// The error an explicit kernel's fault record read back after its launch reports, if
/// any.
pub(crate) fn thread_fault_result(kernel: &'static str, record: &[u64; THREAD_FAULT_WORDS]) -> Result<()> {
    match ThreadFault::decode(record) {
        None => Ok(()),
        Some(f) => Err(Error::ThreadFault { kernel, block: f.block, thread: f.thread, message: f.message() }),
    }
}

/// Whether a call waited for the GPU before returning.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum Completion {
    Waited,
    Queued,
}

/// Work queued on a stream, with the temporaries it uses. Dropping it without
/// [`Queued::finish`] or [`Queued::detach`] (an error on the way) waits for the work, so
/// that nothing it reads or writes is freed under it.
#[must_use = "queued work must be finished to see its errors"]
pub(crate) struct Queued {
    stream: Arc<CudaStream>,
    function: &'static str,
    /// Device temporaries: freed in the stream's order, after the work.
    temporaries: Vec<CudaSlice<u8>>,
    fault: Option<Cleared>,
    /// An explicit kernel's fault record (`kernel_abi::ThreadFault`).
    record: Option<Cleared>,
    /// The device, for work with a fault word or record to read back.
    device: Option<Device>,
    /// Results bound for host memory of work that can fault: copied there by `finish`
    /// only once the work is known not to have faulted, so that a fault leaves the host
    /// memory as it was.
    after: HostCopies,
    /// Finished (waited for) or detached: nothing is left to wait for on drop.
    settled: bool,
}

/// `(device source, host destination, bytes)` copies left for [`Queued::finish`].
#[derive(Default)]
struct HostCopies(Vec<(CUdeviceptr, *mut u8, usize)>);

// SAFETY: each destination is host memory the queued work's caller lent until the work is
// finished (`Launch::enqueue`'s contract); nothing in it is tied to a thread.
unsafe impl Send for HostCopies {}

impl Queued {
    pub(crate) fn new(stream: Arc<CudaStream>, function: &'static str) -> Queued {
        Queued {
            stream,
            function,
            temporaries: Vec::new(),
            fault: None,
            record: None,
            device: None,
            after: HostCopies::default(),
            settled: false,
        }
    }

    /// A device temporary of `bytes` bytes, written (by a copy or the kernel) before it
    /// is read, alive until the work is done.
    pub(crate) fn temporary(&mut self, device: &Device, bytes: usize) -> Result<CUdeviceptr> {
        // SAFETY: bytes are plain data, written by a copy or by the kernel before they are
        // read.
        let buf = unsafe { self.stream.alloc::<u8>(bytes) }.map_err(|e| alloc_error(device, bytes, e))?;
        let ptr = buf.device_ptr(&self.stream).0;
        self.temporaries.push(buf);
        Ok(ptr)
    }

    /// The launch's fault word, cleared.
    fn fault_word(&mut self, device: &Device) -> Result<CUdeviceptr> {
        let word = Cleared::take(device, FaultKind::Word, &self.stream)?;
        let ptr = word.ptr();
        self.fault = Some(word);
        self.device = Some(device.clone());
        Ok(ptr)
    }

    /// An explicit kernel's fault record for the launch, zeroed.
    pub(crate) fn fault_record(&mut self, device: &Device) -> Result<CUdeviceptr> {
        let record = Cleared::take(device, FaultKind::Record, &self.stream)?;
        let ptr = record.ptr();
        self.record = Some(record);
        self.device = Some(device.clone());
        Ok(ptr)
    }

    /// Notes the work queued so far in each of `uses` (an event after it), so that later
    /// uses and frees of those arrays from other streams wait for it.
    pub(crate) fn note<'u>(&self, device: &Device, uses: impl Iterator<Item = &'u Uses>) -> Result<()> {
        note_uses(device, &self.stream, uses)
    }

    /// Waits for the work and reports a fault of the kernel, if any.
    pub(crate) fn finish(mut self) -> Result<()> {
        // The handle may be waited for on another thread than the one that queued it.
        self.stream.context().bind_to_thread().map_err(|e| Error::driver("binding the CUDA context", e))?;
        let Some(device) = self.device.clone() else {
            // Nothing to read back.
            self.stream.synchronize().map_err(|e| Error::driver("running the kernel", e))?;
            self.settled = true;
            return Ok(());
        };
        // The fault word and record come back through a page-locked buffer (one DMA each,
        // not a copy staged through the driver). From the first copy until the wait
        // succeeds the buffer may still be written: on an error it is leaked.
        let mut back = std::mem::ManuallyDrop::new(ReadBack::take(&device)?);
        const WORD_AT: usize = 0;
        const RECORD_AT: usize = 8;
        if let Some(f) = &self.fault {
            // SAFETY: the live fault word's 8 bytes into the buffer, read after the wait.
            unsafe { result::memcpy_dtoh_async(back.bytes(WORD_AT, 8), f.ptr(), self.stream.cu_stream()) }
                .map_err(|e| Error::driver("reading the kernel's error flag", e))?;
        }
        if let Some(r) = &self.record {
            // SAFETY: the live record's words into the buffer, read after the wait.
            unsafe {
                result::memcpy_dtoh_async(
                    back.bytes(RECORD_AT, 8 * THREAD_FAULT_WORDS),
                    r.ptr(),
                    self.stream.cu_stream(),
                )
            }
            .map_err(|e| Error::driver("reading the kernel's fault record", e))?;
        }
        self.stream.synchronize().map_err(|e| Error::driver("running the kernel", e))?;
        self.settled = true;
        let back = std::mem::ManuallyDrop::into_inner(back);
        // SAFETY: the completed copies wrote what they read; the parts not copied are not
        // read.
        let word = self.fault.as_ref().map_or(FaultWord::NONE.0, |_| unsafe { back.read::<u64>(WORD_AT) });
        let record = match self.record {
            // SAFETY: as above.
            Some(_) => unsafe { back.read::<[u64; THREAD_FAULT_WORDS]>(RECORD_AT) },
            None => [0; THREAD_FAULT_WORDS],
        };
        back.give_back();
        // Back to their pools: cleared again first if a fault was written.
        if let Some(f) = self.fault.take() {
            f.give_back(word == FaultWord::NONE.0, &self.stream)?;
        }
        if let Some(r) = self.record.take() {
            r.give_back(record == [0; THREAD_FAULT_WORDS], &self.stream)?;
        }
        fault_result(self.function, FaultWord(word))?;
        thread_fault_result(self.function, &record)?;
        let after = std::mem::take(&mut self.after.0);
        if after.is_empty() {
            return Ok(());
        }
        let mut copied = Ok(());
        for (src, host, bytes) in after {
            // SAFETY: `host` is the caller's memory of `bytes` bytes, lent until the work is
            // finished (`Launch::enqueue`); `src`, a temporary of this work, holds the
            // results (the stream was waited for above).
            let dst = unsafe { std::slice::from_raw_parts_mut(host, bytes) };
            // SAFETY: as above; the stream belongs to the bound context.
            copied = unsafe { result::memcpy_dtoh_async(dst, src, self.stream.cu_stream()) }
                .map_err(|e| Error::driver("copying the results from the GPU", e));
            if copied.is_err() {
                break;
            }
        }
        // Waited for whatever was queued, so that no copy runs on after the return.
        let waited = self.stream.synchronize().map_err(|e| Error::driver("copying the results from the GPU", e));
        copied.and(waited)
    }

    /// Lets the work run on without waiting for it: only for work with no host results and
    /// no fault word. Its temporaries are freed in the stream's order; the device arrays
    /// it uses have noted it.
    pub(crate) fn detach(mut self) {
        debug_assert!(self.fault.is_none() && self.record.is_none(), "a call that can fault is waited for");
        self.settled = true;
    }

    /// Whether the GPU has finished the work (without waiting).
    pub(crate) fn is_done(&self) -> bool {
        // SAFETY: a live stream handle.
        let status = unsafe { cudarc::driver::sys::cuStreamQuery(self.stream.cu_stream()) };
        status == cudarc::driver::sys::CUresult::CUDA_SUCCESS
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        if !self.settled
            && let Err(e) = self.stream.synchronize()
        {
            report_drop_error(
                "waiting for abandoned GPU work failed",
                &Error::driver("waiting for abandoned GPU work", e),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_abi::Fault;

    #[test]
    fn a_fault_record_becomes_the_threads_error() {
        assert!(thread_fault_result("k", &[0; THREAD_FAULT_WORDS]).is_ok());
        let f =
            ThreadFault { code: Fault::IndexOutOfBounds.code(), index: 5, len: 3, block: [1, 0, 0], thread: [3, 0, 0] };
        let e = thread_fault_result("k", &f.encode()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`k` panicked in block (1, 0, 0), thread (3, 0, 0): index out of bounds: the len is 3 but the index is 5"
        );
        let d = ThreadFault { code: Fault::DivideByZero.code(), index: 0, len: 0, block: [0, 2, 1], thread: [0, 0, 7] };
        match thread_fault_result("div", &d.encode()) {
            Err(Error::ThreadFault { kernel: "div", block: [0, 2, 1], thread: [0, 0, 7], message }) => {
                assert_eq!(message, "attempt to divide by zero")
            }
            other => panic!("expected a thread fault, got {other:?}"),
        }
    }
}
