//! A vectorized function's kernel: its PTX, loaded once per device, and the launch that
//! applies it to host slices and broadcast scalars.
//!
//! The parameter layout is the compiler's (`ptx-codegen`'s `abi` module): `n`, the output
//! pointer, a `(pointer, value)` pair per input (a null pointer means "broadcast the
//! value"), and an error-flag pointer when the function can fail.

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::{Mutex, OnceLock};

use cudarc::driver::sys::{CUdeviceptr, CUresult};
use cudarc::driver::{result, CudaFunction, CudaSlice, DevicePtr, DevicePtrMut};
use cudarc::nvrtc::Ptx;

use crate::arg::ErasedArg;
use crate::device::{default_device, Device};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

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
    /// Whether the entry takes the error-flag parameter.
    pub error_flag: bool,
}

/// Devices whose loaded kernel is found without a lock.
const FAST_DEVICES: usize = 8;

/// Threads per block. Elementwise kernels are memory-bound; 256 keeps occupancy full on
/// every architecture from Volta on.
const BLOCK: u32 = 256;

#[derive(Clone)]
struct Loaded {
    func: CudaFunction,
    /// Blocks that fit on the whole device at once: the grid-stride loop needs no more.
    max_grid: u32,
}

/// A kernel with its per-device cache. The macro puts one in a `static` per function.
pub struct Kernel {
    spec: KernelSpec,
    fast: [OnceLock<Loaded>; FAST_DEVICES],
    slow: Mutex<Vec<(usize, Loaded)>>,
    load_lock: Mutex<()>,
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
    fn loaded(&self, device: &Device) -> Result<Loaded> {
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
            .map_err(|e| Error::driver("loading the kernel's PTX", e))?;
        let func = module.load_function(self.spec.entry).map_err(|e| Error::driver("finding the kernel entry", e))?;
        let per_sm = func
            .occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)
            .map_err(|e| Error::driver("computing the kernel's occupancy", e))?
            .max(1);
        let loaded = Loaded { func, max_grid: per_sm.saturating_mul(inner.sm_count) };
        match self.fast.get(ordinal) {
            Some(slot) => {
                let _ = slot.set(loaded.clone());
            }
            None => self.slow.lock().unwrap_or_else(|p| p.into_inner()).push((ordinal, loaded.clone())),
        }
        Ok(loaded)
    }

    /// Runs the kernel over host slices and scalars and returns the results.
    ///
    /// # Safety
    /// `args` must match the kernel's inputs in number, order and element type, and `R` must
    /// be its output type: the macro that generates the call guarantees it.
    pub unsafe fn call_host<R: Scalar>(&'static self, device: Option<&Device>, args: &[ErasedArg<'_>]) -> Result<Vec<R>> {
        let lens: Vec<Option<usize>> = args.iter().map(ErasedArg::len).collect();
        let n = crate::arg::broadcast_len(self.spec.name, self.spec.params, &lens)?;
        if n == 0 {
            return Ok(Vec::new());
        }
        let device = match device {
            Some(d) => d.clone(),
            None => default_device()?,
        };
        device.bind()?;
        let loaded = self.loaded(&device)?;
        let stream = &device.inner().stream;

        let alloc = |bytes: usize| -> Result<CudaSlice<u8>> {
            // SAFETY: every byte is written (by a copy or by the kernel) before it is read.
            unsafe { stream.alloc::<u8>(bytes) }.map_err(|e| alloc_error(&device, bytes, e))
        };
        let mut inputs = Vec::with_capacity(args.len());
        for arg in args {
            if let ErasedArg::Host { ptr, bytes, .. } = *arg {
                let buf = alloc(bytes)?;
                let (dst, _) = buf.device_ptr(stream);
                // SAFETY: `ptr` is a live borrow of `bytes` bytes (`ErasedArg::Host`); a copy
                // from pageable memory is staged by the driver before the call returns.
                let src = unsafe { std::slice::from_raw_parts(ptr, bytes) };
                unsafe { result::memcpy_htod_async(dst, src, stream.cu_stream()) }
                    .map_err(|e| Error::driver("copying an argument to the GPU", e))?;
                inputs.push(Some(buf));
            } else {
                inputs.push(None);
            }
        }
        let out_bytes = n * std::mem::size_of::<R>();
        let out = alloc(out_bytes)?;
        // The fault word starts at "no fault"; the kernel lowers it to `index << 8 | code`.
        let flag = if self.spec.error_flag {
            let mut f = unsafe { stream.alloc::<u64>(1) }.map_err(|e| alloc_error(&device, 8, e))?;
            let (ptr, _) = f.device_ptr_mut(stream);
            unsafe { result::memset_d8_async(ptr, 0xff, 8, stream.cu_stream()) }
                .map_err(|e| Error::driver("initialising the kernel's error flag", e))?;
            Some(f)
        } else {
            None
        };

        let ptr_of = |s: &CudaSlice<u8>| -> CUdeviceptr { s.device_ptr(stream).0 };
        let mut words: Vec<u64> = Vec::with_capacity(3 + 2 * args.len());
        words.push(n as u64);
        words.push(ptr_of(&out));
        for (arg, buf) in args.iter().zip(&inputs) {
            match (arg, buf) {
                (ErasedArg::Scalar { bits }, _) => words.extend([0, *bits]),
                (_, Some(b)) => words.extend([ptr_of(b), 0]),
                (ErasedArg::Host { .. }, None) => unreachable!("every host argument was copied"),
            }
        }
        if let Some(f) = &flag {
            words.push(f.device_ptr(stream).0);
        }
        // Each kernel parameter is read from its own 8-byte word: a pointer, `n`, or a
        // scalar whose bytes sit at the start of the word (little-endian).
        let mut params: Vec<*mut c_void> = words.iter_mut().map(|w| (w as *mut u64).cast()).collect();
        let grid = n.div_ceil(BLOCK as usize).min(loaded.max_grid as usize).max(1) as u32;
        // SAFETY: the parameters follow the kernel's ABI (guaranteed by the caller) and
        // every buffer outlives the synchronisation below.
        unsafe {
            result::launch_kernel(
                loaded.func.cu_function(),
                (grid, 1, 1),
                (BLOCK, 1, 1),
                0,
                stream.cu_stream(),
                &mut params,
            )
        }
        .map_err(|e| Error::driver("launching the kernel", e))?;

        let mut results: Vec<R> = Vec::with_capacity(n);
        let mut fault = u64::MAX;
        {
            let spare: &mut [MaybeUninit<R>] = &mut results.spare_capacity_mut()[..n];
            // SAFETY: `spare` has room for `n` values of `R`; the copy writes all of them.
            unsafe { result::memcpy_dtoh_async(spare, ptr_of(&out), stream.cu_stream()) }
                .map_err(|e| Error::driver("copying the results from the GPU", e))?;
            if let Some(f) = &flag {
                unsafe { result::memcpy_dtoh_async(std::slice::from_mut(&mut fault), f.device_ptr(stream).0, stream.cu_stream()) }
                    .map_err(|e| Error::driver("reading the kernel's error flag", e))?;
            }
        }
        stream.synchronize().map_err(|e| Error::driver("running the kernel", e))?;
        // SAFETY: the copy above initialised `n` values and has completed.
        unsafe { results.set_len(n) };
        if fault != u64::MAX {
            return Err(Error::KernelFault {
                function: self.spec.name,
                index: fault >> 8,
                message: fault_message((fault & 0xff) as u32),
            });
        }
        Ok(results)
    }
}

fn alloc_error(device: &Device, requested: usize, e: cudarc::driver::DriverError) -> Error {
    if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        let free = device.memory_info().map(|(free, _)| free).unwrap_or(0);
        return Error::OutOfMemory { requested, free };
    }
    Error::driver("allocating GPU memory", e)
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
