//! N-dimensional broadcasting over `ndarray` arrays (feature `ndarray`): `name::nd(args…)`
//! takes arrays of any dimension and strides, broadcasts them as NumPy does, and returns
//! arrays of the broadcast shape; `name::nd_into(out, args…)` writes into arrays.
//!
//! The GPU reads strided views where they are: each view's memory span is copied to the
//! device as it is, and the kernel's strided entry walks it by the view's strides (a
//! transposed, reversed or sliced view costs no host-side copy). Before the launch the
//! axes are merged where every argument allows it, so a contiguous call takes the plain
//! elementwise kernel.

use std::marker::PhantomData;

use ndarray::{ArrayBase, ArrayView, ArrayViewMut, Data, DataMut, Dimension};
pub use ndarray::{ArrayD, ArrayViewD, ArrayViewMutD, IxDyn};

use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// The most axes the strided kernel entry takes after merging (the compiler's
/// `lower::MAX_DIMS`); a call with more is gathered on the host into contiguous arrays.
pub const MAX_DIMS: usize = 8;

/// One argument of `name::nd`: a scalar broadcast everywhere, or a view of any shape.
#[derive(Clone, Debug)]
pub enum NdRef<'a, T> {
    Scalar(T),
    Host(ArrayViewD<'a, T>),
}

impl<'a, T: Scalar> NdRef<'a, T> {
    /// The argument without its element type.
    pub fn erase(self) -> ErasedNd<'a> {
        match self {
            NdRef::Scalar(v) => ErasedNd::Scalar { bits: v.to_bits() },
            NdRef::Host(view) => ErasedNd::Host {
                ptr: view.as_ptr().cast(),
                shape: view.shape().to_vec(),
                strides: view.strides().to_vec(),
                size: std::mem::size_of::<T>(),
                _borrow: PhantomData,
            },
        }
    }
}

/// What `name::nd` accepts where the function takes a `T`: a `T`, an `ndarray` array or
/// view of `T` of any dimension (owned arrays by reference), or a slice (one axis).
pub trait NdArg<'a, T: Scalar> {
    fn into_nd(self) -> NdRef<'a, T>;
}

impl<'a, T: Scalar> NdArg<'a, T> for T {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Scalar(self)
    }
}

impl<'a, T: Scalar, S: Data<Elem = T>, D: Dimension> NdArg<'a, T> for &'a ArrayBase<S, D> {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Host(self.view().into_dyn())
    }
}

impl<'a, T: Scalar, D: Dimension> NdArg<'a, T> for ArrayView<'a, T, D> {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Host(self.into_dyn())
    }
}

impl<'a, T: Scalar> NdArg<'a, T> for &'a [T] {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Host(ArrayView::from(self).into_dyn())
    }
}

impl<'a, T: Scalar> NdArg<'a, T> for &'a Vec<T> {
    fn into_nd(self) -> NdRef<'a, T> {
        NdRef::Host(ArrayView::from(self.as_slice()).into_dyn())
    }
}

/// Where `name::nd_into` writes: a mutable `ndarray` array or view of any dimension, whose
/// shape must be the call's broadcast shape.
pub trait NdOut<'a, T: Scalar> {
    fn into_nd_out(self) -> ArrayViewMutD<'a, T>;
}

impl<'a, T: Scalar, S: DataMut<Elem = T>, D: Dimension> NdOut<'a, T> for &'a mut ArrayBase<S, D> {
    fn into_nd_out(self) -> ArrayViewMutD<'a, T> {
        self.view_mut().into_dyn()
    }
}

impl<'a, T: Scalar, D: Dimension> NdOut<'a, T> for ArrayViewMut<'a, T, D> {
    fn into_nd_out(self) -> ArrayViewMutD<'a, T> {
        self.into_dyn()
    }
}

/// An argument of an N-dimensional call with its element type erased.
#[derive(Clone, Debug)]
pub enum ErasedNd<'a> {
    Scalar {
        bits: u64,
    },
    Host {
        /// The address of the element at index `[0, 0, …]`.
        ptr: *const u8,
        shape: Vec<usize>,
        /// In elements; negative for a reversed axis.
        strides: Vec<isize>,
        size: usize,
        _borrow: PhantomData<&'a [u8]>,
    },
}

// SAFETY: a shared borrow of plain host data.
unsafe impl Send for ErasedNd<'_> {}
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

/// How one array argument is read in a planned call.
#[derive(Clone, Debug, PartialEq)]
pub struct Operand {
    /// The address of the element at the broadcast index `[0, 0, …]`.
    pub origin: *const u8,
    /// Per merged axis (innermost first), in elements.
    pub strides: Vec<isize>,
    /// The lowest and highest element offsets the call reads, relative to `origin`.
    pub span: (isize, isize),
    pub size: usize,
}

/// A planned N-dimensional call: the broadcast shape, and the merged axes it runs over.
#[derive(Clone, Debug)]
pub struct NdPlan {
    /// The broadcast shape (outermost axis first), the shape of the results.
    pub shape: Vec<usize>,
    /// The number of elements.
    pub n: usize,
    /// The merged axes' extents, innermost first.
    pub dims: Vec<usize>,
    /// Per argument: `None` for a scalar, else how the array is read.
    pub operands: Vec<Option<Operand>>,
}

// SAFETY: the plan's pointers are shared borrows held by the call that made it.
unsafe impl Send for NdPlan {}
unsafe impl Sync for NdPlan {}

impl NdPlan {
    /// Plans a call of `function` (whose parameters are `names`) over `args`; `outs` are
    /// the shapes of the outputs written into, which must be the broadcast shape.
    pub fn new(
        function: &'static str,
        names: &[&'static str],
        args: &[ErasedNd<'_>],
        outs: &[&[usize]],
    ) -> Result<NdPlan> {
        let mut shapes: Vec<(&'static str, &[usize])> = Vec::new();
        for (name, arg) in names.iter().zip(args) {
            if let ErasedNd::Host { shape, .. } = arg {
                shapes.push((name, shape));
            }
        }
        let out_names: &[&'static str] = if outs.len() == 1 { &["out"] } else { &crate::kernel::OUT_NAMES };
        let mut with_outs = shapes.clone();
        with_outs.extend(out_names.iter().copied().zip(outs.iter().copied()));
        let shape = broadcast_shapes(function, &with_outs)?;
        // An output is written, not broadcast: it must have the whole shape.
        if let Some((name, o)) = out_names.iter().zip(outs).find(|(_, o)| **o != shape.as_slice()) {
            return Err(Error::OutShape { function, out: name, shape: o.to_vec(), expected: shape });
        }
        let n = shape.iter().product();
        let ndim = shape.len();
        // Each array's stride on every axis of the broadcast shape (0 where it is broadcast).
        let full: Vec<Option<(*const u8, Vec<isize>, usize)>> = args
            .iter()
            .map(|arg| match arg {
                ErasedNd::Scalar { .. } => None,
                ErasedNd::Host { ptr, shape: s, strides, size, .. } => {
                    let skip = ndim - s.len();
                    let st = (0..ndim)
                        .map(|axis| if axis < skip || s[axis - skip] == 1 { 0 } else { strides[axis - skip] })
                        .collect();
                    Some((*ptr, st, *size))
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
                    Some((_, st, _)) => {
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
                    if let Some((_, st, _)) = f {
                        m.push(st[axis]);
                    }
                }
            }
        }
        let operands = full
            .into_iter()
            .zip(merged)
            .map(|(f, strides)| {
                f.map(|(origin, _, size)| {
                    let mut span = (0isize, 0isize);
                    for (&st, &extent) in strides.iter().zip(&dims) {
                        let reach = st * (extent as isize - 1);
                        if reach < 0 { span.0 += reach } else { span.1 += reach }
                    }
                    Operand { origin, strides, span, size }
                })
            })
            .collect();
        Ok(NdPlan { shape, n, dims, operands })
    }

    /// Whether every array is read with stride 1 over a single axis (or there is no axis):
    /// the plain elementwise kernel can run the call.
    pub fn is_flat(&self) -> bool {
        self.dims.len() <= 1 && self.operands.iter().flatten().all(|o| o.strides.iter().all(|&s| s == 1))
    }

    /// The element offset of argument `k` (an array) at flat index `i` (C order).
    #[inline]
    pub fn offset(&self, k: usize, mut i: usize) -> isize {
        let Some(op) = &self.operands[k] else { return 0 };
        let mut off = 0isize;
        for (&extent, &st) in self.dims.iter().zip(&op.strides) {
            off += (i % extent) as isize * st;
            i /= extent;
        }
        off
    }
}

impl Operand {
    /// The number of distinct elements the call reads (axes it is broadcast over aside).
    pub fn distinct(&self, dims: &[usize]) -> usize {
        self.strides.iter().zip(dims).filter(|(s, _)| **s != 0).map(|(_, e)| *e).product()
    }

    /// The number of elements between the lowest and highest address read, inclusive.
    pub fn span_len(&self) -> usize {
        (self.span.1 - self.span.0) as usize + 1
    }

    /// The elements read, gathered into a contiguous buffer in C order, with the strides
    /// that read it: over the axes the operand is not broadcast over, or with `all` over
    /// every axis (a dense copy of the whole broadcast shape).
    pub fn gather(&self, dims: &[usize], all: bool) -> (Vec<u8>, Vec<isize>) {
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
            // SAFETY: `off` lies in the view's span, which the borrowed view covers.
            let src = unsafe { std::slice::from_raw_parts(self.origin.offset(off * self.size as isize), self.size) };
            out[j * self.size..(j + 1) * self.size].copy_from_slice(src);
        }
        (out, strides)
    }
}

/// An element read during a host run of an N-dimensional call.
pub struct NdAt<'p> {
    plan: &'p NdPlan,
    scalars: &'p [u64],
    index: usize,
}

impl NdAt<'_> {
    /// Argument `k` at this element.
    ///
    /// # Safety
    /// `T` must be argument `k`'s element type.
    #[inline]
    pub unsafe fn get<T: Scalar>(&self, k: usize) -> T {
        match &self.plan.operands[k] {
            None => T::from_bits(self.scalars[k]),
            Some(op) => {
                let off = self.plan.offset(k, self.index);
                // SAFETY: the offset lies in the borrowed view; `T` is its type (caller).
                unsafe { op.origin.offset(off * op.size as isize).cast::<T>().read_unaligned() }
            }
        }
    }
}

/// Runs `f` at every element of a planned call on the host (split over threads with
/// `parallel`), in C order.
pub fn run_host<R: Send>(
    plan: &NdPlan,
    args: &[ErasedNd<'_>],
    parallel: bool,
    f: impl Fn(&NdAt<'_>) -> R + Sync,
) -> Vec<R> {
    use rayon::prelude::*;
    let scalars: Vec<u64> = args.iter().map(|a| if let ErasedNd::Scalar { bits } = a { *bits } else { 0 }).collect();
    let at = |index: usize| f(&NdAt { plan, scalars: &scalars, index });
    if parallel { (0..plan.n).into_par_iter().map(at).collect() } else { (0..plan.n).map(at).collect() }
}

/// `name::nd` on the host: plans, runs `f` everywhere and shapes the results.
pub fn host_nd<R: crate::Results>(
    function: &'static str,
    names: &[&'static str],
    args: &[ErasedNd<'_>],
    parallel: bool,
    f: impl Fn(&NdAt<'_>) -> R + Sync,
) -> Result<R::Nd> {
    let plan = NdPlan::new(function, names, args, &[])?;
    let values = run_host(&plan, args, parallel, f);
    Ok(R::to_nd(R::unzip(values), &plan.shape))
}

/// `name::nd_into` on the host.
pub fn host_nd_into<R: crate::Results>(
    function: &'static str,
    names: &[&'static str],
    args: &[ErasedNd<'_>],
    outs: R::NdOuts<'_>,
    parallel: bool,
    f: impl Fn(&NdAt<'_>) -> R + Sync,
) -> Result<()> {
    let shapes = R::nd_shapes(&outs);
    let shapes: Vec<&[usize]> = shapes.iter().map(Vec::as_slice).collect();
    let plan = NdPlan::new(function, names, args, &shapes)?;
    let values = run_host(&plan, args, parallel, f);
    R::nd_assign(R::unzip(values), &plan.shape, outs);
    Ok(())
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
        let p = NdPlan::new("f", &["a"], &[erased(r)], &[]).unwrap();
        assert_eq!(p.operands[0].as_ref().unwrap().span, (-3, 8));
        // SAFETY: argument 0 is an `f32` array.
        let at = |plan: &NdPlan, i: usize| -> f32 { unsafe { NdAt { plan, scalars: &[0], index: i }.get::<f32>(0) } };
        assert_eq!(at(&p, 0), 3.0);
        assert_eq!(at(&p, 5), 6.0);
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
