//! `#[derive(GpuType)]`: a `#[repr(C)]` struct of GPU types as an element of device memory
//! and a value of the kernel language.
//!
//! The derive checks the struct (named fields of GPU types, `repr(C)`, no padding), asserts
//! its layout against rustc's at compile time (size, alignment, every field's offset), and
//! emits the runtime's traits and, beside the struct, a macro of the struct's own name that
//! hands its definition to the kernels and device functions that name it (see `chain`). A
//! struct whose fields name other GPU structs fetches their definitions first, where it is
//! defined (their paths resolve there), then finishes in [`struct_define`].

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::chain::{self, Entry};
use crate::runtime::private;
use ptx_codegen::frontend::{self, path_key};
use ptx_codegen::ty::StructId;

pub fn derive(input: TokenStream) -> TokenStream {
    let item: syn::ItemStruct = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => {
            let msg = "`#[derive(GpuType)]` is for structs: `#[repr(C)] struct Particle { pos: [f32; 3], mass: f32 }`";
            return syn::Error::new(e.span(), msg).to_compile_error();
        }
    };
    if let Err(e) = check_repr(&item) {
        return e.to_compile_error();
    }
    if !item.generics.params.is_empty() {
        // Before fetching anything: a type parameter is no struct to fetch.
        return syn::Error::new_spanned(
            &item.generics,
            "a GPU struct cannot be generic: the GPU code is compiled for one layout",
        )
        .to_compile_error();
    }
    let nested = frontend::field_struct_paths(&item);
    if nested.is_empty() {
        return finish(&item, Vec::new(), Vec::new());
    }
    let keys: Vec<String> = nested.iter().map(path_key).collect();
    chain::fetch(&[], &nested, quote!(::gpu_runtime::__struct_define), quote! { [#(#keys)*] #item })
}

/// The last step of a struct's chain: the definitions of the structs its fields name have
/// arrived.
pub fn struct_define(input: TokenStream) -> TokenStream {
    let parsed = syn::parse2::<chain::ChainInput>(input).and_then(|c| {
        let (keys, item) = syn::parse::Parser::parse2(
            |p: syn::parse::ParseStream| Ok((crate::entry::string_list(p)?, p.parse::<syn::ItemStruct>()?)),
            c.payload,
        )?;
        Ok((c.closures, keys, item))
    });
    match parsed {
        Ok((closures, keys, item)) => {
            let (fields, entries) = chain::resolve(&keys, &closures);
            finish(&item, fields, entries)
        }
        Err(e) => e.to_compile_error(),
    }
}

/// `#[repr(C)]`, and nothing that changes its layout (`packed`, `align`).
fn check_repr(item: &syn::ItemStruct) -> syn::Result<()> {
    let mut c = false;
    for attr in item.attrs.iter().filter(|a| a.path().is_ident("repr")) {
        attr.parse_nested_meta(|m| {
            if m.path.is_ident("C") {
                c = true;
                Ok(())
            } else {
                Err(m.error("a GPU struct is `#[repr(C)]` alone: `packed`, `align` and the rest change the layout the GPU code assumes"))
            }
        })?;
    }
    if !c {
        return Err(syn::Error::new_spanned(
            &item.ident,
            format!(
                "`#[derive(GpuType)]` needs `#[repr(C)]` on `{}`: Rust's default layout may reorder the fields, and the GPU code reads them at C's offsets",
                item.ident
            ),
        ));
    }
    Ok(())
}

/// Checks the definition (its nested structs from `entries`) and emits the layout
/// assertions, the runtime's traits and the definition's macro.
fn finish(item: &syn::ItemStruct, fields: Vec<(String, String)>, entries: Vec<Entry>) -> TokenStream {
    // Entered in the struct table with the structs its fields name, as a kernel's
    // expansion enters them.
    let own = Entry::structure(item, fields);
    let structs: Vec<_> = std::iter::once(&own).chain(&entries).filter_map(Entry::struct_entry).collect();
    if let Err(e) = frontend::define_structs(&structs) {
        return e.to_compile_error();
    }
    let Some(def) = StructId::by_key(&own.id).map(StructId::def) else {
        return syn::Error::new_spanned(&item.ident, "internal error: the struct was not entered in the struct table")
            .to_compile_error();
    };
    let name = &item.ident;
    let offsets = def.offsets();
    let (size, align) = (def.size(), def.align());
    // Padding bytes are not values: the simulator and the copies read every byte.
    for (k, (f, at)) in def.fields.iter().zip(&offsets).enumerate() {
        let end = at + f.size_bytes();
        let next = offsets.get(k + 1).copied().unwrap_or(size);
        if next > end {
            let field = item.fields.iter().nth(k).expect("one field per definition field");
            return syn::Error::new_spanned(
                field,
                format!(
                    "`{name}` has {} bytes of padding after `{}` (`#[repr(C)]` aligns the next {}): a GPU struct has none; order the fields from the largest alignment down, or add an explicit field (e.g. `_pad: [u8; {}]`)",
                    next - end,
                    f.name,
                    if k + 1 < offsets.len() { "field" } else { "struct to its alignment" },
                    next - end
                ),
            )
            .to_compile_error();
        }
    }
    let size_lit = size as usize;
    let align_lit = align as usize;
    let field_checks = item.fields.iter().zip(&offsets).map(|(f, at)| {
        let ident = f.ident.as_ref().expect("named fields");
        let at = *at as usize;
        quote!(::core::assert!(::core::mem::offset_of!(#name, #ident) == #at, "a field's offset differs from the GPU code's");)
    });
    let nested_elements = item.fields.iter().map(|f| {
        let ty = match &f.ty {
            syn::Type::Array(a) => &*a.elem,
            t => t,
        };
        quote!(__is_element::<#ty>();)
    });
    // Unique in the crate: the definition's id (its name and a hash of it) and this
    // expansion's number (two modules may define equal structs of one name).
    static EXPANSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = EXPANSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let macro_name = format_ident!("__gpu_type_{}_{}", own.id, n);
    let closure: Vec<Entry> = std::iter::once(own).chain(entries).collect();
    let definition = chain::struct_macro(&closure, &macro_name, name, &item.vis);
    let p = private();
    let name_str = name.to_string();
    quote! {
        // The layout the GPU code was compiled for is rustc's: checked at compile time.
        const _: () = {
            ::core::assert!(::core::mem::size_of::<#name>() == #size_lit, "the struct's size differs from the GPU code's");
            ::core::assert!(::core::mem::align_of::<#name>() == #align_lit, "the struct's alignment differs from the GPU code's");
            #(#field_checks)*
        };
        const _: fn() = || {
            fn __is_element<T: ::gpu_runtime::GpuType>() {}
            #(#nested_elements)*
        };
        // SAFETY: `#[repr(C)]` with fields of `GpuType` types (asserted above), no padding
        // (checked by the derive: each field starts where the one before ends, and the last
        // ends at the size), and no pointers: plain bytes that kernels and the host lay out
        // alike, valid byte by byte and as all-zero bytes, as each field type is.
        unsafe impl ::gpu_runtime::GpuType for #name {
            const NAME: &'static str = #name_str;
        }
        // SAFETY: `ByteCells<Self, N>` is `N` atomic bytes (`N` the size, asserted above),
        // alignment 1, typed by `Self`: it stores and loads only `Self` values' bytes.
        unsafe impl ::gpu_runtime::gpu::SimScalar for #name {
            type Atomic = #p::sim::ByteCells<Self, #size_lit>;
            const BYTEWISE: bool = true;
            fn __load(cell: &Self::Atomic) -> Self {
                cell.load()
            }
            fn __store(cell: &Self::Atomic, v: Self) {
                cell.store(v, 0..#size_lit)
            }
            fn __store_part(cell: &Self::Atomic, v: Self, offset: usize, len: usize) {
                cell.store(v, offset..offset + len)
            }
        }
        #definition
    }
}
