//! The one spelling of the runtime's door in generated code: every path into
//! `gpu_runtime::__private` is written `#p::name`, with `p` from here.

use proc_macro2::TokenStream;
use quote::quote;

/// `::gpu_runtime::__private`.
pub fn private() -> TokenStream {
    quote!(::gpu_runtime::__private)
}
