//! The GPU API of the generated module: `on`, `on_devices`, `device`, `into`, `launch`,
//! `launch_device`, `launch_into` (each a call of the runtime's function of the same name
//! with the module's `__Function`), and `reduce` on the GPU.

use proc_macro2::TokenStream;
use quote::quote;

use crate::runtime::private;
use crate::vectorized::Vectorized;

/// The calls of the kernel: on a chosen device, with results left on the device, into
/// given outputs, and queued on a stream. Each first asks whether its device is the CPU
/// ([`gpu_runtime::Device::cpu`]) and then runs the function on the host instead.
pub fn api(v: &Vectorized) -> TokenStream {
    let Vectorized { generics, arg_list, host_ty, out, device, devices, stream, function_ty: f, bound, .. } = v;
    let device_ty = v.signature.ret.arrays(|s| v.slot_tokens(s), quote!(::gpu_runtime::DeviceVec));
    let out_trait = quote!(Output);
    let (out_ty, out_conv) = (v.out_ty(quote!('__o), &out_trait), v.out_conv(&out_trait, quote!(into_out)));
    let launch_out_ty = v.out_ty(quote!('__a), &out_trait);
    let p = private();
    quote! {
        /// Runs the function on `device`.
        pub fn on<'__a, #generics>(#device: &::gpu_runtime::Device, #arg_list) -> ::gpu_runtime::Result<#host_ty> {
            #p::on::<#f>(#device, #bound)
        }

        /// Runs the function over several GPUs at once: the elements are cut into one
        /// contiguous piece per device (host slices and scalars are split; a device
        /// array only goes with a list of its own device), the pieces run concurrently
        /// and the results come back in order. A fault reports its index in the whole
        /// call. An empty list is `Error::NoDevicesGiven`.
        pub fn on_devices<'__a, #generics>(#devices: &[::gpu_runtime::Device], #arg_list) -> ::gpu_runtime::Result<#host_ty> {
            #p::on_devices::<#f>(#devices, #bound)
        }

        /// Runs the function and leaves the results on the device (inputs already there
        /// are not copied).
        pub fn device<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#device_ty> {
            #p::device::<#f>(#bound)
        }

        /// Runs the function and writes the results into `out` (host memory or a device
        /// array), whose length must be the call's; allocates nothing for the results.
        pub fn into<'__a, '__o, #generics>(#out: #out_ty, #arg_list) -> ::gpu_runtime::Result<()> {
            #p::into::<#f>(#out_conv, #bound)
        }

        /// Queues the call on `stream` and returns at once; `wait()` on the handle gives
        /// the results. The arguments stay borrowed until then.
        pub fn launch<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, #host_ty>> {
            #p::launch::<#f>(#stream, #bound)
        }

        /// Queues the call on `stream`; the results stay on the device.
        pub fn launch_device<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, #device_ty>> {
            #p::launch_device::<#f>(#stream, #bound)
        }

        /// Queues the call on `stream`, writing into `out`, which stays borrowed until
        /// the handle is waited for or dropped.
        pub fn launch_into<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #out: #launch_out_ty, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, ()>> {
            #p::launch_into::<#f>(#stream, #out_conv, #bound)
        }
    }
}

/// `reduce` and its forms on the GPU, for a reducible function (nothing otherwise).
pub fn reduce(v: &Vectorized) -> TokenStream {
    let p = private();
    if !v.reducible {
        return TokenStream::new();
    }
    let Vectorized { generics, ret_ty, kernel, identity_expr, name_str, scalar_call, .. } = v;
    let fold = quote! {
        // SAFETY: the kernel's element type and function.
        unsafe { #p::reduce::<#ret_ty>(&#kernel, #name_str, __values, __fold, #identity_expr, |a, b| #scalar_call(a, b)) }
    };
    let common = reduce_forms(v);
    quote! {
        #[doc(hidden)]
        pub fn __reduce<'__a, #generics>(__values: ::gpu_runtime::ArgRef<'__a, #ret_ty>, __fold: #p::Fold<'_, '_, #ret_ty>) -> ::gpu_runtime::Result<::core::option::Option<#ret_ty>> {
            #fold
        }

        #common

        /// As [`reduce`], on `device` (a GPU, or `Device::cpu()`).
        pub fn reduce_on<'__a, #generics>(device: &::gpu_runtime::Device, values: impl Param<'__a, #ret_ty>) -> ::gpu_runtime::Result<#ret_ty> {
            #p::folded(__reduce(Param::into_arg(values), #p::Fold { device: ::core::option::Option::Some(device), ..#p::Fold::plain() }))
        }
    }
}

/// The forms of `reduce` every target has, each one line into the module's `__reduce`.
pub fn reduce_forms(v: &Vectorized) -> TokenStream {
    let p = private();
    let Vectorized { generics, ret_ty, .. } = v;
    let some = quote!(::core::option::Option::Some);
    quote! {
        /// Folds the elements of `values` with the function. On the GPU: in one launch
        /// over the data and one small launch over the blocks' results. The folds do not
        /// run in sequence, so the function must be associative (`a + b`, `a * b`,
        /// `a.max(b)`, …); for floats the result may differ from a sequential fold by the
        /// rounding of a different order. An empty array gives the `identity`, or
        /// `Error::EmptyReduce` without one.
        pub fn reduce<'__a, #generics>(values: impl Param<'__a, #ret_ty>) -> ::gpu_runtime::Result<#ret_ty> {
            #p::folded(__reduce(Param::into_arg(values), #p::Fold::plain()))
        }

        /// As [`reduce`], folding from `init` (Numba's `init=`): `init ⊕ x0 ⊕ x1 ⊕ …`,
        /// `init` itself for an empty array.
        pub fn reduce_init<'__a, #generics>(init: #ret_ty, values: impl Param<'__a, #ret_ty>) -> ::gpu_runtime::Result<#ret_ty> {
            #p::folded(__reduce(Param::into_arg(values), #p::Fold { init: #some(init), ..#p::Fold::plain() }))
        }

        /// As [`reduce`], with the result written into `res[0]` (Numba's `res=`): a
        /// one-element host slice, or a device array, where the GPU writes it without a
        /// trip through host memory (the call runs on that array's device).
        pub fn reduce_into<'__a, '__o, #generics>(res: impl Output<'__o, #ret_ty>, values: impl Param<'__a, #ret_ty>) -> ::gpu_runtime::Result<()> {
            __reduce(Param::into_arg(values), #p::Fold { res: #some(Output::into_out(res)), ..#p::Fold::plain() }).map(|_| ())
        }
    }
}
