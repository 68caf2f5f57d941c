//! The GPU's built-ins in a kernel: their names and paths (`gpu::sync_threads`,
//! `gpu_runtime::gpu::atomic::add`), and the checks of their calls (`gpu::name(args)`,
//! `gpu::atomic::op(array, index, args)`) and of `gpu::Dim3`'s fields.

use syn::spanned::Spanned;

use super::context::{BOOL, FnChecker, SpanRange, U32, USIZE};
use super::diagnostics::{arity, conversion_hint};
use super::syntax;
use crate::ir::{ArrayKind, AtomicOp, Expr, ExprKind, GpuOp, LaneMask, Type};

/// The GPU built-ins a kernel can call, for the message about an unknown one.
const BUILTINS: &str = "thread_idx, block_idx, block_dim, grid_dim, grid1, grid2, grid3, gridsize1, gridsize2, gridsize3, \
sync_threads, sync_threads_count, sync_threads_and, sync_threads_or, thread_fence, thread_fence_block, \
thread_fence_system, lane_id, lanemask_lt, lanemask_le, lanemask_eq, lanemask_ge, lanemask_gt, active_mask, \
syncwarp, shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync, ballot_sync, all_sync, any_sync, match_any_sync, \
match_all_sync, check_index, load2, load4, store2, store4, copy_async1, copy_async2, copy_async4, copy_async8, \
copy_async1_unchecked, copy_async2_unchecked, copy_async4_unchecked, copy_async8_unchecked, copy_async_commit, copy_async_wait, copy_async_wait_all, shared, shared_2d, shared_3d, dynamic_shared, \
atomic::{add, sub, min, max, nanmin, nanmax, inc, dec, exchange, compare_and_swap, and, or, xor}, \
mma::{load_a, load_b, load_acc, store, zeros, mma} and the constant WARP_SIZE";

/// The functions that declare a shared array, by rank (0: dynamic shared memory).
const SHARED_DECLS: [(&str, usize); 4] = [("dynamic_shared", 0), ("shared", 1), ("shared_2d", 2), ("shared_3d", 3)];

pub(super) fn shared_rank(name: &str) -> Option<usize> {
    SHARED_DECLS.iter().find(|(n, _)| *n == name).map(|(_, r)| *r)
}

/// The vector accesses: name, elements, whether it stores.
const VECTOR_ACCESS: [(&str, u32, bool); 4] =
    [("load2", 2, false), ("load4", 4, false), ("store2", 2, true), ("store4", 4, true)];

fn vector_access(name: &str) -> Option<(u32, bool)> {
    VECTOR_ACCESS.iter().find(|(n, ..)| *n == name).map(|&(_, lanes, store)| (lanes, store))
}

/// The rest of a path into the GPU built-ins: `gpu::x`, `gpu_runtime::gpu::x`,
/// `::gpu_runtime::gpu::x` give `["x"]` (and `["atomic", "add"]` for the atomics).
pub(super) fn gpu_path(p: &syn::Path) -> Option<Vec<String>> {
    let segs: Vec<String> = p.segments.iter().map(|s| syntax::name(&s.ident)).collect();
    let rest = match segs.iter().position(|s| s == "gpu")? {
        0 if p.leading_colon.is_none() => &segs[1..],
        1 if segs[0] == "gpu_runtime" => &segs[2..],
        _ => return None,
    };
    (!rest.is_empty()).then(|| rest.to_vec())
}

/// The module the device library's functions are called through (`frontend::library`).
pub(super) const LIBRARY_MODULE: &str = "random";

/// The name `p` calls in the device library: `random::f`, `gpu_runtime::random::f` and
/// `::gpu_runtime::random::f` give `f`, whether or not the library has an `f`.
pub(super) fn library_name(p: &syn::Path) -> Option<String> {
    let segs: Vec<String> = p.segments.iter().map(|s| syntax::name(&s.ident)).collect();
    match segs.as_slice() {
        [m, f] if m == LIBRARY_MODULE && p.leading_colon.is_none() => Some(f.clone()),
        [c, m, f] if c == "gpu_runtime" && m == LIBRARY_MODULE => Some(f.clone()),
        _ => None,
    }
}

/// Whether `p` names one of the GPU built-ins (so it is not a function of the crate's to
/// fetch): `gpu::sync_threads`, `gpu::atomic::add`, `gpu_runtime::gpu::shared`, …
pub(super) fn is_gpu_builtin(p: &syn::Path) -> bool {
    match gpu_path(p).as_deref() {
        Some([name]) => {
            gpu_op(name).is_some()
                || shared_rank(name).is_some()
                || vector_access(name).is_some()
                || super::copies::copy_lanes(name).is_some()
                || name == "copy_async_wait"
        }
        Some([module, _]) => module == "atomic" || module == "mma",
        _ => false,
    }
}

fn gpu_op(name: &str) -> Option<GpuOp> {
    Some(match name {
        "thread_idx" => GpuOp::ThreadIdx,
        "block_idx" => GpuOp::BlockIdx,
        "block_dim" => GpuOp::BlockDim,
        "grid_dim" => GpuOp::GridDim,
        "grid1" => GpuOp::Grid(1),
        "grid2" => GpuOp::Grid(2),
        "grid3" => GpuOp::Grid(3),
        "gridsize1" => GpuOp::GridSize(1),
        "gridsize2" => GpuOp::GridSize(2),
        "gridsize3" => GpuOp::GridSize(3),
        "sync_threads" => GpuOp::SyncThreads,
        "sync_threads_count" => GpuOp::SyncThreadsCount,
        "sync_threads_and" => GpuOp::SyncThreadsAnd,
        "sync_threads_or" => GpuOp::SyncThreadsOr,
        "thread_fence" => GpuOp::ThreadFence,
        "thread_fence_block" => GpuOp::ThreadFenceBlock,
        "thread_fence_system" => GpuOp::ThreadFenceSystem,
        "lane_id" => GpuOp::LaneId,
        "active_mask" => GpuOp::ActiveMask,
        "shfl_sync" => GpuOp::Shfl,
        "shfl_up_sync" => GpuOp::ShflUp,
        "shfl_down_sync" => GpuOp::ShflDown,
        "shfl_xor_sync" => GpuOp::ShflXor,
        "ballot_sync" => GpuOp::Ballot,
        "all_sync" => GpuOp::AllSync,
        "any_sync" => GpuOp::AnySync,
        "syncwarp" => GpuOp::SyncWarp,
        "match_any_sync" => GpuOp::MatchAny,
        "match_all_sync" => GpuOp::MatchAll,
        "check_index" => GpuOp::CheckIndex,
        "copy_async_commit" => GpuOp::CopyAsyncCommit,
        "copy_async_wait_all" => GpuOp::CopyAsyncWaitAll,
        _ => return LaneMask::ALL.iter().find(|(n, _)| *n == name).map(|(_, m)| GpuOp::LaneMask(*m)),
    })
}
impl FnChecker<'_> {
    /// `gpu::name(args)`: `rest` is the path after `gpu::`.
    pub(super) fn gpu_call(&mut self, c: &syn::ExprCall, rest: &[String]) -> Expr {
        let span = c.span();
        let text = rest.join("::");
        if !self.prog.kernel {
            self.error(&c.func, format!("`gpu::{text}` is a GPU built-in of explicit kernels (`#[kernel]`): a vectorized function computes one element from its scalar arguments"));
            return self.error_expr(span);
        }
        if let [a, op] = rest {
            if a == "atomic" {
                return self.atomic_call(c, op);
            }
            if a == "mma" {
                return self.mma_call(c, op);
            }
        }
        let name = rest.join("::");
        if let Some((lanes, checked)) = super::copies::copy_lanes(&name) {
            return self.copy_async_call(c, &name, lanes, checked);
        }
        if name == "copy_async_wait" {
            return self.copy_async_wait(c);
        }
        if let Some((lanes, store)) = vector_access(&name) {
            return self.vector_call(c, &name, lanes, store);
        }
        if shared_rank(&name).is_some() {
            self.error(c, format!("`gpu::{name}` declares a shared array: call it as the value of a `let` (`let tile = gpu::shared::<f32, 256>();`)"));
            return self.error_expr(span);
        }
        let Some(op) = gpu_op(&name) else {
            self.error(&c.func, format!("unknown GPU built-in `gpu::{name}`: the built-ins are {BUILTINS}"));
            return self.error_expr(span);
        };
        let args: Vec<(Expr, &syn::Expr)> = c.args.iter().map(|a| (self.expr(a), a)).collect();
        let usize_tuple = |cx: &mut Self, n: u8| cx.prog.infer.tuple(vec![USIZE; n as usize]);
        let (params, ret): (Vec<Option<Type>>, Type) = match op {
            GpuOp::ThreadIdx | GpuOp::BlockIdx | GpuOp::BlockDim | GpuOp::GridDim => (vec![], Type::Dim3),
            GpuOp::Grid(1) | GpuOp::GridSize(1) => (vec![], USIZE),
            GpuOp::Grid(n) | GpuOp::GridSize(n) => (vec![], usize_tuple(self, n)),
            GpuOp::SyncThreads
            | GpuOp::ThreadFence
            | GpuOp::ThreadFenceBlock
            | GpuOp::ThreadFenceSystem
            | GpuOp::CopyAsyncCommit
            | GpuOp::CopyAsyncWait(_)
            | GpuOp::CopyAsyncWaitAll => (vec![], Type::Unit),
            GpuOp::SyncThreadsCount => (vec![Some(BOOL)], U32),
            GpuOp::SyncThreadsAnd | GpuOp::SyncThreadsOr => (vec![Some(BOOL)], BOOL),
            GpuOp::LaneId | GpuOp::ActiveMask | GpuOp::LaneMask(_) => (vec![], U32),
            GpuOp::SyncWarp => (vec![Some(U32)], Type::Unit),
            GpuOp::MatchAny => (vec![Some(U32), None], U32),
            GpuOp::MatchAll => {
                let pair = self.prog.infer.tuple(vec![U32, BOOL]);
                (vec![Some(U32), None], pair)
            }
            GpuOp::Ballot => (vec![Some(U32), Some(BOOL)], U32),
            GpuOp::AllSync | GpuOp::AnySync => (vec![Some(U32), Some(BOOL)], BOOL),
            GpuOp::CheckIndex => (vec![Some(USIZE), Some(USIZE)], USIZE),
            GpuOp::Shfl | GpuOp::ShflUp | GpuOp::ShflDown | GpuOp::ShflXor => {
                let t = args.get(1).map_or(Type::Error, |(v, _)| v.ty);
                (vec![Some(U32), None, Some(U32)], t)
            }
        };
        if args.len() != params.len() {
            let n = params.len();
            self.error_at(SpanRange::of(c), arity(&format!("gpu::{name}"), n, args.len()));
            return self.error_expr(span);
        }
        for ((a, src), want) in args.iter().zip(&params) {
            match want {
                Some(want) => {
                    if self.prog.infer.unify(a.ty, *want).is_err() {
                        let (w, found) = (self.prog.infer.describe(*want), self.prog.infer.describe(a.ty));
                        let hint = conversion_hint(src, &found, &w);
                        self.error(
                            *src,
                            format!("mismatched types: `gpu::{name}` takes a `{w}` here, found `{found}`{hint}"),
                        );
                    }
                }
                None => match self.prog.infer.shallow(a.ty) {
                    Type::Scalar(_) | Type::Infer(_) | Type::Error => {}
                    t => {
                        let found = self.prog.infer.describe(t);
                        let verb = if name.starts_with("match") { "compares" } else { "shuffles" };
                        self.error(
                            *src,
                            format!("`gpu::{name}` {verb} a scalar (f32, f64, integers, bool), not `{found}`"),
                        );
                    }
                },
            }
        }
        let args = args.into_iter().map(|(a, _)| a).collect();
        self.mk(ExprKind::Gpu(op, args), ret, span)
    }

    /// `gpu::atomic::op(array, index, args…)`.
    fn atomic_call(&mut self, c: &syn::ExprCall, op_name: &str) -> Expr {
        let span = c.span();
        let Some(&(_, op)) = AtomicOp::ALL.iter().find(|(n, _)| *n == op_name) else {
            let names: Vec<&str> = AtomicOp::ALL.iter().map(|(n, _)| *n).collect();
            self.error(
                &c.func,
                format!("unknown atomic operation `gpu::atomic::{op_name}`: the atomics are {}", names.join(", ")),
            );
            return self.error_expr(span);
        };
        let want_args = if op == AtomicOp::CompareAndSwap { 4 } else { 3 };
        if c.args.len() != want_args {
            self.error_at(
                SpanRange::of(c),
                format!(
                    "`gpu::atomic::{op_name}` takes {want_args} arguments (the array, the index{}), but {} were given",
                    if want_args == 4 { ", the expected value and the new value" } else { " and the value" },
                    c.args.len()
                ),
            );
            return self.error_expr(span);
        }
        let target = &c.args[0];
        let Some((local, a)) = self.array_local(target) else {
            self.error(
                target,
                format!("`gpu::atomic::{op_name}` works on a `&mut [T]` parameter or a shared array, named directly"),
            );
            return self.error_expr(span);
        };
        let name = self.array_name(local);
        let (elem, kind) = self.prog.arrays[a as usize].clone_parts();
        match kind {
            ArrayKind::Slice { mutable: false } => {
                self.error(
                    target,
                    format!(
                        "`gpu::atomic::{op_name}` writes `{name}`, which is behind a `&` reference: make it `&mut [T]`"
                    ),
                );
            }
            ArrayKind::Local { .. } => {
                self.error(target, format!("`gpu::atomic::{op_name}` works on a `&mut [T]` parameter or a shared array; `{name}` is the thread's own array: update it with `{name}[i] += v`"));
            }
            _ => {}
        }
        let index = self.array_index(a, &c.args[1], &name);
        let mut args = Vec::new();
        for v in c.args.iter().skip(2) {
            let e = self.expr(v);
            if self.prog.infer.unify(elem, e.ty).is_err() {
                let (want, found) = (self.prog.infer.describe(elem), self.prog.infer.describe(e.ty));
                let hint = conversion_hint(v, &found, &want);
                self.error(v, format!("mismatched types: `{name}` holds `{want}`, found `{found}`{hint}"));
            }
            args.push(e);
        }
        if let Type::Scalar(t) = self.prog.infer.shallow(elem) {
            if !op.types().contains(&t) {
                let names: Vec<&str> = op.types().iter().map(|t| t.rust_name()).collect();
                self.error(
                    &c.func,
                    format!("`gpu::atomic::{op_name}` is not supported on `{t}`: it supports {}", names.join(", ")),
                );
            }
        }
        let Some(index) = index else { return self.error_expr(span) };
        self.mk(ExprKind::Atomic { op, array: a, index, args }, elem, span)
    }

    /// `gpu::load2(a, i)`, `gpu::load4(a, i)`, `gpu::store2(a, i, v0, v1)` and
    /// `gpu::store4(a, i, v0, v1, v2, v3)`: `lanes` consecutive elements of a 1-D array
    /// (a slice parameter, a 1-D shared array, the dynamic shared memory or a view of one).
    fn vector_call(&mut self, c: &syn::ExprCall, name: &str, lanes: u32, store: bool) -> Expr {
        let span = c.span();
        let want_args = 2 + if store { lanes as usize } else { 0 };
        if c.args.len() != want_args {
            let what = if store {
                format!("the array, the index and {lanes} values")
            } else {
                "the array and the index".into()
            };
            self.error_at(
                SpanRange::of(c),
                format!("`gpu::{name}` takes {want_args} arguments ({what}), but {} were given", c.args.len()),
            );
            return self.error_expr(span);
        }
        let Some((array, a, elem)) = self.row_array(&c.args[0], name, store) else { return self.error_expr(span) };
        let index = self.usize_arg(&c.args[1], name, "a `usize` index");
        let mut values = Vec::new();
        for v in c.args.iter().skip(2) {
            let e = self.expr(v);
            if self.prog.infer.unify(elem, e.ty).is_err() {
                let (want, found) = (self.prog.infer.describe(elem), self.prog.infer.describe(e.ty));
                let hint = conversion_hint(v, &found, &want);
                self.error(v, format!("mismatched types: `{array}` holds `{want}`, found `{found}`{hint}"));
            }
            values.push(e);
        }
        let index = Box::new(index);
        if store {
            self.mk(ExprKind::StoreVector { array: a, index, values }, Type::Unit, span)
        } else {
            let ty = self.prog.infer.tuple(vec![elem; lanes as usize]);
            self.mk(ExprKind::LoadVector { array: a, index, lanes }, ty, span)
        }
    }

    /// The array `target` names for `gpu::{name}`, which works on a slice parameter, a 1-D
    /// shared array, the dynamic shared memory or a view of one (and writes it when
    /// `store`): the array's name, id and element type, its refusals reported. `None` (and
    /// an error) where `target` names no array.
    pub(super) fn row_array(&mut self, target: &syn::Expr, name: &str, store: bool) -> Option<(String, u32, Type)> {
        let Some((local, a)) = self.array_local(target) else {
            self.error(
                target,
                format!(
                    "`gpu::{name}` works on a slice parameter, a 1-D shared array or a view of one, named directly"
                ),
            );
            return None;
        };
        let array = self.array_name(local);
        let (elem, kind) = self.prog.arrays[a as usize].clone_parts();
        let refused = match kind {
            ArrayKind::Slice { mutable: false } if store => {
                Some(format!("`gpu::{name}` writes `{array}`, which is behind a `&` reference: make it `&mut [T]`"))
            }
            ArrayKind::Local { .. } => Some(format!(
                "`gpu::{name}` works on a slice parameter, a 1-D shared array or a view of one; `{array}` is the thread's own array: index it (`{array}[i]`)"
            )),
            ArrayKind::Shared { ref dims } if dims.len() > 1 => {
                Some(format!("`gpu::{name}` works on 1-D arrays; `{array}` is a {}-D shared array", dims.len()))
            }
            _ => None,
        };
        if let Some(message) = refused {
            self.error(target, message);
        }
        Some((array, a, elem))
    }

    /// `arg`, which `gpu::{name}` takes as a `usize` (`what` says which, in the message).
    pub(super) fn usize_arg(&mut self, arg: &syn::Expr, name: &str, what: &str) -> Expr {
        let e = self.expr(arg);
        if self.prog.infer.unify(e.ty, USIZE).is_err() {
            let found = self.prog.infer.describe(e.ty);
            let hint = conversion_hint(arg, &found, "usize");
            self.error(arg, format!("mismatched types: `gpu::{name}` takes {what}, found `{found}`{hint}"));
        }
        e
    }

    /// `t.x` of a `gpu::Dim3`.
    /// `d.x` of a `gpu::Dim3` `d` (`base`, already checked).
    pub(super) fn dim3_field(&mut self, f: &syn::ExprField, base: Expr) -> Expr {
        let span = f.span();
        let syn::Member::Named(m) = &f.member else { return self.error_expr(span) };
        let name = syntax::name(m);
        match self.prog.infer.shallow(base.ty) {
            Type::Dim3 => match name.as_str() {
                "x" | "y" | "z" => {
                    let i = (name.as_bytes()[0] - b'x') as usize;
                    self.mk(ExprKind::Field(Box::new(base), i), U32, span)
                }
                _ => {
                    self.error(m, format!("no field `{name}` on `gpu::Dim3`: its fields are `x`, `y` and `z`"));
                    self.error_expr(span)
                }
            },
            Type::Error => self.error_expr(span),
            t => {
                let found = self.prog.infer.describe(t);
                self.error(f, format!("no field `{name}` on `{found}`: a kernel reads the fields `x`, `y`, `z` of `gpu::Dim3` (`gpu::thread_idx().x`) and `re`, `im` of a complex number"));
                self.error_expr(span)
            }
        }
    }
}
