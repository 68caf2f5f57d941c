//! The GPU API of the generated module: `on`, `on_devices`, `device`, `into`, `launch`, `launch_device`,
//! `launch_into`, and `reduce` on the GPU.

use proc_macro2::TokenStream;
use quote::quote;

use crate::vectorized::Vectorized;

/// The calls of the kernel: on a chosen device, with results left on the device, into
/// given outputs, and queued on a stream. Each first asks whether its device is the CPU
/// ([`gpu_runtime::Device::cpu`]) and then runs the function on the host instead.
pub fn api(v: &Vectorized) -> TokenStream {
    let Vectorized { generics, arg_list, host_ty, ret_ty, kernel, out, device, devices, stream, .. } = v;
    let Vectorized { bind_args, erased_bound: erased, message_at, name_str, .. } = v;
    let device_ty = v.signature.ret.arrays(|s| v.slot_tokens(s), quote!(::gpu_runtime::DeviceVec));
    let out_trait = quote!(Output);
    let (out_ty, out_conv) = (v.out_ty(quote!('__o), &out_trait), v.out_conv(&out_trait, quote!(into_out)));
    let launch_out_ty = v.out_ty(quote!('__a), &out_trait);
    let idents = &v.idents;
    let p = quote!(::gpu_runtime::__private);
    let results = quote!(<#ret_ty as ::gpu_runtime::Results>);
    let on_cpu = quote!(__on_cpu(__cpu, &[], #(#idents),*));
    let target = v.cpu_target();
    let on_cpu_device = quote! {
        if let ::core::option::Option::Some(__cpu) = &#target {
            return #results::host_to_device(#results::unzip(#on_cpu?), __cpu);
        }
    };
    // `into`'s output counts among the arrays that choose the device.
    let on_cpu_into = quote! {
        let __out = #out_conv;
        let __arrays = #p::with_out_devices::<#ret_ty>(&[#(#idents.device_id()),*], &__out);
        if let ::core::option::Option::Some(__cpu) = &#p::cpu_target(::core::option::Option::None, &__arrays) {
            return #p::cpu_write::<#ret_ty>(#name_str, __cpu, __out, |__lens| __on_cpu(__cpu, __lens, #(#idents),*));
        }
    };
    let on_cpu_stream = |body: TokenStream| {
        quote! {
            if #stream.device().is_cpu() {
                let __cpu = #stream.device();
                return #p::cpu_pending(#body);
            }
        }
    };
    let launch_cpu = on_cpu_stream(quote!(#on_cpu.map(#results::unzip)));
    let launch_device_cpu =
        on_cpu_stream(quote!(#on_cpu.and_then(|__v| #results::host_to_device(#results::unzip(__v), __cpu))));
    let launch_into_cpu = on_cpu_stream(quote! {
        #p::cpu_write::<#ret_ty>(#name_str, __cpu, #out_conv, |__lens| __on_cpu(__cpu, __lens, #(#idents),*))
    });
    let on_cpu_fn = on_cpu_fn(v);
    quote! {
        #on_cpu_fn

        /// Runs the function on `device`.
        pub fn on<'__a, #generics>(#device: &::gpu_runtime::Device, #arg_list) -> ::gpu_runtime::Result<#host_ty> {
            #bind_args
            if #device.is_cpu() {
                let __cpu = #device;
                return #on_cpu.map(#results::unzip);
            }
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
            if let ::core::option::Option::Some(__cpu) = &#p::cpu_of_devices(#name_str, #devices)? {
                return on(__cpu, #(#idents),*);
            }
            #bind_args
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __r = unsafe { #kernel.call_host_on_devices::<#ret_ty>(#devices, &#erased) };
            ::gpu_runtime::__private::with_host_message(__r, #message_at)
        }

        /// Runs the function and leaves the results on the device (inputs already there
        /// are not copied).
        pub fn device<'__a, #generics>(#arg_list) -> ::gpu_runtime::Result<#device_ty> {
            #bind_args
            #on_cpu_device
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __r = unsafe { #kernel.call_device::<#ret_ty>(::core::option::Option::None, &#erased) };
            ::gpu_runtime::__private::with_host_message(__r, #message_at)
        }

        /// Runs the function and writes the results into `out` (host memory or a device
        /// array), whose length must be the call's; allocates nothing for the results.
        pub fn into<'__a, '__o, #generics>(#out: #out_ty, #arg_list) -> ::gpu_runtime::Result<()> {
            #bind_args
            #on_cpu_into
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __r = unsafe { #kernel.call_into::<#ret_ty>(::core::option::Option::None, &#erased, __out) };
            ::gpu_runtime::__private::with_host_message(__r, #message_at)
        }

        /// Queues the call on `stream` and returns at once; `wait()` on the handle gives
        /// the results. The arguments stay borrowed until then.
        pub fn launch<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, #host_ty>> {
            #bind_args
            #launch_cpu
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __pending = unsafe { #kernel.launch_host::<#ret_ty>(#stream, &#erased) }?;
            ::core::result::Result::Ok(__pending.with_host_message(#message_at))
        }

        /// Queues the call on `stream`; the results stay on the device.
        pub fn launch_device<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, #device_ty>> {
            #bind_args
            #launch_device_cpu
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __pending = unsafe { #kernel.launch_device::<#ret_ty>(#stream, &#erased) }?;
            ::core::result::Result::Ok(__pending.with_host_message(#message_at))
        }

        /// Queues the call on `stream`, writing into `out`, which stays borrowed until
        /// the handle is waited for or dropped.
        pub fn launch_into<'__a, #generics>(#stream: &'__a ::gpu_runtime::Stream, #out: #launch_out_ty, #arg_list) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__a, ()>> {
            #bind_args
            #launch_into_cpu
            // SAFETY: the arguments follow the kernel's inputs in order and type.
            let __pending = unsafe { #kernel.launch_into::<#ret_ty>(#stream, &#erased, #out_conv) }?;
            ::core::result::Result::Ok(__pending.with_host_message(#message_at))
        }
    }
}

/// `__on_cpu`: the call on the CPU device, the one place the module runs it there (so that
/// every entry shares one instance of the runtime's parallel loop). `__out_lens` are the
/// lengths of `into`'s outputs, checked with the arguments'.
fn on_cpu_fn(v: &Vectorized) -> TokenStream {
    let Vectorized { generics, ret_ty, idents, tys, name_str, name_strs, .. } = v;
    let (cpu_bind, lens, at) = v.cpu_parts();
    quote! {
        #[doc(hidden)]
        pub(super) fn __on_cpu<'__a, #generics>(
            __cpu: &::gpu_runtime::Device,
            __out_lens: &[usize],
            #(#idents: ::gpu_runtime::ArgRef<'__a, #tys>),*
        ) -> ::gpu_runtime::Result<::std::vec::Vec<#ret_ty>> {
            #cpu_bind
            let __at = #at;
            // A plain loop: cheaper for rustc than an iterator chain, once per function.
            let __chunk = |__r: ::core::ops::Range<usize>| -> ::std::vec::Vec<#ret_ty> {
                let mut __v = ::std::vec::Vec::with_capacity(__r.len());
                for __i in __r {
                    __v.push(__at(__i));
                }
                __v
            };
            ::gpu_runtime::__private::cpu_values::<#ret_ty>(#name_str, &[#(#name_strs),*], #lens, __out_lens, &__chunk, &__at)
        }
    }
}

/// `reduce` on the GPU, for a reducible function (nothing otherwise).
pub fn reduce(v: &Vectorized) -> TokenStream {
    if !v.reducible {
        return TokenStream::new();
    }
    let Vectorized { generics, ret_ty, kernel, identity_expr, name_str, scalar_call, .. } = v;
    quote! {
        /// Folds the elements of `values` with the function, on the GPU: in one launch
        /// over the data and one small launch over the blocks' results. The folds do not
        /// run in sequence, so the function must be associative (`a + b`, `a * b`,
        /// `a.max(b)`, …); for floats the result may differ from a sequential fold by the
        /// rounding of a different order. An empty array gives the `identity`, or
        /// `Error::EmptyReduce` without one.
        pub fn reduce<'__a, #generics>(values: impl Param<'__a, #ret_ty>) -> ::gpu_runtime::Result<#ret_ty> {
            let __values = Param::into_arg(values);
            if let ::core::option::Option::Some(__cpu) = &::gpu_runtime::__private::cpu_target(::core::option::Option::None, &[__values.device_id()]) {
                let __values = __values.host_on(#name_str, "values", __cpu)?;
                let __parallel = ::gpu_runtime::__private::HostLoop::Parallel;
                return ::gpu_runtime::__private::host_reduce(#name_str, __values, #identity_expr, __parallel, |a, b| #scalar_call(a, b));
            }
            // SAFETY: the argument has the kernel's element type.
            unsafe { #kernel.reduce::<#ret_ty>(::core::option::Option::None, __values.erase(), #identity_expr) }
        }
    }
}
