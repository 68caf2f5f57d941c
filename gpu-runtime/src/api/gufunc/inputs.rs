//! A call's inputs as one value: a tuple of one [`GuRef`] per input (the arguments), laid
//! out as a tuple of [`GuIn`]s, read on the host as a tuple of [`GuHost`]s. Implemented
//! here for every arity up to `kernel_abi::GUFUNC_MAX_INPUTS` (a test below holds them to
//! it), so that the generic call treats any function's inputs alike.

use super::layout::{GuHost, GuIn, GuLayout, GuPlan, gu_along};
use crate::data::nd::GuRef;
use crate::driver::Device;
use crate::error::Result;
use crate::scalar::GpuType;

/// The arguments of a call: `(GuRef<'a, A>, …)`, one per input.
pub trait GuArgs<'a>: Sized {
    /// The inputs laid out for the call: `(GuIn<'a, A>, …)`.
    type Laid: GuLaid<'a>;

    /// Each input with one core dimension taken along `axis` (`name::along`).
    fn along(self, layout: &GuLayout, axis: Option<usize>) -> Result<Self>;
    /// The inputs' shapes, in order.
    fn shapes(&self) -> Vec<Vec<usize>>;
    /// Each input as one core per loop index ([`GuIn::new`]).
    fn lay_out(self, layout: &GuLayout, plan: &GuPlan) -> Result<Self::Laid>;
}

/// The inputs laid out for a call: `(GuIn<'a, A>, …)`.
pub trait GuLaid<'a>: Sized {
    /// The inputs readable on the host: `(GuHost<'h, A>, …)`.
    type Hosts<'h>: Sync
    where
        Self: 'h;

    /// The device of each array argument (`None` for host data and scalars).
    fn devices(&self) -> Vec<Option<&'a Device>>;
    /// The inputs readable on the host ([`GuIn::on_host`]).
    fn on_host(&self) -> Result<Self::Hosts<'_>>;
    /// The inputs ready for a launch on `device` ([`GuIn::upload`]).
    fn upload(self, device: &Device) -> Result<Self>;
}

macro_rules! tuple_inputs {
    ($($t:ident $v:ident $k:tt),*) => {
        impl<'a, $($t: GpuType),*> GuArgs<'a> for ($(GuRef<'a, $t>,)*) {
            type Laid = ($(GuIn<'a, $t>,)*);

            #[allow(unused_variables)]
            fn along(self, layout: &GuLayout, axis: Option<usize>) -> Result<Self> {
                let ($($v,)*) = self;
                Ok(($(gu_along(layout, $k, axis, $v)?,)*))
            }

            fn shapes(&self) -> Vec<Vec<usize>> {
                vec![$(self.$k.shape()),*]
            }

            #[allow(unused_variables)]
            fn lay_out(self, layout: &GuLayout, plan: &GuPlan) -> Result<Self::Laid> {
                let ($($v,)*) = self;
                Ok(($(GuIn::new(layout, plan, $k, $v)?,)*))
            }
        }

        impl<'a, $($t: GpuType),*> GuLaid<'a> for ($(GuIn<'a, $t>,)*) {
            type Hosts<'h> = ($(GuHost<'h, $t>,)*) where Self: 'h;

            fn devices(&self) -> Vec<Option<&'a Device>> {
                vec![$(self.$k.device()),*]
            }

            fn on_host(&self) -> Result<Self::Hosts<'_>> {
                Ok(($(self.$k.on_host()?,)*))
            }

            #[allow(unused_variables)]
            fn upload(self, device: &Device) -> Result<Self> {
                let ($($v,)*) = self;
                Ok(($($v.upload(device)?,)*))
            }
        }
    };
}

tuple_inputs!();
tuple_inputs!(A a 0);
tuple_inputs!(A a 0, B b 1);
tuple_inputs!(A a 0, B b 1, C c 2);
tuple_inputs!(A a 0, B b 1, C c 2, D d 3);
tuple_inputs!(A a 0, B b 1, C c 2, D d 3, E e 4);
tuple_inputs!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5);
tuple_inputs!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6);
tuple_inputs!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7);
tuple_inputs!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8);
tuple_inputs!(A a 0, B b 1, C c 2, D d 3, E e 4, F f 5, G g 6, H h 7, I i 8, J j 9);

#[cfg(test)]
mod tests {
    use super::*;

    fn laid_out<'a, A: GuArgs<'a>>() {}

    /// The largest arity the macro lets through has its impls.
    #[test]
    fn every_arity_the_macro_allows_is_implemented() {
        type R<'a> = GuRef<'a, f32>;
        laid_out::<(R, R, R, R, R, R, R, R, R, R)>();
        assert_eq!(kernel_abi::GUFUNC_MAX_INPUTS, 10);
    }
}
