//! [`DeviceArray`]: a [`DeviceVec`] with a shape (C order), the device-side twin of an
//! `ndarray` array (feature `ndarray`). `#[guvectorize]` functions take it as an input and
//! return it from `name::device`, so a chain of calls keeps its data on the device.

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};

use super::array::{DeviceSlice, DeviceVec};
use crate::driver::{Device, default_device};
use crate::error::{Error, Result};
use crate::scalar::GpuType;

/// An N-dimensional array in the memory of one device, its elements in C order (the last
/// axis varies fastest). Made from an `ndarray` array, from zeros, or by giving a
/// [`DeviceVec`] a shape; read back with [`DeviceArray::to_array`].
pub struct DeviceArray<T: GpuType> {
    data: DeviceVec<T>,
    shape: Vec<usize>,
}

impl<T: GpuType> DeviceArray<T> {
    /// A copy of `array` (any layout) on the default device.
    pub fn from_array<S: Data<Elem = T>, D: Dimension>(array: &ArrayBase<S, D>) -> Result<DeviceArray<T>> {
        DeviceArray::from_array_on(&default_device()?, array)
    }

    /// A copy of `array` (any layout) on `device`.
    pub fn from_array_on<S: Data<Elem = T>, D: Dimension>(
        device: &Device,
        array: &ArrayBase<S, D>,
    ) -> Result<DeviceArray<T>> {
        let data = match array.as_slice() {
            Some(s) => DeviceVec::from_slice_on(device, s)?,
            None => DeviceVec::from_slice_on(device, &array.iter().copied().collect::<Vec<T>>())?,
        };
        Ok(DeviceArray { data, shape: array.shape().to_vec() })
    }

    /// Zeros of `shape` on the default device.
    pub fn zeros(shape: &[usize]) -> Result<DeviceArray<T>> {
        DeviceArray::zeros_on(&default_device()?, shape)
    }

    /// Zeros of `shape` on `device`.
    pub fn zeros_on(device: &Device, shape: &[usize]) -> Result<DeviceArray<T>> {
        let len = elements(shape)?;
        Ok(DeviceArray { data: DeviceVec::zeros_on(device, len)?, shape: shape.to_vec() })
    }

    /// `data` seen with `shape`, whose elements must number `data.len()` (else
    /// `Error::BadShape`).
    pub fn from_vec(data: DeviceVec<T>, shape: &[usize]) -> Result<DeviceArray<T>> {
        if elements(shape)? != data.len() {
            return Err(Error::BadShape { len: data.len(), shape: shape.to_vec() });
        }
        Ok(DeviceArray { data, shape: shape.to_vec() })
    }

    /// The same elements with another shape of as many elements (no copy).
    pub fn into_shape(self, shape: &[usize]) -> Result<DeviceArray<T>> {
        DeviceArray::from_vec(self.data, shape)
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The device that holds the data.
    pub fn device(&self) -> &Device {
        self.data.device()
    }

    /// The elements in C order, as a flat vector.
    pub fn as_vec(&self) -> &DeviceVec<T> {
        &self.data
    }

    /// The elements in C order, mutably (a vector's length cannot change, so the shape
    /// stays right).
    pub fn as_mut_vec(&mut self) -> &mut DeviceVec<T> {
        &mut self.data
    }

    /// The flat vector, without the shape.
    pub fn into_vec(self) -> DeviceVec<T> {
        self.data
    }

    /// A flat view of every element.
    pub fn as_slice(&self) -> DeviceSlice<'_, T> {
        self.data.as_slice()
    }

    /// The data, copied to the host.
    pub fn to_array(&self) -> Result<ArrayD<T>> {
        ArrayD::from_shape_vec(IxDyn(&self.shape), self.data.to_vec()?)
            .map_err(|e| Error::internal(format!("a device array's shape and length disagree: {e}")))
    }
}

/// The number of elements of `shape` (`Error::BadShape` where it overflows).
fn elements(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| Error::BadShape { len: usize::MAX, shape: shape.to_vec() })
}

impl<T: GpuType> std::fmt::Debug for DeviceArray<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceArray<{}>{:?} on {}", T::NAME, self.shape, self.device().id())
    }
}
