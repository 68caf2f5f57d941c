//! An explicit kernel (`#[kernel]`, Numba's `@cuda.jit`): what the compiler says about it
//! ([`ExplicitSpec`]), its module loaded once per device, and its launch: the arguments
//! checked (kinds, aliasing, devices), the configuration checked against the device's
//! limits, host slices copied in, the kernel queued with a zeroed fault record, `&mut`
//! host slices copied back, and the launch noted in every device array it touches (so a
//! leaked [`Pending`] never lets one be freed under the running kernel).

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::driver::CudaFunction;
use cudarc::driver::result;
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::nvrtc::Ptx;
use kernel_abi::{KernelParam, KernelParams};

use super::{LaunchConfig, Pending, Queued};
use crate::data::{ArgKind, InOutMem, KArg, KArgKind, check_aliasing};
use crate::driver::FaultKind;
use crate::driver::graph::{Recording, Shape};
use crate::driver::{Device, PinnedBuffer, Stream, Uses, default_device, driver_version};
use crate::error::{Error, Result};
use crate::grid::check_shape;

/// What the macro knows about an explicit kernel.
#[derive(Debug)]
pub struct ExplicitSpec {
    /// The Rust function's name (for messages).
    pub name: &'static str,
    /// The PTX `.entry` symbol (`kernel_abi::kernel_symbol(name)`).
    pub symbol: &'static str,
    pub ptx: &'static str,
    /// Each parameter's name and kind, in order (the layout of `kernel_abi::KernelParams`).
    pub params: &'static [(&'static str, KernelParam)],
}

/// An explicit kernel with its module, loaded per device on first use. The macro puts
/// one in a `static` per kernel.
pub struct ExplicitKernel {
    spec: ExplicitSpec,
    loaded: Mutex<Vec<(usize, Arc<Loaded>)>>,
}

impl std::fmt::Debug for ExplicitKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExplicitKernel").field("name", &self.spec.name).field("symbol", &self.spec.symbol).finish()
    }
}

/// The kernel's entry on one device, with the limits a launch of it must respect.
struct Loaded {
    func: CudaFunction,
    /// Threads per block the compiled kernel can run (fewer than 1024 when it uses many
    /// registers).
    max_threads: u32,
    /// Bytes of the kernel's static shared memory (`gpu::shared`).
    static_shared: usize,
    /// Shared memory one block may have when the kernel opts in.
    max_shared: usize,
    /// Shared memory one block gets without opting in (48 KiB).
    default_shared: usize,
    /// The dynamic shared memory the kernel has opted in to so far.
    opted_in: Mutex<usize>,
}

impl ExplicitKernel {
    pub const fn new(spec: ExplicitSpec) -> ExplicitKernel {
        ExplicitKernel { spec, loaded: Mutex::new(Vec::new()) }
    }

    pub fn spec(&self) -> &ExplicitSpec {
        &self.spec
    }

    /// Launches the kernel and waits for it. `&mut` host slices get the kernel's writes
    /// back when it succeeds; when a thread panics the error is returned and they keep
    /// the values they had before the launch (device arrays keep what the kernel wrote).
    pub fn launch(&self, cfg: &LaunchConfig, args: Vec<KArg<'_>>) -> Result<()> {
        self.launch_async(cfg, args)?.wait()
    }

    /// Queues the launch and returns at once; the handle borrows the arguments until it
    /// is waited for (or dropped, which waits too). `&mut` host slices get the kernel's
    /// writes back in [`Pending::wait`] when it succeeds.
    pub fn launch_async<'a>(&self, cfg: &LaunchConfig, args: Vec<KArg<'a>>) -> Result<Pending<'a, ()>> {
        let name = self.spec.name;
        cfg.check(name)?;
        self.check_args(&args)?;
        check_aliasing(name, &args)?;
        let device = launch_device(name, cfg, &args)?;
        let loaded = self.loaded(&device)?;
        loaded.check(name, cfg)?;
        if let Some(recording) = cfg.stream.as_ref().and_then(Stream::recording) {
            let mut recording = recording.lock().unwrap_or_else(|p| p.into_inner());
            self.record(&loaded, cfg, &args, &mut recording)?;
            return Ok(Pending::ready(()));
        }
        let stream = match &cfg.stream {
            Some(s) => s.cuda()?.clone(),
            None => device.stream()?.clone(),
        };
        device.bind()?;
        let uses: Vec<&Uses> = args.iter().filter_map(KArg::uses).collect();
        for u in &uses {
            u.order_before(&stream)?;
        }
        // From here on, an early return waits for whatever was queued (`Queued::drop`).
        let mut queued = Queued::new(stream.clone(), name);
        let mut copy_back: Vec<(u64, *mut u8, usize)> = Vec::new();
        let (mut words, wide) = self.words(&args, |ptr, bytes, back| {
            let staged = copy_in(&mut queued, &device, &stream, ptr, bytes)?;
            if let Some(back) = back
                && bytes > 0
            {
                copy_back.push((staged, back, bytes));
            }
            Ok(staged)
        })?;
        let slots = KernelParams { params: self.spec.params.iter().map(|p| p.1).collect() };
        words[slots.fault()] = queued.fault_record(&device)?.into();
        let mut params: Vec<*mut c_void> = super::params::param_pointers(&mut words);
        for (slot, words) in wide {
            // The driver only reads a parameter's bytes.
            params[slot] = words.cast_mut().cast();
        }
        let (g, b) = (cfg.grid, cfg.block);
        // SAFETY: the words follow the entry's parameter layout (`kernel_abi::KernelParams`,
        // the one the compiler lowered it with, for the kinds `check_args` matched; a struct
        // by value is read from its own words in `args`, which are alive here); every
        // pointer names memory of the length in the next word that stays valid until the
        // work is done: temporaries and the record live in `queued`, device arrays wait
        // for the use noted below. The shape and shared memory are within the device's
        // limits (checked above).
        unsafe {
            result::launch_kernel(
                loaded.func.cu_function(),
                (g.x, g.y, g.z),
                (b.x, b.y, b.z),
                cfg.shared_bytes as u32,
                stream.cu_stream(),
                &mut params,
            )
        }
        .map_err(|e| Error::driver("launching the kernel", e))?;
        // `&mut` host slices: the results go to page-locked buffers owned by the handle
        // and reach the slices only in `wait`, so a leaked handle leaves them alone.
        let mut staged = Vec::with_capacity(copy_back.len());
        for (src, dst, bytes) in copy_back {
            let pinned = PinnedBuffer::new(&device, bytes)?;
            // SAFETY: `pinned` has room for `bytes` bytes and is owned by the handle, which
            // waits for the copy before it reads or frees it; `src` holds `bytes` bytes.
            let into = unsafe { std::slice::from_raw_parts_mut(pinned.ptr(), bytes) };
            // SAFETY: as above; the stream belongs to the bound context.
            unsafe { result::memcpy_dtoh_async(into, src, stream.cu_stream()) }
                .map_err(|e| Error::driver("copying the results from the GPU", e))?;
            staged.push((pinned, dst, bytes));
        }
        queued.note(&device, uses.into_iter())?;
        let staged = CopyBack(staged);
        Ok(Pending::new(queued, move || {
            // The arguments stay borrowed (through the handle's lifetime) until here.
            let _borrowed = args;
            for (pinned, dst, bytes) in staged.into_inner() {
                // SAFETY: the finished kernel's results are in `pinned` (`bytes` bytes);
                // `dst` is the `&mut` slice of as many bytes, exclusively borrowed by the
                // handle.
                unsafe { std::ptr::copy_nonoverlapping(pinned.ptr(), dst, bytes) };
            }
            Ok(())
        }))
    }

    /// The parameter words of a launch with `args` (the fault record's slot left for the
    /// caller): device slices by their address and length, host slices at the device
    /// address `host` gives for `(address, bytes, where a `&mut` slice gets the results
    /// back)`, scalars in their words; and the slots of structs wider than a word, which
    /// the driver reads from their own words in `args`.
    #[allow(clippy::type_complexity)]
    fn words(
        &self,
        args: &[KArg<'_>],
        mut host: impl FnMut(*const u8, usize, Option<*mut u8>) -> Result<u64>,
    ) -> Result<(Vec<u128>, Vec<(usize, *const u8)>)> {
        let name = self.spec.name;
        let slots = KernelParams { params: self.spec.params.iter().map(|p| p.1).collect() };
        let mut words = vec![0u128; slots.count()];
        let mut wide: Vec<(usize, *const u8)> = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            let slot = slots.slot(i);
            let (ptr, len) = match &arg.0 {
                KArgKind::Value(ArgKind::Scalar { bits }) => {
                    words[slot] = *bits;
                    continue;
                }
                KArgKind::Value(value) => {
                    let at = value
                        .value_ptr()
                        .ok_or_else(|| Error::internal(format!("`{name}`: a by-value parameter holds an array")))?;
                    wide.push((slot, at));
                    continue;
                }
                KArgKind::In { arg: ArgKind::Device { ptr, len, .. }, .. }
                | KArgKind::InOut { mem: InOutMem::Device { ptr, len, .. }, .. } => (*ptr, *len),
                KArgKind::In { arg: ArgKind::Host { ptr, bytes, len, .. }, .. } => (host(*ptr, *bytes, None)?, *len),
                &KArgKind::InOut { mem: InOutMem::Host { ptr, bytes, len, .. }, .. } => {
                    (host(ptr.cast_const(), bytes, Some(ptr))?, len)
                }
                KArgKind::In { arg: ArgKind::Scalar { .. } | ArgKind::Value { .. }, .. } => {
                    return Err(Error::internal(format!("`{name}`: a scalar was passed for a slice parameter")));
                }
            };
            words[slot] = ptr.into();
            words[slot + 1] = len as u128;
        }
        Ok((words, wide))
    }

    /// Records the launch in `recording` instead of queuing it: every slice must be in
    /// device memory, since a replay copies nothing.
    fn record(&self, loaded: &Loaded, cfg: &LaunchConfig, args: &[KArg<'_>], recording: &mut Recording) -> Result<()> {
        let name = self.spec.name;
        let (mut words, wide) = self.words(args, |_, _, _| {
            Err(Error::Graph {
                reason: format!(
                    "`{name}`: a kernel in a graph takes device arrays (and scalars) only: host slices are copied by each launch, which a replay does not do"
                ),
            })
        })?;
        let slots = KernelParams { params: self.spec.params.iter().map(|p| p.1).collect() };
        let (record, offset) = recording.fault(FaultKind::Record)?;
        words[slots.fault()] = record.into();
        let mut params: Vec<*mut c_void> = super::params::param_pointers(&mut words);
        for (slot, words) in wide {
            // The driver only reads a parameter's bytes (copied when the call is recorded).
            params[slot] = words.cast_mut().cast();
        }
        let (g, b) = (cfg.grid, cfg.block);
        let shape = Shape {
            func: loaded.func.cu_function(),
            grid: (g.x, g.y, g.z),
            block: (b.x, b.y, b.z),
            shared: cfg.shared_bytes as u32,
        };
        let uses = args.iter().filter_map(KArg::uses);
        // SAFETY: the words follow the entry's parameter layout for the kinds `check_args`
        // matched; they point to device arrays, all in `uses`, and to the fault record.
        // The shape and shared memory are within the device's limits (checked by the
        // caller).
        unsafe { recording.add(name, shape, &mut params, Some((FaultKind::Record, offset)), uses) }
    }

    /// The arguments must be the kernel's parameters, kind for kind (the macro generates
    /// them so; anything else is a bug there).
    fn check_args(&self, args: &[KArg<'_>]) -> Result<()> {
        let kinds = self.spec.params.iter().map(|p| p.1);
        let matches = args.len() == self.spec.params.len()
            && args.iter().zip(kinds).all(|(a, k)| match (&a.0, k) {
                (KArgKind::Value(_), KernelParam::Scalar) => true,
                (KArgKind::In { arg, .. }, KernelParam::Slice) => {
                    !matches!(arg, ArgKind::Scalar { .. } | ArgKind::Value { .. })
                }
                (KArgKind::InOut { .. }, KernelParam::Slice) => true,
                _ => false,
            });
        if matches {
            return Ok(());
        }
        Err(Error::internal(format!(
            "`{}` takes {} parameter(s) ({:?}), but the launch passed {:?}",
            self.spec.name,
            self.spec.params.len(),
            self.spec.params,
            args
        )))
    }

    /// The kernel's entry on `device`, loaded on first use.
    fn loaded(&self, device: &Device) -> Result<Arc<Loaded>> {
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, l)) = loaded.iter().find(|(o, _)| *o == device.ordinal()) {
            return Ok(l.clone());
        }
        Error::check_target(self.spec.name, self.spec.ptx, device.ordinal(), device.compute_capability())?;
        device.bind()?;
        let module = device
            .context()?
            .load_module(Ptx::from_src(self.spec.ptx))
            .map_err(|e| Error::module_load(e, driver_version))?;
        let func = module.load_function(self.spec.symbol).map_err(|e| Error::driver("finding the kernel entry", e))?;
        let attr = |a| -> Result<usize> {
            let v = func.get_attribute(a).map_err(|e| Error::driver("reading the kernel's attributes", e))?;
            Ok(v.max(0) as usize)
        };
        let max_threads = attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32;
        let static_shared = attr(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
        let dev = |a| -> Result<usize> {
            let v = device.context()?.attribute(a).map_err(|e| Error::driver("reading device attributes", e))?;
            Ok(v.max(0) as usize)
        };
        let max_shared = dev(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        let default_shared = dev(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?;
        let l = Arc::new(Loaded {
            func,
            max_threads,
            static_shared,
            max_shared: max_shared.max(default_shared),
            default_shared,
            opted_in: Mutex::new(0),
        });
        loaded.push((device.ordinal(), l.clone()));
        Ok(l)
    }
}

impl Loaded {
    /// Checks `cfg` against what the device can run of this kernel, and opts in to more
    /// than the default dynamic shared memory when the launch asks for it.
    fn check(&self, kernel: &'static str, cfg: &LaunchConfig) -> Result<()> {
        check_shape(kernel, cfg.grid, cfg.block, self.max_threads)?;
        check_shared(kernel, self.static_shared, cfg.shared_bytes, self.max_shared)?;
        if self.static_shared + cfg.shared_bytes > self.default_shared {
            let mut opted = self.opted_in.lock().unwrap_or_else(|p| p.into_inner());
            if *opted < cfg.shared_bytes {
                self.func
                    .set_attribute(
                        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        cfg.shared_bytes as i32,
                    )
                    .map_err(|e| Error::driver("allowing the kernel more dynamic shared memory", e))?;
                *opted = cfg.shared_bytes;
            }
        }
        Ok(())
    }
}

/// Static plus dynamic shared memory must fit in what the device gives one block.
fn check_shared(kernel: &'static str, static_shared: usize, dynamic: usize, max: usize) -> Result<()> {
    if static_shared.saturating_add(dynamic) > max {
        return Err(Error::LaunchConfig {
            kernel,
            message: format!(
                "the kernel has {static_shared} bytes of static shared memory and the launch asks for \
                 {dynamic} bytes of dynamic shared memory, but the device gives a block at most {max} bytes"
            ),
        });
    }
    Ok(())
}

/// The device a launch runs on: the one its stream or `device` names, else the one its
/// device arrays are on, else the default device. All of them must agree.
fn launch_device(kernel: &'static str, cfg: &LaunchConfig, args: &[KArg<'_>]) -> Result<Device> {
    let mut on: Vec<(&'static str, &Device)> = Vec::new();
    if let Some(s) = &cfg.stream {
        on.push(("stream", s.device()));
    }
    if let Some(d) = &cfg.device {
        on.push(("device", d));
    }
    for arg in args {
        if let (Some(d), Some(name)) = (arg.device(), arg.name()) {
            on.push((name, d));
        }
    }
    match crate::driver::one_of(kernel, &on)? {
        Some(d) => Ok(d.clone()),
        None => default_device(),
    }
}

/// A device temporary holding a copy of `bytes` bytes of host memory at `ptr` (0 for an
/// empty slice: the kernel reads none of it).
fn copy_in(
    queued: &mut Queued,
    device: &Device,
    stream: &Arc<cudarc::driver::CudaStream>,
    ptr: *const u8,
    bytes: usize,
) -> Result<u64> {
    if bytes == 0 {
        return Ok(0);
    }
    let dst = queued.temporary(device, bytes)?;
    // SAFETY: `ptr` is a live borrow of `bytes` bytes (a `KArg` is made only from one).
    let src = unsafe { std::slice::from_raw_parts(ptr, bytes) };
    // SAFETY: `dst` has room for `bytes` bytes; a copy from pageable memory is staged by
    // the driver before the call returns; the stream belongs to the bound context.
    unsafe { result::memcpy_htod_async(dst, src, stream.cu_stream()) }
        .map_err(|e| Error::driver("copying an argument to the GPU", e))?;
    Ok(dst)
}

/// Page-locked buffers with the `&mut` host slices (borrowed by the pending launch) they
/// are copied to.
struct CopyBack(Vec<(PinnedBuffer, *mut u8, usize)>);

// SAFETY: the pointers are `&mut` slices exclusively borrowed by the pending launch that
// owns this value; the buffers are plain memory.
unsafe impl Send for CopyBack {}

impl CopyBack {
    /// The whole value (a closure that used the field would capture only the `Vec`).
    fn into_inner(self) -> Vec<(PinnedBuffer, *mut u8, usize)> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_memory_past_the_device_limit_is_refused() {
        assert!(check_shared("k", 1024, 47 * 1024, 48 * 1024).is_ok());
        assert!(check_shared("k", 0, 227 * 1024, 227 * 1024).is_ok());
        let e = check_shared("k", 4096, 224 * 1024, 227 * 1024).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`k`: bad launch configuration: the kernel has 4096 bytes of static shared memory and the launch \
             asks for 229376 bytes of dynamic shared memory, but the device gives a block at most 232448 bytes"
        );
        assert!(check_shared("k", 1, usize::MAX, 1 << 20).is_err());
    }

    static SPEC_PARAMS: &[(&str, KernelParam)] =
        &[("a", KernelParam::Scalar), ("x", KernelParam::Slice), ("y", KernelParam::Slice)];

    static AXPY: ExplicitKernel =
        ExplicitKernel::new(ExplicitSpec { name: "axpy", symbol: "kernel_axpy", ptx: "", params: SPEC_PARAMS });

    #[test]
    fn arguments_must_match_the_parameters() {
        let x = [1.0f32; 4];
        let mut y = [0.0f32; 4];
        assert!(AXPY.check_args(&[KArg::scalar(2.0f32), KArg::input("x", &x), KArg::output("y", &mut y)]).is_ok());
        assert!(matches!(AXPY.check_args(&[KArg::scalar(2.0f32), KArg::input("x", &x)]), Err(Error::Internal { .. })));
        assert!(matches!(
            AXPY.check_args(&[KArg::input("x", &x), KArg::scalar(2.0f32), KArg::output("y", &mut y)]),
            Err(Error::Internal { .. })
        ));
    }

    #[test]
    fn launches_are_checked_before_any_driver_call() {
        // Every check below fails before a device is looked for, so this runs without a
        // GPU: a bad shape, then an aliasing `&mut`.
        let x = [1.0f32; 4];
        let mut y = [0.0f32; 4];
        let args = vec![KArg::scalar(2.0f32), KArg::input("x", &x), KArg::output("y", &mut y)];
        let e = AXPY.launch(&LaunchConfig::new(1, 2048), args).unwrap_err();
        assert!(matches!(e, Error::LaunchConfig { kernel: "axpy", .. }), "{e:?}");
        let wrong = vec![KArg::scalar(2.0f32)];
        assert!(matches!(AXPY.launch(&LaunchConfig::new(1, 1), wrong), Err(Error::Internal { .. })));
    }
}
