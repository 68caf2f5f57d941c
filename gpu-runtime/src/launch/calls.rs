//! The GPU calls of a vectorized function: on host or device data, with results on the
//! host, on the device or in given outputs, now or queued on a stream, N-dimensional, or
//! folded. Each plans the call and hands it to the launch layer.
//!
//! Every method is `unsafe` for one reason: the arguments (and `R`) must match the
//! kernel's inputs (and results) in number, order and element type. The macro that
//! generates the calls guarantees it.

use super::Kernel;
use crate::data::{ArgKind, ErasedArg, Results};
use crate::driver::{Device, PinnedBuffer, Stream, default_device};
use crate::error::Result;
use crate::launch::{ErasedOut, Launch, Pending, execute, plan, reduce, trace_queued};
use crate::scalar::GpuType;

impl Kernel {
    /// The results on the host, in new vectors.
    ///
    /// # Safety
    /// `args` must be the kernel's inputs and `R` its result type (see the module docs).
    pub unsafe fn call_host<R: Results>(&self, device: Option<&Device>, args: &[ErasedArg<'_>]) -> Result<R::Host> {
        let Some(plan) = plan(self.spec(), device, args, &[])? else { return Ok(R::host_with_capacity(0).0) };
        let (mut host, ptrs) = R::host_with_capacity(plan.n);
        let outs = ErasedOut::of_host::<R>(ptrs);
        // SAFETY: the caller's promise; each vector has room for `n` results.
        unsafe { execute(self, &Launch { spec: self.spec(), plan: &plan, args, outs: &outs })? };
        // SAFETY: the call wrote `n` results to each vector.
        unsafe { R::host_set_len(&mut host, plan.n) };
        Ok(host)
    }

    /// The results in new arrays on the device that computed them.
    ///
    /// # Safety
    /// As for [`Kernel::call_host`].
    pub unsafe fn call_device<R: Results>(&self, device: Option<&Device>, args: &[ErasedArg<'_>]) -> Result<R::Device> {
        let Some(plan) = plan(self.spec(), device, args, &[])? else {
            let device = match (
                device,
                args.iter().find_map(|a| if let ArgKind::Device { device, .. } = a.0 { Some(device) } else { None }),
            ) {
                (Some(d), _) | (None, Some(d)) => d.clone(),
                (None, None) => default_device()?,
            };
            // SAFETY: no element to write.
            return Ok(unsafe { R::device_uninit(&device, device.stream()?, 0)? }.0);
        };
        // SAFETY: the kernel writes every element before anything reads one.
        let (out, ptrs) = unsafe { R::device_uninit(&plan.device, plan.device.stream()?, plan.n)? };
        let outs = ErasedOut::of_device::<R>(ptrs, R::device_uses(&out));
        // SAFETY: the caller's promise; each array has room for `n` results.
        unsafe { execute(self, &Launch { spec: self.spec(), plan: &plan, args, outs: &outs })? };
        Ok(out)
    }

    /// The results written into `outs`, whose lengths must be the call's.
    ///
    /// # Safety
    /// As for [`Kernel::call_host`].
    pub unsafe fn call_into<'a, R: Results>(
        &self,
        device: Option<&Device>,
        args: &[ErasedArg<'a>],
        outs: R::Outs<'a>,
    ) -> Result<()> {
        let slots = R::out_slots(outs);
        let Some(plan) = plan(self.spec(), device, args, &slots)? else { return Ok(()) };
        let outs = ErasedOut::of_slots::<R>(&slots);
        // SAFETY: the caller's promise; the plan checked that each output has `n` elements.
        unsafe { execute(self, &Launch { spec: self.spec(), plan: &plan, args, outs: &outs }) }
    }

    /// Folds `arg` with the function (`(T, T) -> T`); see `launch/reduce.rs`.
    ///
    /// # Safety
    /// `T` must be the kernel's element type.
    pub unsafe fn reduce<T: GpuType>(
        &self,
        device: Option<&Device>,
        arg: ErasedArg<'_>,
        identity: Option<T>,
        init: Option<T>,
        res: Option<crate::data::DeviceSliceMut<'_, T>>,
    ) -> Result<Option<T>> {
        // SAFETY: the caller's promise.
        unsafe { reduce(self, device, arg, identity, init, res) }
    }

    /// Queues the call on `stream`; the results come to the host when the handle is
    /// waited for.
    ///
    /// # Safety
    /// As for [`Kernel::call_host`].
    pub unsafe fn launch_host<'a, R: Results>(
        &self,
        stream: &'a Stream,
        args: &[ErasedArg<'a>],
    ) -> Result<Pending<'a, R::Host>> {
        let Some(plan) = plan(self.spec(), Some(stream.device()), args, &[])? else {
            return Ok(Pending::ready(R::host_with_capacity(0).0));
        };
        let n = plan.n;
        let sizes = R::sizes();
        let pinned = sizes.iter().map(|size| PinnedBuffer::new(&plan.device, n * size)).collect::<Result<Vec<_>>>()?;
        let outs = ErasedOut::of_host::<R>(pinned.iter().map(PinnedBuffer::ptr).collect());
        let launch = Launch { spec: self.spec(), plan: &plan, args, outs: &outs };
        let loaded = self.loaded(&plan.device)?;
        // SAFETY: the caller's promise; the page-locked buffers have room for `n` results
        // each and are owned by the handle, which waits before it reads or frees them
        // (a leaked handle leaks them).
        let queued = unsafe { launch.enqueue(&loaded.plain, stream.cuda()?, None)? };
        trace_queued(&launch);
        Ok(Pending::new(queued, move || {
            let (mut host, ptrs) = R::host_with_capacity(n);
            for ((src, dst), size) in pinned.iter().zip(ptrs).zip(sizes) {
                // SAFETY: the finished work wrote `n` values to each buffer; each vector
                // has room for them.
                unsafe { std::ptr::copy_nonoverlapping(src.ptr(), dst, n * size) };
            }
            // SAFETY: copied above.
            unsafe { R::host_set_len(&mut host, n) };
            Ok(host)
        }))
    }

    /// Queues the call on `stream`; the results stay on the device.
    ///
    /// # Safety
    /// As for [`Kernel::call_host`].
    pub unsafe fn launch_device<'a, R: Results>(
        &self,
        stream: &'a Stream,
        args: &[ErasedArg<'a>],
    ) -> Result<Pending<'a, R::Device>> {
        let Some(plan) = plan(self.spec(), Some(stream.device()), args, &[])? else {
            // SAFETY: no element to write.
            return Ok(Pending::ready(unsafe { R::device_uninit(stream.device(), stream.cuda()?, 0)? }.0));
        };
        // SAFETY: the kernel writes every element before anything reads one (the arrays
        // are in the handle until it is waited for, and their use is noted).
        let (out, ptrs) = unsafe { R::device_uninit(&plan.device, stream.cuda()?, plan.n)? };
        let outs = ErasedOut::of_device::<R>(ptrs, R::device_uses(&out));
        let launch = Launch { spec: self.spec(), plan: &plan, args, outs: &outs };
        let loaded = self.loaded(&plan.device)?;
        // SAFETY: the caller's promise; each array has room for `n` results.
        let queued = unsafe { launch.enqueue(&loaded.plain, stream.cuda()?, None)? };
        trace_queued(&launch);
        Ok(Pending::new(queued, move || Ok(out)))
    }

    /// Queues the call on `stream`, writing into `outs`, which stay borrowed until the
    /// handle is waited for.
    ///
    /// # Safety
    /// As for [`Kernel::call_host`].
    pub unsafe fn launch_into<'a, R: Results>(
        &self,
        stream: &'a Stream,
        args: &[ErasedArg<'a>],
        outs: R::Outs<'a>,
    ) -> Result<Pending<'a, ()>> {
        let slots = R::out_slots(outs);
        let Some(plan) = plan(self.spec(), Some(stream.device()), args, &slots)? else {
            return Ok(Pending::ready(()));
        };
        if let Some(recording) = stream.recording() {
            let outs = ErasedOut::of_slots::<R>(&slots);
            let launch = Launch { spec: self.spec(), plan: &plan, args, outs: &outs };
            let loaded = self.loaded(&plan.device)?;
            let mut recording = recording.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: the caller's promise; the outputs have room for `n` results (checked
            // by the plan).
            unsafe { launch.record(&loaded.plain, &mut recording)? };
            return Ok(Pending::ready(()));
        }
        let n = plan.n;
        // Host outputs get the results through page-locked buffers owned by the handle,
        // copied into them when it is waited for: a leaked handle then leaves the outputs
        // alone.
        let mut staged: Vec<(PinnedBuffer, *mut u8, usize)> = Vec::new();
        let mut outs = ErasedOut::of_slots::<R>(&slots);
        for out in &mut outs {
            if let ErasedOut::Host { ptr, size, .. } = *out {
                let pinned = PinnedBuffer::new(&plan.device, n * size)?;
                *out = ErasedOut::Host { ptr: pinned.ptr(), size, keep: false };
                staged.push((pinned, ptr, n * size));
            }
        }
        let launch = Launch { spec: self.spec(), plan: &plan, args, outs: &outs };
        let loaded = self.loaded(&plan.device)?;
        // SAFETY: the caller's promise; device outputs have room for `n` results (checked
        // by the plan) and note the launch; host results go to the page-locked buffers.
        let queued = unsafe { launch.enqueue(&loaded.plain, stream.cuda()?, None)? };
        trace_queued(&launch);
        let staged = StagedOutputs(staged);
        Ok(Pending::new(queued, move || {
            // The slots keep the outputs borrowed until the results are in.
            let _borrowed = slots;
            for (pinned, dst, bytes) in staged.into_inner() {
                // SAFETY: the finished work wrote `bytes` bytes; `dst` is the borrowed
                // output, with room for them.
                unsafe { std::ptr::copy_nonoverlapping(pinned.ptr(), dst, bytes) };
            }
            Ok(())
        }))
    }
}

/// Page-locked buffers with the host outputs (borrowed by the pending call) they are
/// copied to.
struct StagedOutputs(Vec<(PinnedBuffer, *mut u8, usize)>);

// SAFETY: the pointers are outputs exclusively borrowed, through their slots, by the
// pending call that owns this value; the buffers are plain memory.
unsafe impl Send for StagedOutputs {}

impl StagedOutputs {
    /// The whole value (a closure that used the field would capture only the `Vec`,
    /// which is not `Send`).
    fn into_inner(self) -> Vec<(PinnedBuffer, *mut u8, usize)> {
        self.0
    }
}

#[cfg(feature = "ndarray")]
impl Kernel {
    /// An N-dimensional call: the results as arrays of the broadcast shape.
    ///
    /// # Safety
    /// As for [`Kernel::call_host`].
    pub unsafe fn call_nd<R: Results>(&self, args: &[crate::data::nd::ErasedNd<'_>]) -> Result<R::Nd> {
        let spec = self.spec();
        let plan = crate::data::nd::NdPlan::new(spec.name, spec.params, args, &[])?;
        // SAFETY: the caller's promise.
        let host = unsafe { self.nd_host::<R>(&plan, args)? };
        Ok(R::to_nd(host, &plan.shape))
    }

    /// An N-dimensional call writing into `outs`, whose shapes must be the broadcast
    /// shape: directly when they are contiguous, else through host vectors.
    ///
    /// # Safety
    /// As for [`Kernel::call_host`].
    pub unsafe fn call_nd_into<R: Results>(
        &self,
        args: &[crate::data::nd::ErasedNd<'_>],
        outs: R::NdOuts<'_>,
    ) -> Result<()> {
        let spec = self.spec();
        let shapes = R::nd_shapes(&outs);
        let shapes: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
        let plan = crate::data::nd::NdPlan::new(spec.name, spec.params, args, &shapes)?;
        if plan.n == 0 {
            return Ok(());
        }
        match R::nd_direct(outs) {
            Ok(flat) => {
                let slots = R::out_slots(flat);
                let erased = ErasedOut::of_slots::<R>(&slots);
                // SAFETY: the caller's promise; the outputs are contiguous, of `n` elements.
                unsafe { crate::launch::run_nd(self, &plan, args, &erased) }
            }
            Err(outs) => {
                // SAFETY: the caller's promise.
                let host = unsafe { self.nd_host::<R>(&plan, args)? };
                R::nd_assign(host, &plan.shape, outs);
                Ok(())
            }
        }
    }

    /// The results of a planned call in new host vectors (C order).
    unsafe fn nd_host<R: Results>(
        &self,
        plan: &crate::data::nd::NdPlan<'_>,
        args: &[crate::data::nd::ErasedNd<'_>],
    ) -> Result<R::Host> {
        let (mut host, ptrs) = R::host_with_capacity(plan.n);
        if plan.n == 0 {
            return Ok(host);
        }
        let outs = ErasedOut::of_host::<R>(ptrs);
        // SAFETY: the caller's promise; each vector has room for `n` results.
        unsafe { crate::launch::run_nd(self, plan, args, &outs)? };
        // SAFETY: the launch wrote `n` elements of each.
        unsafe { R::host_set_len(&mut host, plan.n) };
        Ok(host)
    }
}
