//! `name::reduce_axes` of a reducible vectorized function: a fold along each axis, by the
//! function's generated `(n)->()` gufunc or, for a few long lines, by its `reduce`.

use ndarray::{ArrayD, IxDyn};

use super::{Call, Where};
use crate::data::nd::NdRef;
use crate::driver::Device;
use crate::error::{Error, Result};
use crate::scalar::GpuType;

/// At most this many results along an axis, each of at least [`LONG_LINE`] elements: each
/// line is reduced as a whole array (a block reduction on the GPU) rather than by one
/// thread folding it.
const FEW_LINES: usize = 32;
const LONG_LINE: usize = 1 << 16;

/// `name::reduce_axes` (and `reduce_axes_with`, where `how` says where it runs): folds
/// `values` along each of `axes` (highest first, so the others keep their numbers): with
/// `fold` (the function's generated `(n)->()` gufunc called as the `Call` says, one
/// thread a result), or, for a few long lines on a GPU, with `line` (the function's
/// `reduce` of one line on the device given, or the default). The CPU targets and the
/// simulator fold every line with `fold`. An empty axis gives `identity` everywhere, or
/// `Error::EmptyReduce`. A fault's index is the result's (C order), either way.
pub fn reduce_axes<T: GpuType>(
    function: &'static str,
    how: Where<'_>,
    values: NdRef<'_, T>,
    axes: &[usize],
    identity: Option<T>,
    fold: impl Fn(Call<'_>, ndarray::ArrayViewD<'_, T>) -> Result<ArrayD<T>>,
    line: impl Fn(Option<&Device>, &[T]) -> Result<T>,
) -> Result<ArrayD<T>> {
    let line_device = match how {
        Where::Default => Some(None),
        Where::On(d) => Some(Some(d)),
        Where::Cpu | Where::Parallel | Where::Simulate => None,
    };
    let mut current: ndarray::CowArray<'_, T, IxDyn> = match values {
        NdRef::Scalar(v) => ArrayD::from_elem(IxDyn(&[]), v).into(),
        NdRef::Host(view) => view.into(),
        // A device array's lines are folded from a copy in host memory.
        NdRef::Device(data, shape) => ArrayD::from_shape_vec(IxDyn(&shape), data.to_vec()?)
            .map_err(|e| Error::internal(format!("`{function}`: a device array of shape {shape:?}: {e}")))?
            .into(),
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
        } else if let Some(device) = line_device.filter(|_| results <= FEW_LINES && n >= LONG_LINE) {
            let mut out = Vec::with_capacity(results);
            for (k, lane) in current.lanes(ndarray::Axis(axis)).into_iter().enumerate() {
                let r = match lane.as_slice() {
                    Some(s) => line(device, s),
                    None => line(device, &lane.to_vec()),
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
            fold(how.along(axis), current.view()).map_err(|e| match e {
                Error::KernelFault { index, message, .. } => Error::KernelFault { function, index, message },
                e => e,
            })?
        };
        current = next.into();
    }
    Ok(current.into_owned())
}
