//! `name::reduce` of a reducible vectorized function and its forms: `reduce_on` (a chosen
//! device), `reduce_init` (Numba's `init=`: the fold starts from a value given at the
//! call) and `reduce_into` (Numba's `res=`: the result is written into a one-element
//! array, on the device for a device array, with no trip through host memory).

use crate::data::{ArgRef, HostArg, HostLoop, OutRef, device_mismatch};
use crate::driver::Device;
use crate::error::{Error, Result};
use crate::launch::Kernel;
use crate::panics::catch_quiet;
use crate::scalar::GpuType;

use super::cpu_device::{cpu_target, host_reduce};

/// How one `reduce…` call folds: on which device (`None`: the array's, else the default),
/// from which initial value, and where the result goes (`None`: returned).
pub struct Fold<'d, 'o, T> {
    pub device: Option<&'d Device>,
    pub init: Option<T>,
    pub res: Option<OutRef<'o, T>>,
}

impl<T> Fold<'_, '_, T> {
    /// The plain `reduce`: on the array's device, no initial value, the result returned.
    pub fn plain() -> Self {
        Fold { device: None, init: None, res: None }
    }
}

/// A `reduce…` call of a function compiled for the GPU: on the CPU device where the call
/// goes there (as `name::parallel` folds), else on a GPU with `kernel`'s reduction entry.
/// Gives the result, or `None` where it went to `fold.res`.
///
/// # Safety
/// `T` must be the kernel's element type, and `f` the kernel's function.
pub unsafe fn reduce<T: GpuType>(
    kernel: &Kernel,
    function: &'static str,
    values: ArgRef<'_, T>,
    fold: Fold<'_, '_, T>,
    identity: Option<T>,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<Option<T>> {
    let Fold { device, init, res } = fold;
    let res_device = res.as_ref().and_then(OutRef::device_id);
    if let Some(cpu) = cpu_target(device, &[values.device_id(), res_device]) {
        let values = values.host_on(function, "values", &cpu)?;
        if let Some(OutRef::Device(d)) = &res
            && d.device() != &cpu
        {
            return Err(device_mismatch(function, &cpu, "res", d.device()));
        }
        return host_fold_into(function, values, init, res, identity, HostLoop::Parallel, f);
    }
    let erased = match values {
        // One value: the function combines it with `init` on the host.
        ArgRef::Scalar(v) => {
            return host_fold_into(function, HostArg::Scalar(v), init, res, identity, HostLoop::Sequential, f);
        }
        values => values.erase(),
    };
    match res {
        Some(OutRef::Device(d)) => {
            // SAFETY: the caller's promise.
            unsafe { kernel.reduce::<T>(device, erased, identity, init, Some(d)) }
        }
        Some(OutRef::Host(out)) => {
            // SAFETY: the caller's promise.
            let value = folded(unsafe { kernel.reduce::<T>(device, erased, identity, init, None) })?;
            deliver(function, value, Some(OutRef::Host(out)))
        }
        None => {
            // SAFETY: the caller's promise.
            unsafe { kernel.reduce::<T>(device, erased, identity, init, None) }
        }
    }
}

/// The value of a `reduce…` call that returns it (not written into a `res`).
pub fn folded<T>(r: Result<Option<T>>) -> Result<T> {
    r?.ok_or_else(|| Error::internal("a reduction returned no value"))
}

/// A `reduce…` call on the host (the CPU targets, the CPU device, a scalar): the fold of
/// `values` in `order`, then `f(init, fold)`, given or written into `res`. A panic of that
/// last step is the `KernelFault` at index 0, as the first step of a fold from `init`.
pub fn host_fold_into<T: GpuType>(
    function: &'static str,
    values: HostArg<'_, T>,
    init: Option<T>,
    res: Option<OutRef<'_, T>>,
    identity: Option<T>,
    order: HostLoop,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<Option<T>> {
    let folded = match host_reduce(function, values, None, order, &f) {
        Ok(v) => Some(v),
        Err(Error::EmptyReduce { .. }) => None,
        Err(e) => return Err(e),
    };
    let value = match (init, folded) {
        (Some(i), Some(v)) => {
            catch_quiet(|| f(i, v)).map_err(|message| Error::KernelFault { function, index: 0, message })?
        }
        (i, v) => v.or(i).or(identity).ok_or(Error::EmptyReduce { function })?,
    };
    deliver(function, value, res)
}

/// `value` returned, or written into `res` (one element: `LengthMismatch` otherwise).
fn deliver<T: GpuType>(function: &'static str, value: T, res: Option<OutRef<'_, T>>) -> Result<Option<T>> {
    let Some(res) = res else { return Ok(Some(value)) };
    if res.len() != 1 {
        return Err(Error::LengthMismatch { function, lengths: vec![("res", res.len()), ("result", 1)] });
    }
    match res {
        OutRef::Host(s) => s[0] = value,
        OutRef::Device(mut d) => d.copy_from(&[value])?,
    }
    Ok(None)
}
