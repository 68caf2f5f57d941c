//! The kernel of a `#[guvectorize]` function (an explicit kernel, `#[kernel]`, written out
//! here and expanded by rustc): one loop index per thread of a grid-stride loop, each view
//! a window of its argument's data at the loop index's offset, every index checked against
//! the core's size with `gpu::check_index` (a miss is the fault Rust gives, never a read of
//! the neighbouring core), `return` a `break` out of the body.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;

use super::Gufunc;
use super::layout::{Kind, Param};
use crate::runtime::private;

/// The kernel (`#[kernel] fn gpu_kernel`) and the `GuFn` methods that run it (`launch` on
/// a GPU, `simulate` in the simulator).
pub(super) fn gpu_items(g: &Gufunc<'_>) -> (TokenStream, TokenStream) {
    let p = private();
    let Gufunc { func, layout, inputs, outputs, rets, .. } = g;
    let mut kparams: Vec<TokenStream> = vec![quote!(__gu_loops: usize)];
    let mut kargs: Vec<TokenStream> = vec![quote!(__plan.loops)];
    let mut prologue: Vec<TokenStream> = Vec::new();
    // Once per thread: every loop index's core lies inside its data (the views' elements
    // are then read and written unchecked against the data, checked against the core).
    let mut guards: Vec<TokenStream> = Vec::new();
    let mut views: Vec<View> = Vec::new();
    // One kernel parameter per core dimension, shared by every view that has it: an index
    // checked against `n` in one view is then known to be inside the others of size `n`.
    let mut seen: Vec<String> = Vec::new();
    let mut core_dims = |names: &'_ [String], kparams: &mut Vec<TokenStream>, kargs: &mut Vec<TokenStream>| {
        names
            .iter()
            .map(|name| {
                let d = format_ident!("__gu_dim_{}", name);
                if !seen.contains(name) {
                    seen.push(name.clone());
                    kparams.push(quote!(#d: usize));
                    kargs.push(quote!(__plan.size(#name)));
                }
                d
            })
            .collect::<Vec<syn::Ident>>()
    };
    for (k, q) in inputs.iter().enumerate() {
        let Names { data, base, step } = names_of(q);
        let (id, elem) = (&q.ident, &q.elem);
        kparams.push(quote!(#data: &[#elem]));
        kargs.push(quote!(#id.kernel_in()));
        let dims = core_dims(&layout.inputs[k], &mut kparams, &mut kargs);
        kparams.push(quote!(#step: usize));
        kargs.push(quote!(#id.step()));
        let len = dims.iter().fold(quote!(1usize), |acc, d| quote!(#acc * #d));
        guards.push(window_guard(&data, &quote!(#step), &len));
        if q.kind == Kind::Scalar {
            let m = q.mutable_binding.then(|| quote!(mut));
            prologue.push(quote! {
                // SAFETY: inside the data (the window guard on entry).
                let #m #id: #elem = unsafe { *#data.get_unchecked(__gu_t * #step) };
            });
        } else {
            prologue.push(quote!(let #base = __gu_t * #step;));
            views.push(View { name: id.to_string(), base, dims });
        }
    }
    let mut out_bufs = Vec::new();
    for (k, q) in outputs.iter().enumerate() {
        let Names { data, base, .. } = names_of(q);
        let elem = &q.elem;
        let buf = format_ident!("__o{}", k);
        kparams.push(quote!(#data: &mut [#elem]));
        kargs.push(quote!(&mut *#buf));
        let dims = core_dims(&layout.outputs[k], &mut kparams, &mut kargs);
        let len = dims.iter().fold(quote!(1usize), |acc, d| quote!(#acc * #d));
        guards.push(window_guard(&data, &quote!((#len)), &len));
        prologue.push(quote!(let #base = __gu_t * (#len);));
        views.push(View { name: q.ident.to_string(), base, dims });
        out_bufs.push((buf, elem.clone(), k));
    }
    let ret_params: Vec<syn::Ident> = (0..rets.len()).map(|k| format_ident!("__gu_ret{}", k)).collect();
    let ret_values: Vec<syn::Ident> = (0..rets.len()).map(|k| format_ident!("__gu_r{}", k)).collect();
    for (k, (r, param)) in rets.iter().zip(&ret_params).enumerate() {
        guards.push(quote! {
            if __gu_loops > #param.len() {
                return;
            }
        });
        kparams.push(quote!(#param: &mut [#r]));
        let buf = format_ident!("__ret{}", k);
        kargs.push(quote!(&mut *#buf));
        out_bufs.push((buf, r.clone(), outputs.len() + k));
    }
    let mut body = (*func.block).clone();
    let mut rw = Rewrite { views: &views, errors: Vec::new() };
    rw.visit_block_mut(&mut body);
    let errors: Vec<TokenStream> = rw.errors.iter().map(syn::Error::to_compile_error).collect();
    let run_body = match rets {
        [r] => quote! {
            let __gu_r0: #r = '__gu: loop { break '__gu #body; };
            // SAFETY: `__gu_t < __gu_loops <= __gu_ret0.len()` (the guard on entry).
            unsafe { *__gu_ret0.get_unchecked_mut(__gu_t) = __gu_r0; }
        },
        [_, ..] => quote! {
            let (#(#ret_values),*) = '__gu: loop { break '__gu #body; };
            // SAFETY: `__gu_t < __gu_loops`, at most each output's length (the guards on entry).
            #(unsafe { *#ret_params.get_unchecked_mut(__gu_t) = #ret_values; })*
        },
        [] => quote! {
            '__gu: loop {
                #body
                break '__gu;
            }
        },
    };
    let kernel = quote! {
        #[allow(unused_variables, unused_mut, unused_labels, unused_parens, unused_unsafe, clippy::never_loop, clippy::needless_return)]
        #[::gpu_runtime::kernel]
        fn gpu_kernel(#(#kparams),*) {
            #(#guards)*
            let mut __gu_t = gpu::grid1();
            while __gu_t < __gu_loops {
                #(#prologue)*
                #run_body
                __gu_t += gpu::gridsize1();
            }
        }
    };
    if !errors.is_empty() {
        // Reported once, here: the kernel is not written out (its checker would say the
        // same again), and `GuFn`'s default methods say it has none.
        return (quote!(#(#errors)*), TokenStream::new());
    }
    let items = quote! {
        #[allow(unused_imports)]
        use ::gpu_runtime::gpu;

        #kernel
    };
    let in_idents: Vec<&syn::Ident> = g.inputs.iter().map(|q| &q.ident).collect();
    let bufs = g.out_bufs();
    // The same arguments on either side: the inputs are `GuIn`s (the GPU) or `GuHost`s
    // (the simulator), the outputs `DeviceVec`s or `Vec`s.
    let methods = quote! {
        fn launch<'__b>(
            __plan: &#p::GuPlan,
            __inputs: &'__b #p::Laid<'_, Self>,
            __outs: &'__b mut <Self::Outs as #p::GuOutputs>::Device,
            __config: &::gpu_runtime::LaunchConfig,
        ) -> ::gpu_runtime::Result<::gpu_runtime::Pending<'__b, ()>> {
            let (#(#in_idents,)*) = __inputs;
            let (#(#bufs,)*) = __outs;
            gpu_kernel::launch_with(__config, #(#kargs),*)
        }

        fn simulate<'__h, '__a: '__h>(
            __plan: &#p::GuPlan,
            __inputs: &#p::Hosts<'__h, '__a, Self>,
            __outs: &mut <Self::Outs as #p::GuOutputs>::Host,
            __config: &::gpu_runtime::LaunchConfig,
        ) -> ::gpu_runtime::Result<()> {
            let (#(#in_idents,)*) = __inputs;
            let (#(#bufs,)*) = __outs;
            gpu_kernel::simulate_with(__config, #(#kargs),*)
        }
    };
    (items, methods)
}

/// The kernel's check on entry that every loop index's window (`len` elements from
/// `t * step`, for `t < __gu_loops`) lies inside `data`, written without a product that
/// could overflow. The call sizes every argument so that it holds (and checks it on the
/// host); were it ever false, the kernel would touch nothing and return. A `return`, not a
/// fault: a fault path on entry measured 1.8 times slower on the H200 (`bench/gufunc_shapes.rs`),
/// and every element access after it is unchecked against the data.
fn window_guard(data: &syn::Ident, step: &TokenStream, len: &TokenStream) -> TokenStream {
    quote! {
        if __gu_loops > 0
            && #len > 0
            && (#len > #data.len() || (#step > 0 && __gu_loops - 1 > (#data.len() - #len) / #step))
        {
            return;
        }
    }
}

/// A core view in the kernel: its data parameter, the offset of the loop index's core, and
/// the core's sizes.
struct View {
    name: String,
    base: syn::Ident,
    dims: Vec<syn::Ident>,
}

/// Rewrites the body for the kernel: each view's index becomes `base + check_index(i, n)`
/// (rows and columns for a matrix), `len()`/`shape()` the core's sizes, and `return` a
/// `break` out of the loop around the body. A view used any other way is an error.
struct Rewrite<'a> {
    views: &'a [View],
    errors: Vec<syn::Error>,
}

impl Rewrite<'_> {
    fn view(&self, e: &syn::Expr) -> Option<&View> {
        let syn::Expr::Path(p) = e else { return None };
        let id = p.path.get_ident()?.to_string();
        self.views.iter().find(|v| v.name == id)
    }
}

impl Rewrite<'_> {
    /// The view an index expression `view[..]` indexes.
    fn view_index(&self, e: &syn::Expr) -> Option<&View> {
        match syn_bare(e) {
            syn::Expr::Index(ix) => self.view(&ix.expr),
            _ => None,
        }
    }

    /// `view[i]` as the element of the view's data it names, `*data.method(base + k)`,
    /// where `k` is the index checked against the core's size (`base + check_index(i, n)`,
    /// rows and columns for a matrix). Unchecked against the data is sound: the kernel
    /// checks once, on entry, that every loop index's core lies inside its data.
    fn place(&mut self, e: &mut syn::Expr, method: &str) -> Option<syn::Expr> {
        let syn::Expr::Index(ix) = syn_bare_mut(e) else { return None };
        self.visit_expr_mut(&mut ix.index);
        let v = self.view(&ix.expr)?;
        let (data, base, index) = (&ix.expr, &v.base, &ix.index);
        let method = syn::Ident::new(method, ix.span());
        let at: syn::Expr = match v.dims.as_slice() {
            [n] => syn::parse_quote_spanned!(index.span()=> #base + gpu::check_index(#index, #n)),
            [r, c] => match syn_bare(index) {
                syn::Expr::Tuple(t) if t.elems.len() == 2 => {
                    let (i, j) = (&t.elems[0], &t.elems[1]);
                    syn::parse_quote_spanned!(index.span()=>
                        #base + gpu::check_index(#i, #r) * #c + gpu::check_index(#j, #c))
                }
                _ => {
                    self.errors.push(syn::Error::new(
                        index.span(),
                        format!("`{}` is a matrix: index it with a pair, `{}[(row, column)]`", v.name, v.name),
                    ));
                    return None;
                }
            },
            _ => return None,
        };
        Some(syn::parse_quote_spanned!(ix.span()=> *#data.#method(#at)))
    }
}

/// `+=`, `-=`, … (an assignment through an operator).
fn is_compound(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

impl VisitMut for Rewrite<'_> {
    fn visit_item_fn_mut(&mut self, _: &mut syn::ItemFn) {
        // A nested function has its own returns and cannot see the views.
    }

    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        match e {
            syn::Expr::Return(r) => {
                if let Some(v) = &mut r.expr {
                    self.visit_expr_mut(v);
                }
                let value = r.expr.take();
                *e = syn::parse_quote_spanned!(r.span()=> break '__gu #value);
            }
            // `view[i] = v` and `view[i] op= v`: the write, unchecked once the index is.
            syn::Expr::Assign(a) if self.view_index(&a.left).is_some() => {
                self.visit_expr_mut(&mut a.right);
                let Some(place) = self.place(&mut a.left, "get_unchecked_mut") else { return };
                let right = &a.right;
                *e = syn::parse_quote_spanned!(a.span()=> unsafe { #place = #right });
            }
            syn::Expr::Binary(b) if is_compound(&b.op) && self.view_index(&b.left).is_some() => {
                self.visit_expr_mut(&mut b.right);
                let Some(place) = self.place(&mut b.left, "get_unchecked_mut") else { return };
                let (op, right) = (&b.op, &b.right);
                *e = syn::parse_quote_spanned!(b.span()=> unsafe { #place #op #right });
            }
            syn::Expr::Index(ix) if self.view(&ix.expr).is_some() => {
                let span = ix.span();
                if let Some(place) = self.place(e, "get_unchecked") {
                    *e = syn::parse_quote_spanned!(span=> (unsafe { #place }));
                }
            }
            syn::Expr::MethodCall(m) if self.view(&m.receiver).is_some() => {
                for a in &mut m.args {
                    self.visit_expr_mut(a);
                }
                let Some(v) = self.view(&m.receiver) else { return };
                let method = m.method.to_string();
                let (base, dims) = (&v.base, &v.dims);
                let span = m.span();
                match (method.as_str(), dims.as_slice(), m.args.len()) {
                    ("len", [n], 0) => *e = syn::parse_quote_spanned!(span=> #n),
                    ("len", [r, c], 0) => *e = syn::parse_quote_spanned!(span=> (#r * #c)),
                    ("is_empty", [n], 0) => *e = syn::parse_quote_spanned!(span=> (#n == 0)),
                    ("is_empty", [r, c], 0) => *e = syn::parse_quote_spanned!(span=> (#r * #c == 0)),
                    ("shape", [r, c], 0) => *e = syn::parse_quote_spanned!(span=> (#r, #c)),
                    ("get_unchecked" | "get_unchecked_mut", [_], 1) => {
                        let i = &m.args[0];
                        m.args[0] = syn::parse_quote_spanned!(span=> #base + (#i));
                    }
                    _ => self.errors.push(syn::Error::new(
                        m.method.span(),
                        format!(
                            "on the GPU, `{}` is a view of its core: index it (`{}`), or ask its size ({})",
                            v.name,
                            if dims.len() == 2 { "[(i, j)]" } else { "[i]" },
                            if dims.len() == 2 { "`shape()`, `len()`" } else { "`len()`" }
                        ),
                    )),
                }
            }
            syn::Expr::Path(_) if self.view(e).is_some() => {
                let name = self.view(e).map(|v| v.name.clone()).unwrap_or_default();
                self.errors.push(syn::Error::new(
                    e.span(),
                    format!("on the GPU, `{name}` is a view of its core: index it or ask its size, but it is not a value to pass or bind"),
                ));
            }
            _ => syn::visit_mut::visit_expr_mut(self, e),
        }
    }
}

fn syn_bare_mut(e: &mut syn::Expr) -> &mut syn::Expr {
    match e {
        syn::Expr::Paren(p) => syn_bare_mut(&mut p.expr),
        syn::Expr::Group(g) => syn_bare_mut(&mut g.expr),
        e => e,
    }
}

fn syn_bare(e: &syn::Expr) -> &syn::Expr {
    match e {
        syn::Expr::Paren(p) => syn_bare(&p.expr),
        syn::Expr::Group(g) => syn_bare(&g.expr),
        e => e,
    }
}

/// How the kernel and the host name one parameter's pieces.
struct Names {
    /// The kernel parameter with the data (the user's name for a view, `__gu_x` for a
    /// scalar input, whose user name is the value at the loop index).
    data: syn::Ident,
    base: syn::Ident,
    step: syn::Ident,
}

fn names_of(p: &Param) -> Names {
    let id = &p.ident;
    let data = if p.kind == Kind::Scalar { format_ident!("__gu_{}", id) } else { id.clone() };
    Names { data, base: format_ident!("__gu_{}_base", id), step: format_ident!("__gu_{}_step", id) }
}
