//! `#[guvectorize]`: generalized functions (NumPy's and Numba's gufuncs). Each parameter
//! has core dimensions named in the layout (`"(n),(n)->()"`); the dimensions in front of
//! them are loop dimensions, broadcast together by NumPy's rules, and the function runs
//! once per loop index on views of its arguments' cores.
//!
//! What the generated code calls: [`GuPlan::new`] checks the shapes and sizes the core
//! dimensions, [`GuIn::new`] lays each input out as one contiguous core per loop index
//! (borrowed where it already is), the call runs on the host (`host_map`) or as the
//! generated kernel, and [`gu_shaped`] gives each output its shape.

use std::borrow::Cow;

use crate::data::HostLoop;
use crate::data::nd::{NdRef, broadcast_shapes};
use crate::error::{Error, Result};
use crate::panics::catch_quiet;
use crate::scalar::Scalar;
use ndarray::{ArrayD, IxDyn};

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
/// `t * step` (`step` 0 for an input the loop dimensions broadcast whole).
#[derive(Debug)]
pub struct GuIn<'a, T: Clone> {
    data: Cow<'a, [T]>,
    step: usize,
    len: usize,
}

impl<'a, T: Scalar> GuIn<'a, T> {
    /// Input `k` of the layout, from the argument the plan was made with.
    pub fn new(layout: &GuLayout, plan: &GuPlan, k: usize, arg: NdRef<'a, T>) -> Result<GuIn<'a, T>> {
        let core = plan.core(layout.inputs[k].1);
        let len: usize = core.iter().product();
        let view = match arg {
            NdRef::Scalar(v) => return Ok(GuIn { data: Cow::Owned(vec![v]), step: 0, len: 1 }),
            NdRef::Host(view) => view,
        };
        let outer: usize = view.shape()[..view.ndim() - core.len()].iter().product();
        if outer == 1 {
            // The same core at every loop index.
            let data = match view.to_slice() {
                Some(s) => Cow::Borrowed(s),
                None => Cow::Owned(view.iter().copied().collect()),
            };
            return Ok(GuIn { data, step: 0, len });
        }
        let full: Vec<usize> = plan.loop_shape.iter().chain(&core).copied().collect();
        let data = match view.to_slice() {
            Some(s) if view.shape() == full.as_slice() => Cow::Borrowed(s),
            _ => match view.broadcast(IxDyn(&full)) {
                Some(b) => Cow::Owned(b.iter().copied().collect()),
                None => {
                    let message =
                        format!("`{}`: shape {:?} planned to broadcast to {full:?}", layout.function, view.shape());
                    return Err(Error::internal(message));
                }
            },
        };
        Ok(GuIn { data, step: len, len })
    }

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

    /// Every core, for the kernel.
    pub fn data(&self) -> &[T] {
        &self.data
    }

    /// Elements from one loop index's core to the next's (0: the same core for all).
    pub fn step(&self) -> usize {
        self.step
    }
}

/// A zeroed output for output `k` of the layout: `loops` cores.
pub fn gu_output<T: Scalar>(layout: &GuLayout, plan: &GuPlan, k: usize) -> Vec<T> {
    let len: usize = plan.core(layout.outputs[k].1).iter().product();
    vec![T::from_bits(0); plan.loops * len]
}

/// Output `k` shaped: the loop shape, then its core.
pub fn gu_shaped<T: Scalar>(layout: &GuLayout, plan: &GuPlan, k: usize, data: Vec<T>) -> Result<ArrayD<T>> {
    let shape: Vec<usize> = plan.loop_shape.iter().copied().chain(plan.core(layout.outputs[k].1)).collect();
    ArrayD::from_shape_vec(IxDyn(&shape), data)
        .map_err(|e| Error::internal(format!("`{}`: an output of the wrong size: {e}", layout.function)))
}

/// A thread fault of the generated kernel, as the host reports it: the first loop index
/// at which `f` (the function on the host) panics, with Rust's message. The same error a
/// call on the CPU gives; the kernel's own where the host does not fail.
pub fn gu_fault<X>(function: &'static str, loops: usize, fault: Error, f: impl Fn(usize) -> X) -> Error {
    if !matches!(fault, Error::ThreadFault { .. }) {
        return fault;
    }
    for t in 0..loops {
        if let Err(message) = catch_quiet(|| f(t)) {
            return Error::KernelFault { function, index: t as u64, message };
        }
    }
    fault
}

/// The launch of the generated kernel: 256 threads a block, one loop index a thread, at
/// most 65 535 blocks (a grid-stride loop over the rest).
pub fn gu_launch_config(loops: usize, device: Option<&crate::driver::Device>) -> crate::launch::LaunchConfig {
    let blocks = loops.div_ceil(256).clamp(1, 65_535) as u32;
    let config = crate::launch::LaunchConfig::new(blocks, 256u32);
    match device {
        Some(d) => config.device(d),
        None => config,
    }
}

/// Where a call of a `#[guvectorize]` function was asked to run.
#[derive(Clone, Copy, Debug)]
pub enum GuWhere<'d> {
    /// The default device (a GPU, or the CPU device).
    Default,
    /// `name::on(&device, ..)`.
    On(&'d crate::driver::Device),
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
    /// The generated kernel, on this GPU (`None`: the default one).
    Gpu(Option<crate::driver::Device>),
    Simulate,
}

/// The device of a call: the CPU device and the CPU targets run on the host, the rest on
/// a GPU.
pub fn gu_run(how: GuWhere<'_>) -> GuRun {
    match how {
        GuWhere::Default if crate::driver::default_cpu().is_some() => GuRun::Host(HostLoop::Parallel),
        GuWhere::Default => GuRun::Gpu(None),
        GuWhere::On(d) if d.is_cpu() => GuRun::Host(HostLoop::Parallel),
        GuWhere::On(d) => GuRun::Gpu(Some(d.clone())),
        GuWhere::Cpu => GuRun::Host(HostLoop::Sequential),
        GuWhere::Parallel => GuRun::Host(HostLoop::Parallel),
        GuWhere::Simulate => GuRun::Simulate,
    }
}

/// Input `k` with its core taken along `axis` (`name::along`): for an input with one core
/// dimension, that axis moves last (a view, no copy); others are as they are.
pub fn gu_along<'a, T: Scalar>(
    layout: &GuLayout,
    k: usize,
    axis: Option<usize>,
    arg: NdRef<'a, T>,
) -> Result<NdRef<'a, T>> {
    let (Some(axis), NdRef::Host(view)) = (axis, &arg) else { return Ok(arg) };
    if layout.inputs[k].1.len() != 1 {
        return Ok(arg);
    }
    let ndim = view.ndim();
    if axis >= ndim {
        return Err(Error::BadAxis { function: layout.function, param: layout.inputs[k].0, axis, ndim });
    }
    let order: Vec<usize> = (0..ndim).filter(|&a| a != axis).chain([axis]).collect();
    Ok(NdRef::Host(view.clone().permuted_axes(IxDyn(&order))))
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
