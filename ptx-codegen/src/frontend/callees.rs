//! The functions a function calls that are defined elsewhere in the crate: the macro must
//! fetch their definitions before it can compile the function.

use quote::ToTokens;
use syn::ext::IdentExt;
use syn::visit::Visit;

use super::syntax::render_tokens;
use crate::intrinsic::SPECIAL_MATH;
use crate::ty::ScalarType;

/// The paths of the functions `item` calls that are neither nested in it nor methods of
/// scalar types (`f32::max`, `SpecialMath::erf`), in the order of their first call.
pub fn external_callees(item: &syn::ItemFn) -> Vec<syn::Path> {
    let mut nested = Vec::new();
    NestedFns(&mut nested).visit_block(&item.block);
    let mut calls = Calls { nested: &nested, found: Vec::new() };
    calls.visit_block(&item.block);
    calls.found
}

/// The path as the frontend keys helpers: tokens without spaces (`utils::smooth`), raw
/// identifiers as the names they stand for (`r#smooth` is `smooth`).
pub fn path_key(path: &syn::Path) -> String {
    let mut path = path.clone();
    for s in &mut path.segments {
        s.ident = s.ident.unraw();
    }
    render_tokens(path.to_token_stream())
}

struct NestedFns<'a>(&'a mut Vec<String>);

impl<'ast> Visit<'ast> for NestedFns<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.0.push(super::syntax::name(&f.sig.ident));
        syn::visit::visit_item_fn(self, f);
    }
}

struct Calls<'a> {
    nested: &'a [String],
    found: Vec<syn::Path>,
}

impl<'ast> Visit<'ast> for Calls<'_> {
    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*c.func {
            if p.qself.is_none() && !is_builtin(&p.path, self.nested) {
                let key = path_key(&p.path);
                if !self.found.iter().any(|f| path_key(f) == key) {
                    self.found.push(p.path.clone());
                }
            }
        }
        syn::visit::visit_expr_call(self, c);
    }
}

fn is_builtin(path: &syn::Path, nested: &[String]) -> bool {
    // `c32(re, im)` and `c64(re, im)`: num-complex's constructors, no device functions.
    if super::builtins::is_gpu_builtin(path)
        || super::builtins::library_name(path).is_some()
        || super::complex::shorthand(path).is_some()
    {
        return true;
    }
    let segs: Vec<String> = path.segments.iter().map(|s| super::syntax::name(&s.ident)).collect();
    match segs.as_slice() {
        [name] => nested.contains(name),
        [.., ty, method] => {
            let typed = ScalarType::from_name(ty).is_some();
            let special = ty == "SpecialMath" && SPECIAL_MATH.contains(&method.as_str());
            // `String::from`, `Vec::new`: a type's function, never a device function (whose
            // module has the function's snake_case name); the checker reports it.
            let of_a_type = ty.starts_with(|c: char| c.is_ascii_uppercase());
            typed || special || of_a_type
        }
        [] => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn callees(src: &str) -> Vec<String> {
        external_callees(&syn::parse_str(src).unwrap()).iter().map(path_key).collect()
    }

    #[test]
    fn finds_calls_to_the_rest_of_the_crate() {
        assert_eq!(
            callees("fn f(x: f32) -> f32 { x.sqrt() + f32::max(x, 1.0) + SpecialMath::erf(x) }"),
            Vec::<String>::new()
        );
        assert_eq!(
            callees("fn f(x: f32) -> f32 { smooth(x) + utils::clip(smooth(x)) + crate::a::b(x) }"),
            ["smooth", "utils::clip", "crate::a::b"]
        );
        assert_eq!(callees("fn f(x: f32) -> f32 { fn inner(v: f32) -> f32 { outer(v) } inner(x) }"), ["outer"]);
        assert_eq!(callees("fn f(x: f64) -> f64 { std::primitive::f64::abs(x) }"), Vec::<String>::new());
        assert_eq!(callees("fn f(x: f64) -> f64 { String::from(\"a\"); Vec::<f64>::new(); x }"), Vec::<String>::new());
        // The GPU's built-ins are the compiler's, in every spelling.
        assert_eq!(
            callees(
                "fn k(y: &mut [u32]) { gpu::sync_threads(); let t = gpu::shared::<u32, 4>(); \
                 gpu_runtime::gpu::atomic::add(y, 0, 1u32); ::gpu_runtime::gpu::grid1(); gpu::helper(); }"
            ),
            ["gpu::helper"]
        );
        // num-complex's shorthand constructors (the random-program generator found them
        // taken for device functions: a `c64::__gpu_device!` that does not exist).
        assert_eq!(
            callees("fn f(x: f64) -> f64 { c64(x, 1.0).re + num_complex::c32(1.0, 2.0).im as f64 + c16(x) }"),
            ["c16"]
        );
    }
}
