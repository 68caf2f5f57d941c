//! Calls on the CPU device ([`crate::Device::cpu`]): the generated API sends a call here
//! when its device (given, or the default) is the CPU, and the function runs on the host's
//! threads as `name::parallel` runs it. Arguments on a GPU are `Error::DeviceMismatch`,
//! as a GPU call with an argument on another GPU is.

use rayon::prelude::*;

use crate::data::{ErasedArg, HostArg, HostLoop, Results};
use crate::driver::{Device, DeviceId};
use crate::error::{Error, Result};
use crate::launch::LaunchConfig;
use crate::launch::Pending;
use crate::panics::{Quiet, host_fold};
use crate::scalar::GpuType;

pub use crate::driver::default_cpu;

/// The CPU device where a call goes there: its device if it names one (`device`, a
/// stream's), else the device of its arrays if one is on the CPU, else the default device
/// if that is the CPU. `None`: the call goes to a GPU, which checks the rest.
#[inline]
pub fn cpu_target(device: Option<&Device>, arrays: &[Option<DeviceId>]) -> Option<Device> {
    cpu_target_in(device, arrays.iter().copied())
}

/// [`cpu_target`] of a call's erased arguments.
pub(crate) fn cpu_target_of(device: Option<&Device>, args: &[ErasedArg<'_>]) -> Option<Device> {
    cpu_target_in(device, args.iter().map(ErasedArg::device_id))
}

/// [`cpu_target`] of `into`'s erased arguments and outputs, whose devices count too.
pub(crate) fn cpu_target_into<R: Results>(args: &[ErasedArg<'_>], outs: &R::Outs<'_>) -> Option<Device> {
    let out_devices = R::out_devices(outs);
    let outs = out_devices.iter().map(|&(_, d)| Some(d));
    cpu_target_in(None, args.iter().map(ErasedArg::device_id).chain(outs))
}

fn cpu_target_in(
    device: Option<&Device>,
    mut arrays: impl Iterator<Item = Option<DeviceId>> + Clone,
) -> Option<Device> {
    match device {
        Some(d) => d.is_cpu().then(|| d.clone()),
        None if arrays.clone().any(|a| a == Some(DeviceId::Cpu)) => Some(Device::cpu()),
        None if arrays.any(|a| a.is_some()) => None,
        None => default_cpu(),
    }
}

/// `into` on the CPU device: `outs` must be host memory or the CPU device's arrays
/// (`DeviceMismatch` otherwise); `values` computes the results, given the outputs' lengths
/// to check against the arguments', and they are written into `outs`.
pub fn cpu_write<R: Results>(
    function: &'static str,
    device: &Device,
    outs: R::Outs<'_>,
    values: impl FnOnce(&[usize]) -> Result<Vec<R>>,
) -> Result<()> {
    let elsewhere: Vec<_> = R::out_devices(&outs).into_iter().filter(|(_, d)| *d != device.id()).collect();
    if !elsewhere.is_empty() {
        let mut devices = vec![("device", device.id())];
        devices.extend(elsewhere);
        return Err(Error::DeviceMismatch { function, devices });
    }
    R::write(values(&R::out_slots_len(&outs))?, outs)
}

/// The fold of `values` with `f` on the host (split over threads for
/// `HostLoop::Parallel`, in chunks folded in order); an empty array gives `identity`, or
/// `Error::EmptyReduce` without one; where `f` panics, the first step that does is the
/// `KernelFault`.
pub fn host_reduce<T: GpuType>(
    function: &'static str,
    values: HostArg<'_, T>,
    identity: Option<T>,
    order: HostLoop,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<T> {
    let s: &[T] = match &values {
        HostArg::Scalar(v) => return Ok(*v),
        HostArg::Slice(s) => s,
    };
    let fold_all = || match order {
        HostLoop::Parallel => s
            .par_chunks(4096)
            .map_init(Quiet::new, |_, c| c.iter().copied().reduce(&f))
            .collect::<Vec<_>>()
            .into_iter()
            .flatten()
            .reduce(&f),
        HostLoop::Sequential => s.iter().copied().reduce(&f),
    };
    host_fold(function, s, fold_all, &f)?.or(identity).ok_or(Error::EmptyReduce { function })
}

/// The CPU device's answer to `name::on_devices`: a list of only the CPU runs there; a
/// list that mixes it with GPUs is refused (the split is between GPUs).
pub fn cpu_of_devices(function: &'static str, devices: &[Device]) -> Result<Option<Device>> {
    match devices.iter().filter(|d| d.is_cpu()).count() {
        0 => Ok(None),
        n if n == devices.len() => Ok(Some(Device::cpu())),
        _ => Err(Error::MixedDevices { function }),
    }
}

/// A call queued on a stream of the CPU device, which ran when it was queued: its handle
/// is done. A fault is reported by `wait`, where a GPU call reports it; a mistake in the
/// call (lengths, devices) at once, as a GPU call reports it.
pub fn cpu_pending<'a, T: Send + 'a>(result: Result<T>) -> Result<Pending<'a, T>> {
    match result {
        Ok(v) => Ok(Pending::done(v)),
        Err(
            e @ (Error::KernelFault { .. }
            | Error::ThreadFault { .. }
            | Error::DataRace { .. }
            | Error::BarrierDivergence { .. }),
        ) => Ok(Pending::failed(e)),
        Err(e) => Err(e),
    }
}

/// Whether an explicit kernel's launch goes to the CPU device (the simulator): where its
/// stream, its `device` or its arrays are on the CPU, or, naming none, the default device
/// is. They must all agree (`DeviceMismatch` otherwise); which GPU is checked by the GPU
/// launch.
pub fn explicit_on_cpu(
    kernel: &'static str,
    config: &LaunchConfig,
    arrays: &[(&'static str, Option<DeviceId>)],
) -> Result<Option<Device>> {
    let mut on: Vec<(&'static str, DeviceId)> = Vec::new();
    if let Some(s) = &config.stream {
        on.push(("stream", s.device().id()));
    }
    if let Some(d) = &config.device {
        on.push(("device", d.id()));
    }
    on.extend(arrays.iter().filter_map(|(n, d)| Some((*n, (*d)?))));
    Ok(match crate::driver::one_device(kernel, &on)? {
        None => default_cpu(),
        Some(DeviceId::Cpu) => Some(Device::cpu()),
        Some(DeviceId::Cuda(_)) => None,
    })
}
