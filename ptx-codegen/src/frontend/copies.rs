//! The checks of the asynchronous copies from global to shared memory (explicit kernels,
//! sm_80 and newer): `gpu::copy_async1/2/4/8(dst, i, src, j)`, their `_unchecked`
//! siblings (in `unsafe`), `gpu::copy_async_commit()`, `gpu::copy_async_wait(n)` and
//! `gpu::copy_async_wait_all()`.

use syn::spanned::Spanned;

use super::context::{FnChecker, SpanRange};
use crate::ir::{ArrayKind, Expr, ExprKind, GpuOp, Type};

/// The copies, by the elements they move.
const COPIES: [(&str, u32); 4] = [("copy_async1", 1), ("copy_async2", 2), ("copy_async4", 4), ("copy_async8", 8)];

/// The elements `gpu::name` copies and whether it checks its windows (`copy_async4`), or
/// leaves them to its caller (`copy_async4_unchecked`), if it is one of the copies.
pub(super) fn copy_lanes(name: &str) -> Option<(u32, bool)> {
    let (base, checked) = match name.strip_suffix("_unchecked") {
        Some(base) => (base, false),
        None => (name, true),
    };
    COPIES.iter().find(|(n, _)| *n == base).map(|&(_, lanes)| (lanes, checked))
}

/// Whether a copy of `bytes` bytes maps onto `cp.async`: 4, 8 or 16 bytes, or a multiple of
/// 16 (several copies of 16).
pub fn copy_bytes_supported(bytes: u32) -> bool {
    matches!(bytes, 4 | 8) || (bytes >= 16 && bytes % 16 == 0)
}

impl FnChecker<'_> {
    /// `gpu::copy_asyncN(dst, i, src, j)`, or `gpu::copy_asyncN_unchecked` (`checked` false).
    pub(super) fn copy_async_call(&mut self, c: &syn::ExprCall, name: &str, lanes: u32, checked: bool) -> Expr {
        let span = c.span();
        if !checked && self.unsafe_depth == 0 {
            self.error(
                &c.func,
                format!(
                    "call to unsafe function `gpu::{name}` is unsafe and requires unsafe block: write `unsafe {{ gpu::{name}(dst, i, src, j) }}` where both windows are known to be in bounds, or call the checked `gpu::{}`",
                    name.trim_end_matches("_unchecked")
                ),
            );
        }
        if c.args.len() != 4 {
            self.error_at(
                SpanRange::of(c),
                format!(
                    "`gpu::{name}` takes 4 arguments (the shared array, its index, the slice and its index), but {} were given",
                    c.args.len()
                ),
            );
            return self.error_expr(span);
        }
        let mut arrays = Vec::new();
        for (arg, shared) in [(&c.args[0], true), (&c.args[2], false)] {
            let Some((local, a)) = self.array_local(arg) else {
                let what = if shared {
                    "copies into a 1-D shared array or a view of one"
                } else {
                    "copies from a slice parameter (global memory)"
                };
                self.error(arg, format!("`gpu::{name}` {what}, named directly"));
                return self.error_expr(span);
            };
            let array = self.array_name(local);
            let (_, kind) = self.prog.arrays[a as usize].clone_parts();
            let refused = match (shared, kind) {
                (true, ArrayKind::Shared { ref dims }) if dims.len() > 1 => Some(format!(
                    "`gpu::{name}` copies into 1-D shared arrays; `{array}` is a {}-D shared array",
                    dims.len()
                )),
                (true, ArrayKind::Shared { .. } | ArrayKind::DynamicShared | ArrayKind::View { .. }) => None,
                (true, _) => Some(format!(
                    "`gpu::{name}` copies into shared memory (`gpu::shared`, `gpu::dynamic_shared` or a view of one); `{array}` is not shared"
                )),
                (false, ArrayKind::Slice { .. }) => None,
                (false, _) => {
                    Some(format!("`gpu::{name}` copies from global memory, a slice parameter; `{array}` is not one"))
                }
            };
            if let Some(message) = refused {
                self.error(arg, message);
            }
            arrays.push(a);
        }
        let (dst, src) = (arrays[0], arrays[1]);
        let (dst_elem, src_elem) = (self.prog.arrays[dst as usize].0, self.prog.arrays[src as usize].0);
        if self.prog.infer.unify(dst_elem, src_elem).is_err() {
            let (d, s) = (self.prog.infer.describe(dst_elem), self.prog.infer.describe(src_elem));
            self.error(&c.args[2], format!("mismatched types: `gpu::{name}` copies `{s}` into an array of `{d}`"));
        } else if let Type::Scalar(t) = self.prog.infer.shallow(dst_elem) {
            let bytes = lanes * t.size_bytes();
            if !t.is_struct() && !t.is_complex() && !copy_bytes_supported(bytes) {
                self.error(
                    &c.func,
                    format!(
                        "`gpu::{name}` of `{t}` copies {bytes} byte{}; an asynchronous copy moves 4, 8 or 16 bytes (or several times 16): copy {} elements of `{t}` at a time",
                        if bytes == 1 { "" } else { "s" },
                        4 / t.size_bytes().clamp(1, 4)
                    ),
                );
            }
        }
        let dst_index = Box::new(self.usize_arg(&c.args[1], name, "a `usize` index"));
        let src_index = Box::new(self.usize_arg(&c.args[3], name, "a `usize` index"));
        self.mk(ExprKind::CopyAsync { dst, dst_index, src, src_index, lanes, checked }, Type::Unit, span)
    }

    /// `gpu::copy_async_wait(n)`: `n` an integer literal, the groups left copying.
    pub(super) fn copy_async_wait(&mut self, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        let literal = match c.args.iter().collect::<Vec<_>>().as_slice() {
            [syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. })] => {
                n.base10_parse::<u32>().ok().filter(|&n| n < 64)
            }
            _ => None,
        };
        match literal {
            Some(n) => self.mk(ExprKind::Gpu(GpuOp::CopyAsyncWait(n), vec![]), Type::Unit, span),
            None => {
                self.error_at(
                    SpanRange::of(c),
                    "`gpu::copy_async_wait(n)` takes the number of groups left copying as an integer literal below 64 (`gpu::copy_async_wait(1)`): the instruction holds it",
                );
                self.error_expr(span)
            }
        }
    }
}
