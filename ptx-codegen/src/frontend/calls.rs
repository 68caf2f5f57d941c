//! Calls: of the program's functions, of the scalar types' methods, and method calls.

use quote::ToTokens;
use syn::spanned::Spanned;

use super::context::FnChecker;
use super::context::SpanRange;
use super::diagnostics::{arity, conversion_hint};
use super::infer::VarKind;
use super::syntax;
use crate::intrinsic::{self, Lookup};
use crate::ir::{Expr, ExprKind, FnId, Type};
use crate::ty::ScalarType;

impl FnChecker<'_> {
    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall) -> Expr {
        if let Some((local, a)) = self.array_local(&m.receiver) {
            return self.array_method(m, local, a);
        }
        if let Some(t) = &m.turbofish {
            self.error(t, format!("generic arguments (`::<…>`) are not supported on methods in {}", self.subject()));
        }
        let recv = self.expr(&m.receiver);
        let args: Vec<(Expr, &syn::Expr)> = m.args.iter().map(|a| (self.expr(a), a)).collect();
        let name = syntax::name(&m.method);
        if self.complex_part(&recv).is_some() {
            return self.complex_method(&name, recv, args, SpanRange::of(m), &m.method);
        }
        self.builtin_call(&name, recv, args, SpanRange::of(m), &m.method)
    }

    /// `f32::sqrt(x)`, `i64::max(a, b)`, `SpecialMath::erf(x)` and (not yet) helper functions.
    pub(super) fn call(&mut self, c: &syn::ExprCall) -> Expr {
        let span = c.span();
        let path = match &*c.func {
            syn::Expr::Path(p) if p.qself.is_none() => Some(&p.path),
            _ => None,
        };
        if let Some(rest) = path.and_then(super::builtins::gpu_path) {
            return self.gpu_call(c, &rest);
        }
        // Numba's xoroshiro calls with two arguments were written out before the check
        // (`xoroshiro.rs`); the others have the wrong number.
        if path.and_then(super::builtins::library_name).is_some_and(|n| super::xoroshiro::CALLS.contains(&n.as_str())) {
            let callee = path.map(super::callees::path_key).unwrap_or_default();
            self.error_at(
                SpanRange::of(c),
                format!("`{callee}` takes 2 arguments (the states, a `&mut [u64]` holding state `i` at words `2i` and `2i + 1`, and the index `i`), but {} were given", c.args.len()),
            );
            return self.error_expr(span);
        }
        if let Some(e) = path.and_then(|p| self.complex_call(c, p)) {
            return e;
        }
        let segments: Vec<String> =
            path.map(|p| p.segments.iter().map(|s| syntax::name(&s.ident)).collect()).unwrap_or_default();
        let callee = match path {
            Some(p) => super::callees::path_key(p),
            None => syntax::render_tokens(c.func.to_token_stream()),
        };
        // `String::from("abc")`: the type is the problem, not the arguments it would take.
        if let [.., ty, _] = segments.as_slice() {
            if ty.starts_with(|c: char| c.is_ascii_uppercase()) && ty != "SpecialMath" {
                self.error(&c.func, format!("`{callee}` cannot run on the GPU: `{ty}` is not a scalar type; {subject} computes with f32, f64, integers, bool, half's f16 and bf16 and num-complex's Complex, and calls their methods (`f32::max(a, b)`), functions marked `#[gpu_runtime::device]` and functions nested in it", subject = self.subject()));
                return self.error_expr(span);
            }
        }
        let mut args: Vec<(Expr, &syn::Expr)> = c.args.iter().map(|a| (self.expr(a), a)).collect();
        if let Some(id) = path.filter(|_| !has_generic_args(path)).and_then(|_| self.lookup_fn(&callee)) {
            return self.call_fn(id, args, c, &callee);
        }
        if let Some((method, prefix)) = segments.split_last() {
            let prefix: Vec<&str> = prefix.iter().map(String::as_str).collect();
            let receiver_type = match prefix.as_slice() {
                [t] | ["std" | "core", "primitive", t] => ScalarType::from_name(t),
                ["half" | "gpu_runtime", t @ ("f16" | "bf16")] => ScalarType::from_name(t),
                _ => None,
            };
            if let Some(t) = receiver_type {
                if let Some(e) = self.half_conversion(t, method, &mut args, &callee, span) {
                    return e;
                }
            }
            // `T::from_f64(v)` of the `Float` trait, once `T` is a concrete float: `v as T`.
            if let (Some(t), "from_f64", [(v, src)]) = (receiver_type, method.as_str(), args.as_slice()) {
                if t.is_float() {
                    if self.prog.infer.unify(v.ty, Type::Scalar(ScalarType::F64)).is_err() {
                        let found = self.prog.infer.describe(v.ty);
                        self.error(*src, format!("mismatched types: `from_f64` takes a `f64`, found `{found}`"));
                    }
                    let v = args.remove(0).0;
                    return self.mk(ExprKind::Cast(Box::new(v)), Type::Scalar(t), span);
                }
            }
            let special = prefix.last() == Some(&"SpecialMath") && intrinsic::SPECIAL_MATH.contains(&method.as_str());
            // `SpecialMath::erf(v)` is `<_ as SpecialMath>::erf(v)`, a `fn(T) -> T`: as in
            // rustc, `T` may come from the context (`let y: f32 = SpecialMath::erf(1.0);`)
            // when `v` is an unsuffixed float, so the call takes `v`'s type variable.
            if special && args.len() == 1 && matches!(self.prog.infer.shallow(args[0].0.ty), Type::Infer(_)) {
                let float = self.prog.infer.fresh(VarKind::Float);
                if self.prog.infer.unify(args[0].0.ty, float).is_ok() {
                    if let Ok(sig) = intrinsic::method(method, ScalarType::F64) {
                        let (v, _) = args.remove(0);
                        let ty = v.ty;
                        return self.mk(ExprKind::Call(sig.intrinsic, vec![v]), ty, span);
                    }
                }
            }
            if (receiver_type.is_some() || special) && !args.is_empty() {
                let (recv, recv_src) = args.remove(0);
                if let Some(t) = receiver_type {
                    if self.prog.infer.unify(recv.ty, Type::Scalar(t)).is_err() {
                        let found = self.prog.infer.describe(recv.ty);
                        let hint = conversion_hint(recv_src, &found, t.rust_name());
                        self.error(
                            recv_src,
                            format!("mismatched types: `{callee}` takes a `{t}`, found `{found}`{hint}"),
                        );
                        return self.error_expr(span);
                    }
                }
                let name_tokens = path.and_then(|p| p.segments.last()).map(|s| s.ident.clone());
                return self.builtin_call(method, recv, args, SpanRange::of(c), &name_tokens);
            }
            if receiver_type.is_some() {
                self.error(c, format!("`{callee}` needs its receiver as the first argument, e.g. `{callee}(x)`"));
                return self.error_expr(span);
            }
        }
        if let Some(name) = path.and_then(super::builtins::library_name) {
            let names = super::library::public_names().join(", ");
            let numba = super::xoroshiro::CALLS.join(", ");
            self.error(&c.func, format!("cannot find function `{callee}`: the device library `gpu_runtime::random` has no public function `{name}`; it has {names}, and in kernels Numba's {numba} (`(states, i)`)"));
            return self.error_expr(span);
        }
        self.error(&c.func, format!("cannot find function `{callee}`: {subject} can call functions marked `#[gpu_runtime::device]`, functions nested in its body, and the methods of its scalar types (`x.sqrt()`, `f32::max(a, b)`)", subject = self.subject()));
        self.error_expr(span)
    }

    /// A call of a function of the program: arguments checked against its parameters.
    fn call_fn(&mut self, id: FnId, args: Vec<(Expr, &syn::Expr)>, c: &syn::ExprCall, callee: &str) -> Expr {
        let span = c.span();
        if let Some(from) = self.current {
            self.prog.calls.push((from, id, SpanRange::of(&c.func)));
        }
        let Some(sig) = self.prog.sigs[id.0 as usize].clone() else {
            // A function defined elsewhere and not fetched yet (the precheck), or one whose
            // signature's errors are reported with it: its parameter types are unknown, so
            // the arguments' types are not decided here (an unsuffixed `5000000000` passed
            // to an `i64` parameter must not default to `i32`).
            for (a, _) in &args {
                let _ = self.prog.infer.unify(a.ty, Type::Error);
            }
            return self.error_expr(span);
        };
        if args.len() != sig.params.len() {
            self.error_at(SpanRange::of(c), arity(callee, sig.params.len(), args.len()));
            return self.error_expr(span);
        }
        let mut checked = Vec::with_capacity(args.len());
        for ((a, src), want) in args.into_iter().zip(&sig.params) {
            if self.prog.infer.unify(a.ty, Type::Scalar(*want)).is_err() {
                let found = self.prog.infer.describe(a.ty);
                let hint = conversion_hint(src, &found, want.rust_name());
                self.error(src, format!("mismatched types: `{callee}` takes a `{want}` here, found `{found}`{hint}"));
            }
            checked.push(a);
        }
        let ty = self.prog.ret_type(&sig.ret);
        self.mk(ExprKind::CallFn(id, checked), ty, span)
    }

    /// A built-in method on `recv` with `args` (after the receiver).
    fn builtin_call(
        &mut self,
        name: &str,
        recv: Expr,
        args: Vec<(Expr, &syn::Expr)>,
        range: SpanRange,
        name_tokens: &dyn ToTokens,
    ) -> Expr {
        let span = range.0;
        let t = match self.prog.infer.shallow(recv.ty) {
            Type::Scalar(t) => t,
            Type::Error => return self.error_expr(span),
            ty @ Type::Infer(_) => {
                let msg = match self.prog.infer.kind(ty) {
                    Some(VarKind::Int) | Some(VarKind::Float) => format!(
                        "can't call method `{name}` on ambiguous numeric type `{}`: give the value a type, e.g. a suffixed literal (`2.0_f32`) or `let x: f32 = …;`",
                        self.prog.infer.describe(ty)
                    ),
                    _ => format!(
                        "type annotations needed before calling `{name}`: give the value a type, e.g. `let x: f32 = …;`"
                    ),
                };
                self.error(name_tokens, msg);
                return self.error_expr(span);
            }
            other => {
                let d = self.prog.infer.describe(other);
                self.error(name_tokens, format!("`{d}` has no method `{name}`"));
                return self.error_expr(span);
            }
        };
        // `h.to_f32()`, `h.to_f64()`: exact.
        if let ("to_f32" | "to_f64", true, true) = (name, t.is_half(), args.is_empty()) {
            let to = if name == "to_f32" { ScalarType::F32 } else { ScalarType::F64 };
            return self.mk(ExprKind::Cast(Box::new(recv)), Type::Scalar(to), span);
        }
        let sig = match intrinsic::method(name, t) {
            Ok(sig) => sig,
            Err(Lookup::WrongReceiver { receivers }) => {
                let on = receivers.join(" and ");
                let hint = if t.is_half() {
                    format!(": `{t}` computes math functions through `f32`, e.g. `{t}::from_f32(x.to_f32().{name}())`")
                } else {
                    String::new()
                };
                self.error(name_tokens, format!("`{name}` is a method of {on}, not of `{t}`{hint}"));
                return self.error_expr(span);
            }
            Err(Lookup::Unknown) => {
                let available = intrinsic::methods_of(t).join(", ");
                self.error(
                    name_tokens,
                    format!(
                        "unknown method `{name}` on `{t}`: the methods of `{t}` {subject} can call are {available}",
                        subject = self.subject()
                    ),
                );
                return self.error_expr(span);
            }
        };
        if args.len() != sig.args.len() {
            let n = sig.args.len();
            let plural = if n == 1 { "" } else { "s" };
            self.error_at(
                range,
                format!("`{t}::{name}` takes {n} argument{plural} besides the receiver, but {} were given", args.len()),
            );
            return self.error_expr(span);
        }
        let mut all = vec![recv];
        for ((a, src), want) in args.into_iter().zip(&sig.args) {
            if self.prog.infer.unify(a.ty, Type::Scalar(*want)).is_err() {
                let found = self.prog.infer.describe(a.ty);
                let hint = conversion_hint(src, &found, want.rust_name());
                self.error(src, format!("mismatched types: `{name}` expects a `{want}` here, found `{found}`{hint}"));
            }
            all.push(a);
        }
        self.mk(ExprKind::Call(sig.intrinsic, all), Type::Scalar(sig.ret), span)
    }
}

impl FnChecker<'_> {
    /// The conversions of the half types, which Rust spells as functions, not `as`:
    /// `f16::from_f32(x)` (and `from_f64`, and the `_const` forms), `f32::from(h)`,
    /// `f64::from(h)` and `f16::from(b)` of a `u8` or `i8`. `None`: not one of them.
    fn half_conversion(
        &mut self,
        t: ScalarType,
        method: &str,
        args: &mut Vec<(Expr, &syn::Expr)>,
        callee: &str,
        span: proc_macro2::Span,
    ) -> Option<Expr> {
        use ScalarType::{F32, F64, I8, U8};
        let from = match method {
            "from_f32" | "from_f32_const" if t.is_half() => F32,
            "from_f64" | "from_f64_const" if t.is_half() => F64,
            "from" => {
                let [(v, _)] = args.as_slice() else { return None };
                match (t, self.prog.infer.shallow(v.ty)) {
                    (F32 | F64, Type::Scalar(h)) if h.is_half() => h,
                    (h, Type::Scalar(small @ (I8 | U8))) if h.is_half() => small,
                    // `f16::from(x)` of anything else is no conversion Rust has.
                    (h, ty) if h.is_half() => {
                        let found = self.prog.infer.describe(ty);
                        self.error(args[0].1, format!("`{callee}` takes a `u8` or an `i8` (exactly representable), found `{found}`: for other values write `{h}::from_f32(x)`"));
                        return Some(self.error_expr(span));
                    }
                    _ => return None,
                }
            }
            _ => return None,
        };
        if args.len() != 1 {
            self.error_at(SpanRange(span, span), format!("`{callee}` takes 1 argument, but {} were given", args.len()));
            return Some(self.error_expr(span));
        }
        let (v, src) = args.remove(0);
        if self.prog.infer.unify(v.ty, Type::Scalar(from)).is_err() {
            let found = self.prog.infer.describe(v.ty);
            let hint = conversion_hint(src, &found, from.rust_name());
            self.error(src, format!("mismatched types: `{callee}` takes a `{from}`, found `{found}`{hint}"));
            return Some(self.error_expr(span));
        }
        Some(self.mk(ExprKind::Cast(Box::new(v)), Type::Scalar(t), span))
    }
}

fn has_generic_args(path: Option<&syn::Path>) -> bool {
    path.is_some_and(|p| p.segments.iter().any(|s| !s.arguments.is_none()))
}
