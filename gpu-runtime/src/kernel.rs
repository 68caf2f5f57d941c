//! A vectorized function's kernel: its PTX, loaded once per device, and the launch that
//! applies it to host slices, device arrays and broadcast scalars.
//!
//! The parameter layout is the compiler's (`ptx-codegen`'s `abi` module): `n`, the output
//! pointer, a `(pointer, value)` pair per input (a null pointer means "broadcast the
//! value"), and a fault-word pointer when the function can fail.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, result};
use cudarc::nvrtc::Ptx;

use crate::arg::{ErasedArg, broadcast_len};
use crate::device::{Device, default_device};
use crate::error::{Error, Result};
use crate::memory::alloc_error;
use crate::results::{OutSlot, Results};
use crate::scalar::Scalar;
use crate::stream::{Pending, PinnedBuffer, Stream};
use crate::usage::{Event, StreamKey, Uses};

/// What the macro knows about a vectorized function's kernel.
#[derive(Debug)]
pub struct KernelSpec {
    /// The Rust function's name (for messages).
    pub name: &'static str,
    pub ptx: &'static str,
    /// The PTX `.entry` symbol.
    pub entry: &'static str,
    /// Parameter names, in order (for messages).
    pub params: &'static [&'static str],
    /// Whether the entry takes the fault-word parameter.
    pub error_flag: bool,
    /// The reduction entry of a function `(T, T) -> T` (empty otherwise).
    pub reduce_entry: &'static str,
    /// The entry over strided views (N-dimensional broadcasting).
    pub strided_entry: &'static str,
}

/// The names of a tuple result's outputs, in messages.
pub(crate) const OUT_NAMES: [&str; 6] = ["out.0", "out.1", "out.2", "out.3", "out.4", "out.5"];

/// Devices whose loaded kernel is found without a lock.
const FAST_DEVICES: usize = 8;

/// Threads per block. Elementwise kernels are memory-bound; 256 keeps occupancy full on
/// every architecture from Volta on.
const BLOCK: u32 = 256;

#[derive(Clone)]
pub(crate) struct Loaded {
    pub(crate) func: CudaFunction,
    /// Blocks that fit on the whole device at once: the grid-stride loop needs no more.
    pub(crate) max_grid: u32,
    /// The reduction entry and its grid limit, for functions `(T, T) -> T`.
    reduce: Option<(CudaFunction, u32)>,
    /// The strided entry and its grid limit.
    strided: Option<(CudaFunction, u32)>,
}

/// The strided entry's view of a call's arguments (see the compiler's `abi` module).
#[cfg_attr(not(feature = "ndarray"), allow(dead_code))]
pub(crate) struct StridedLayout {
    /// The merged axes' extents, innermost first (at most `MAX_DIMS`).
    pub dims: Vec<usize>,
    /// Per argument, its stride on each axis in elements (zeros for a scalar).
    pub strides: Vec<Vec<isize>>,
    /// Per argument, the byte offset from the start of its uploaded span to the element
    /// the strides start from.
    pub origins: Vec<u64>,
}

/// The axes the strided entry takes (the compiler's `lower::MAX_DIMS`).
pub(crate) const STRIDED_DIMS: usize = 8;

/// A kernel with its per-device cache. The macro puts one in a `static` per function.
pub struct Kernel {
    spec: KernelSpec,
    fast: [OnceLock<Loaded>; FAST_DEVICES],
    slow: Mutex<Vec<(usize, Loaded)>>,
    load_lock: Mutex<()>,
}

/// How many elements a call computes, and where.
pub struct Plan {
    pub n: usize,
    pub device: Device,
}

/// Where a launch writes one of its outputs.
#[derive(Copy, Clone, Debug)]
pub enum ErasedOut {
    /// Host memory with room for `n` elements of `size` bytes: the results are copied there.
    Host { ptr: *mut u8, size: usize },
    /// Device memory with room for `n` elements of `size` bytes: the kernel writes there.
    Device { ptr: CUdeviceptr, size: usize },
}

impl Kernel {
    pub const fn new(spec: KernelSpec) -> Kernel {
        Kernel {
            spec,
            fast: [const { OnceLock::new() }; FAST_DEVICES],
            slow: Mutex::new(Vec::new()),
            load_lock: Mutex::new(()),
        }
    }

    pub fn spec(&self) -> &KernelSpec {
        &self.spec
    }

    /// The kernel on `device`, loading its PTX on first use (the driver compiles it for the
    /// device and caches the result on disk).
    pub(crate) fn loaded(&self, device: &Device) -> Result<Loaded> {
        let ordinal = device.ordinal();
        let cached = || -> Option<Loaded> {
            match self.fast.get(ordinal) {
                Some(slot) => slot.get().cloned(),
                None => {
                    let slow = self.slow.lock().unwrap_or_else(|p| p.into_inner());
                    slow.iter().find(|(o, _)| *o == ordinal).map(|(_, l)| l.clone())
                }
            }
        };
        if let Some(l) = cached() {
            return Ok(l);
        }
        let _guard = self.load_lock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = cached() {
            return Ok(l);
        }
        let inner = device.inner();
        let module = inner
            .ctx
            .load_module(Ptx::from_src(self.spec.ptx))
            .map_err(|e| Error::module_load(e, crate::device::driver_version))?;
        let func = module.load_function(self.spec.entry).map_err(|e| Error::driver("finding the kernel entry", e))?;
        let grid_limit = |f: &CudaFunction| -> Result<u32> {
            let per_sm = f
                .occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)
                .map_err(|e| Error::driver("computing the kernel's occupancy", e))?
                .max(1);
            Ok(per_sm.saturating_mul(inner.sm_count))
        };
        // An entry the kernel may lack (its name is then empty), with its grid limit.
        let optional_entry = |name: &str, action: &'static str| -> Result<Option<(CudaFunction, u32)>> {
            if name.is_empty() {
                return Ok(None);
            }
            let f = module.load_function(name).map_err(|e| Error::driver(action, e))?;
            let limit = grid_limit(&f)?;
            Ok(Some((f, limit)))
        };
        let reduce = optional_entry(self.spec.reduce_entry, "finding the reduction entry")?;
        let strided = optional_entry(self.spec.strided_entry, "finding the strided entry")?;
        let loaded = Loaded { max_grid: grid_limit(&func)?, func, reduce, strided };
        match self.fast.get(ordinal) {
            Some(slot) => {
                let _ = slot.set(loaded.clone());
            }
            None => self.slow.lock().unwrap_or_else(|p| p.into_inner()).push((ordinal, loaded.clone())),
        }
        Ok(loaded)
    }

    /// The number of elements and the device of a call (`None`: nothing to compute). All
    /// arrays (and `out`, with its length and device) must agree in length, and all device
    /// data (and `device`, when the caller chose one) must be on one device.
    pub fn plan<'a>(
        &self,
        device: Option<&Device>,
        args: &[ErasedArg<'a>],
        outs: &[OutSlot<'a>],
    ) -> Result<Option<Plan>> {
        let mut names: Vec<&'static str> = self.spec.params.to_vec();
        let mut lens: Vec<Option<usize>> = args.iter().map(ErasedArg::len).collect();
        let out_names: &[&'static str] = if outs.len() == 1 { &["out"] } else { &OUT_NAMES };
        for (name, out) in out_names.iter().zip(outs) {
            names.push(name);
            lens.push(Some(out.len()));
        }
        let n = broadcast_len(self.spec.name, &names, &lens)?;
        let mut on: Vec<(&'static str, &Device)> = Vec::new();
        if let Some(d) = device {
            on.push(("device", d));
        }
        for (name, arg) in self.spec.params.iter().zip(args) {
            if let ErasedArg::Device { device, .. } = arg {
                on.push((name, device));
            }
        }
        for (name, out) in out_names.iter().zip(outs) {
            if let OutSlot::Device { device, .. } = out {
                on.push((name, device));
            }
        }
        if on.iter().any(|(_, d)| d.ordinal() != on[0].1.ordinal()) {
            let devices = on.iter().map(|(name, d)| (*name, d.ordinal())).collect();
            return Err(Error::DeviceMismatch { function: self.spec.name, devices });
        }
        if n == 0 {
            return Ok(None);
        }
        let device = match on.first() {
            Some((_, d)) => (*d).clone(),
            None => default_device()?,
        };
        Ok(Some(Plan { n, device }))
    }

    /// Runs the kernel over `plan.n` elements and writes the results to `outs`.
    ///
    /// # Safety
    /// `args` must match the kernel's inputs in number, order and element type, and `outs`
    /// its outputs; each output must have room for `plan.n` elements of its type. The
    /// macro that generates the call guarantees it.
    ///
    /// A call whose results all stay on the device, of a function that cannot fail,
    /// returns once its kernel is queued: `out_uses` (the device outputs) and the device
    /// arguments note an event after the kernel, which later uses from other streams wait
    /// for (see `usage.rs`). Any other call waits for its results.
    pub unsafe fn execute(
        &self,
        plan: &Plan,
        args: &[ErasedArg<'_>],
        outs: &[ErasedOut],
        out_uses: &[&Uses],
    ) -> Result<()> {
        let started = trace::enabled().then(std::time::Instant::now);
        let result = unsafe { self.execute_untraced(plan, args, outs, out_uses) };
        if let Some(t) = started {
            trace::call(self.spec.name, plan, args, outs, Some(t.elapsed()), &result);
        }
        result.map(|_| ())
    }

    /// [`Kernel::execute`]; says whether it waited for the GPU.
    unsafe fn execute_untraced(
        &self,
        plan: &Plan,
        args: &[ErasedArg<'_>],
        outs: &[ErasedOut],
        out_uses: &[&Uses],
    ) -> Result<bool> {
        let stream = plan.device.stream().clone();
        if crate::pipeline::worth_it(plan.n, args, outs) {
            // The pipeline runs on streams of its own: device data it reads or writes must
            // be ready before it starts.
            plan.device.bind()?;
            for uses in arg_uses(args).chain(out_uses.iter().copied()) {
                uses.order_before(&stream)?;
            }
            stream.synchronize().map_err(|e| Error::driver("waiting for earlier work", e))?;
            // SAFETY: the caller's promise.
            return unsafe { self.run_pipelined(plan, args, outs) }.map(|()| true);
        }
        let queued = unsafe { self.enqueue(plan, &stream, args, outs, None, out_uses)? };
        if self.spec.error_flag || outs.iter().any(|o| matches!(o, ErasedOut::Host { .. })) {
            return queued.finish().map(|()| true);
        }
        let event = Event::record(&plan.device, &stream)?;
        let key = StreamKey::of(&stream);
        for uses in arg_uses(args).chain(out_uses.iter().copied()) {
            uses.note(key, &event);
        }
        queued.detach();
        Ok(false)
    }

    /// Queues the work of [`Kernel::execute`] on `stream` and returns without waiting for
    /// the GPU: host arguments are copied (the driver stages pageable memory before the
    /// copy call returns), the kernel is launched, and results bound for host memory are
    /// copied there asynchronously.
    ///
    /// # Safety
    /// As for [`Kernel::execute`]; moreover `outs` and device arguments must stay valid,
    /// and host outputs unread, until the returned [`Queued`] is finished.
    pub(crate) unsafe fn enqueue(
        &self,
        plan: &Plan,
        stream: &Arc<CudaStream>,
        args: &[ErasedArg<'_>],
        outs: &[ErasedOut],
        layout: Option<&StridedLayout>,
        out_uses: &[&Uses],
    ) -> Result<Queued> {
        let Plan { n, device } = plan;
        let n = *n;
        device.bind()?;
        // Device data that work on other streams still uses is ready first.
        for uses in arg_uses(args).chain(out_uses.iter().copied()) {
            uses.order_before(stream)?;
        }
        let loaded = self.loaded(device)?;
        let (func, max_grid) = match layout {
            None => (&loaded.func, loaded.max_grid),
            Some(_) => match &loaded.strided {
                Some((f, limit)) => (f, *limit),
                None => {
                    return Err(Error::Driver {
                        action: "launching over strided arrays",
                        code: 0,
                        name: "no strided entry".into(),
                        description: format!("`{}` was compiled without a strided entry", self.spec.name),
                    });
                }
            },
        };
        let origin = |k: usize| layout.map_or(0, |l| l.origins[k]);
        let alloc = |bytes: usize| -> Result<CudaSlice<u8>> {
            // SAFETY: every byte is written (by a copy or by the kernel) before it is read.
            unsafe { stream.alloc::<u8>(bytes) }.map_err(|e| alloc_error(device, bytes, e))
        };

        // Host arrays go to the device; device arrays and scalars are passed as they are.
        let mut buffers: Vec<CudaSlice<u8>> = Vec::new();
        let mut words: Vec<u64> = Vec::with_capacity(2 + outs.len() + 2 * args.len());
        words.push(n as u64);
        let mut host_outs: Vec<(CUdeviceptr, *mut u8, usize)> = Vec::new();
        for out in outs {
            match *out {
                ErasedOut::Device { ptr, .. } => words.push(ptr),
                ErasedOut::Host { ptr, size } => {
                    let buf = alloc(n * size)?;
                    let d = buf.device_ptr(stream).0;
                    words.push(d);
                    host_outs.push((d, ptr, n * size));
                    buffers.push(buf);
                }
            }
        }
        for (k, arg) in args.iter().enumerate() {
            match *arg {
                ErasedArg::Scalar { bits } => words.extend([0, bits]),
                ErasedArg::Device { ptr, .. } => words.extend([ptr + origin(k), 0]),
                ErasedArg::Host { ptr, bytes, .. } => {
                    let buf = alloc(bytes)?;
                    let dst = buf.device_ptr(stream).0;
                    // SAFETY: `ptr` is a live borrow of `bytes` bytes; a copy from pageable
                    // memory is staged by the driver before the call returns.
                    let src = unsafe { std::slice::from_raw_parts(ptr, bytes) };
                    unsafe { result::memcpy_htod_async(dst, src, stream.cu_stream()) }
                        .map_err(|e| Error::driver("copying an argument to the GPU", e))?;
                    words.extend([dst + origin(k), 0]);
                    buffers.push(buf);
                }
            }
        }
        if let Some(l) = layout {
            // `ndim`, the extents (unused ones 1) and each argument's strides (unused 0).
            words.push(l.dims.len() as u64);
            words.extend((0..STRIDED_DIMS).map(|d| l.dims.get(d).map_or(1, |&e| e as u64)));
            for strides in &l.strides {
                words.extend((0..STRIDED_DIMS).map(|d| strides.get(d).map_or(0, |&s| s as i64 as u64)));
            }
        }
        // The fault word starts at "no fault"; the kernel lowers it to `index << 8 | code`.
        let fault = if self.spec.error_flag {
            let mut f = unsafe { stream.alloc::<u64>(1) }.map_err(|e| alloc_error(device, 8, e))?;
            let (ptr, _) = f.device_ptr_mut(stream);
            unsafe { result::memset_d8_async(ptr, 0xff, 8, stream.cu_stream()) }
                .map_err(|e| Error::driver("initialising the kernel's error flag", e))?;
            words.push(ptr);
            Some(f)
        } else {
            None
        };

        // SAFETY: the parameters follow the kernel's ABI (guaranteed by the caller) and
        // every buffer lives in the returned `Queued` until the work is finished.
        unsafe { launch(func, max_grid, stream, n, &mut words)? };

        for (src, host, bytes) in host_outs {
            // SAFETY: `host` has room for `n` elements of its type (caller).
            let dst = unsafe { std::slice::from_raw_parts_mut(host, bytes) };
            unsafe { result::memcpy_dtoh_async(dst, src, stream.cu_stream()) }
                .map_err(|e| Error::driver("copying the results from the GPU", e))?;
        }
        Ok(Queued { stream: stream.clone(), function: self.spec.name, buffers, fault })
    }

    /// The results on the host, in new vectors.
    ///
    /// # Safety
    /// As for [`Kernel::execute`], with `R` the kernel's result type.
    pub unsafe fn call_host<R: Results>(&self, device: Option<&Device>, args: &[ErasedArg<'_>]) -> Result<R::Host> {
        let Some(plan) = self.plan(device, args, &[])? else { return Ok(R::host_with_capacity(0).0) };
        let (mut host, ptrs) = R::host_with_capacity(plan.n);
        let outs: Vec<ErasedOut> =
            ptrs.into_iter().zip(R::sizes()).map(|(ptr, size)| ErasedOut::Host { ptr, size }).collect();
        unsafe { self.execute(&plan, args, &outs, &[])? };
        // SAFETY: `execute` wrote `n` elements of each.
        unsafe { R::host_set_len(&mut host, plan.n) };
        Ok(host)
    }

    /// The results in new arrays on the device that computed them.
    ///
    /// # Safety
    /// As for [`Kernel::execute`], with `R` the kernel's result type.
    pub unsafe fn call_device<R: Results>(&self, device: Option<&Device>, args: &[ErasedArg<'_>]) -> Result<R::Device> {
        let Some(plan) = self.plan(device, args, &[])? else {
            let device = match (
                device,
                args.iter().find_map(|a| if let ErasedArg::Device { device, .. } = a { Some(*device) } else { None }),
            ) {
                (Some(d), _) | (None, Some(d)) => d.clone(),
                (None, None) => default_device()?,
            };
            // SAFETY: empty.
            return Ok(unsafe { R::device_uninit(&device, device.stream(), 0)? }.0);
        };
        // SAFETY: the kernel writes every element.
        let (out, ptrs) = unsafe { R::device_uninit(&plan.device, plan.device.stream(), plan.n)? };
        let outs: Vec<ErasedOut> =
            ptrs.into_iter().zip(R::sizes()).map(|(ptr, size)| ErasedOut::Device { ptr, size }).collect();
        unsafe { self.execute(&plan, args, &outs, &R::device_uses(&out))? };
        Ok(out)
    }

    /// The results written into `outs`, whose lengths must be the call's.
    ///
    /// # Safety
    /// As for [`Kernel::execute`], with `R` the kernel's result type.
    pub unsafe fn call_into<'a, R: Results>(
        &self,
        device: Option<&Device>,
        args: &[ErasedArg<'a>],
        outs: R::Outs<'a>,
    ) -> Result<()> {
        let slots = R::out_slots(outs);
        let Some(plan) = self.plan(device, args, &slots)? else { return Ok(()) };
        unsafe { self.execute(&plan, args, &erase_slots::<R>(&slots), &slot_uses(&slots)) }
    }
}

impl Kernel {
    /// Folds `arg` with the function (`(T, T) -> T`): one launch over the data, one
    /// single-block launch over the blocks' results. The order of the folds is not the
    /// sequential one: the function must be associative (as for Numba's `reduce`).
    ///
    /// # Safety
    /// `T` must be the kernel's element type.
    pub unsafe fn reduce<T: Scalar>(
        &self,
        device: Option<&Device>,
        arg: ErasedArg<'_>,
        identity: Option<T>,
    ) -> Result<T> {
        let n = match arg {
            ErasedArg::Scalar { bits } => return Ok(T::from_bits(bits)),
            _ => arg.len().unwrap_or(0),
        };
        if n == 0 {
            return identity.ok_or(Error::EmptyReduce { function: self.spec.name });
        }
        let Some(plan) = self.plan(device, std::slice::from_ref(&arg), &[])? else {
            return identity.ok_or(Error::EmptyReduce { function: self.spec.name });
        };
        let device = &plan.device;
        device.bind()?;
        let loaded = self.loaded(device)?;
        let Some((func, max_grid)) = &loaded.reduce else {
            return Err(Error::Driver {
                action: "reducing",
                code: 0,
                name: "no reduction kernel".into(),
                description: format!("`{}` is not of the form (T, T) -> T", self.spec.name),
            });
        };
        let stream = device.stream();
        if let ErasedArg::Device { uses, .. } = arg {
            uses.order_before(stream)?;
        }
        let size = std::mem::size_of::<T>();
        let alloc = |bytes: usize| -> Result<CudaSlice<u8>> {
            // SAFETY: written by a copy or the kernel before it is read.
            unsafe { stream.alloc::<u8>(bytes) }.map_err(|e| alloc_error(device, bytes, e))
        };
        let (input, _staged) = match arg {
            ErasedArg::Device { ptr, .. } => (ptr, None),
            ErasedArg::Host { ptr, bytes, .. } => {
                let buf = alloc(bytes)?;
                let dst = buf.device_ptr(stream).0;
                let src = unsafe { std::slice::from_raw_parts(ptr, bytes) };
                unsafe { result::memcpy_htod_async(dst, src, stream.cu_stream()) }
                    .map_err(|e| Error::driver("copying an argument to the GPU", e))?;
                (dst, Some(buf))
            }
            ErasedArg::Scalar { .. } => unreachable!("returned above"),
        };
        let flag = if self.spec.error_flag {
            let mut f = unsafe { stream.alloc::<u64>(1) }.map_err(|e| alloc_error(device, 8, e))?;
            let (ptr, _) = f.device_ptr_mut(stream);
            unsafe { result::memset_d8_async(ptr, 0xff, 8, stream.cu_stream()) }
                .map_err(|e| Error::driver("initialising the kernel's error flag", e))?;
            Some(f)
        } else {
            None
        };
        let flag_ptr = flag.as_ref().map(|f| f.device_ptr(stream).0);
        let launch = |n: usize, out: CUdeviceptr, input: CUdeviceptr, grid: u32| -> Result<()> {
            let mut words: Vec<u64> = vec![n as u64, out, input];
            words.extend(flag_ptr);
            let mut params: Vec<*mut c_void> = words.iter_mut().map(|w| (w as *mut u64).cast()).collect();
            // SAFETY: the reduction entry's parameters; the buffers outlive the sync below.
            unsafe {
                result::launch_kernel(
                    func.cu_function(),
                    (grid, 1, 1),
                    (BLOCK, 1, 1),
                    0,
                    stream.cu_stream(),
                    &mut params,
                )
            }
            .map_err(|e| Error::driver("launching the reduction", e))
        };
        // Every block gets at least one element, so no identity is needed on the device.
        let grid = n.div_ceil(BLOCK as usize).min(*max_grid as usize).max(1);
        let partials = alloc(grid * size)?;
        let partials_ptr = partials.device_ptr(stream).0;
        launch(n, partials_ptr, input, grid as u32)?;
        let final_buf;
        let result_ptr = if grid > 1 {
            final_buf = alloc(size)?;
            let p = final_buf.device_ptr(stream).0;
            launch(grid, p, partials_ptr, 1)?;
            p
        } else {
            partials_ptr
        };
        let mut value = std::mem::MaybeUninit::<T>::uninit();
        unsafe { result::memcpy_dtoh_async(std::slice::from_mut(&mut value), result_ptr, stream.cu_stream()) }
            .map_err(|e| Error::driver("copying the result from the GPU", e))?;
        let mut fault = u64::MAX;
        if let Some(p) = flag_ptr {
            unsafe { result::memcpy_dtoh_async(std::slice::from_mut(&mut fault), p, stream.cu_stream()) }
                .map_err(|e| Error::driver("reading the kernel's error flag", e))?;
        }
        stream.synchronize().map_err(|e| Error::driver("running the reduction", e))?;
        if fault != u64::MAX {
            return Err(Error::KernelFault {
                function: self.spec.name,
                index: fault >> 8,
                message: fault_message((fault & 0xff) as u32),
            });
        }
        if trace::enabled() {
            trace::call(self.spec.name, &plan, std::slice::from_ref(&arg), &[], None, &Ok(true));
        }
        // SAFETY: the completed copy wrote it.
        Ok(unsafe { value.assume_init() })
    }
}

impl Kernel {
    /// Queues the call on `stream`; the results come to the host when the handle is
    /// waited for.
    ///
    /// # Safety
    /// As for [`Kernel::execute`], with `R` the kernel's result type.
    pub unsafe fn launch_host<'a, R: Results>(
        &self,
        stream: &'a Stream,
        args: &[ErasedArg<'a>],
    ) -> Result<Pending<'a, R::Host>> {
        let Some(plan) = self.plan(Some(stream.device()), args, &[])? else {
            return Ok(Pending::ready(R::host_with_capacity(0).0));
        };
        let n = plan.n;
        let sizes = R::sizes();
        let pinned = sizes.iter().map(|size| PinnedBuffer::new(&plan.device, n * size)).collect::<Result<Vec<_>>>()?;
        let outs: Vec<ErasedOut> =
            pinned.iter().zip(&sizes).map(|(p, &size)| ErasedOut::Host { ptr: p.ptr(), size }).collect();
        let queued = unsafe { self.enqueue(&plan, stream.cuda(), args, &outs, None, &[])? };
        if trace::enabled() {
            trace::call(self.spec.name, &plan, args, &outs, None, &Ok(false));
        }
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
    /// As for [`Kernel::execute`], with `R` the kernel's result type.
    pub unsafe fn launch_device<'a, R: Results>(
        &self,
        stream: &'a Stream,
        args: &[ErasedArg<'a>],
    ) -> Result<Pending<'a, R::Device>> {
        let Some(plan) = self.plan(Some(stream.device()), args, &[])? else {
            // SAFETY: empty.
            return Ok(Pending::ready(unsafe { R::device_uninit(stream.device(), stream.cuda(), 0)? }.0));
        };
        // SAFETY: the kernel writes every element.
        let (out, ptrs) = unsafe { R::device_uninit(&plan.device, stream.cuda(), plan.n)? };
        let outs: Vec<ErasedOut> =
            ptrs.into_iter().zip(R::sizes()).map(|(ptr, size)| ErasedOut::Device { ptr, size }).collect();
        let queued = unsafe { self.enqueue(&plan, stream.cuda(), args, &outs, None, &[])? };
        if trace::enabled() {
            trace::call(self.spec.name, &plan, args, &outs, None, &Ok(false));
        }
        Ok(Pending::new(queued, move || Ok(out)))
    }

    /// Queues the call on `stream`, writing into `outs`, which stay borrowed until the
    /// handle is waited for.
    ///
    /// # Safety
    /// As for [`Kernel::execute`], with `R` the kernel's result type.
    pub unsafe fn launch_into<'a, R: Results>(
        &self,
        stream: &'a Stream,
        args: &[ErasedArg<'a>],
        outs: R::Outs<'a>,
    ) -> Result<Pending<'a, ()>> {
        let slots = R::out_slots(outs);
        let Some(plan) = self.plan(Some(stream.device()), args, &slots)? else { return Ok(Pending::ready(())) };
        let n = plan.n;
        // Host outputs get the results through page-locked buffers, copied when waited for.
        let mut staged: Vec<(PinnedBuffer, *mut u8, usize)> = Vec::new();
        let mut erased = Vec::with_capacity(slots.len());
        for (slot, size) in slots.iter().zip(R::sizes()) {
            match *slot {
                OutSlot::Device { ptr, .. } => erased.push(ErasedOut::Device { ptr, size }),
                OutSlot::Host { ptr, .. } => {
                    let pinned = PinnedBuffer::new(&plan.device, n * size)?;
                    erased.push(ErasedOut::Host { ptr: pinned.ptr(), size });
                    staged.push((pinned, ptr, n * size));
                }
            }
        }
        let queued = unsafe { self.enqueue(&plan, stream.cuda(), args, &erased, None, &slot_uses(&slots))? };
        if trace::enabled() {
            trace::call(self.spec.name, &plan, args, &erased, None, &Ok(false));
        }
        let staged = SendPtrs(staged);
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

#[cfg(feature = "ndarray")]
impl Kernel {
    /// An N-dimensional call (see [`crate::nd`]): the results as arrays of the broadcast
    /// shape.
    ///
    /// # Safety
    /// As for [`Kernel::execute`], with `R` the kernel's result type.
    pub unsafe fn call_nd<R: Results>(&self, args: &[crate::nd::ErasedNd<'_>]) -> Result<R::Nd> {
        let plan = crate::nd::NdPlan::new(self.spec.name, self.spec.params, args, &[])?;
        let host = unsafe { self.nd_host::<R>(&plan, args)? };
        Ok(R::to_nd(host, &plan.shape))
    }

    /// An N-dimensional call writing into `outs`, whose shapes must be the broadcast
    /// shape: directly when they are contiguous, else through host vectors.
    ///
    /// # Safety
    /// As for [`Kernel::execute`], with `R` the kernel's result type.
    pub unsafe fn call_nd_into<R: Results>(&self, args: &[crate::nd::ErasedNd<'_>], outs: R::NdOuts<'_>) -> Result<()> {
        let shapes = R::nd_shapes(&outs);
        let shapes: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
        let plan = crate::nd::NdPlan::new(self.spec.name, self.spec.params, args, &shapes)?;
        if plan.n == 0 {
            return Ok(());
        }
        match R::nd_direct(outs) {
            Ok(flat) => {
                let erased = erase_slots::<R>(&R::out_slots(flat));
                unsafe { self.run_nd(&plan, args, &erased) }
            }
            Err(outs) => {
                let host = unsafe { self.nd_host::<R>(&plan, args)? };
                R::nd_assign(host, &plan.shape, outs);
                Ok(())
            }
        }
    }

    /// The results of a planned call in new host vectors (C order).
    unsafe fn nd_host<R: Results>(
        &self,
        plan: &crate::nd::NdPlan,
        args: &[crate::nd::ErasedNd<'_>],
    ) -> Result<R::Host> {
        let (mut host, ptrs) = R::host_with_capacity(plan.n);
        if plan.n == 0 {
            return Ok(host);
        }
        let outs: Vec<ErasedOut> =
            ptrs.into_iter().zip(R::sizes()).map(|(ptr, size)| ErasedOut::Host { ptr, size }).collect();
        unsafe { self.run_nd(plan, args, &outs)? };
        // SAFETY: the launch wrote `n` elements of each.
        unsafe { R::host_set_len(&mut host, plan.n) };
        Ok(host)
    }

    /// Uploads each array's span (or, for a sparse view, only the elements it reads) and
    /// launches the plain entry when every array is then contiguous, else the strided one.
    unsafe fn run_nd(
        &self,
        plan: &crate::nd::NdPlan,
        args: &[crate::nd::ErasedNd<'_>],
        outs: &[ErasedOut],
    ) -> Result<()> {
        use crate::nd::ErasedNd;
        let dims = &plan.dims;
        // More merged axes than the strided entry takes: every array is gathered into a
        // contiguous copy of the whole broadcast shape.
        let dense = dims.len() > STRIDED_DIMS;
        let mut gathered: Vec<Vec<u8>> = Vec::new();
        let mut erased: Vec<ErasedArg<'_>> = Vec::with_capacity(args.len());
        let mut strides: Vec<Vec<isize>> = Vec::with_capacity(args.len());
        let mut origins: Vec<u64> = Vec::with_capacity(args.len());
        for (arg, op) in args.iter().zip(&plan.operands) {
            let (arg, st, origin) = match (arg, op) {
                (ErasedNd::Scalar { bits }, _) => (ErasedArg::Scalar { bits: *bits }, Vec::new(), 0),
                (ErasedNd::Host { .. }, Some(op)) if op.distinct(dims) == 1 => {
                    // One element read everywhere: passed by value.
                    let mut bits = [0u8; 8];
                    // SAFETY: the borrowed view's first element, of `size` (≤ 8) bytes.
                    let src = unsafe { std::slice::from_raw_parts(op.origin, op.size) };
                    bits[..op.size].copy_from_slice(src);
                    (ErasedArg::Scalar { bits: u64::from_le_bytes(bits) }, Vec::new(), 0)
                }
                (ErasedNd::Host { .. }, Some(op)) if dense || op.span_len() > 2 * op.distinct(dims) => {
                    // A sparse view (or too many axes): only the elements read are copied.
                    let (bytes, st) = op.gather(dims, dense);
                    gathered.push(bytes);
                    let b = gathered.last().expect("pushed");
                    let a = ErasedArg::Host {
                        ptr: b.as_ptr(),
                        bytes: b.len(),
                        len: b.len() / op.size,
                        _borrow: std::marker::PhantomData,
                    };
                    (a, st, 0)
                }
                (ErasedNd::Host { .. }, Some(op)) => {
                    // The view's memory span as it is; the strides walk it on the device.
                    // SAFETY: the span lies in the borrowed view's allocation.
                    let start = unsafe { op.origin.offset(op.span.0 * op.size as isize) };
                    let a = ErasedArg::Host {
                        ptr: start,
                        bytes: op.span_len() * op.size,
                        len: op.span_len(),
                        _borrow: std::marker::PhantomData,
                    };
                    (a, op.strides.clone(), op.span.0.unsigned_abs() as u64 * op.size as u64)
                }
                (ErasedNd::Host { .. }, None) => {
                    return Err(Error::Driver {
                        action: "planning an N-dimensional call",
                        code: 0,
                        name: "inconsistent plan".into(),
                        description: format!("`{}`: an array argument was planned as a scalar", self.spec.name),
                    });
                }
            };
            erased.push(arg);
            strides.push(st);
            origins.push(origin);
        }
        let flat = dense
            || (dims.len() <= 1
                && erased
                    .iter()
                    .zip(&strides)
                    .all(|(a, st)| matches!(a, ErasedArg::Scalar { .. }) || st.iter().all(|&s| s == 1)));
        let layout = StridedLayout { dims: if dense { vec![plan.n] } else { dims.clone() }, strides, origins };
        let device = default_device()?;
        let run = Plan { n: plan.n, device };
        if flat {
            return unsafe { self.execute(&run, &erased, outs, &[]) };
        }
        let stream = run.device.stream().clone();
        unsafe { self.enqueue(&run, &stream, &erased, outs, Some(&layout), &[])? }.finish()
    }
}

/// The use records of the device arrays among `args`.
fn arg_uses<'a>(args: &'a [ErasedArg<'a>]) -> impl Iterator<Item = &'a Uses> + 'a {
    args.iter().filter_map(|a| if let ErasedArg::Device { uses, .. } = a { Some(*uses) } else { None })
}

/// The use records of the device outputs among `slots`.
fn slot_uses<'a>(slots: &[OutSlot<'a>]) -> Vec<&'a Uses> {
    slots.iter().filter_map(|s| if let OutSlot::Device { uses, .. } = s { Some(*uses) } else { None }).collect()
}

/// Where the kernel writes each of `R`'s outputs.
fn erase_slots<R: Results>(slots: &[OutSlot<'_>]) -> Vec<ErasedOut> {
    slots
        .iter()
        .zip(R::sizes())
        .map(|(slot, size)| match *slot {
            OutSlot::Host { ptr, .. } => ErasedOut::Host { ptr, size },
            OutSlot::Device { ptr, .. } => ErasedOut::Device { ptr, size },
        })
        .collect()
}

/// Page-locked buffers with the host outputs they are copied to.
struct SendPtrs(Vec<(PinnedBuffer, *mut u8, usize)>);

// SAFETY: the pointers are outputs borrowed (through their slots) by the pending call.
unsafe impl Send for SendPtrs {}

impl SendPtrs {
    fn into_inner(self) -> Vec<(PinnedBuffer, *mut u8, usize)> {
        self.0
    }
}

/// Launches `func` over `n` elements on `stream` with enough blocks for `n` (at most
/// `max_grid`). Each kernel parameter is read from its own 8-byte word of `words`: a
/// pointer, `n`, or a scalar whose bytes sit at the start of the word (little-endian).
///
/// # Safety
/// `words` must follow the entry's parameter layout, and the memory they point to must
/// stay valid until the work is finished.
pub(crate) unsafe fn launch(
    func: &CudaFunction,
    max_grid: u32,
    stream: &Arc<CudaStream>,
    n: usize,
    words: &mut [u64],
) -> Result<()> {
    let mut params: Vec<*mut c_void> = words.iter_mut().map(|w| (w as *mut u64).cast()).collect();
    let grid = n.div_ceil(BLOCK as usize).min(max_grid as usize * waves()).max(1) as u32;
    // SAFETY: the caller's promise.
    unsafe {
        result::launch_kernel(func.cu_function(), (grid, 1, 1), (BLOCK, 1, 1), 0, stream.cu_stream(), &mut params)
    }
    .map_err(|e| Error::driver("launching the kernel", e))
}

/// How many times the blocks that fit on the device at once a launch may use (the
/// grid-stride loop covers the rest). On the H200, 32 waves ran `add` and `heavy` 2-5%
/// faster than one (bench, 2^28 elements); `GPU_VECTORIZE_WAVES` overrides it, for tuning.
fn waves() -> usize {
    static WAVES: OnceLock<usize> = OnceLock::new();
    *WAVES.get_or_init(|| {
        std::env::var("GPU_VECTORIZE_WAVES").ok().and_then(|v| v.parse().ok()).filter(|&w| w > 0).unwrap_or(32)
    })
}

/// Work queued on a stream, with the buffers it uses: they live until it is finished.
#[must_use = "queued work must be finished to see its errors"]
pub struct Queued {
    stream: Arc<CudaStream>,
    function: &'static str,
    buffers: Vec<CudaSlice<u8>>,
    fault: Option<CudaSlice<u64>>,
}

impl Queued {
    /// Waits for the work and reports a fault of the kernel, if any.
    pub fn finish(self) -> Result<()> {
        let mut fault = u64::MAX;
        if let Some(f) = &self.fault {
            // A copy to pageable memory returns when it is done, so it also waits for the
            // work queued before it.
            unsafe {
                result::memcpy_dtoh_async(
                    std::slice::from_mut(&mut fault),
                    f.device_ptr(&self.stream).0,
                    self.stream.cu_stream(),
                )
            }
            .map_err(|e| Error::driver("reading the kernel's error flag", e))?;
        }
        self.stream.synchronize().map_err(|e| Error::driver("running the kernel", e))?;
        drop(self.buffers);
        if fault != u64::MAX {
            return Err(Error::KernelFault {
                function: self.function,
                index: fault >> 8,
                message: fault_message((fault & 0xff) as u32),
            });
        }
        Ok(())
    }

    /// Lets the work run on without waiting for it: only for work with no host results and
    /// no fault word, whose buffers (device copies of host arguments) are freed in the
    /// stream's order.
    pub(crate) fn detach(self) {
        debug_assert!(self.fault.is_none(), "a call that can fault is waited for");
        drop(self.buffers);
    }

    /// Whether the GPU has finished the work (without waiting).
    pub fn is_done(&self) -> bool {
        // SAFETY: a valid stream handle.
        let status = unsafe { cudarc::driver::sys::cuStreamQuery(self.stream.cu_stream()) };
        status == cudarc::driver::sys::CUresult::CUDA_SUCCESS
    }
}

/// `tracing` events: one per call (target `gpu_runtime`, level DEBUG), so a program can
/// see where its work ran and what crossed the bus. Off (one cached check per call)
/// unless a subscriber wants them.
pub(crate) mod trace {
    use super::{ErasedArg, ErasedOut, Plan};
    use crate::error::Result;

    pub(crate) fn enabled() -> bool {
        tracing::enabled!(target: "gpu_runtime", tracing::Level::DEBUG)
    }

    /// One finished (or queued: `waited` false) call of `function`.
    pub(crate) fn call(
        function: &'static str,
        plan: &Plan,
        args: &[ErasedArg<'_>],
        outs: &[ErasedOut],
        elapsed: Option<std::time::Duration>,
        result: &Result<bool>,
    ) {
        let to_device: usize =
            args.iter().map(|a| if let ErasedArg::Host { bytes, .. } = a { *bytes } else { 0 }).sum();
        let from_device: usize =
            outs.iter().map(|o| if let ErasedOut::Host { size, .. } = o { size * plan.n } else { 0 }).sum();
        let device = plan.device.ordinal();
        let name = plan.device.name();
        let micros = elapsed.map_or(0, |d| d.as_micros() as u64);
        match result {
            Ok(waited) => tracing::debug!(
                target: "gpu_runtime",
                function,
                device,
                device_name = name,
                elements = plan.n,
                bytes_to_device = to_device,
                bytes_from_device = from_device,
                micros,
                waited = *waited,
                "vectorized call on the GPU"
            ),
            Err(e) => {
                tracing::debug!(target: "gpu_runtime", function, device, elements = plan.n, error = %e, "vectorized call failed")
            }
        }
    }
}

/// Rust's panic message for a kernel fault code (the compiler's `abi::Fault`).
pub fn fault_message(code: u32) -> &'static str {
    match code {
        1 => "attempt to divide by zero",
        2 => "attempt to calculate the remainder with a divisor of zero",
        3 => "attempt to divide with overflow",
        4 => "attempt to calculate the remainder with overflow",
        5 => "assertion failed: step != 0",
        6 => "min > max, or either was NaN",
        7 => "min > max",
        _ => "unknown fault",
    }
}
