//! The simulator's copy of an explicit kernel (`name::simulate`): the body as written, with
//! every index going through the simulator's traits.
//!
//! In the simulator the threads of a block run concurrently on the host, so a `&mut [T]`
//! parameter and a shared array are written by many threads at once. Rust's `Index` hands
//! out references, which would be data races there; instead `x[i]` becomes
//! `x.__gpu_load(i)` and `x[i] = v` becomes `x.__gpu_store(i, v)`, whose implementations
//! (`gpu_runtime::__private::sim`) read and write through atomics for shared memory and
//! `&mut` slices, and plainly for local arrays and `&[T]`. Evaluation order is Rust's: the
//! value of an assignment (and the right operand of a compound assignment of primitives)
//! before the place.

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;

use crate::runtime::private;
use ptx_codegen::frontend::unchecked_call;

/// Rewrites every index expression of `block` (see the module's documentation), those of
/// the functions nested in it too (they are compiled for the GPU as part of the kernel, and
/// run in its simulator).
pub fn rewrite_indexing(block: &mut syn::Block) -> bool {
    let mut rewriter = Indexing { rewritten: false };
    rewriter.visit_block_mut(block);
    rewriter.rewritten
}

/// [`rewrite_indexing`] for the host copy of a `#[device]` function: where it indexes
/// anything, the simulator's traits are brought into scope for it.
pub fn rewrite_device_indexing(block: &mut syn::Block) {
    if rewrite_indexing(block) {
        block.stmts.insert(0, sim_traits());
    }
}

/// `use` of the simulator's indexing traits (unnamed, for their methods).
pub fn sim_traits() -> syn::Stmt {
    let p = private();
    syn::parse_quote! {
        #[allow(unused_imports)]
        use #p::sim::{Load as _, StoreLocal as _, StoreShared as _};
    }
}

struct Indexing {
    rewritten: bool,
}

impl VisitMut for Indexing {
    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        // Children first: an index inside an index, or inside a stored value, is a load.
        match e {
            // `a[i].field… = v` and `op=`: the element is loaded, the field written in the
            // copy, and only the field's bytes stored back.
            syn::Expr::Assign(a) if element_part(&a.left).is_some() => {
                let span = a.eq_token.span;
                *e = self.part_write(&a.left, None, &a.right, span);
            }
            syn::Expr::Binary(b) if compound(&b.op).is_some() && element_part(&b.left).is_some() => {
                let span = b.op.span();
                let op = compound(&b.op);
                *e = self.part_write(&b.left, op, &b.right, span);
            }
            syn::Expr::Assign(a) if element(&a.left).is_some() => {
                self.rewritten = true;
                let (mut base, mut index, _) = element(&a.left).expect("matched above");
                self.visit_expr_mut(&mut base);
                self.visit_expr_mut(&mut index);
                self.visit_expr_mut(&mut a.right);
                let value = a.right.clone();
                let span = a.eq_token.span;
                *e = parse(quote_spanned! {span=> {
                    let __gpu_value = #value;
                    #base.__gpu_store(#index, __gpu_value)
                }});
            }
            syn::Expr::Binary(b) if compound(&b.op).is_some() && element(&b.left).is_some() => {
                self.rewritten = true;
                let op = compound(&b.op).expect("checked above");
                let (mut base, mut index, _) = element(&b.left).expect("matched above");
                self.visit_expr_mut(&mut base);
                self.visit_expr_mut(&mut index);
                self.visit_expr_mut(&mut b.right);
                let value = b.right.clone();
                let span = b.op.span();
                *e = parse(quote_spanned! {span=> {
                    let __gpu_value = #value;
                    let __gpu_index = #index;
                    let __gpu_old = #base.__gpu_load(__gpu_index);
                    #base.__gpu_store(__gpu_index, __gpu_old #op __gpu_value)
                }});
            }
            _ if element(e).is_some() => {
                self.rewritten = true;
                let (mut base, mut index, span) = element(e).expect("matched above");
                self.visit_expr_mut(&mut base);
                self.visit_expr_mut(&mut index);
                *e = parse(quote_spanned! {span=> #base.__gpu_load(#index) });
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }

    // Of the items nested in the body, functions are part of the kernel; constants and the
    // rest are the user's host code.
    fn visit_item_mut(&mut self, item: &mut syn::Item) {
        if let syn::Item::Fn(f) = item {
            self.visit_block_mut(&mut f.block);
        }
    }
}

impl Indexing {
    /// `place = value` (`op: None`) or `place op= value` where `place` is a part of an
    /// element (`a[i].f`, `a[i].f[k]`, `a[i].g.f`): the value, then the element's index and
    /// the element, then the part written in a copy of it (its own indices checked as Rust
    /// checks them), and only the part's bytes stored.
    fn part_write(&mut self, place: &syn::Expr, op: Option<TokenStream>, value: &syn::Expr, span: Span) -> syn::Expr {
        self.rewritten = true;
        let (mut part, (mut base, mut index)) = element_part(place).expect("checked by the caller");
        self.visit_expr_mut(&mut base);
        self.visit_expr_mut(&mut index);
        self.visit_part_indices(&mut part);
        let mut value = value.clone();
        self.visit_expr_mut(&mut value);
        let update = op.is_some();
        let write = match op {
            None => quote_spanned!(span=> *__gpu_part = __gpu_value;),
            Some(op) => quote_spanned!(span=> *__gpu_part = *__gpu_part #op __gpu_value;),
        };
        parse(quote_spanned! {span=> {
            let __gpu_value = #value;
            let __gpu_index = #index;
            let mut __gpu_elem = #base.__gpu_load_for_part(__gpu_index);
            let __gpu_at = ::core::ptr::addr_of!(__gpu_elem) as usize;
            let (__gpu_offset, __gpu_len) = {
                let __gpu_part = &mut #part;
                #write
                (__gpu_part as *mut _ as usize - __gpu_at, ::core::mem::size_of_val(__gpu_part))
            };
            #base.__gpu_store_part(__gpu_index, __gpu_elem, __gpu_offset, __gpu_len, #update)
        }})
    }

    /// The indices inside a part (`__gpu_elem.f[k]`): loads where they index arrays.
    fn visit_part_indices(&mut self, e: &mut syn::Expr) {
        match e {
            syn::Expr::Field(f) => self.visit_part_indices(&mut f.base),
            syn::Expr::Index(ix) => {
                self.visit_expr_mut(&mut ix.index);
                self.visit_part_indices(&mut ix.expr);
            }
            syn::Expr::Paren(p) => self.visit_part_indices(&mut p.expr),
            _ => {}
        }
    }
}

/// A part of an element as a place, `a[i].f…` (fields, and indices of array fields): the
/// place with the element replaced by `__gpu_elem`, and the element's array and index.
fn element_part(e: &syn::Expr) -> Option<(syn::Expr, (syn::Expr, syn::Expr))> {
    match e {
        syn::Expr::Paren(p) => element_part(&p.expr),
        syn::Expr::Field(f) if matches!(f.member, syn::Member::Named(_)) => {
            let (base, root) = match &*f.base {
                syn::Expr::Index(ix) if !is_field_chain(&ix.expr) => {
                    (syn::parse_quote!(__gpu_elem), ((*ix.expr).clone(), (*ix.index).clone()))
                }
                other => element_part(other)?,
            };
            let mut f = f.clone();
            f.base = Box::new(base);
            Some((syn::Expr::Field(f), root))
        }
        syn::Expr::Index(ix) if is_field_chain(&ix.expr) => {
            let (base, root) = element_part(&ix.expr)?;
            let mut ix = ix.clone();
            ix.expr = Box::new(base);
            Some((syn::Expr::Index(ix), root))
        }
        _ => None,
    }
}

/// Whether `e` ends in a named field (`x.f`, `(x.f)`): indexing it indexes an array field.
fn is_field_chain(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Paren(p) => is_field_chain(&p.expr),
        syn::Expr::Field(f) => matches!(f.member, syn::Member::Named(_)),
        _ => false,
    }
}

/// An element of an array as a place: `a[i]`, or `*a.get_unchecked(i)` /
/// `*a.get_unchecked_mut(i)` (checked in the simulator too: an index the user promised is
/// in bounds is tested there), with the span to give the rewritten access.
fn element(e: &syn::Expr) -> Option<(syn::Expr, syn::Expr, Span)> {
    match e {
        syn::Expr::Index(ix) => Some(((*ix.expr).clone(), (*ix.index).clone(), ix.bracket_token.span.join())),
        syn::Expr::Unary(syn::ExprUnary { op: syn::UnOp::Deref(star), expr, .. }) => {
            let m = unchecked_call(expr)?;
            (m.args.len() == 1).then(|| ((*m.receiver).clone(), m.args[0].clone(), star.span))
        }
        _ => None,
    }
}

/// The binary operator of a compound assignment (`+` for `+=`).
fn compound(op: &syn::BinOp) -> Option<TokenStream> {
    use syn::BinOp::*;
    let span: Span = op.span();
    Some(match op {
        AddAssign(_) => quote_spanned!(span=> +),
        SubAssign(_) => quote_spanned!(span=> -),
        MulAssign(_) => quote_spanned!(span=> *),
        DivAssign(_) => quote_spanned!(span=> /),
        RemAssign(_) => quote_spanned!(span=> %),
        BitAndAssign(_) => quote_spanned!(span=> &),
        BitOrAssign(_) => quote_spanned!(span=> |),
        BitXorAssign(_) => quote_spanned!(span=> ^),
        ShlAssign(_) => quote_spanned!(span=> <<),
        ShrAssign(_) => quote_spanned!(span=> >>),
        _ => return None,
    })
}

fn parse(tokens: TokenStream) -> syn::Expr {
    syn::parse2(tokens).expect("the rewritten expression is valid Rust")
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;

    fn rewritten(src: &str) -> String {
        let mut block: syn::Block = syn::parse_str(src).unwrap();
        let _ = rewrite_indexing(&mut block);
        block.into_token_stream().to_string()
    }

    #[test]
    fn unchecked_elements_go_through_the_traits_too() {
        assert_eq!(rewritten("{ unsafe { *y.get_unchecked(i) } }"), "{ unsafe { y . __gpu_load (i) } }");
        let store = rewritten("{ unsafe { *y.get_unchecked_mut(i) = *x.get_unchecked(j); } }");
        assert!(store.contains("let __gpu_value = x . __gpu_load (j) ;"), "{store}");
        assert!(store.contains("y . __gpu_store (i , __gpu_value)"), "{store}");
        let update = rewritten("{ unsafe { *y.get_unchecked_mut(i) += 1.0; } }");
        assert!(update.contains("y . __gpu_store (__gpu_index , __gpu_old + __gpu_value)"), "{update}");
        // A reference kept from a read-only slice is left as it is (a plain slice there).
        assert_eq!(
            rewritten("{ let w = unsafe { x.get_unchecked(i) }; }"),
            "{ let w = unsafe { x . get_unchecked (i) } ; }"
        );
    }

    #[test]
    fn reads_writes_and_compound_writes_go_through_the_traits() {
        assert_eq!(rewritten("{ y[i] }"), "{ y . __gpu_load (i) }");
        let store = rewritten("{ y[i] = x[j] * 2.0; }");
        assert!(store.contains("let __gpu_value = x . __gpu_load (j) * 2.0 ;"), "{store}");
        assert!(store.contains("y . __gpu_store (i , __gpu_value)"), "{store}");
        let add = rewritten("{ acc[k] += a[i]; }");
        assert!(add.contains("let __gpu_value = a . __gpu_load (i) ;"), "{add}");
        assert!(add.contains("acc . __gpu_store (__gpu_index , __gpu_old + __gpu_value)"), "{add}");
        let shl = rewritten("{ m[i] <<= 1; }");
        assert!(shl.contains("__gpu_old << __gpu_value"), "{shl}");
    }

    #[test]
    fn a_field_of_an_element_is_written_alone() {
        let w = rewritten("{ a[i].pos[k] += v[j]; }");
        assert!(w.contains("let __gpu_value = v . __gpu_load (j) ;"), "{w}");
        assert!(w.contains("let mut __gpu_elem = a . __gpu_load_for_part (__gpu_index) ;"), "{w}");
        assert!(w.contains("& mut __gpu_elem . pos [k]"), "{w}");
        assert!(w.contains("* __gpu_part = * __gpu_part + __gpu_value"), "{w}");
        assert!(w.contains("a . __gpu_store_part (__gpu_index , __gpu_elem , __gpu_offset , __gpu_len , true)"), "{w}");
        let w = rewritten("{ a[b[i]].inner.mass = 1.0; }");
        assert!(w.contains("let __gpu_index = b . __gpu_load (i) ;"), "{w}");
        assert!(w.contains("& mut __gpu_elem . inner . mass"), "{w}");
        // A local struct's field is a place of its own: Rust writes it.
        assert_eq!(rewritten("{ p.mass = 1.0; }"), "{ p . mass = 1.0 ; }");
        // Reading a part loads the element.
        assert_eq!(rewritten("{ a[i].pos[k] }"), "{ a . __gpu_load (i) . pos . __gpu_load (k) }");
    }

    #[test]
    fn nested_indices_and_two_dimensional_ones() {
        assert_eq!(rewritten("{ a[b[i]] }"), "{ a . __gpu_load (b . __gpu_load (i)) }");
        let tile = rewritten("{ t[(ty, tx)] = a[row * n + tx]; }");
        assert!(tile.contains("t . __gpu_store ((ty , tx) , __gpu_value)"), "{tile}");
        let inside = rewritten("{ for k in 0..n { s += t[(ty, k)] * u[(k, tx)]; } }");
        assert!(inside.contains("s += t . __gpu_load ((ty , k)) * u . __gpu_load ((k , tx))"), "{inside}");
    }

    #[test]
    fn plain_assignments_are_left_alone_and_nested_functions_rewritten() {
        assert_eq!(rewritten("{ x = 1; x += 2; }"), "{ x = 1 ; x += 2 ; }");
        assert_eq!(
            rewritten("{ fn h(a: [f32; 2]) -> f32 { a[0] } h(v) }"),
            "{ fn h (a : [f32 ; 2]) -> f32 { a . __gpu_load (0) } h (v) }"
        );
        assert_eq!(rewritten("{ const K: usize = 3; K }"), "{ const K : usize = 3 ; K }");
    }

    #[test]
    fn a_device_function_gets_the_traits_only_where_it_indexes() {
        let mut plain: syn::Block = syn::parse_str("{ x * 2.0 }").unwrap();
        rewrite_device_indexing(&mut plain);
        assert_eq!(plain.into_token_stream().to_string(), "{ x * 2.0 }");
        let mut shared: syn::Block = syn::parse_str("{ let s = gpu::shared::<i32, 4>(); s[0] = 1; s[0] }").unwrap();
        rewrite_device_indexing(&mut shared);
        let text = shared.into_token_stream().to_string();
        assert!(text.starts_with("{ # [allow (unused_imports)] use :: gpu_runtime"), "{text}");
        assert!(text.contains("s . __gpu_store (0 , __gpu_value)"), "{text}");
    }
}
