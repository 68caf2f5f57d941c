//! Signatures: parameters and results, and the scalar types written in a function.

use super::context::{FnChecker, FnSig, LocalKind, ProgramCx};
use super::diagnostics::TypeUse;
use super::{signature_types_in, syntax};
use crate::abi::MAX_OUTPUTS;
use crate::ir::{Param, RetType, Type};
use crate::ty::ScalarType;

pub(super) fn fn_sig(item: &syn::ItemFn, structs: Vec<(String, ScalarType)>) -> Option<FnSig> {
    signature_types_in(&item.sig, structs).ok().map(|(params, ret)| FnSig {
        name: syntax::name(&item.sig.ident),
        params,
        ret,
    })
}

impl ProgramCx {
    /// The checker type of a function result.
    pub(super) fn ret_type(&mut self, r: &RetType) -> Type {
        match r {
            RetType::Scalar(t) => Type::Scalar(*t),
            RetType::Tuple(ts) => {
                let elems = ts.iter().map(|t| Type::Scalar(*t)).collect();
                self.infer.tuple(elems)
            }
        }
    }
}

impl FnChecker<'_> {
    pub(super) fn signature(&mut self, sig: &syn::Signature) -> (Vec<Param>, Option<RetType>) {
        if let Some(a) = &sig.asyncness {
            self.error(
                a,
                format!(
                    "`async fn` cannot be vectorized: {} is a plain scalar function that runs once per element",
                    self.subject()
                ),
            );
        }
        if let Some(u) = &sig.unsafety {
            self.error(
                u,
                "`unsafe fn` cannot be vectorized: the kernel language has no unsafe operations, so drop `unsafe`",
            );
        }
        if let Some(abi) = &sig.abi {
            self.error(abi, format!("{} cannot declare an ABI (`extern`): remove it", self.subject()));
        }
        self.generic_names = sig.generics.type_params().map(|p| p.ident.to_string()).collect();
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            self.error(
                &sig.generics,
                format!("{} is compiled for concrete types: write `#[vectorize(types(f32, f64))]` to compile `fn f<T: Float>(…)` for each listed type, or use concrete types (`fn f(x: f32) -> f32`)", self.subject()),
            );
        }
        if let Some(v) = &sig.variadic {
            self.error(v, format!("{} cannot be variadic", self.subject()));
        }
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(r) => self.error(
                    r,
                    format!(
                        "{} cannot take `self`: write a free function whose parameters are scalars",
                        self.subject()
                    ),
                ),
                syn::FnArg::Typed(pt) => {
                    let Some((name, mutable, span)) = self.binding(&pt.pat, "parameter") else {
                        // The pattern's error says it all: bind its names quietly.
                        for (name, span) in syntax::pattern_names(&pt.pat) {
                            self.new_local(name, Type::Error, false, LocalKind::Param, span);
                        }
                        continue;
                    };
                    let ty = self.scalar_type(&pt.ty, TypeUse::Param);
                    let lty = ty.map_or(Type::Error, Type::Scalar);
                    let local = self.new_local(name.clone(), lty, mutable, LocalKind::Param, span);
                    if let Some(ty) = ty {
                        params.push(Param { name, ty, local, slice: None });
                    }
                }
            }
        }
        let ret = match &sig.output {
            syn::ReturnType::Default => {
                self.error_at(
                    sig.paren_token.span.close(),
                    format!("{} must return a value: add a return type such as `-> f32`", self.subject()),
                );
                None
            }
            syn::ReturnType::Type(_, ty) => match syntax::bare_type(ty) {
                // Several results: a tuple of scalars (each an output array).
                syn::Type::Tuple(t) if t.elems.len() > MAX_OUTPUTS => {
                    self.error(
                        t,
                        format!(
                            "{} returns at most {MAX_OUTPUTS} values (one output array each), not {}: return fewer, or split it into several functions",
                            self.subject(),
                            t.elems.len()
                        ),
                    );
                    None
                }
                syn::Type::Tuple(t) if !t.elems.is_empty() => {
                    let elems: Vec<Option<ScalarType>> =
                        t.elems.iter().map(|e| self.scalar_type(e, TypeUse::TupleElement)).collect();
                    elems.into_iter().collect::<Option<Vec<_>>>().map(RetType::Tuple)
                }
                _ => self.scalar_type(ty, TypeUse::Return).map(RetType::Scalar),
            },
        };
        (params, ret)
    }

    pub(super) fn scalar_type(&mut self, ty: &syn::Type, usage: TypeUse) -> Option<ScalarType> {
        match syntax::scalar_type(ty) {
            Ok(t) => Some(t),
            Err(syntax::TypeProblem::Named(n)) if self.lookup_struct(&n).is_some() => self.lookup_struct(&n),
            // A generic parameter: the signature's error already says generics are not supported.
            Err(syntax::TypeProblem::Named(n)) if self.generic_names.contains(&n) => None,
            Err(problem) => {
                let msg = usage.message(ty, problem);
                self.error(ty, msg);
                None
            }
        }
    }
}
