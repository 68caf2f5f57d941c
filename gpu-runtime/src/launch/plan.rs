//! The plan of a call: how many elements it computes, and on which device.

use crate::data::{ArgKind, ErasedArg, OutSlot, SlotKind, call_len_of};
use crate::driver::{Device, default_device};
use crate::error::Result;

use super::KernelSpec;

/// How many elements a call computes, and where.
pub(crate) struct Plan {
    pub(crate) n: usize,
    pub(crate) device: Device,
}

/// The plan of a call of `spec`'s function (`None`: no element to compute). All arrays
/// (and `outs`) must agree in length, and all device data (and `device`, when the caller
/// chose one) must be on one device: data is never copied between devices behind the
/// caller's back.
pub(crate) fn plan(
    spec: &KernelSpec,
    device: Option<&Device>,
    args: &[ErasedArg<'_>],
    outs: &[OutSlot<'_>],
) -> Result<Option<Plan>> {
    let n = call_len_of(spec.name, spec.params, args.iter().map(ErasedArg::len), outs.iter().map(OutSlot::len))?;
    let device = common_device(spec, device, args, outs)?;
    if n == 0 {
        return Ok(None);
    }
    let device = match device {
        Some(d) => d.clone(),
        None => default_device()?,
    };
    Ok(Some(Plan { n, device }))
}

/// The device a call's data is on (the one the caller chose, else the first argument's
/// or output's on a device, else `None`), or the error naming where each one is.
pub(crate) fn common_device<'a>(
    spec: &KernelSpec,
    device: Option<&'a Device>,
    args: &[ErasedArg<'a>],
    outs: &[OutSlot<'a>],
) -> Result<Option<&'a Device>> {
    let params = spec.params.iter().zip(args).filter_map(|(name, arg)| match arg.0 {
        ArgKind::Device { device, .. } => Some((*name, device)),
        _ => None,
    });
    let outputs = kernel_abi::output_names(outs.len()).iter().zip(outs).filter_map(|(name, out)| match &out.0 {
        SlotKind::Device { device, .. } => Some((*name, *device)),
        _ => None,
    });
    crate::driver::one_of_iter(spec.name, device.map(|d| ("device", d)).into_iter().chain(params).chain(outputs))
}
