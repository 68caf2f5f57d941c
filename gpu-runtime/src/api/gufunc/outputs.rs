//! A call's outputs as one value: for each output element type, a zeroed buffer of one
//! core per loop index (in host memory or on a GPU), and the shaped arrays a call returns
//! (`ArrayD<X>` for one output, a tuple of them for several). Implemented here for tuples
//! of element types, `(X,)`, `(X, Y)`, … up to `kernel_abi::GUFUNC_MAX_OUTPUTS` (a test
//! below holds them to it).

use ndarray::{ArrayD, IxDyn};

use super::layout::{GuLayout, GuPlan};
use crate::data::{DeviceArray, DeviceVec};
use crate::driver::Device;
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// A call's outputs, where it computed them.
#[derive(Debug)]
pub enum GuOut<O: GuOutputs> {
    Host(O::Host),
    Device(O::Device),
}

/// The element types of a function's outputs, in order: `(X,)`, `(X, Y)`, …
pub trait GuOutputs: Sized {
    /// One buffer per output in host memory: `(Vec<X>, …)`.
    type Host: Send;
    /// One buffer per output on a GPU: `(DeviceVec<X>, …)`.
    type Device;
    /// What a call returns: `ArrayD<X>` for one output, `(ArrayD<X>, ArrayD<Y>, …)`.
    type Arrays;
    /// What `name::device` returns: `DeviceArray<X>`, or a tuple of them.
    type DeviceArrays;

    /// Zeroed host buffers for the plan's loop indices.
    fn host_zeros(layout: &GuLayout, plan: &GuPlan) -> Self::Host;
    /// Zeroed buffers on `device`.
    fn device_zeros(layout: &GuLayout, plan: &GuPlan, device: &Device) -> Result<Self::Device>;
    /// The outputs in host memory, shaped.
    fn arrays(layout: &GuLayout, plan: &GuPlan, outs: GuOut<Self>) -> Result<Self::Arrays>;
    /// The outputs on the device that computed them, shaped (the CPU device's arrays for a
    /// call that ran on the host).
    fn device_arrays(layout: &GuLayout, plan: &GuPlan, outs: GuOut<Self>) -> Result<Self::DeviceArrays>;
}

/// Elements of output `k` per loop index.
fn out_len(layout: &GuLayout, plan: &GuPlan, k: usize) -> usize {
    plan.core(layout.outputs[k].1).iter().product()
}

/// The shape of output `k`: the loop shape, then its core.
fn out_shape(layout: &GuLayout, plan: &GuPlan, k: usize) -> Vec<usize> {
    plan.loop_shape.iter().copied().chain(plan.core(layout.outputs[k].1)).collect()
}

fn host_zeros<T: Scalar>(layout: &GuLayout, plan: &GuPlan, k: usize) -> Vec<T> {
    vec![T::from_bits(0); plan.loops * out_len(layout, plan, k)]
}

fn device_zeros<T: Scalar>(layout: &GuLayout, plan: &GuPlan, k: usize, device: &Device) -> Result<DeviceVec<T>> {
    DeviceVec::zeros_on(device, plan.loops * out_len(layout, plan, k))
}

/// Output `k` in host memory, shaped.
fn host_array<T: Scalar>(layout: &GuLayout, plan: &GuPlan, k: usize, data: Vec<T>) -> Result<ArrayD<T>> {
    ArrayD::from_shape_vec(IxDyn(&out_shape(layout, plan, k)), data)
        .map_err(|e| Error::internal(format!("`{}`: an output of the wrong size: {e}", layout.function)))
}

/// Output `k` on the device that computed it, shaped.
fn device_array<T: Scalar>(layout: &GuLayout, plan: &GuPlan, k: usize, data: DeviceVec<T>) -> Result<DeviceArray<T>> {
    DeviceArray::from_vec(data, &out_shape(layout, plan, k))
}

/// One output, where it was computed, as the shaped array of either kind.
enum One<T: Scalar> {
    Host(Vec<T>),
    Device(DeviceVec<T>),
}

impl<T: Scalar> One<T> {
    fn array(self, layout: &GuLayout, plan: &GuPlan, k: usize) -> Result<ArrayD<T>> {
        let data = match self {
            One::Host(v) => v,
            One::Device(v) => v.to_vec()?,
        };
        host_array(layout, plan, k, data)
    }

    fn device_array(self, layout: &GuLayout, plan: &GuPlan, k: usize) -> Result<DeviceArray<T>> {
        let data = match self {
            One::Host(v) => DeviceVec::from_slice_on(&Device::cpu(), &v)?,
            One::Device(v) => v,
        };
        device_array(layout, plan, k, data)
    }
}

/// The outputs split into one [`One`] each.
macro_rules! split {
    ($outs:expr, $($t:ident $k:tt),+) => {
        match $outs {
            GuOut::Host(h) => ($(One::<$t>::Host(h.$k),)+),
            GuOut::Device(d) => ($(One::<$t>::Device(d.$k),)+),
        }
    };
}

impl<X: Scalar> GuOutputs for (X,) {
    type Host = (Vec<X>,);
    type Device = (DeviceVec<X>,);
    type Arrays = ArrayD<X>;
    type DeviceArrays = DeviceArray<X>;

    fn host_zeros(layout: &GuLayout, plan: &GuPlan) -> Self::Host {
        (host_zeros(layout, plan, 0),)
    }

    fn device_zeros(layout: &GuLayout, plan: &GuPlan, device: &Device) -> Result<Self::Device> {
        Ok((device_zeros(layout, plan, 0, device)?,))
    }

    fn arrays(layout: &GuLayout, plan: &GuPlan, outs: GuOut<Self>) -> Result<Self::Arrays> {
        split!(outs, X 0).0.array(layout, plan, 0)
    }

    fn device_arrays(layout: &GuLayout, plan: &GuPlan, outs: GuOut<Self>) -> Result<Self::DeviceArrays> {
        split!(outs, X 0).0.device_array(layout, plan, 0)
    }
}

macro_rules! tuple_outputs {
    ($($t:ident $k:tt),+) => {
        impl<$($t: Scalar),+> GuOutputs for ($($t,)+) {
            type Host = ($(Vec<$t>,)+);
            type Device = ($(DeviceVec<$t>,)+);
            type Arrays = ($(ArrayD<$t>,)+);
            type DeviceArrays = ($(DeviceArray<$t>,)+);

            fn host_zeros(layout: &GuLayout, plan: &GuPlan) -> Self::Host {
                ($(host_zeros(layout, plan, $k),)+)
            }

            fn device_zeros(layout: &GuLayout, plan: &GuPlan, device: &Device) -> Result<Self::Device> {
                Ok(($(device_zeros(layout, plan, $k, device)?,)+))
            }

            fn arrays(layout: &GuLayout, plan: &GuPlan, outs: GuOut<Self>) -> Result<Self::Arrays> {
                let split = split!(outs, $($t $k),+);
                Ok(($(split.$k.array(layout, plan, $k)?,)+))
            }

            fn device_arrays(layout: &GuLayout, plan: &GuPlan, outs: GuOut<Self>) -> Result<Self::DeviceArrays> {
                let split = split!(outs, $($t $k),+);
                Ok(($(split.$k.device_array(layout, plan, $k)?,)+))
            }
        }
    };
}

tuple_outputs!(A 0, B 1);
tuple_outputs!(A 0, B 1, C 2);
tuple_outputs!(A 0, B 1, C 2, D 3);
tuple_outputs!(A 0, B 1, C 2, D 3, E 4);
tuple_outputs!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_outputs!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);
tuple_outputs!(A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);

#[cfg(test)]
mod tests {
    use super::*;

    fn outputs<O: GuOutputs>() {}

    /// The largest arity the macro lets through has its impl.
    #[test]
    fn every_arity_the_macro_allows_is_implemented() {
        outputs::<(f32, f64, u8, i8, u16, i16, u32, i32)>();
        assert_eq!(kernel_abi::GUFUNC_MAX_OUTPUTS, 8);
    }
}
