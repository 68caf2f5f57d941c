//! The host copy of a function (a vectorized function's `name::scalar`, a device function as
//! written): what the macro adds so that rustc's errors in it lead to the fix.

use quote::{format_ident, quote};
use syn::visit::Visit;

use ptx_codegen::intrinsic::SPECIAL_MATH;

/// `x.erf()` compiles for the GPU whatever is imported, but on the host the method comes
/// from `gpu_runtime::SpecialMath`; without that import rustc reports only std's unstable
/// `f32::erf`. For each such method the body calls, a local trait gives `&self` a method of
/// the same name whose bound fails with the hint. Method lookup tries it only after the
/// by-value step, where an imported `SpecialMath` (or any trait of the user's) is found
/// first, so a body that compiles is unchanged.
pub fn special_math_hint(block: &mut syn::Block) {
    let mut calls = SpecialCalls(Vec::new());
    calls.visit_block(block);
    if calls.0.is_empty() {
        return;
    }
    let mut markers = Vec::new();
    let mut methods = Vec::new();
    let mut bodies = Vec::new();
    for name in &calls.0 {
        let method = format_ident!("{}", name);
        let marker = format_ident!("__{}_needs_SpecialMath", name);
        let message = format!("`{name}` is a method of `gpu_runtime::SpecialMath`, which is not in scope here");
        let label = format!("add `use gpu_runtime::SpecialMath;` to this module, or write `SpecialMath::{name}(x)`");
        markers.push(quote! {
            #[allow(dead_code, non_camel_case_types)]
            #[diagnostic::on_unimplemented(message = #message, label = #label)]
            trait #marker {}
            // An implementation rustc does not show, so that it does not suggest adding one.
            #[diagnostic::do_not_recommend]
            impl #marker for __SpecialMathNever {}
        });
        methods.push(quote!(fn #method(&self) -> Self where Self: #marker;));
        bodies.push(quote!(fn #method(&self) -> T where T: #marker { *self }));
    }
    let items: syn::Block = syn::parse_quote!({
        #[allow(dead_code)]
        enum __SpecialMathNever {}
        #(#markers)*
        #[allow(dead_code)]
        trait __SpecialMathHint: ::core::marker::Sized {
            #(#methods)*
        }
        impl<T: ::core::marker::Copy> __SpecialMathHint for T {
            #(#bodies)*
        }
    });
    block.stmts.splice(0..0, items.stmts);
}

/// The `SpecialMath` methods a body calls in method form (`x.erf()`), each once.
struct SpecialCalls(Vec<String>);

impl<'ast> Visit<'ast> for SpecialCalls {
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let name = m.method.to_string();
        if SPECIAL_MATH.contains(&name.as_str()) && !self.0.contains(&name) {
            self.0.push(name);
        }
        syn::visit::visit_expr_method_call(self, m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bodies_that_call_the_methods_get_the_hint() {
        let mut plain: syn::Block = syn::parse_quote!({ x.sqrt() });
        special_math_hint(&mut plain);
        assert_eq!(plain.stmts.len(), 1);
        let mut special: syn::Block = syn::parse_quote!({ x.erf() + x.erf() * y.gamma() });
        special_math_hint(&mut special);
        // An uninhabited type, two markers with an impl each, the trait and its impl, then
        // the body.
        assert_eq!(special.stmts.len(), 8);
    }
}
