//! The calls of a vectorized function, written once. For each function the macro
//! generates a type implementing [`VectorFn`] (what depends on the function's types: how
//! its arguments bind, erase and become host data, and its loop over elements) and, for
//! the GPU target, [`GpuFn`] (its kernel); the generated `on`, `into`, `launch`, `cpu`, …
//! are each one call of the function of the same name here. rustc then checks the bodies
//! once, in this crate, instead of once per function in the user's.

use std::mem::MaybeUninit;

use crate::data::{ArgRef, ErasedArg, HostArg, HostLoop, Results, call_len};
use crate::driver::{Device, DeviceId, Stream};
use crate::error::Result;
use crate::launch::{Kernel, Pending};
use crate::panics::with_host_message;
use crate::scalar::GpuType;

use super::cpu_device::{cpu_of_devices, cpu_pending, cpu_target, cpu_write, with_out_devices};
use super::host::{CHUNK, host_fill};

/// A vectorized function as the generic calls see it: implemented by the macro for a type
/// of the function's module (`name::__Function`, one per listed type for a generic one).
///
/// # Safety
/// [`VectorFn::fill`] must initialise every element of `out`: the calls take the results
/// as written.
pub unsafe trait VectorFn: Sized + 'static {
    /// The function's name, for messages.
    const NAME: &'static str;
    /// Its parameters' names, in order.
    const PARAMS: &'static [&'static str];
    /// One element's result (a scalar, or a tuple of them).
    type Ret: Results;
    /// The bound arguments: a tuple of one [`ArgRef`] per parameter.
    type Args<'a>: Copy + Send;
    /// The arguments as host data: a tuple of one [`HostArg`] per parameter.
    type Host<'a>: Sync;
    /// One `X` per parameter (`[X; N]`).
    type Each<X>: AsRef<[X]>;

    /// The arguments readable on the host: for a call on the CPU device `on`, borrowed
    /// (an array on a GPU is `DeviceMismatch`); with `on` `None` (`name::cpu`), arrays on
    /// a GPU are copied to the host.
    fn host<'a>(args: Self::Args<'a>, on: Option<&Device>) -> Result<Self::Host<'a>>;

    /// The arguments' lengths (`None` for a broadcast scalar).
    fn lens(host: &Self::Host<'_>) -> Self::Each<Option<usize>>;

    /// The arguments' devices (`None` for a scalar or host memory).
    fn devices(args: &Self::Args<'_>) -> Self::Each<Option<DeviceId>>;

    /// The results at elements `start..start + out.len()`, written into `out` (all of it),
    /// by the function's own loop.
    fn fill(host: &Self::Host<'_>, start: usize, out: &mut [MaybeUninit<Self::Ret>]);

    /// The result at element `i`.
    fn at(host: &Self::Host<'_>, i: usize) -> Self::Ret;

    /// Rust's panic message at element `i`, from the original function run on the host
    /// there (for a GPU fault's message); `None` where it does not panic.
    fn message_at(args: Self::Args<'_>, i: u64) -> Option<String>;
}

/// A vectorized function compiled for the GPU.
///
/// # Safety
/// The kernel must take the arguments [`GpuFn::erase`] gives (in number, order and element
/// type) and give results of type `Ret`.
pub unsafe trait GpuFn: VectorFn {
    /// The function's kernel.
    fn kernel() -> &'static Kernel;

    /// The arguments as the kernel takes them.
    fn erase(args: Self::Args<'_>) -> Self::Each<ErasedArg<'_>>;
}

/// One argument as host data (see [`VectorFn::host`]); the generated `host` calls it per
/// parameter.
pub fn host_arg<'a, T: GpuType>(
    arg: ArgRef<'a, T>,
    function: &'static str,
    param: &'static str,
    on: Option<&Device>,
) -> Result<HostArg<'a, T>> {
    match on {
        Some(device) => arg.host_on(function, param, device),
        None => arg.to_host(),
    }
}

type HostOf<F> = <<F as VectorFn>::Ret as Results>::Host;
type DeviceOf<F> = <<F as VectorFn>::Ret as Results>::Device;
type OutsOf<'a, F> = <<F as VectorFn>::Ret as Results>::Outs<'a>;

/// The function over its host arguments, with outputs of `out_lens` (empty but for
/// `into`) checked against them.
fn values<F: VectorFn>(host: &F::Host<'_>, out_lens: &[usize], how: HostLoop) -> Result<Vec<F::Ret>> {
    let n = call_len(F::NAME, F::PARAMS, F::lens(host).as_ref(), out_lens)?;
    let fill = |start: usize, out: &mut [MaybeUninit<F::Ret>]| F::fill(host, start, out);
    host_fill::<F::Ret>(F::NAME, n, how, CHUNK, &fill, &|i| F::at(host, i))
}

/// The call on the CPU device `cpu`, split over threads as `name::parallel` is.
fn on_cpu<F: VectorFn>(cpu: &Device, out_lens: &[usize], args: F::Args<'_>) -> Result<Vec<F::Ret>> {
    values::<F>(&F::host(args, Some(cpu))?, out_lens, HostLoop::Parallel)
}

/// The arguments' devices followed by `outs`'.
fn devices_with_outs<F: VectorFn>(args: &F::Args<'_>, outs: &OutsOf<'_, F>) -> Vec<Option<DeviceId>> {
    with_out_devices::<F::Ret>(F::devices(args).as_ref(), outs)
}

/// `name(…)`: on the device of the arguments' arrays, or the default device.
pub fn call<F: GpuFn>(args: F::Args<'_>) -> Result<HostOf<F>> {
    if let Some(cpu) = &cpu_target(None, F::devices(&args).as_ref()) {
        return on_cpu::<F>(cpu, &[], args).map(F::Ret::unzip);
    }
    // SAFETY: `GpuFn`'s promise.
    let r = unsafe { F::kernel().call_host::<F::Ret>(None, F::erase(args).as_ref()) };
    with_host_message(r, |i| F::message_at(args, i))
}

/// `name::on(device, …)`.
pub fn on<F: GpuFn>(device: &Device, args: F::Args<'_>) -> Result<HostOf<F>> {
    if device.is_cpu() {
        return on_cpu::<F>(device, &[], args).map(F::Ret::unzip);
    }
    // SAFETY: `GpuFn`'s promise.
    let r = unsafe { F::kernel().call_host::<F::Ret>(Some(device), F::erase(args).as_ref()) };
    with_host_message(r, |i| F::message_at(args, i))
}

/// `name::on_devices(devices, …)`.
pub fn on_devices<F: GpuFn>(devices: &[Device], args: F::Args<'_>) -> Result<HostOf<F>> {
    if let Some(cpu) = &cpu_of_devices(F::NAME, devices)? {
        return on::<F>(cpu, args);
    }
    // SAFETY: `GpuFn`'s promise.
    let r = unsafe { F::kernel().call_host_on_devices::<F::Ret>(devices, F::erase(args).as_ref()) };
    with_host_message(r, |i| F::message_at(args, i))
}

/// `name::device(…)`.
pub fn device<F: GpuFn>(args: F::Args<'_>) -> Result<DeviceOf<F>> {
    if let Some(cpu) = &cpu_target(None, F::devices(&args).as_ref()) {
        return F::Ret::host_to_device(F::Ret::unzip(on_cpu::<F>(cpu, &[], args)?), cpu);
    }
    // SAFETY: `GpuFn`'s promise.
    let r = unsafe { F::kernel().call_device::<F::Ret>(None, F::erase(args).as_ref()) };
    with_host_message(r, |i| F::message_at(args, i))
}

/// `name::into(out, …)`: `into`'s outputs count among the arrays that choose the device.
pub fn into<'a, F: GpuFn>(outs: OutsOf<'a, F>, args: F::Args<'a>) -> Result<()> {
    if let Some(cpu) = &cpu_target(None, &devices_with_outs::<F>(&args, &outs)) {
        return cpu_write::<F::Ret>(F::NAME, cpu, outs, |lens| on_cpu::<F>(cpu, lens, args));
    }
    // SAFETY: `GpuFn`'s promise.
    let r = unsafe { F::kernel().call_into::<F::Ret>(None, F::erase(args).as_ref(), outs) };
    with_host_message(r, |i| F::message_at(args, i))
}

/// `into` on `device` (a GPU, or the CPU device), whatever the arguments' devices are (an
/// array on another device is `Error::DeviceMismatch`): for the column calls.
pub(crate) fn into_on<'a, F: GpuFn>(device: &Device, outs: OutsOf<'a, F>, args: F::Args<'a>) -> Result<()> {
    if device.is_cpu() {
        return cpu_write::<F::Ret>(F::NAME, device, outs, |lens| on_cpu::<F>(device, lens, args));
    }
    // SAFETY: `GpuFn`'s promise.
    let r = unsafe { F::kernel().call_into::<F::Ret>(Some(device), F::erase(args).as_ref(), outs) };
    with_host_message(r, |i| F::message_at(args, i))
}

/// `name::launch(stream, …)`.
pub fn launch<'a, F: GpuFn>(stream: &'a Stream, args: F::Args<'a>) -> Result<Pending<'a, HostOf<F>>> {
    if stream.device().is_cpu() {
        return cpu_pending(on_cpu::<F>(stream.device(), &[], args).map(F::Ret::unzip));
    }
    // SAFETY: `GpuFn`'s promise.
    let pending = unsafe { F::kernel().launch_host::<F::Ret>(stream, F::erase(args).as_ref()) }?;
    Ok(pending.with_host_message(move |i| F::message_at(args, i)))
}

/// `name::launch_device(stream, …)`.
pub fn launch_device<'a, F: GpuFn>(stream: &'a Stream, args: F::Args<'a>) -> Result<Pending<'a, DeviceOf<F>>> {
    let device = stream.device();
    if device.is_cpu() {
        let values = on_cpu::<F>(device, &[], args);
        return cpu_pending(values.and_then(|v| F::Ret::host_to_device(F::Ret::unzip(v), device)));
    }
    // SAFETY: `GpuFn`'s promise.
    let pending = unsafe { F::kernel().launch_device::<F::Ret>(stream, F::erase(args).as_ref()) }?;
    Ok(pending.with_host_message(move |i| F::message_at(args, i)))
}

/// `name::launch_into(stream, out, …)`.
pub fn launch_into<'a, F: GpuFn>(
    stream: &'a Stream,
    outs: OutsOf<'a, F>,
    args: F::Args<'a>,
) -> Result<Pending<'a, ()>> {
    let device = stream.device();
    if device.is_cpu() {
        return cpu_pending(cpu_write::<F::Ret>(F::NAME, device, outs, |lens| on_cpu::<F>(device, lens, args)));
    }
    // SAFETY: `GpuFn`'s promise.
    let pending = unsafe { F::kernel().launch_into::<F::Ret>(stream, F::erase(args).as_ref(), outs) }?;
    Ok(pending.with_host_message(move |i| F::message_at(args, i)))
}

/// `name::cpu(…)` (`how` sequential) and `name::parallel(…)`: on the host, whatever the
/// target; arrays on a GPU are copied to the host first.
pub fn host<F: VectorFn>(how: HostLoop, args: F::Args<'_>) -> Result<HostOf<F>> {
    values::<F>(&F::host(args, None)?, &[], how).map(F::Ret::unzip)
}

/// `into` for the CPU targets, which loop as `how` says: the lengths are checked as on
/// the GPU, the results written into `outs`.
pub fn host_into<'a, F: VectorFn>(how: HostLoop, outs: OutsOf<'a, F>, args: F::Args<'a>) -> Result<()> {
    let host = F::host(args, None)?;
    let values = values::<F>(&host, &F::Ret::out_slots_len(&outs), how)?;
    F::Ret::write(values, outs)
}
