//! A call's layout: the plan (the loop shape and every core dimension's size, from the
//! inputs' shapes) and each input laid out as one contiguous core per loop index, on the
//! host or on the device that holds it.

use std::borrow::Cow;

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use crate::data::nd::{GuRef, NdRef, broadcast_shapes};
use crate::data::{DeviceSlice, DeviceVec, KernelIn, KernelInRef};
use crate::driver::Device;
use crate::driver::staged::STAGED_MIN_BYTES;
use crate::error::{Error, Result};
use crate::scalar::GpuType;

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

impl GuLayout {
    /// Whether the layout is a reduction's, which a call can take along an axis: inputs of
    /// at most one core dimension, and `()` outputs.
    pub fn is_reduction(&self) -> bool {
        self.inputs.iter().all(|(_, d)| d.len() <= 1) && self.outputs.iter().all(|(_, d)| d.is_empty())
    }
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
pub struct GuIn<'a, T: GpuType> {
    data: GuData<'a, T>,
    step: usize,
    len: usize,
    /// The device of an array argument.
    device: Option<&'a Device>,
}

#[derive(Debug)]
enum GuData<'a, T: GpuType> {
    Host(Cow<'a, [T]>),
    Device(DeviceSlice<'a, T>),
    /// Host data this call copied to the GPU.
    Uploaded(DeviceVec<T>),
}

impl<'a, T: GpuType> GuIn<'a, T> {
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
            GuRef::Nd(NdRef::Device(slice, shape)) => GuIn::lay_out(layout, plan, k, GuRef::Device(slice, shape)),
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
fn host_layout<'v, T: GpuType>(
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

impl<T: GpuType> GuHost<'_, T> {
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

/// Input `k` with its core taken along `axis` (`name::along`): for an input with one core
/// dimension, that axis moves last (a view of host data; a device array is copied to the
/// host to be transposed, and back for the kernel); others are as they are.
pub(super) fn gu_along<'a, T: GpuType>(
    layout: &GuLayout,
    k: usize,
    axis: Option<usize>,
    arg: GuRef<'a, T>,
) -> Result<GuRef<'a, T>> {
    let Some(axis) = axis else { return Ok(arg) };
    let arg = match arg {
        GuRef::Nd(NdRef::Device(slice, shape)) => GuRef::Device(slice, shape),
        arg => arg,
    };
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
        scalar @ GuRef::Nd(NdRef::Scalar(_) | NdRef::Device(..)) => scalar,
    })
}
