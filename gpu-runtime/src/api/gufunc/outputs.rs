//! A call's outputs as one value: for each output element type, a zeroed buffer of one
//! core per loop index (in host memory or on a GPU), and the shaped arrays a call returns
//! (`ArrayD<X>` for one output, a tuple of them for several). Implemented here for tuples
//! of element types, `(X,)`, `(X, Y)`, … up to `kernel_abi::GUFUNC_MAX_OUTPUTS` (a test
//! below holds them to it).

use ndarray::{ArrayBase, ArrayD, ArrayViewMut, ArrayViewMutD, DataMut, Dimension, IxDyn};

use super::layout::{GuLayout, GuPlan};
use crate::data::{DeviceArray, DeviceVec};
use crate::driver::Device;
use crate::error::{Error, Result};
use crate::scalar::{GpuType, zeroed};

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
    type Device: Send;
    /// What a call returns: `ArrayD<X>` for one output, `(ArrayD<X>, ArrayD<Y>, …)`.
    type Arrays: Send;
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

    /// Where `name::into` writes: one [`GuOutRef`] per output.
    type Refs<'o>;
    /// The shape and device of each output of `name::into`.
    fn ref_shapes(refs: &Self::Refs<'_>) -> Vec<(Vec<usize>, Option<Device>)>;
    /// Buffers for a launch on `device`: each output's own where it is a device array
    /// there (lent out of it until [`GuOutputs::give_back`]), zeros for the others.
    fn lend(layout: &GuLayout, plan: &GuPlan, device: &Device, refs: &mut Self::Refs<'_>) -> Result<Self::Device>;
    /// Puts the lent buffers back, and with `written` the results of the others into
    /// their host arrays.
    fn give_back(refs: &mut Self::Refs<'_>, outs: Self::Device, written: bool) -> Result<()>;
    /// The results computed on the host into the outputs.
    fn write_host(refs: &mut Self::Refs<'_>, outs: Self::Host) -> Result<()>;
}

/// Where `name::into` writes one output: an `ndarray` array or view (of any strides), or
/// a device array, whose shape must be the loop shape followed by the output's core.
#[derive(Debug)]
pub enum GuOutRef<'o, T: GpuType> {
    Host(ArrayViewMutD<'o, T>),
    Device(&'o mut DeviceArray<T>),
}

/// What `name::into` of a `#[guvectorize]` function writes one output into.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive a `#[guvectorize]` function's `{T}` results",
    label = "expected `&mut Array<{T}, D>`, an `ArrayViewMut<{T}, D>` or `&mut DeviceArray<{T}>`"
)]
pub trait GuOutArg<'o, T: GpuType> {
    fn into_gu_out(self) -> GuOutRef<'o, T>;
}

impl<'o, T: GpuType, S: DataMut<Elem = T>, D: Dimension> GuOutArg<'o, T> for &'o mut ArrayBase<S, D> {
    fn into_gu_out(self) -> GuOutRef<'o, T> {
        GuOutRef::Host(self.view_mut().into_dyn())
    }
}

impl<'o, T: GpuType, D: Dimension> GuOutArg<'o, T> for ArrayViewMut<'o, T, D> {
    fn into_gu_out(self) -> GuOutRef<'o, T> {
        GuOutRef::Host(self.into_dyn())
    }
}

impl<'o, T: GpuType> GuOutArg<'o, T> for &'o mut DeviceArray<T> {
    fn into_gu_out(self) -> GuOutRef<'o, T> {
        GuOutRef::Device(self)
    }
}

impl<T: GpuType> GuOutRef<'_, T> {
    fn shape(&self) -> (Vec<usize>, Option<Device>) {
        match self {
            GuOutRef::Host(v) => (v.shape().to_vec(), None),
            GuOutRef::Device(d) => (d.shape().to_vec(), Some(d.device().clone())),
        }
    }

    /// A buffer for a launch on `device`: the array's own (lent out of it), or zeros.
    fn lend(&mut self, layout: &GuLayout, plan: &GuPlan, k: usize, device: &Device) -> Result<DeviceVec<T>> {
        match self {
            GuOutRef::Device(d) if d.device() == device => {
                Ok(std::mem::replace(d.as_mut_vec(), DeviceVec::placeholder(device)))
            }
            _ => device_zeros(layout, plan, k, device),
        }
    }

    fn give_back(&mut self, buf: DeviceVec<T>, written: bool) -> Result<()> {
        match self {
            GuOutRef::Device(d)
                if d.as_vec().is_empty() && buf.device() == d.device() && buf.len() == d.shape().iter().product() =>
            {
                *d.as_mut_vec() = buf;
                Ok(())
            }
            _ if !written => Ok(()),
            GuOutRef::Host(v) => match v.as_slice_mut() {
                Some(s) => buf.copy_to(s),
                None => {
                    let data = buf.to_vec()?;
                    v.iter_mut().zip(data).for_each(|(o, x)| *o = x);
                    Ok(())
                }
            },
            GuOutRef::Device(d) => Err(Error::internal(format!("a lent output buffer came back for {d:?}"))),
        }
    }

    fn write_host(&mut self, data: Vec<T>) -> Result<()> {
        match self {
            GuOutRef::Host(v) => {
                v.iter_mut().zip(data).for_each(|(o, x)| *o = x);
                Ok(())
            }
            GuOutRef::Device(d) => d.as_mut_vec().copy_from(&data),
        }
    }
}

/// Elements of output `k` per loop index.
fn out_len(layout: &GuLayout, plan: &GuPlan, k: usize) -> usize {
    plan.core(layout.outputs[k].1).iter().product()
}

/// The shape of output `k`: the loop shape, then its core.
pub(super) fn out_shape(layout: &GuLayout, plan: &GuPlan, k: usize) -> Vec<usize> {
    plan.loop_shape.iter().copied().chain(plan.core(layout.outputs[k].1)).collect()
}

fn host_zeros<T: GpuType>(layout: &GuLayout, plan: &GuPlan, k: usize) -> Vec<T> {
    vec![zeroed::<T>(); plan.loops * out_len(layout, plan, k)]
}

fn device_zeros<T: GpuType>(layout: &GuLayout, plan: &GuPlan, k: usize, device: &Device) -> Result<DeviceVec<T>> {
    DeviceVec::zeros_on(device, plan.loops * out_len(layout, plan, k))
}

/// Output `k` in host memory, shaped.
fn host_array<T: GpuType>(layout: &GuLayout, plan: &GuPlan, k: usize, data: Vec<T>) -> Result<ArrayD<T>> {
    ArrayD::from_shape_vec(IxDyn(&out_shape(layout, plan, k)), data)
        .map_err(|e| Error::internal(format!("`{}`: an output of the wrong size: {e}", layout.function)))
}

/// Output `k` on the device that computed it, shaped.
fn device_array<T: GpuType>(layout: &GuLayout, plan: &GuPlan, k: usize, data: DeviceVec<T>) -> Result<DeviceArray<T>> {
    DeviceArray::from_vec(data, &out_shape(layout, plan, k))
}

/// One output, where it was computed, as the shaped array of either kind.
enum One<T: GpuType> {
    Host(Vec<T>),
    Device(DeviceVec<T>),
}

impl<T: GpuType> One<T> {
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

impl<X: GpuType> GuOutputs for (X,) {
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

    type Refs<'o> = (GuOutRef<'o, X>,);

    fn ref_shapes(refs: &Self::Refs<'_>) -> Vec<(Vec<usize>, Option<Device>)> {
        vec![refs.0.shape()]
    }

    fn lend(layout: &GuLayout, plan: &GuPlan, device: &Device, refs: &mut Self::Refs<'_>) -> Result<Self::Device> {
        Ok((refs.0.lend(layout, plan, 0, device)?,))
    }

    fn give_back(refs: &mut Self::Refs<'_>, outs: Self::Device, written: bool) -> Result<()> {
        refs.0.give_back(outs.0, written)
    }

    fn write_host(refs: &mut Self::Refs<'_>, outs: Self::Host) -> Result<()> {
        refs.0.write_host(outs.0)
    }
}

macro_rules! tuple_outputs {
    ($($t:ident $k:tt),+) => {
        impl<$($t: GpuType),+> GuOutputs for ($($t,)+) {
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

            type Refs<'o> = ($(GuOutRef<'o, $t>,)+);

            fn ref_shapes(refs: &Self::Refs<'_>) -> Vec<(Vec<usize>, Option<Device>)> {
                vec![$(refs.$k.shape()),+]
            }

            fn lend(layout: &GuLayout, plan: &GuPlan, device: &Device, refs: &mut Self::Refs<'_>) -> Result<Self::Device> {
                // On an error, the buffers lent so far go back as they came.
                let mut lent = ($(None::<DeviceVec<$t>>,)+);
                let mut failed = None;
                $(
                    if failed.is_none() {
                        match refs.$k.lend(layout, plan, $k, device) {
                            Ok(b) => lent.$k = Some(b),
                            Err(e) => failed = Some(e),
                        }
                    }
                )+
                if let Some(e) = failed {
                    $( if let Some(b) = lent.$k.take() { refs.$k.give_back(b, false)?; } )+
                    return Err(e);
                }
                Ok(($(lent.$k.take().ok_or_else(|| Error::internal("an output buffer was not lent"))?,)+))
            }

            fn give_back(refs: &mut Self::Refs<'_>, outs: Self::Device, written: bool) -> Result<()> {
                // Every buffer goes back, whatever the others do.
                let results = [$(refs.$k.give_back(outs.$k, written)),+];
                results.into_iter().collect()
            }

            fn write_host(refs: &mut Self::Refs<'_>, outs: Self::Host) -> Result<()> {
                $(refs.$k.write_host(outs.$k)?;)+
                Ok(())
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
