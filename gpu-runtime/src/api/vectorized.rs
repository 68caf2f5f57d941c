//! The calls of a vectorized function, written once. For each function the macro
//! generates a type implementing [`VectorFn`] (what depends on the function's types: how
//! its arguments bind, erase and become host data, and its loop over elements) and, for
//! the GPU target, [`GpuFn`] (its kernel); the generated `on`, `into`, `launch`, `cpu`, …
//! are each one call of the function of the same name here. rustc then checks the bodies
//! once, in this crate, instead of once per function in the user's.

use std::mem::MaybeUninit;

use crate::data::{ArgRef, ErasedArg, HostArg, HostLoop, HostView, Results, call_len, call_len_of};
use crate::driver::{Device, Stream};
use crate::error::{Error, Result};
use crate::launch::{Kernel, MessageAt, Pending};
use crate::panics::{host_message, panic_message};
use crate::scalar::GpuType;

use super::cpu_device::{cpu_of_devices, cpu_pending, cpu_target_into, cpu_target_of, cpu_write};
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

    /// The results at elements `start..start + out.len()`, written into `out` (all of it),
    /// by the function's own loop.
    fn fill(host: &Self::Host<'_>, start: usize, out: &mut [MaybeUninit<Self::Ret>]);
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

    /// The arguments as host data, from views of the arguments [`GpuFn::erase`] gave (one
    /// per parameter, in order).
    ///
    /// # Safety
    /// `views` are views of `erase`'s arguments ([`HostView::arg`]'s promise).
    unsafe fn host_of<'a>(views: &[HostView<'a>]) -> Self::Host<'a>;
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
    host_fill::<F::Ret>(F::NAME, n, how, CHUNK, &|start, out| F::fill(host, start, out))
}

/// One call, as the calls' bodies see it: its arguments erased, and what the bodies need
/// of the function as plain functions over erased host data. The bodies take a `Call`
/// and are compiled once per result type, not once per function (a user's crate builds
/// one copy for all its functions).
struct Call<'c, 'a, R> {
    name: &'static str,
    params: &'static [&'static str],
    kernel: &'static Kernel,
    /// The arguments as `kernel` takes them.
    erased: &'c [ErasedArg<'a>],
    /// `values_of` the function.
    values: ValuesOf<R>,
    /// `message_of` the function.
    message: MessageOf,
}

type ValuesOf<R> = unsafe fn(&[HostView<'_>], usize) -> Result<Vec<R>>;
type MessageOf = unsafe fn(&[HostView<'_>]) -> Option<String>;

/// The `n` results of `F` over `views` of its erased arguments, split over threads as
/// `name::parallel` is.
///
/// # Safety
/// `views` are of `F::erase`'s arguments, in order (as [`GpuFn::host_of`]).
unsafe fn values_of<F: GpuFn>(views: &[HostView<'_>], n: usize) -> Result<Vec<F::Ret>> {
    // SAFETY: the caller's promise.
    let host = unsafe { F::host_of(views) };
    host_fill::<F::Ret>(F::NAME, n, HostLoop::Parallel, CHUNK, &|start, out| F::fill(&host, start, out))
}

/// Rust's panic message where `F` panics on one element, given as `views` of its erased
/// arguments' values there; `None` where it does not panic.
///
/// # Safety
/// As for [`values_of`].
unsafe fn message_of<F: GpuFn>(views: &[HostView<'_>]) -> Option<String> {
    // SAFETY: the caller's promise.
    let host = unsafe { F::host_of(views) };
    panic_message(&mut || F::fill(&host, 0, &mut [MaybeUninit::uninit()]))
}

/// Runs `body` on the call of `F` with `args`.
#[inline]
fn with_call<'a, F: GpuFn, T>(args: F::Args<'a>, body: impl FnOnce(&Call<'_, 'a, F::Ret>) -> T) -> T {
    let erased = F::erase(args);
    body(&Call {
        name: F::NAME,
        params: F::PARAMS,
        kernel: F::kernel(),
        erased: erased.as_ref(),
        values: values_of::<F>,
        message: message_of::<F>,
    })
}

/// The call on the CPU device `cpu`, with outputs of `out_lens` (empty but for `into`):
/// the arguments bound to host data (an array on another device is
/// `Error::DeviceMismatch`), their lengths checked, the function run over them.
fn on_cpu<R>(c: &Call<'_, '_, R>, cpu: &Device, out_lens: &[usize]) -> Result<Vec<R>> {
    let (views, n) = cpu_views(c.name, c.params, c.erased, cpu, out_lens)?;
    // SAFETY: the views are of `c.erased`, which `with_call` made with the `F::erase` of
    // the `F` whose `values_of` this is.
    unsafe { (c.values)(&views, n) }
}

/// `on_cpu`'s binding of the arguments to host data and its length check. Not generic,
/// as every part of a body that does not depend on the result type: compiled once here.
#[inline(never)]
fn cpu_views<'a>(
    name: &'static str,
    params: &'static [&'static str],
    erased: &[ErasedArg<'a>],
    cpu: &Device,
    out_lens: &[usize],
) -> Result<(Vec<HostView<'a>>, usize)> {
    let views: Vec<HostView<'a>> =
        erased.iter().zip(params).map(|(a, &p)| a.host_view(name, p, cpu)).collect::<Result<_>>()?;
    let n = call_len_of(name, params, views.iter().map(HostView::len), out_lens.iter().copied())?;
    Ok((views, n))
}

/// Rust's panic message at element `i` of a call of a function whose `message_of` is
/// `message`: the original function run on the host on the arguments' values there (an
/// element of a device array is copied from its device); `None` where it does not panic
/// or the values cannot be read.
///
/// # Safety
/// `message` is the `message_of` of the function whose `erase` gave `erased`.
unsafe fn message_at(erased: &[ErasedArg<'_>], message: MessageOf, i: u64) -> Option<String> {
    let i = usize::try_from(i).ok()?;
    let views: Vec<HostView<'_>> = erased.iter().map(|a| a.element_view(i)).collect::<Option<_>>()?;
    // SAFETY: the caller's promise; an element's view reads as its argument's type.
    unsafe { message(&views) }
}

/// A GPU call's error, a fault given Rust's message at its element (see
/// `panics::with_host_message`).
///
/// # Safety
/// As for [`message_at`].
#[inline(never)]
unsafe fn with_message(error: Error, erased: &[ErasedArg<'_>], message: MessageOf) -> Error {
    // SAFETY: the caller's promise.
    host_message(error, &mut |i| unsafe { message_at(erased, message, i) })
}

impl<R> Call<'_, '_, R> {
    /// `r`, a fault given Rust's message at its element.
    fn message<T>(&self, r: Result<T>) -> Result<T> {
        // SAFETY: `with_call` made `erased` and `message` of one function.
        r.map_err(|e| unsafe { with_message(e, self.erased, self.message) })
    }
}

/// `message_at` for a queued call, which keeps its arguments until it is waited for.
#[inline(never)]
fn queued_message<'a>(erased: &[ErasedArg<'a>], message: MessageOf) -> MessageAt<'a> {
    let erased = erased.to_vec();
    // SAFETY: as in `Call::message`.
    Box::new(move |i| unsafe { message_at(&erased, message, i) })
}

// The calls. Each is one line of generic code, which hands its call to a body compiled
// once per result type. SAFETY (of each body's launch): a `Call` is made only by
// `with_call`, whose `F: GpuFn` promises that its kernel takes its erased arguments.

/// `name(…)`: on the device of the arguments' arrays, or the default device.
pub fn call<F: GpuFn>(args: F::Args<'_>) -> Result<HostOf<F>> {
    with_call::<F, _>(args, |c| call_on(None, c))
}

/// `name::on(device, …)`.
pub fn on<F: GpuFn>(device: &Device, args: F::Args<'_>) -> Result<HostOf<F>> {
    with_call::<F, _>(args, |c| call_on(Some(device), c))
}

/// `call` (`device` `None`) and `on`.
#[inline(never)]
fn call_on<R: Results>(device: Option<&Device>, c: &Call<'_, '_, R>) -> Result<R::Host> {
    if let Some(cpu) = &cpu_target_of(device, c.erased) {
        return on_cpu(c, cpu, &[]).map(R::unzip);
    }
    // SAFETY: see "The calls".
    let r = unsafe { c.kernel.call_host::<R>(device, c.erased) };
    c.message(r)
}

/// `name::on_devices(devices, …)`.
pub fn on_devices<F: GpuFn>(devices: &[Device], args: F::Args<'_>) -> Result<HostOf<F>> {
    with_call::<F, _>(args, |c| call_on_devices(devices, c))
}

#[inline(never)]
fn call_on_devices<R: Results>(devices: &[Device], c: &Call<'_, '_, R>) -> Result<R::Host> {
    if let Some(cpu) = &cpu_of_devices(c.name, devices)? {
        return call_on(Some(cpu), c);
    }
    // SAFETY: see "The calls".
    let r = unsafe { c.kernel.call_host_on_devices::<R>(devices, c.erased) };
    c.message(r)
}

/// `name::device(…)`.
pub fn device<F: GpuFn>(args: F::Args<'_>) -> Result<DeviceOf<F>> {
    with_call::<F, _>(args, call_device)
}

#[inline(never)]
fn call_device<R: Results>(c: &Call<'_, '_, R>) -> Result<R::Device> {
    if let Some(cpu) = &cpu_target_of(None, c.erased) {
        return R::host_to_device(R::unzip(on_cpu(c, cpu, &[])?), cpu);
    }
    // SAFETY: see "The calls".
    let r = unsafe { c.kernel.call_device::<R>(None, c.erased) };
    c.message(r)
}

/// `name::into(out, …)`: `into`'s outputs count among the arrays that choose the device.
pub fn into<'a, F: GpuFn>(outs: OutsOf<'a, F>, args: F::Args<'a>) -> Result<()> {
    with_call::<F, _>(args, |c| call_into(None, outs, c))
}

/// `into` on `device` (a GPU, or the CPU device), whatever the arguments' devices are (an
/// array on another device is `Error::DeviceMismatch`): for the column calls.
pub(crate) fn into_on<'a, F: GpuFn>(device: &Device, outs: OutsOf<'a, F>, args: F::Args<'a>) -> Result<()> {
    with_call::<F, _>(args, |c| call_into(Some(device), outs, c))
}

/// `into` (`device` `None`: the arguments' and outputs' devices choose) and `into_on`.
#[inline(never)]
fn call_into<'a, R: Results>(device: Option<&Device>, outs: R::Outs<'a>, c: &Call<'_, 'a, R>) -> Result<()> {
    let cpu = match device {
        Some(d) => d.is_cpu().then(|| d.clone()),
        None => cpu_target_into::<R>(c.erased, &outs),
    };
    if let Some(cpu) = &cpu {
        return cpu_write::<R>(c.name, cpu, outs, |lens| on_cpu(c, cpu, lens));
    }
    // SAFETY: see "The calls".
    let r = unsafe { c.kernel.call_into::<R>(device, c.erased, outs) };
    c.message(r)
}

/// `name::launch(stream, …)`.
pub fn launch<'a, F: GpuFn>(stream: &'a Stream, args: F::Args<'a>) -> Result<Pending<'a, HostOf<F>>> {
    with_call::<F, _>(args, |c| launch_host(stream, c))
}

#[inline(never)]
fn launch_host<'a, R: Results>(stream: &'a Stream, c: &Call<'_, 'a, R>) -> Result<Pending<'a, R::Host>> {
    if stream.device().is_cpu() {
        return cpu_pending(on_cpu(c, stream.device(), &[]).map(R::unzip));
    }
    // SAFETY: see "The calls".
    let pending = unsafe { c.kernel.launch_host::<R>(stream, c.erased) }?;
    Ok(pending.with_message_at(queued_message(c.erased, c.message)))
}

/// `name::launch_device(stream, …)`.
pub fn launch_device<'a, F: GpuFn>(stream: &'a Stream, args: F::Args<'a>) -> Result<Pending<'a, DeviceOf<F>>> {
    with_call::<F, _>(args, |c| launch_on_device(stream, c))
}

#[inline(never)]
fn launch_on_device<'a, R: Results>(stream: &'a Stream, c: &Call<'_, 'a, R>) -> Result<Pending<'a, R::Device>> {
    let device = stream.device();
    if device.is_cpu() {
        let values = on_cpu(c, device, &[]);
        return cpu_pending(values.and_then(|v| R::host_to_device(R::unzip(v), device)));
    }
    // SAFETY: see "The calls".
    let pending = unsafe { c.kernel.launch_device::<R>(stream, c.erased) }?;
    Ok(pending.with_message_at(queued_message(c.erased, c.message)))
}

/// `name::launch_into(stream, out, …)`.
pub fn launch_into<'a, F: GpuFn>(
    stream: &'a Stream,
    outs: OutsOf<'a, F>,
    args: F::Args<'a>,
) -> Result<Pending<'a, ()>> {
    with_call::<F, _>(args, |c| launch_writing(stream, outs, c))
}

#[inline(never)]
fn launch_writing<'a, R: Results>(
    stream: &'a Stream,
    outs: R::Outs<'a>,
    c: &Call<'_, 'a, R>,
) -> Result<Pending<'a, ()>> {
    let device = stream.device();
    if device.is_cpu() {
        return cpu_pending(cpu_write::<R>(c.name, device, outs, |lens| on_cpu(c, device, lens)));
    }
    // SAFETY: see "The calls".
    let pending = unsafe { c.kernel.launch_into::<R>(stream, c.erased, outs) }?;
    Ok(pending.with_message_at(queued_message(c.erased, c.message)))
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
