//! The checks of `gpu::mma::*`, a warp's tensor-core operations (explicit kernels):
//! `load_a`, `load_b` and `load_acc` from an array, `store` to one, `zeros` and `mma`.

use syn::spanned::Spanned;

use super::context::{FnChecker, SpanRange, USIZE};
use super::diagnostics::conversion_hint;
use crate::ir::{ArrayKind, Expr, ExprKind, Fragment, MmaInput, MmaOp, Type};
use crate::ty::ScalarType;

/// The operations, for the message about an unknown one.
const MMA_OPS: &str = "load_a, load_b, load_acc, store, zeros, mma";

/// `gpu::mma::A<f16>`, `gpu::mma::B<bf16>`, `gpu::mma::Acc` (with or without the `gpu::`
/// prefix, or from `gpu_runtime::gpu::mma`): the fragment type an annotation names.
pub(super) fn fragment_type(t: &syn::Type) -> Option<Result<Fragment, String>> {
    let syn::Type::Path(p) = super::syntax::bare_type(t) else { return None };
    if p.qself.is_some() {
        return None;
    }
    let segs: Vec<String> = p.path.segments.iter().map(|s| super::syntax::name(&s.ident)).collect();
    let tail = match segs.iter().position(|s| s == "mma")? {
        i if i + 2 == segs.len() && segs[..i].iter().all(|s| s == "gpu" || s == "gpu_runtime") => &segs[i + 1],
        _ => return None,
    };
    let last = p.path.segments.last()?;
    let arg = match &last.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 1 => match &a.args[0] {
            syn::GenericArgument::Type(t) => super::syntax::scalar_type(t).ok(),
            _ => None,
        },
        syn::PathArguments::None => None,
        _ => return Some(Err(format!("`gpu::mma::{tail}` takes one element type: `gpu::mma::{tail}<f16>`"))),
    };
    let input = |side: &str| match arg.and_then(MmaInput::of) {
        Some(i) => Ok(i),
        None => Err(format!("`gpu::mma::{side}<T>` is a fragment of `f16`, `bf16` or `f32` (as TF32) elements")),
    };
    Some(match tail.as_str() {
        "A" => input("A").map(Fragment::A),
        "B" => input("B").map(Fragment::B),
        "Acc" if matches!(last.arguments, syn::PathArguments::None) => Ok(Fragment::Acc),
        "Acc" => Err("`gpu::mma::Acc` holds `f32`s and takes no type argument".into()),
        other => Err(format!("`gpu::mma::{other}` is not a fragment type: they are `A<T>`, `B<T>` and `Acc`")),
    })
}

impl FnChecker<'_> {
    /// `gpu::mma::op(args)`.
    pub(super) fn mma_call(&mut self, c: &syn::ExprCall, op_name: &str) -> Expr {
        let span = c.span();
        match op_name {
            "load_a" | "load_b" | "load_acc" | "store" => self.mma_memory(c, op_name),
            "zeros" => {
                if !c.args.is_empty() {
                    self.error_at(
                        SpanRange::of(c),
                        format!("`gpu::mma::zeros` takes no arguments, but {} were given", c.args.len()),
                    );
                }
                self.mk(ExprKind::Mma(MmaOp::Zeros, vec![]), Type::Fragment(Fragment::Acc), span)
            }
            "mma" => self.mma_product(c),
            _ => {
                self.error(&c.func, format!("unknown tensor-core operation `gpu::mma::{op_name}`: they are {MMA_OPS}"));
                self.error_expr(span)
            }
        }
    }

    /// `load_a(array, base, ld)`, `load_b(…)`, `load_acc(…)` and `store(array, base, ld, acc)`.
    fn mma_memory(&mut self, c: &syn::ExprCall, name: &str) -> Expr {
        let span = c.span();
        let store = name == "store";
        let want_args = if store { 4 } else { 3 };
        if c.args.len() != want_args {
            let what = if store {
                "the array, the tile's first element, the distance between its rows and the accumulator"
            } else {
                "the array, the tile's first element and the distance between its rows"
            };
            self.error_at(
                SpanRange::of(c),
                format!("`gpu::mma::{name}` takes {want_args} arguments ({what}), but {} were given", c.args.len()),
            );
            return self.error_expr(span);
        }
        let target = &c.args[0];
        let Some((local, a)) = self.array_local(target) else {
            self.error(
                target,
                format!(
                    "`gpu::mma::{name}` works on a slice parameter, a 1-D shared array or a view of one, named directly"
                ),
            );
            return self.error_expr(span);
        };
        let array = self.array_name(local);
        let (elem, kind) = self.prog.arrays[a as usize].clone_parts();
        let refused = match kind {
            ArrayKind::Slice { mutable: false } if store => Some(format!(
                "`gpu::mma::store` writes `{array}`, which is behind a `&` reference: make it `&mut [f32]`"
            )),
            ArrayKind::Local { .. } => Some(format!(
                "`gpu::mma::{name}` works on a slice parameter, a 1-D shared array or a view of one; `{array}` is the thread's own array"
            )),
            ArrayKind::Shared { ref dims } if dims.len() > 1 => Some(format!(
                "`gpu::mma::{name}` works on 1-D arrays, with the rows `ld` apart; `{array}` is a {}-D shared array",
                dims.len()
            )),
            _ => None,
        };
        if let Some(message) = refused {
            self.error(target, message);
        }
        let elem = self.prog.infer.shallow(elem);
        let fragment = match (name, elem) {
            ("load_a" | "load_b", Type::Scalar(t)) => {
                match MmaInput::of(t) {
                    Some(i) if name == "load_a" => Some(Fragment::A(i)),
                    Some(i) => Some(Fragment::B(i)),
                    None => {
                        self.error(
                        target,
                        format!("`gpu::mma::{name}` loads `f16`, `bf16` or `f32` (as TF32) elements; `{array}` holds `{t}`"),
                    );
                        None
                    }
                }
            }
            (_, Type::Scalar(ScalarType::F32)) => Some(Fragment::Acc),
            (_, Type::Scalar(t)) => {
                self.error(
                    target,
                    format!("the accumulator holds `f32`s: `gpu::mma::{name}` needs an array of `f32`; `{array}` holds `{t}`"),
                );
                None
            }
            _ => None,
        };
        let mut args = Vec::new();
        for (what, arg) in [("the tile's first element", &c.args[1]), ("the distance between rows", &c.args[2])] {
            let e = self.expr(arg);
            if self.prog.infer.unify(e.ty, USIZE).is_err() {
                let found = self.prog.infer.describe(e.ty);
                let hint = conversion_hint(arg, &found, "usize");
                self.error(
                    arg,
                    format!("mismatched types: `gpu::mma::{name}` takes {what} as a `usize`, found `{found}`{hint}"),
                );
            }
            args.push(e);
        }
        if store {
            let acc = self.expr(&c.args[3]);
            self.expect_fragment(&acc, &c.args[3], Fragment::Acc, name);
            args.push(acc);
            return self.mk(ExprKind::Mma(MmaOp::Store(a), args), Type::Unit, span);
        }
        let Some(fragment) = fragment else { return self.error_expr(span) };
        self.mk(ExprKind::Mma(MmaOp::Load(fragment, a), args), Type::Fragment(fragment), span)
    }

    /// `mma(a, b, c)`: `a` an `A<T>`, `b` a `B<T>` of the same `T`, `c` an `Acc`.
    fn mma_product(&mut self, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        if c.args.len() != 3 {
            self.error_at(
                SpanRange::of(c),
                format!(
                    "`gpu::mma::mma` takes 3 arguments (the `A` and `B` fragments and the accumulator), but {} were given",
                    c.args.len()
                ),
            );
            return self.error_expr(span);
        }
        let args: Vec<Expr> = c.args.iter().map(|a| self.expr(a)).collect();
        let a_ty = self.prog.infer.shallow(args[0].ty);
        let input = match a_ty {
            Type::Fragment(Fragment::A(i)) => Some(i),
            Type::Error => None,
            _ => {
                let found = self.prog.infer.describe(a_ty);
                self.error(
                    &c.args[0],
                    format!("`gpu::mma::mma` takes an `A` fragment first (`gpu::mma::load_a(…)`), found `{found}`"),
                );
                None
            }
        };
        if let Some(i) = input {
            self.expect_fragment(&args[1], &c.args[1], Fragment::B(i), "mma");
        }
        self.expect_fragment(&args[2], &c.args[2], Fragment::Acc, "mma");
        if input.is_none() {
            return self.error_expr(span);
        }
        self.mk(ExprKind::Mma(MmaOp::Mma, args), Type::Fragment(Fragment::Acc), span)
    }

    fn expect_fragment(&mut self, e: &Expr, src: &syn::Expr, want: Fragment, name: &str) {
        if self.prog.infer.unify(e.ty, Type::Fragment(want)).is_err() {
            let found = self.prog.infer.describe(e.ty);
            let want = want.rust_name();
            self.error(src, format!("mismatched types: `gpu::mma::{name}` takes a `{want}` here, found `{found}`"));
        }
    }
}
