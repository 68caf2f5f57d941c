//! N-dimensional broadcasting over `ndarray` arrays (feature `ndarray`): `name::nd(args…)`
//! takes arrays of any dimension and strides, broadcasts them as NumPy does, and returns
//! arrays of the broadcast shape; `name::nd_into(out, args…)` writes into arrays.
//!
//! The GPU reads strided views where they are: each view's memory span is copied to the
//! device as it is, and the kernel's strided entry walks it by the view's strides (a
//! transposed, reversed or sliced view costs no host-side copy). Before the launch the
//! axes are merged where every argument allows it, so a contiguous call takes the plain
//! elementwise kernel.
//!
//! Device arrays ([`DeviceArray`]) are read where they are: on a GPU, the strided entry
//! walks them by their C-order strides (0 on a broadcast axis), with no trip through host
//! memory; the CPU device's arrays are host memory. Only a run on the host (`nd_cpu`, a
//! CPU target) copies a GPU's arrays to the host first ([`hosted`]).

use std::marker::PhantomData;

use ndarray::{ArrayBase, ArrayD, ArrayView, ArrayViewD, ArrayViewMut, ArrayViewMutD, Data, DataMut, Dimension};

use super::arg::{ArgKind, value_kind};
use super::array::{DeviceSlice, DeviceVec};
use super::device_array::DeviceArray;
use crate::driver::Device;
use crate::error::{Error, Result};
use crate::scalar::GpuType;

/// One argument of `name::nd`: a scalar broadcast everywhere, a view of any shape, or a
/// device array (its elements in C order, and its shape).
#[derive(Clone, Debug)]
pub enum NdRef<'a, T> {
    Scalar(T),
    Host(ArrayViewD<'a, T>),
    Device(DeviceSlice<'a, T>, Vec<usize>),
}

impl<'a, T: GpuType> NdRef<'a, T> {
    /// The argument's shape (`[]` for a scalar).
    pub fn shape(&self) -> Vec<usize> {
        match self {
            NdRef::Scalar(_) => Vec::new(),
            NdRef::Host(view) => view.shape().to_vec(),
            NdRef::Device(_, shape) => shape.clone(),
        }
    }
}

impl<'a, T: GpuType> NdRef<'a, T> {
    /// The argument without its element type (for `name::nd`).
    pub fn erase(self) -> ErasedNd<'a> {
        ErasedNd(match self {
            NdRef::Scalar(v) => NdKind::Scalar { value: value_kind(&v) },
            NdRef::Host(view) => NdKind::Host {
                ptr: view.as_ptr().cast(),
                shape: view.shape().to_vec(),
                strides: view.strides().to_vec(),
                size: std::mem::size_of::<T>(),
                device: None,
                _borrow: PhantomData,
            },
            NdRef::Device(d, shape) => {
                let strides = c_strides(&shape);
                let size = std::mem::size_of::<T>();
                match d.host_slice() {
                    // The CPU device's memory is the host's.
                    Some(s) => NdKind::Host {
                        ptr: s.as_ptr().cast(),
                        shape,
                        strides,
                        size,
                        device: Some(d.device()),
                        _borrow: PhantomData,
                    },
                    None => NdKind::Device {
                        ptr: d.ptr(),
                        len: d.len(),
                        shape,
                        strides,
                        size,
                        device: d.device(),
                        uses: d.uses(),
                    },
                }
            }
        })
    }
}

/// The strides (in elements) of a C-order array of `shape`.
fn c_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut step = 1isize;
    for (s, &extent) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        step = step.saturating_mul(extent as isize);
    }
    strides
}

/// What `name::nd` accepts where the function takes a `T`: a `T`, an `ndarray` array or
/// view of `T` of any dimension (owned arrays by reference), or a slice (one axis).
pub trait NdArg<'a, T: GpuType> {
    fn into_nd(self) -> NdRef<'a, T>;
}

impl<'a, T: GpuType> NdArg<'a, T> for T {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Scalar(self)
    }
}

impl<'a, T: GpuType, S: Data<Elem = T>, D: Dimension> NdArg<'a, T> for &'a ArrayBase<S, D> {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Host(self.view().into_dyn())
    }
}

impl<'a, T: GpuType, D: Dimension> NdArg<'a, T> for ArrayView<'a, T, D> {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Host(self.into_dyn())
    }
}

impl<'a, T: GpuType> NdArg<'a, T> for &'a [T] {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Host(ArrayView::from(self).into_dyn())
    }
}

impl<'a, T: GpuType> NdArg<'a, T> for &'a Vec<T> {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Host(ArrayView::from(self.as_slice()).into_dyn())
    }
}

/// An array, as one axis (as the vectorized calls take it).
impl<'a, T: GpuType, const N: usize> NdArg<'a, T> for &'a [T; N] {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Host(ArrayView::from(self.as_slice()).into_dyn())
    }
}

/// A device array, read where it is.
impl<'a, T: GpuType> NdArg<'a, T> for &'a DeviceArray<T> {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Device(self.as_slice(), self.shape().to_vec())
    }
}

/// What a `#[guvectorize]` function takes for an input: anything [`NdArg`] is, or an
/// array on a device ([`DeviceArray`] with its shape; [`DeviceVec`] and [`DeviceSlice`] as
/// one axis), used where it is.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed where a `#[guvectorize]` function takes `{T}` elements",
    label = "expected `{T}`, `&Array<{T}, D>`, an `ArrayView<{T}, D>`, `&[{T}]`, `&Vec<{T}>`, `&[{T}; N]`, `&DeviceArray<{T}>`, `&DeviceVec<{T}>` or a `DeviceSlice<{T}>`"
)]
pub trait GuArg<'a, T: GpuType> {
    fn into_gu(self) -> GuRef<'a, T>;
}

/// An input of a `#[guvectorize]` call.
#[derive(Clone, Debug)]
pub enum GuRef<'a, T> {
    /// A scalar or a host view.
    Nd(NdRef<'a, T>),
    /// A host array the call made (an input taken along an axis), with the device of the
    /// array it was made from.
    Owned(ArrayD<T>, Option<&'a Device>),
    /// An array on a device: its elements in C order, and its shape.
    Device(DeviceSlice<'a, T>, Vec<usize>),
}

impl<T: GpuType> GuRef<'_, T> {
    /// The argument's shape (`[]` for a scalar).
    pub fn shape(&self) -> Vec<usize> {
        match self {
            GuRef::Nd(nd) => nd.shape(),
            GuRef::Owned(a, _) => a.shape().to_vec(),
            GuRef::Device(_, shape) => shape.clone(),
        }
    }
}

macro_rules! gu_arg_via_nd {
    ($([$($g:tt)*] $ty:ty;)*) => {$(
        impl<'a, T: GpuType, $($g)*> GuArg<'a, T> for $ty {
            fn into_gu(self) -> GuRef<'a, T> {
                GuRef::Nd(self.into_nd())
            }
        }
    )*};
}

gu_arg_via_nd! {
    [] T;
    [S: Data<Elem = T>, D: Dimension] &'a ArrayBase<S, D>;
    [D: Dimension] ArrayView<'a, T, D>;
    [] &'a [T];
    [] &'a Vec<T>;
    [const N: usize] &'a [T; N];
}

impl<'a, T: GpuType> GuArg<'a, T> for &'a DeviceArray<T> {
    fn into_gu(self) -> GuRef<'a, T> {
        GuRef::Device(self.as_slice(), self.shape().to_vec())
    }
}

impl<'a, T: GpuType> GuArg<'a, T> for &'a DeviceVec<T> {
    fn into_gu(self) -> GuRef<'a, T> {
        GuRef::Device(self.as_slice(), vec![self.len()])
    }
}

impl<'a, T: GpuType> GuArg<'a, T> for DeviceSlice<'a, T> {
    fn into_gu(self) -> GuRef<'a, T> {
        let len = self.len();
        GuRef::Device(self, vec![len])
    }
}

/// Where `name::nd_into` writes: a mutable `ndarray` array or view of any dimension, whose
/// shape must be the call's broadcast shape.
pub trait NdOut<'a, T: GpuType> {
    fn into_nd_out(self) -> ArrayViewMutD<'a, T>;
}

impl<'a, T: GpuType, S: DataMut<Elem = T>, D: Dimension> NdOut<'a, T> for &'a mut ArrayBase<S, D> {
    fn into_nd_out(self) -> ArrayViewMutD<'a, T> {
        self.view_mut().into_dyn()
    }
}

impl<'a, T: GpuType, D: Dimension> NdOut<'a, T> for ArrayViewMut<'a, T, D> {
    fn into_nd_out(self) -> ArrayViewMutD<'a, T> {
        self.into_dyn()
    }
}

/// An argument of an N-dimensional call with its element type erased. Opaque outside this
/// crate and made only by [`NdRef::erase`], so its pointer, shape and strides always
/// describe a live borrowed view.
#[derive(Clone, Debug)]
pub struct ErasedNd<'a>(pub(crate) NdKind<'a>);

#[derive(Clone, Debug)]
pub(crate) enum NdKind<'a> {
    /// A value broadcast everywhere (`ArgKind::Scalar` or `ArgKind::Value`).
    Scalar { value: ArgKind<'static> },
    Host {
        /// The address of the element at index `[0, 0, …]`.
        ptr: *const u8,
        shape: Vec<usize>,
        /// In elements; negative for a reversed axis.
        strides: Vec<isize>,
        size: usize,
        /// The CPU device, for its arrays (`None`: other host data).
        device: Option<&'a Device>,
        _borrow: PhantomData<&'a [u8]>,
    },
    /// A device array on a GPU, C order: `len` elements at `ptr`.
    Device {
        ptr: cudarc::driver::sys::CUdeviceptr,
        len: usize,
        shape: Vec<usize>,
        strides: Vec<isize>,
        size: usize,
        device: &'a Device,
        uses: &'a crate::driver::Uses,
    },
}

impl<'a> NdKind<'a> {
    /// The device of a device array (a GPU's, or the CPU device's).
    pub(crate) fn device(&self) -> Option<&'a Device> {
        match self {
            NdKind::Scalar { .. } => None,
            NdKind::Host { device, .. } => *device,
            NdKind::Device { device, .. } => Some(device),
        }
    }
}

/// `args` readable on the host: each GPU array copied into `copies` (as bytes), the rest
/// as they are.
pub(crate) fn hosted<'b>(args: &[ErasedNd<'b>], copies: &'b mut Vec<Vec<u8>>) -> Result<Vec<ErasedNd<'b>>> {
    for a in args {
        if let NdKind::Device { ptr, len, size, device, uses, .. } = &a.0 {
            // SAFETY: the erased array borrows `len` elements of `size` bytes at `ptr` on
            // `device` for `'b`.
            let bytes = unsafe { DeviceSlice::<u8>::raw(*ptr, len * size, device, uses) };
            copies.push(bytes.to_vec()?);
        }
    }
    let mut copied = copies.iter();
    args.iter()
        .map(|a| match &a.0 {
            NdKind::Device { shape, strides, size, .. } => {
                let data = copied.next().ok_or_else(|| Error::internal("a device array was not copied"))?;
                Ok(ErasedNd(NdKind::Host {
                    ptr: data.as_ptr(),
                    shape: shape.clone(),
                    strides: strides.clone(),
                    size: *size,
                    device: None,
                    _borrow: PhantomData,
                }))
            }
            _ => Ok(a.clone()),
        })
        .collect()
}

// SAFETY: a shared borrow of a view of plain host data; nothing in it is tied to a thread.
unsafe impl Send for ErasedNd<'_> {}
// SAFETY: as for `Send`; shared references only read.
unsafe impl Sync for ErasedNd<'_> {}

/// The broadcast shape of `shapes` under NumPy's rules (shapes are aligned at their last
/// axis; an axis of extent 1 stretches to any extent), or an error naming every shape.
pub fn broadcast_shapes(function: &'static str, shapes: &[(&'static str, &[usize])]) -> Result<Vec<usize>> {
    let ndim = shapes.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; ndim];
    for (_, shape) in shapes {
        let skip = ndim - shape.len();
        for (axis, &extent) in shape.iter().enumerate() {
            let slot = &mut out[skip + axis];
            if *slot == 1 {
                *slot = extent;
            } else if extent != 1 && extent != *slot {
                return Err(Error::ShapeMismatch {
                    function,
                    shapes: shapes.iter().map(|(name, s)| (*name, s.to_vec())).collect(),
                });
            }
        }
    }
    Ok(out)
}

/// How one array argument is read in a planned call: a view borrowed for `'a`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Operand<'a> {
    /// The address of the element at the broadcast index `[0, 0, …]`.
    pub(crate) origin: *const u8,
    /// Per merged axis (innermost first), in elements.
    pub(crate) strides: Vec<isize>,
    /// The lowest and highest element offsets the call reads, relative to `origin`.
    pub(crate) span: (isize, isize),
    pub(crate) size: usize,
    /// Whether `origin` is a GPU's address (a device array), which only a launch reads.
    pub(crate) on_gpu: bool,
    _borrow: PhantomData<&'a [u8]>,
}

/// A planned N-dimensional call over views borrowed for `'a`: the broadcast shape, and the
/// merged axes it runs over. Made only by [`NdPlan::new`] from erased views, so every
/// operand's offsets stay inside its view.
#[derive(Clone, Debug)]
pub(crate) struct NdPlan<'a> {
    /// The broadcast shape (outermost axis first), the shape of the results.
    pub(crate) shape: Vec<usize>,
    /// The number of elements.
    pub(crate) n: usize,
    /// The merged axes' extents, innermost first.
    pub(crate) dims: Vec<usize>,
    /// Per argument: `None` for a scalar, else how the array is read.
    pub(crate) operands: Vec<Option<Operand<'a>>>,
}

impl NdPlan<'_> {
    /// Whether an argument is a GPU's array: only a launch on that GPU may run the plan
    /// (a host run takes the arguments through [`hosted`] first).
    pub(crate) fn on_gpu(&self) -> bool {
        self.operands.iter().flatten().any(|o| o.on_gpu)
    }
}

// SAFETY: the plan's pointers are shared borrows (for `'a`) of views of plain host data.
unsafe impl Send for NdPlan<'_> {}
// SAFETY: as for `Send`; shared references only read.
unsafe impl Sync for NdPlan<'_> {}

impl<'a> NdPlan<'a> {
    /// Plans a call of `function` (whose parameters are `names`) over `args`; `outs` are
    /// the shapes of the outputs written into, which must be the broadcast shape.
    pub(crate) fn new(
        function: &'static str,
        names: &[&'static str],
        args: &[ErasedNd<'a>],
        outs: &[&[usize]],
    ) -> Result<NdPlan<'a>> {
        let mut shapes: Vec<(&'static str, &[usize])> = Vec::new();
        for (name, arg) in names.iter().zip(args) {
            match &arg.0 {
                NdKind::Host { shape, .. } | NdKind::Device { shape, .. } => shapes.push((name, shape)),
                NdKind::Scalar { .. } => {}
            }
        }
        let out_names = kernel_abi::output_names(outs.len());
        let mut with_outs = shapes.clone();
        with_outs.extend(out_names.iter().copied().zip(outs.iter().copied()));
        let shape = broadcast_shapes(function, &with_outs)?;
        // An output is written, not broadcast: it must have the whole shape.
        if let Some((name, o)) = out_names.iter().zip(outs).find(|(_, o)| **o != shape.as_slice()) {
            return Err(Error::OutShape { function, out: name, shape: o.to_vec(), expected: shape });
        }
        let n = shape.iter().product();
        let ndim = shape.len();
        let full_strides = |s: &[usize], strides: &[isize]| -> Vec<isize> {
            let skip = ndim - s.len();
            (0..ndim).map(|axis| if axis < skip || s[axis - skip] == 1 { 0 } else { strides[axis - skip] }).collect()
        };
        // Each array's stride on every axis of the broadcast shape (0 where it is broadcast).
        // Per argument: its origin, its stride on every axis, its element size, and
        // whether it is a GPU's array.
        type Full = Option<(*const u8, Vec<isize>, usize, bool)>;
        let full: Vec<Full> = args
            .iter()
            .map(|arg| match &arg.0 {
                NdKind::Scalar { .. } => None,
                NdKind::Host { ptr, shape: s, strides, size, .. } => {
                    Some((*ptr, full_strides(s, strides), *size, false))
                }
                // A GPU address, read only by the GPU's launch (`on_gpu`).
                NdKind::Device { ptr, shape: s, strides, size, .. } => {
                    Some((*ptr as *const u8, full_strides(s, strides), *size, true))
                }
            })
            .collect();
        // Merge axes, innermost first: an axis joins the one inside it when every array
        // steps over the inner axis's extent with the outer axis's stride. Axes of extent 1
        // are dropped.
        let mut dims: Vec<usize> = Vec::new();
        let mut merged: Vec<Vec<isize>> = vec![Vec::new(); args.len()];
        for axis in (0..ndim).rev() {
            let extent = shape[axis];
            if extent == 1 {
                continue;
            }
            let joins = !dims.is_empty()
                && full.iter().zip(&merged).all(|(f, m)| match f {
                    None => true,
                    Some((_, st, _, _)) => {
                        let (&inner, &inner_extent) =
                            (m.last().expect("same count as dims"), dims.last().expect("non-empty"));
                        st[axis] == inner * inner_extent as isize
                    }
                });
            if joins {
                *dims.last_mut().expect("non-empty") *= extent;
            } else {
                dims.push(extent);
                for (f, m) in full.iter().zip(&mut merged) {
                    if let Some((_, st, _, _)) = f {
                        m.push(st[axis]);
                    }
                }
            }
        }
        let operands = full
            .into_iter()
            .zip(merged)
            .map(|(f, strides)| {
                f.map(|(origin, _, size, on_gpu)| {
                    let mut span = (0isize, 0isize);
                    for (&st, &extent) in strides.iter().zip(&dims) {
                        let reach = st * (extent as isize - 1);
                        if reach < 0 { span.0 += reach } else { span.1 += reach }
                    }
                    Operand { origin, strides, span, size, on_gpu, _borrow: PhantomData }
                })
            })
            .collect();
        Ok(NdPlan { shape, n, dims, operands })
    }

    /// Whether every array is read with stride 1 over a single axis (or there is no axis):
    /// the plain elementwise kernel can run the call.
    #[cfg(test)]
    fn is_flat(&self) -> bool {
        self.dims.len() <= 1 && self.operands.iter().flatten().all(|o| o.strides.iter().all(|&s| s == 1))
    }

    /// The element offset of argument `k` (an array) at flat index `i` (C order).
    #[inline]
    pub(crate) fn offset(&self, k: usize, mut i: usize) -> isize {
        let Some(op) = &self.operands[k] else { return 0 };
        let mut off = 0isize;
        for (&extent, &st) in self.dims.iter().zip(&op.strides) {
            off += (i % extent) as isize * st;
            i /= extent;
        }
        off
    }
}

impl Operand<'_> {
    /// The number of distinct elements the call reads (axes it is broadcast over aside).
    pub(crate) fn distinct(&self, dims: &[usize]) -> usize {
        self.strides.iter().zip(dims).filter(|(s, _)| **s != 0).map(|(_, e)| *e).product()
    }

    /// The number of elements between the lowest and highest address read, inclusive.
    pub(crate) fn span_len(&self) -> usize {
        (self.span.1 - self.span.0) as usize + 1
    }

    /// The elements read, gathered into a contiguous buffer in C order, with the strides
    /// that read it: over the axes the operand is not broadcast over, or with `all` over
    /// every axis (a dense copy of the whole broadcast shape).
    pub(crate) fn gather(&self, dims: &[usize], all: bool) -> (Vec<u8>, Vec<isize>) {
        debug_assert!(!self.on_gpu, "a GPU's array gathered on the host");
        let mut strides = Vec::with_capacity(dims.len());
        let mut step = 1isize;
        for (&s, &e) in self.strides.iter().zip(dims) {
            if s == 0 && !all {
                strides.push(0);
            } else {
                strides.push(step);
                step *= e as isize;
            }
        }
        let live: Vec<(usize, isize)> =
            self.strides.iter().zip(dims).filter(|(s, _)| all || **s != 0).map(|(s, e)| (*e, *s)).collect();
        let count: usize = live.iter().map(|(e, _)| e).product();
        let mut out = vec![0u8; count * self.size];
        for j in 0..count {
            let (mut rest, mut off) = (j, 0isize);
            for &(extent, st) in &live {
                off += (rest % extent) as isize * st;
                rest /= extent;
            }
            // SAFETY: `off` lies in the operand's span (the plan's strides over `dims`), which
            // the view borrowed for `'a` covers; `size` bytes are one element.
            let src = unsafe { std::slice::from_raw_parts(self.origin.offset(off * self.size as isize), self.size) };
            out[j * self.size..(j + 1) * self.size].copy_from_slice(src);
        }
        (out, strides)
    }
}

/// An element read during a host run of an N-dimensional call (the argument of the
/// per-element closure the host loop runs).
pub struct NdAt<'p> {
    plan: &'p NdPlan<'p>,
    args: &'p [ErasedNd<'p>],
    index: usize,
}

impl<'p> NdAt<'p> {
    /// Element `index` (C order) of a call planned over `args`.
    pub(crate) fn new(plan: &'p NdPlan<'p>, args: &'p [ErasedNd<'p>], index: usize) -> NdAt<'p> {
        debug_assert!(!plan.on_gpu(), "a host run of a plan over a GPU's arrays");
        NdAt { plan, args, index }
    }

    /// Argument `k` at this element.
    ///
    /// # Safety
    /// `T` must be argument `k`'s element type.
    #[inline]
    pub unsafe fn get<T: GpuType>(&self, k: usize) -> T {
        let at = match (&self.plan.operands[k], &self.args[k].0) {
            (None, NdKind::Scalar { value }) => value.value_ptr(),
            (Some(op), _) => {
                let off = self.plan.offset(k, self.index);
                // SAFETY: the offset of an element of the call lies in the borrowed view
                // (the plan was made from it).
                Some(unsafe { op.origin.offset(off * op.size as isize) })
            }
            (None, _) => None,
        };
        let at = at.expect("the plan was made from these arguments: an array has an operand");
        // SAFETY: a value of argument `k`'s type, `T` (the caller's promise): an element
        // of the borrowed view, or the bytes of the value broadcast.
        unsafe { at.cast::<T>().read_unaligned() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array, Array2, s};

    fn erased<'a>(a: impl NdArg<'a, f32>) -> ErasedNd<'a> {
        a.into_nd().erase()
    }

    #[test]
    fn shapes_broadcast_as_numpy_does() {
        assert_eq!(broadcast_shapes("f", &[("a", &[2, 3]), ("b", &[3])]).unwrap(), vec![2, 3]);
        assert_eq!(broadcast_shapes("f", &[("a", &[4, 1, 3]), ("b", &[5, 1])]).unwrap(), vec![4, 5, 3]);
        assert_eq!(broadcast_shapes("f", &[("a", &[0, 1]), ("b", &[1])]).unwrap(), vec![0, 1]);
        assert_eq!(broadcast_shapes("f", &[]).unwrap(), Vec::<usize>::new());
        let e = broadcast_shapes("f", &[("a", &[2, 3]), ("b", &[4])]).unwrap_err();
        assert_eq!(e.to_string(), "`f`: the shapes do not broadcast together: `a` is [2, 3] and `b` is [4]");
    }

    #[test]
    fn contiguous_calls_merge_into_one_axis() {
        let a = Array::from_shape_fn((4, 5, 6), |(i, j, k)| (i * 30 + j * 6 + k) as f32);
        let p = NdPlan::new("f", &["a", "b"], &[erased(&a), erased(2.0)], &[]).unwrap();
        assert_eq!((p.shape.clone(), p.dims.clone(), p.n), (vec![4, 5, 6], vec![120], 120));
        assert!(p.is_flat());
    }

    #[test]
    fn broadcast_and_strided_views_keep_their_axes() {
        let a = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f32);
        let row = Array::from_vec(vec![10.0f32, 20.0, 30.0, 40.0]);
        let p = NdPlan::new("f", &["a", "b"], &[erased(&a), erased(&row)], &[]).unwrap();
        assert_eq!(p.dims, vec![4, 3]);
        assert!(!p.is_flat());
        assert_eq!(p.operands[1].as_ref().unwrap().strides, vec![1, 0]);
        // Element [2, 1] of the broadcast: a[2][1] and row[1].
        assert_eq!((p.offset(0, 9), p.offset(1, 9)), (9, 1));
        // A transposed view walks its memory by its strides.
        let t = a.t();
        let p = NdPlan::new("f", &["a"], &[erased(t)], &[]).unwrap();
        assert_eq!((p.shape.clone(), p.dims.clone()), (vec![4, 3], vec![3, 4]));
        assert_eq!(p.operands[0].as_ref().unwrap().strides, vec![4, 1]);
        // A reversed view reaches below its first element.
        let r = a.slice(s![.., ..;-1]);
        let args = [erased(r), erased(2.5f32)];
        let p = NdPlan::new("f", &["a", "x"], &args, &[]).unwrap();
        assert_eq!(p.operands[0].as_ref().unwrap().span, (-3, 8));
        // SAFETY: argument 0 is an `f32` array, argument 1 an `f32`.
        let at = |i: usize, k: usize| -> f32 { unsafe { NdAt::new(&p, &args, i).get::<f32>(k) } };
        assert_eq!(at(0, 0), 3.0);
        assert_eq!(at(5, 0), 6.0);
        assert_eq!(at(5, 1), 2.5);
    }

    #[test]
    fn sparse_views_gather_only_what_they_read() {
        let a = Array2::from_shape_fn((6, 10), |(i, j)| (i * 10 + j) as f32);
        let v = a.slice(s![..;2, ..;5]);
        let p = NdPlan::new("f", &["a"], &[erased(v)], &[]).unwrap();
        let op = p.operands[0].as_ref().unwrap();
        assert_eq!((op.distinct(&p.dims), op.span_len()), (6, 46));
        let (bytes, strides) = op.gather(&p.dims, false);
        let values: Vec<f32> = bytes.chunks(4).map(|c| f32::from_ne_bytes(c.try_into().unwrap())).collect();
        assert_eq!(values, vec![0.0, 5.0, 20.0, 25.0, 40.0, 45.0]);
        assert_eq!(strides, vec![1, 2]);
    }

    #[test]
    fn outputs_must_have_the_broadcast_shape() {
        let a = Array2::<f32>::zeros((2, 3));
        let e = NdPlan::new("f", &["a"], &[erased(&a)], &[&[3]]).unwrap_err();
        assert_eq!(e.to_string(), "`f`: `out` has shape [3], but the call's shape is [2, 3]");
        // An output may be larger than the arguments' shape, which then broadcast to it.
        let p = NdPlan::new("f", &["a"], &[erased(&a)], &[&[4, 2, 3]]).unwrap();
        assert_eq!(p.shape, vec![4, 2, 3]);
    }
}
