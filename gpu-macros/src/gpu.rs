//! The GPU API of the generated module: `on`, `on_devices`, `device`, `into`, `launch`, `launch_device`,
//! `launch_into`, and `reduce` on the GPU.

use proc_macro2::TokenStream;
use quote::quote;

use crate::vectorized::Vectorized;

/// The calls of the kernel: on a chosen device, with results left on the device, into
/// given outputs, and queued on a stream.
pub fn api(v: &Vectorized) -> TokenStream {
    let Vectorized { generics, arg_list, host_ty, ret_ty, kernel, out, device, devices, stream, .. } = v;
    let Vectorized { bind_args, erased_bound: erased, message_at, .. } = v;
    let device_ty = v.signature.ret.arrays(|s| v.slot_tokens(s), quote!(::gpu_runtime::DeviceVec));
    let out_trait = quote!(Output);
    let (out_ty, out_conv) = (v.out_ty(quote!('__o), &out_trait), v.out_conv(&out_trait, quote!(into_out)));
    let launch_out_ty = v.out_ty(quote!('__a), &out_trait);
    quote! {
        /// Runs the function on `device`.
        pub fn on<'__a, #generics>(#device: &::gpu_runtime::Device, #arg_list) -> ::gpu_runtime::Result<#host_ty> {
            #bind_args
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __r = unsafe { #kernel.call_host::<#ret_ty>(::core::option::Option::Some(#device), &#erased) };
            ::gpu_runtime::__private::with_host_message(__r, #message_at)
        }

        /// Runs the function over several GPUs at once: the elements are cut into one
        /// contiguous piece per device (host slices and scalars are split; a device
        /// array only goes with a list of its own device), the pieces run concurrently
        /// and the results come back in order. A fault reports its index in the whole
        /// call. An empty list is `Error::NoDevicesGiven`.
        pub fn on_devices<'__a, #generics>(#devices: &[::gpu_runtime::Device], #arg_list) -> ::gpu_runtime::Result<#host_ty> {
            #bind_args
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __r = unsafe { #kernel.call_host_on_devices::<#ret_ty>(#devices, &#erased) };
            ::gpu_runtime::__private::with_host_message(__r, #message_at)
        }

        /// Runs the function and leaves the results on the device (inputs already there
        /// are not copied).
        pub fn device<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#device_ty> {
            #bind_args
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __r = unsafe { #kernel.call_device::<#ret_ty>(::core::option::Option::None, &#erased) };
            ::gpu_runtime::__private::with_host_message(__r, #message_at)
        }

        /// Runs the function and writes the results into `out` (host memory or a device
        /// array), whose length must be the call's; allocates nothing for the results.
        pub fn into<'__a, '__o, #generics>(#out: #out_ty, #arg_list) -> ::gpu_runtime::Result<()> {
            #bind_args
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __r = unsafe { #kernel.call_into::<#ret_ty>(::core::option::Option::None, &#erased, #out_conv) };
            ::gpu_runtime::__private::with_host_message(__r, #message_at)
        }

        /// Queues the call on `stream` and returns at once; `wait()` on the handle gives
        /// the results. The arguments stay borrowed until then.
        pub fn launch<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, #host_ty>> {
            #bind_args
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __pending = unsafe { #kernel.launch_host::<#ret_ty>(#stream, &#erased) }?;
            ::core::result::Result::Ok(__pending.with_host_message(#message_at))
        }

        /// Queues the call on `stream`; the results stay on the device.
        pub fn launch_device<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, #device_ty>> {
            #bind_args
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __pending = unsafe { #kernel.launch_device::<#ret_ty>(#stream, &#erased) }?;
            ::core::result::Result::Ok(__pending.with_host_message(#message_at))
        }

        /// Queues the call on `stream`, writing into `out`, which stays borrowed until
        /// the handle is waited for or dropped.
        pub fn launch_into<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #out: #launch_out_ty, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, ()>> {
            #bind_args
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __pending = unsafe { #kernel.launch_into::<#ret_ty>(#stream, &#erased, #out_conv) }?;
            ::core::result::Result::Ok(__pending.with_host_message(#message_at))
        }
    }
}

/// `reduce` on the GPU, for a reducible function (nothing otherwise).
pub fn reduce(v: &Vectorized) -> TokenStream {
    if !v.reducible {
        return TokenStream::new();
    }
    let Vectorized { generics, ret_ty, kernel, identity_expr, .. } = v;
    quote! {
        /// Folds the elements of `values` with the function, on the GPU: in one launch
        /// over the data and one small launch over the blocks' results. The folds do not
        /// run in sequence, so the function must be associative (`a + b`, `a * b`,
        /// `a.max(b)`, …); for floats the result may differ from a sequential fold by the
        /// rounding of a different order. An empty array gives the `identity`, or
        /// `Error::EmptyReduce` without one.
        pub fn reduce<'__a, #generics>(values: impl Param<'__a, #ret_ty>) -> ::gpu_runtime::Result<#ret_ty> {
            // SAFETY: the argument has the kernel's element type.
            unsafe { #kernel.reduce::<#ret_ty>(::core::option::Option::None, Param::into_arg(values).erase(), #identity_expr) }
        }
    }
}
