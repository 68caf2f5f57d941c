//! `#[guvectorize]`: generalized functions (NumPy's and Numba's gufuncs). Each parameter
//! has core dimensions named in the layout (`"(n),(n)->()"`); the dimensions in front of
//! them are loop dimensions, broadcast together by NumPy's rules, and the function runs
//! once per loop index on views of its arguments' cores.
//!
//! What the generated code calls: [`GuPlan::new`] checks the shapes and sizes the core
//! dimensions, [`GuIn::new`] lays each input out as one contiguous core per loop index
//! (borrowed where it already is), the call runs on the host (`host_map`) or as the
//! generated kernel, and [`gu_array`] (host) or [`gu_device_array`] (`name::device`) gives
//! each output its shape.

use std::borrow::Cow;

use crate::data::nd::{GuRef, NdRef, broadcast_shapes};
use crate::data::{DeviceArray, DeviceSlice, DeviceVec, HostLoop, KernelIn, KernelInRef};
use crate::driver::staged::STAGED_MIN_BYTES;
use crate::driver::{Device, default_cpu, default_device, one_of};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use ndarray::{ArrayD, ArrayViewD, IxDyn};

/// A function's layout, as the macro writes it.
#[derive(Debug)]
pub struct GuLayout {
    pub function: &'static str,
    /// The layout as written.
    pub text: &'static str,
    /// Each input: its parameter and its core dimensions' names.
    pub inputs: &'static [(&'static str, &'static [&'static str])],
    /// Each output: its name and its core dimensions' names.
    pub outputs: &'static [(&'static str, &'static [&'static str])],
}

/// A call's plan: the loop shape and the size of every core dimension.
#[derive(Debug)]
pub struct GuPlan {
    /// The broadcast loop shape.
    pub loop_shape: Vec<usize>,
    /// The number of loop indices (the product of `loop_shape`).
    pub loops: usize,
    sizes: Vec<(&'static str, usize)>,
}

impl GuPlan {
    /// Checks the inputs' shapes against the layout (enough dimensions for the core, one
    /// size per core name, loop dimensions that broadcast) and sizes every output core
    /// dimension, from the inputs or from `given` (`name::sized`).
    pub fn new(layout: &GuLayout, shapes: &[Vec<usize>], given: &[(&str, usize)]) -> Result<GuPlan> {
        let function = layout.function;
        let mut seen: Vec<(&'static str, Vec<(&'static str, usize)>)> = Vec::new();
        let mut loops: Vec<(&'static str, &[usize])> = Vec::new();
        for ((param, core), shape) in layout.inputs.iter().zip(shapes) {
            if shape.len() < core.len() {
                return Err(Error::CoreRank {
                    function,
                    param,
                    shape: shape.clone(),
                    core: core.iter().map(|d| d.to_string()).collect(),
                });
            }
            let (outer, inner) = shape.split_at(shape.len() - core.len());
            loops.push((param, outer));
            for (dim, &size) in core.iter().zip(inner) {
                match seen.iter_mut().find(|(d, _)| d == dim) {
                    Some((_, uses)) => uses.push((param, size)),
                    None => seen.push((dim, vec![(param, size)])),
                }
            }
        }
        let mut sizes = Vec::new();
        for (dim, uses) in seen {
            let size = uses[0].1;
            if uses.iter().any(|&(_, s)| s != size) {
                return Err(Error::CoreSizeMismatch { function, dim, sizes: uses });
            }
            if let Some(&(_, g)) = given.iter().find(|(d, _)| *d == dim)
                && g != size
            {
                return Err(Error::CoreSizeMismatch { function, dim, sizes: [uses, vec![("given", g)]].concat() });
            }
            sizes.push((dim, size));
        }
        for (dim, size) in given {
            if !layout.outputs.iter().chain(layout.inputs).any(|(_, core)| core.contains(dim)) {
                return Err(Error::UnknownCoreDim { function, dim: dim.to_string(), layout: layout.text });
            }
            if !sizes.iter().any(|(d, _)| d == dim) {
                let name = layout.outputs.iter().flat_map(|(_, c)| c.iter()).find(|d| *d == dim).copied();
                sizes.extend(name.map(|n| (n, *size)));
            }
        }
        for (out, core) in layout.outputs {
            if let Some(dim) = core.iter().find(|d| !sizes.iter().any(|(s, _)| s == *d)) {
                return Err(Error::UnsizedCoreDim { function, dim, output: out });
            }
        }
        let loop_shape = broadcast_shapes(function, &loops)?;
        let loops = loop_shape.iter().product();
        Ok(GuPlan { loop_shape, loops, sizes })
    }

    /// The size of core dimension `dim` (0 for a name the layout does not have: the macro
    /// asks only for its own).
    pub fn size(&self, dim: &str) -> usize {
        self.sizes.iter().find(|(d, _)| *d == dim).map_or(0, |&(_, s)| s)
    }

    /// The core shape of a parameter or output with these core dimensions.
    pub fn core(&self, dims: &[&str]) -> Vec<usize> {
        dims.iter().map(|d| self.size(d)).collect()
    }
}

/// One input laid out for the call: its core at loop index `t` is `len` elements from
/// `t * step` (`step` 0 for an input the loop dimensions broadcast whole), in host memory
/// or on the device that holds the argument.
#[derive(Debug)]
pub struct GuIn<'a, T: Scalar> {
    data: GuData<'a, T>,
    step: usize,
    len: usize,
    /// The device of an array argument.
    device: Option<&'a Device>,
}

#[derive(Debug)]
enum GuData<'a, T: Scalar> {
    Host(Cow<'a, [T]>),
    Device(DeviceSlice<'a, T>),
    /// Host data this call copied to the GPU.
    Uploaded(DeviceVec<T>),
}

impl<'a, T: Scalar> GuIn<'a, T> {
    /// Input `k` of the layout, from the argument the plan was made with. A device array
    /// is used in place where its loop dimensions are the call's or all 1; one that the
    /// loop dimensions broadcast only in part (`(3, 1, n)` for a loop of `(3, 4)`) is
    /// broadcast in host memory and copied back for the kernel.
    pub fn new(layout: &GuLayout, plan: &GuPlan, k: usize, arg: GuRef<'a, T>) -> Result<GuIn<'a, T>> {
        let input = GuIn::lay_out(layout, plan, k, arg)?;
        // The generated kernel reads each loop index's core unchecked against the data
        // (behind a guard that would return without a word): it must lie inside.
        let data_len = match &input.data {
            GuData::Host(d) => d.len(),
            GuData::Device(d) => d.len(),
            GuData::Uploaded(d) => d.len(),
        };
        let last = plan.loops.checked_sub(1).map(|t| t.checked_mul(input.step).and_then(|o| o.checked_add(input.len)));
        if let Some(end) = last
            && input.len > 0
            && end.is_none_or(|end| end > data_len)
        {
            let message = format!("`{}`: input {k}'s cores run past its {data_len} elements", layout.function);
            return Err(Error::internal(message));
        }
        Ok(input)
    }

    fn lay_out(layout: &GuLayout, plan: &GuPlan, k: usize, arg: GuRef<'a, T>) -> Result<GuIn<'a, T>> {
        let core = plan.core(layout.inputs[k].1);
        let len: usize = core.iter().product();
        let full: Vec<usize> = plan.loop_shape.iter().chain(&core).copied().collect();
        let host = |view: ArrayViewD<'a, T>, device| {
            let (data, step) = host_layout(layout.function, view, &full, core.len(), len)?;
            Ok(GuIn { data: GuData::Host(data), step, len, device })
        };
        match arg {
            GuRef::Nd(NdRef::Scalar(v)) => {
                Ok(GuIn { data: GuData::Host(Cow::Owned(vec![v])), step: 0, len: 1, device: None })
            }
            GuRef::Nd(NdRef::Host(view)) => host(view, None),
            GuRef::Owned(array, device) => {
                let (data, step) = host_layout(layout.function, array.view(), &full, core.len(), len)?;
                Ok(GuIn { data: GuData::Host(Cow::Owned(data.into_owned())), step, len, device })
            }
            GuRef::Device(slice, shape) => {
                let device = Some(slice.device());
                if let Some(s) = slice.host_slice() {
                    return host(c_order(layout.function, s, &shape)?, device);
                }
                let outer: usize = shape[..shape.len() - core.len()].iter().product();
                if outer == 1 || shape == full {
                    let step = if outer == 1 { 0 } else { len };
                    return Ok(GuIn { data: GuData::Device(slice), step, len, device });
                }
                let copy = slice.to_vec()?;
                let (data, step) =
                    host_layout(layout.function, c_order(layout.function, &copy, &shape)?, &full, core.len(), len)?;
                Ok(GuIn { data: GuData::Host(Cow::Owned(data.into_owned())), step, len, device })
            }
        }
    }

    /// Elements from one loop index's core to the next's (0: the same core for all).
    pub fn step(&self) -> usize {
        self.step
    }

    /// The input ready for a launch on `device`: large host data is copied there first
    /// (through page-locked buffers, several times faster than the launch's own copy of
    /// pageable memory); the rest is as it is.
    pub fn upload(self, device: &Device) -> Result<GuIn<'a, T>> {
        match &self.data {
            GuData::Host(data) if std::mem::size_of_val(&**data) >= STAGED_MIN_BYTES => {
                let data = GuData::Uploaded(DeviceVec::from_slice_on(device, data)?);
                Ok(GuIn { data, ..self })
            }
            _ => Ok(self),
        }
    }

    /// The device of an array argument (`None` for host data and scalars).
    pub fn device(&self) -> Option<&'a Device> {
        self.device
    }

    /// Every core, as the kernel's argument: host memory (copied for the launch) or the
    /// device array itself.
    pub fn kernel_in(&self) -> KernelInRef<'_, T> {
        match &self.data {
            GuData::Host(data) => (&**data).into_kernel_in(),
            GuData::Device(slice) => slice.into_kernel_in(),
            GuData::Uploaded(v) => v.as_slice().into_kernel_in(),
        }
    }

    /// The input readable on the host: borrowed where it is host memory (the CPU device's
    /// arrays too), copied from a GPU otherwise.
    pub fn on_host(&self) -> Result<GuHost<'_, T>> {
        let data = match &self.data {
            GuData::Host(data) => Cow::Borrowed(&**data),
            GuData::Device(slice) => match slice.host_slice() {
                Some(s) => Cow::Borrowed(s),
                None => Cow::Owned(slice.to_vec()?),
            },
            GuData::Uploaded(v) => Cow::Owned(v.to_vec()?),
        };
        Ok(GuHost { data, step: self.step, len: self.len })
    }
}

/// A view of `shape` over `data` in C order.
fn c_order<'v, T>(function: &'static str, data: &'v [T], shape: &[usize]) -> Result<ArrayViewD<'v, T>> {
    ArrayViewD::from_shape(IxDyn(shape), data)
        .map_err(|e| Error::internal(format!("`{function}`: a device array of shape {shape:?}: {e}")))
}

/// A host view laid out as one core per loop index (`full`: the loop shape, then the
/// core): borrowed where it already is, with step 0 where every loop index has the same
/// core, else broadcast into a copy.
fn host_layout<'v, T: Scalar>(
    function: &'static str,
    view: ArrayViewD<'v, T>,
    full: &[usize],
    core_rank: usize,
    len: usize,
) -> Result<(Cow<'v, [T]>, usize)> {
    let outer: usize = view.shape()[..view.ndim() - core_rank].iter().product();
    let contiguous = |view: ArrayViewD<'v, T>| match view.to_slice() {
        Some(s) => Cow::Borrowed(s),
        None => Cow::Owned(view.iter().copied().collect()),
    };
    if outer == 1 {
        // The same core at every loop index.
        return Ok((contiguous(view), 0));
    }
    if view.shape() == full {
        return Ok((contiguous(view), len));
    }
    match view.broadcast(IxDyn(full)) {
        Some(b) => Ok((Cow::Owned(b.iter().copied().collect()), len)),
        None => {
            Err(Error::internal(format!("`{function}`: shape {:?} planned to broadcast to {full:?}", view.shape())))
        }
    }
}

/// An input readable on the host ([`GuIn::on_host`]), for the CPU and the simulator.
#[derive(Debug)]
pub struct GuHost<'a, T: Clone> {
    data: Cow<'a, [T]>,
    step: usize,
    len: usize,
}

impl<T: Scalar> GuHost<'_, T> {
    /// The core at loop index `t`.
    #[inline]
    pub fn at(&self, t: usize) -> &[T] {
        let start = t * self.step;
        &self.data[start..start + self.len]
    }

    /// The element of a core of one element (a `()` input) at loop index `t`.
    #[inline]
    pub fn value(&self, t: usize) -> T {
        self.data[t * self.step]
    }

    /// Every core, for the simulator's kernel.
    pub fn kernel_in(&self) -> &[T] {
        &self.data
    }

    /// Elements from one loop index's core to the next's (0: the same core for all).
    pub fn step(&self) -> usize {
        self.step
    }
}

/// One output of a call, where it was computed.
#[derive(Debug)]
pub enum GuOut<T: Scalar> {
    Host(Vec<T>),
    Device(DeviceVec<T>),
}

/// A zeroed output for output `k` of the layout: `loops` cores.
pub fn gu_output<T: Scalar>(layout: &GuLayout, plan: &GuPlan, k: usize) -> Vec<T> {
    vec![T::from_bits(0); plan.loops * out_len(layout, plan, k)]
}

/// A zeroed output for output `k` of the layout on `device`.
pub fn gu_device_output<T: Scalar>(
    layout: &GuLayout,
    plan: &GuPlan,
    k: usize,
    device: &Device,
) -> Result<DeviceVec<T>> {
    DeviceVec::zeros_on(device, plan.loops * out_len(layout, plan, k))
}

fn out_len(layout: &GuLayout, plan: &GuPlan, k: usize) -> usize {
    plan.core(layout.outputs[k].1).iter().product()
}

/// The shape of output `k`: the loop shape, then its core.
fn out_shape(layout: &GuLayout, plan: &GuPlan, k: usize) -> Vec<usize> {
    plan.loop_shape.iter().copied().chain(plan.core(layout.outputs[k].1)).collect()
}

/// Output `k` in host memory, shaped (`name(..)`).
pub fn gu_array<T: Scalar>(layout: &GuLayout, plan: &GuPlan, k: usize, out: GuOut<T>) -> Result<ArrayD<T>> {
    let data = match out {
        GuOut::Host(v) => v,
        GuOut::Device(v) => v.to_vec()?,
    };
    ArrayD::from_shape_vec(IxDyn(&out_shape(layout, plan, k)), data)
        .map_err(|e| Error::internal(format!("`{}`: an output of the wrong size: {e}", layout.function)))
}

/// Output `k` on the device that computed it, shaped (`name::device(..)`): a call that
/// ran on the host gives the CPU device's arrays.
pub fn gu_device_array<T: Scalar>(layout: &GuLayout, plan: &GuPlan, k: usize, out: GuOut<T>) -> Result<DeviceArray<T>> {
    let data = match out {
        GuOut::Host(v) => DeviceVec::from_slice_on(&Device::cpu(), &v)?,
        GuOut::Device(v) => v,
    };
    DeviceArray::from_vec(data, &out_shape(layout, plan, k))
}

/// A thread fault of the generated kernel, as the host reports it: the first loop index
/// at which the function on the host panics, with Rust's message (the same error a call
/// on the CPU gives), found by `rerun` (`first_panic` over the inputs, brought to the
/// host if they are not there). `rerun` runs for a thread fault only: any other error
/// (out of memory, a driver error) is returned as it is, without copying the inputs; so
/// is the kernel's fault where the host does not fail or cannot rerun.
pub fn gu_fault(fault: Error, rerun: impl FnOnce() -> Result<Option<Error>>) -> Error {
    if !matches!(fault, Error::ThreadFault { .. }) {
        return fault;
    }
    match rerun() {
        Ok(Some(first)) => first,
        _ => fault,
    }
}

/// The launch of the generated kernel on `device` (`None`: in the simulator): 256 threads
/// a block, one loop index a thread, at most 65 535 blocks (a grid-stride loop over the
/// rest), or at most `GPU_VECTORIZE_GUFUNC_BLOCKS_PER_SM` blocks per multiprocessor. The
/// simulator runs at most `SIMULATED_BLOCKS` blocks, so that its threads take the
/// grid-stride loop past 512 loop indices, as a GPU's do past many more.
pub fn gu_launch_config(loops: usize, device: Option<&Device>) -> crate::launch::LaunchConfig {
    let Some(device) = device else {
        return crate::launch::LaunchConfig::new(gu_blocks(loops, Some(SIMULATED_BLOCKS)) as u32, 256u32);
    };
    let cap = crate::launch::gufunc_blocks_per_sm().map(|per_sm| per_sm.saturating_mul(device.sm_count() as usize));
    crate::launch::LaunchConfig::new(gu_blocks(loops, cap) as u32, 256u32).device(device)
}

/// The most blocks a simulated gufunc launch uses.
const SIMULATED_BLOCKS: usize = 2;

/// Blocks of 256 threads for `loops` loop indices: one index a thread, at most 65 535
/// blocks and at most `cap`, at least one.
fn gu_blocks(loops: usize, cap: Option<usize>) -> usize {
    loops.div_ceil(256).min(65_535).min(cap.unwrap_or(usize::MAX)).max(1)
}

/// Where a call of a `#[guvectorize]` function was asked to run.
#[derive(Clone, Copy, Debug)]
pub enum GuWhere<'d> {
    /// Where its device arrays are, else the default device (a GPU, or the CPU device).
    Default,
    /// `name::on(&device, ..)`.
    On(&'d Device),
    /// `name::cpu`: a loop on this thread.
    Cpu,
    /// `name::parallel`: split over rayon's threads.
    Parallel,
    /// `name::simulate`: the generated kernel in the simulator.
    Simulate,
}

/// Where a call of a `#[guvectorize]` function runs.
#[derive(Clone, Debug)]
pub enum GuRun {
    Host(HostLoop),
    /// The generated kernel, on this GPU.
    Gpu(Device),
    Simulate,
}

/// The device of a call: the device it names, else its device arrays', else the default
/// (the CPU device and the CPU targets run on the host, the rest on a GPU). Arrays on
/// another device than the call's are `Error::DeviceMismatch`; the CPU targets and the
/// simulator read any array (a GPU's is copied to the host, as `name::cpu` of a
/// vectorized function does).
pub fn gu_run(how: GuWhere<'_>, function: &'static str, arrays: &[(&'static str, Option<&Device>)]) -> Result<GuRun> {
    let mut on: Vec<(&'static str, &Device)> = Vec::new();
    match how {
        GuWhere::Cpu => return Ok(GuRun::Host(HostLoop::Sequential)),
        GuWhere::Parallel => return Ok(GuRun::Host(HostLoop::Parallel)),
        GuWhere::Simulate => return Ok(GuRun::Simulate),
        GuWhere::On(d) => on.push(("device", d)),
        GuWhere::Default => {}
    }
    on.extend(arrays.iter().filter_map(|&(name, d)| Some((name, d?))));
    let device = match one_of(function, &on)? {
        Some(d) => d.clone(),
        None => match default_cpu() {
            Some(cpu) => cpu,
            None => default_device()?,
        },
    };
    Ok(if device.is_cpu() { GuRun::Host(HostLoop::Parallel) } else { GuRun::Gpu(device) })
}

/// Input `k` with its core taken along `axis` (`name::along`): for an input with one core
/// dimension, that axis moves last (a view of host data; a device array is copied to the
/// host to be transposed, and back for the kernel); others are as they are.
pub fn gu_along<'a, T: Scalar>(
    layout: &GuLayout,
    k: usize,
    axis: Option<usize>,
    arg: GuRef<'a, T>,
) -> Result<GuRef<'a, T>> {
    let Some(axis) = axis else { return Ok(arg) };
    if layout.inputs[k].1.len() != 1 || matches!(arg, GuRef::Nd(NdRef::Scalar(_))) {
        return Ok(arg);
    }
    let shape = arg.shape();
    let ndim = shape.len();
    if axis >= ndim {
        return Err(Error::BadAxis { function: layout.function, param: layout.inputs[k].0, axis, ndim });
    }
    if axis + 1 == ndim {
        return Ok(arg);
    }
    let order: Vec<usize> = (0..ndim).filter(|&a| a != axis).chain([axis]).collect();
    Ok(match arg {
        GuRef::Nd(NdRef::Host(view)) => GuRef::Nd(NdRef::Host(view.permuted_axes(IxDyn(&order)))),
        GuRef::Owned(array, device) => GuRef::Owned(array.permuted_axes(IxDyn(&order)), device),
        GuRef::Device(slice, shape) => {
            let array = ArrayD::from_shape_vec(IxDyn(&shape), slice.to_vec()?).map_err(|e| {
                Error::internal(format!("`{}`: a device array of shape {shape:?}: {e}", layout.function))
            })?;
            GuRef::Owned(array.permuted_axes(IxDyn(&order)), Some(slice.device()))
        }
        scalar @ GuRef::Nd(NdRef::Scalar(_)) => scalar,
    })
}

/// At most this many results along an axis, each of at least [`LONG_LINE`] elements: each
/// line is reduced as a whole array (a block reduction on the GPU) rather than by one
/// thread folding it.
const FEW_LINES: usize = 32;
const LONG_LINE: usize = 1 << 16;

/// `name::reduce_axes`: folds `values` along each of `axes` (highest first, so the others
/// keep their numbers): with `fold` (the function's generated `(n)->()` gufunc taken along
/// an axis, one thread a result), or, for a few long lines, with `line` (the function's
/// `reduce` of one line). An empty axis gives `identity` everywhere, or
/// `Error::EmptyReduce`. A fault's index is the result's (C order), either way.
pub fn reduce_axes<T: Scalar>(
    function: &'static str,
    values: NdRef<'_, T>,
    axes: &[usize],
    identity: Option<T>,
    fold: impl Fn(ndarray::ArrayViewD<'_, T>, usize) -> Result<ArrayD<T>>,
    line: impl Fn(&[T]) -> Result<T>,
) -> Result<ArrayD<T>> {
    let mut current: ndarray::CowArray<'_, T, IxDyn> = match values {
        NdRef::Scalar(v) => ArrayD::from_elem(IxDyn(&[]), v).into(),
        NdRef::Host(view) => view.into(),
    };
    let ndim = current.ndim();
    let mut order: Vec<usize> = axes.to_vec();
    order.sort_unstable_by(|a, b| b.cmp(a));
    order.dedup();
    if let Some(&axis) = order.first().filter(|&&a| a >= ndim) {
        return Err(Error::BadAxis { function, param: "values", axis, ndim });
    }
    for axis in order {
        let mut shape = current.shape().to_vec();
        let n = shape.remove(axis);
        let results: usize = shape.iter().product();
        let next = if n == 0 {
            match identity {
                Some(v) => ArrayD::from_elem(IxDyn(&shape), v),
                None => return Err(Error::EmptyReduce { function }),
            }
        } else if results <= FEW_LINES && n >= LONG_LINE {
            let mut out = Vec::with_capacity(results);
            for (k, lane) in current.lanes(ndarray::Axis(axis)).into_iter().enumerate() {
                let r = match lane.as_slice() {
                    Some(s) => line(s),
                    None => line(&lane.to_vec()),
                };
                out.push(r.map_err(|e| match e {
                    Error::KernelFault { function, message, .. } => {
                        Error::KernelFault { function, index: k as u64, message }
                    }
                    e => e,
                })?);
            }
            ArrayD::from_shape_vec(IxDyn(&shape), out)
                .map_err(|e| Error::internal(format!("`{function}`: results of a reduction: {e}")))?
        } else {
            // The generated gufunc reports faults under its own name: give the function's.
            fold(current.view(), axis).map_err(|e| match e {
                Error::KernelFault { index, message, .. } => Error::KernelFault { function, index, message },
                e => e,
            })?
        };
        current = next.into();
    }
    Ok(current.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launch_has_a_block_per_256_loop_indices_within_its_caps() {
        assert_eq!(gu_blocks(0, None), 1);
        assert_eq!(gu_blocks(256, None), 1);
        assert_eq!(gu_blocks(257, None), 2);
        assert_eq!(gu_blocks(1 << 40, None), 65_535);
        assert_eq!(gu_blocks(1_000_000, Some(264)), 264);
        assert_eq!(gu_blocks(1000, Some(264)), 4);
        assert_eq!(gu_blocks(1000, Some(0)), 1);
        let simulated = gu_launch_config(10_000, None);
        assert_eq!((simulated.grid.x, simulated.block.x), (SIMULATED_BLOCKS as u32, 256));
        assert!(simulated.device.is_none());
    }
}
