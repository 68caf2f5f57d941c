//! Numba's xoroshiro128+ calls in a kernel, written out as what they do before the kernel
//! is checked (and in its simulator copy, so that both run the same code).
//!
//! `random::xoroshiro128p_uniform_float32(states, i)` takes state `i` of `states`, a
//! `&mut [u64]` holding state `i` at words `2i` and `2i + 1` (what the runtime's
//! `random::create_xoroshiro128p_states` makes), steps it and keeps the new state. A
//! device function takes scalars only, so instead of a library function the call becomes a
//! block of the kernel language: the index checked against the number of states (Rust's
//! index-out-of-bounds fault, naming them), the two words read, one
//! `random::xoroshiro128p_step`, the new state written, and the output converted as Numba
//! converts it.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;

use super::builtins::library_name;

/// The calls written out here (Numba's names; each takes the states and an index).
pub(super) const CALLS: [&str; 5] = [
    "xoroshiro128p_next",
    "xoroshiro128p_uniform_float32",
    "xoroshiro128p_uniform_float64",
    "xoroshiro128p_normal_float32",
    "xoroshiro128p_normal_float64",
];

/// Whether `block` (or a function nested in it) calls one of [`CALLS`].
fn calls_any(block: &syn::Block) -> bool {
    struct Find(bool);
    impl<'a> syn::visit::Visit<'a> for Find {
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            self.0 |= name_of(c).is_some();
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut f = Find(false);
    syn::visit::Visit::visit_block(&mut f, block);
    f.0
}

/// Rewrites every call of [`CALLS`] in `block`, and in the functions nested in it, that
/// has two arguments (the others are left for the checker to report).
pub fn expand_xoroshiro_calls(block: &mut syn::Block) {
    struct Expand;
    impl VisitMut for Expand {
        fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
            syn::visit_mut::visit_expr_mut(self, e);
            if let syn::Expr::Call(c) = e {
                if let Some(x) = expansion(c) {
                    *e = x;
                }
            }
        }
    }
    if calls_any(block) {
        Expand.visit_block_mut(block);
    }
}

/// `entry` with its xoroshiro calls written out, or `entry` itself where it has none.
pub(super) fn expanded(entry: &syn::ItemFn) -> std::borrow::Cow<'_, syn::ItemFn> {
    if !calls_any(&entry.block) {
        return std::borrow::Cow::Borrowed(entry);
    }
    let mut e = entry.clone();
    expand_xoroshiro_calls(&mut e.block);
    std::borrow::Cow::Owned(e)
}

fn name_of(c: &syn::ExprCall) -> Option<&'static str> {
    let syn::Expr::Path(p) = &*c.func else { return None };
    if p.qself.is_some() {
        return None;
    }
    let name = library_name(&p.path)?;
    CALLS.iter().copied().find(|n| *n == name)
}

fn expansion(c: &syn::ExprCall) -> Option<syn::Expr> {
    let name = name_of(c)?;
    if c.args.len() != 2 {
        return None;
    }
    let span = c.span();
    let (states, index) = (&c.args[0], &c.args[1]);
    let lib = quote_spanned!(span=> ::gpu_runtime::random);
    let i = quote_spanned!(span=> __xoroshiro_index);
    let tokens = match name {
        "xoroshiro128p_next" => next(states, quote_spanned!(span=> #index), span),
        "xoroshiro128p_uniform_float32" => {
            let n = next(states, quote_spanned!(span=> #index), span);
            quote_spanned!(span=> #lib::xoroshiro128p_unit_f32(#n))
        }
        "xoroshiro128p_uniform_float64" => {
            let n = next(states, quote_spanned!(span=> #index), span);
            quote_spanned!(span=> #lib::xoroshiro128p_unit_f64(#n))
        }
        // Two `f32` uniforms, as Numba draws for either normal.
        _ => {
            let (n1, n2) = (next(states, i.clone(), span), next(states, i.clone(), span));
            let bm = if name == "xoroshiro128p_normal_float32" {
                quote_spanned!(span=> xoroshiro128p_box_muller_f32)
            } else {
                quote_spanned!(span=> xoroshiro128p_box_muller_f64)
            };
            quote_spanned! {span=> {
                let #i: usize = #index;
                let __xoroshiro_u1 = #lib::xoroshiro128p_unit_f32(#n1);
                let __xoroshiro_u2 = #lib::xoroshiro128p_unit_f32(#n2);
                #lib::#bm(__xoroshiro_u1, __xoroshiro_u2)
            }}
        }
    };
    syn::parse2(tokens).ok()
}

/// The next output of state `index` of `states`, which it advances. The words are read and
/// written one by one, as `states[k]`: in a loop of draws from one state the compiler then
/// keeps the state in registers.
fn next(states: &syn::Expr, index: TokenStream, span: Span) -> TokenStream {
    quote_spanned! {span=> {
        let __xoroshiro_i: usize = #index;
        let __xoroshiro_k = 2 * ::gpu_runtime::gpu::check_index(__xoroshiro_i, #states.len() / 2);
        let (__xoroshiro_x, __xoroshiro_t0, __xoroshiro_t1) =
            ::gpu_runtime::random::xoroshiro128p_step(#states[__xoroshiro_k], #states[__xoroshiro_k + 1]);
        #states[__xoroshiro_k] = __xoroshiro_t0;
        #states[__xoroshiro_k + 1] = __xoroshiro_t1;
        __xoroshiro_x
    }}
}
