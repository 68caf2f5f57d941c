//! N-dimensional calls on the GPU: each array's span (or, for a sparse view, only the
//! elements it reads) goes to the device, and the plain entry runs the call when every
//! array is then contiguous, else the strided entry walks the views by their strides.

use std::marker::PhantomData;

use super::params::StridedLayout;
use super::{ErasedOut, Kernel, Launch, Plan, execute};
use crate::data::nd::{NdKind, NdPlan};
use crate::data::{ArgKind, ErasedArg, bytes_kind};
use crate::driver::default_device;
use crate::error::{Error, Result};

/// Runs a planned N-dimensional call, writing `plan.n` results (C order) to `outs`.
///
/// # Safety
/// As for [`Launch::enqueue`]: `args` are the kernel's inputs and `outs` its outputs, in
/// order and type.
pub(crate) unsafe fn run_nd(
    kernel: &Kernel,
    plan: &NdPlan<'_>,
    args: &[crate::data::nd::ErasedNd<'_>],
    outs: &[ErasedOut<'_>],
) -> Result<()> {
    let spec = kernel.spec();
    let dims = &plan.dims;
    // More merged axes than the strided entry takes: every array is gathered into a
    // contiguous copy of the whole broadcast shape.
    let dense = dims.len() > kernel_abi::MAX_DIMS;
    // The device of the GPU's arrays (one, as `nd_on_cpu` checked), else the default.
    let on = args.iter().find_map(|a| match &a.0 {
        NdKind::Device { device, .. } => Some((*device).clone()),
        _ => None,
    });
    let device = match on {
        Some(d) => d,
        None => default_device()?,
    };
    for a in args {
        if let NdKind::Device { device: d, .. } = &a.0
            && d.id() != device.id()
        {
            let devices = vec![("device", device.id()), ("argument", d.id())];
            return Err(Error::DeviceMismatch { function: spec.name, devices });
        }
    }
    if dense && plan.on_gpu() {
        // Gathered on the host (the rare call of more axes than the entry takes, which
        // cannot merge): the GPU's arrays come to the host first.
        let mut copies = Vec::new();
        let hosted = crate::data::nd::hosted(args, &mut copies)?;
        let replanned = NdPlan::new(spec.name, spec.params, &hosted, &[])?;
        // SAFETY: the caller's promise, for the same arguments in host memory.
        return unsafe { run_nd_on(kernel, device, &replanned, &hosted, outs) };
    }
    // SAFETY: the caller's promise.
    unsafe { run_nd_on(kernel, device, plan, args, outs) }
}

/// [`run_nd`] on `device`.
///
/// # Safety
/// As for [`run_nd`].
unsafe fn run_nd_on(
    kernel: &Kernel,
    device: crate::driver::Device,
    plan: &NdPlan<'_>,
    args: &[crate::data::nd::ErasedNd<'_>],
    outs: &[ErasedOut<'_>],
) -> Result<()> {
    let spec = kernel.spec();
    let dims = &plan.dims;
    let dense = dims.len() > kernel_abi::MAX_DIMS;
    let mut gathered: Vec<Vec<u8>> = Vec::new();
    let mut kinds: Vec<(ArgKind<'_>, Vec<isize>, u64)> = Vec::with_capacity(args.len());
    for (arg, op) in args.iter().zip(&plan.operands) {
        let kind = match (&arg.0, op) {
            (NdKind::Scalar { value }, _) => (value.clone(), Vec::new(), 0),
            (NdKind::Host { .. }, Some(op)) if op.distinct(dims) == 1 => {
                // One element read everywhere: passed by value.
                // SAFETY: the borrowed view's first element, of `size` bytes.
                let src = unsafe { std::slice::from_raw_parts(op.origin, op.size) };
                (bytes_kind(src), Vec::new(), 0)
            }
            (NdKind::Host { .. }, Some(op)) if dense || op.span_len() > 2 * op.distinct(dims) => {
                // A sparse view (or too many axes): only the elements read are copied.
                let (bytes, strides) = op.gather(dims, dense);
                gathered.push(bytes);
                let b = gathered.last().expect("pushed");
                let kind = ArgKind::Host {
                    ptr: b.as_ptr(),
                    bytes: b.len(),
                    len: b.len() / op.size,
                    size: op.size,
                    _borrow: PhantomData,
                };
                (kind, strides, 0)
            }
            (NdKind::Host { .. }, Some(op)) => {
                // The view's memory span as it is; the strides walk it on the device.
                // SAFETY: the span lies in the borrowed view's allocation.
                let start = unsafe { op.origin.offset(op.span.0 * op.size as isize) };
                let kind = ArgKind::Host {
                    ptr: start,
                    bytes: op.span_len() * op.size,
                    len: op.span_len(),
                    size: op.size,
                    _borrow: PhantomData,
                };
                (kind, op.strides.clone(), op.span.0.unsigned_abs() as u64 * op.size as u64)
            }
            // A GPU's array, read where it is by the strided entry (C order: its span starts
            // at its first element).
            (NdKind::Device { device, uses, size, .. }, Some(op)) => {
                let ptr = op.origin as u64 + (op.span.0 * *size as isize) as u64;
                let kind = ArgKind::Device { ptr, len: op.span_len(), size: *size, device, uses };
                (kind, op.strides.clone(), op.span.0.unsigned_abs() as u64 * op.size as u64)
            }
            (NdKind::Host { .. } | NdKind::Device { .. }, None) => {
                return Err(Error::internal(format!("`{}`: an array argument was planned as a scalar", spec.name)));
            }
        };
        kinds.push(kind);
    }
    let flat = dense
        || (dims.len() <= 1
            && kinds
                .iter()
                .all(|(k, strides, _)| matches!(k, ArgKind::Scalar { .. }) || strides.iter().all(|&s| s == 1)));
    let erased: Vec<ErasedArg<'_>> = kinds.iter().map(|(k, _, _)| ErasedArg(k.clone())).collect();
    let run = Plan { n: plan.n, device };
    let launch = Launch { spec, plan: &run, args: &erased, outs };
    if flat {
        // SAFETY: the caller's promise; `gathered` outlives the call.
        return unsafe { execute(kernel, &launch) };
    }
    let layout = StridedLayout {
        dims: dims.clone(),
        strides: kinds.iter().map(|(_, s, _)| s.clone()).collect(),
        origins: kinds.iter().map(|(_, _, o)| *o).collect(),
    };
    let loaded = kernel.loaded(&run.device)?;
    // SAFETY: the caller's promise; the strided entry with its layout; host outputs and
    // `gathered` outlive the wait.
    unsafe { launch.enqueue(&loaded.strided, run.device.stream()?, Some(&layout))? }.finish()
}
