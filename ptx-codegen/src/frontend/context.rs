//! The two contexts a check runs in: the program's, shared by all its functions, and one
//! function's, fresh for each function body and `const` value; and the names in scope there.

use proc_macro2::Span;

use quote::ToTokens;

use super::infer::InferTable;
use crate::ir::{ArrayKind, Expr, FnId, Function, LocalId, LoopId, RetType, Type};
use crate::ty::ScalarType;

/// Where a variable comes from.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum LocalKind {
    /// A parameter of the function.
    Param,
    /// A `let`, a pattern binding, a loop variable or a value the checker introduces.
    Let,
    /// `let y;`: an immutable variable without an initialiser, assigned later. rustc checks
    /// the host copy of the function for what makes that valid (assigned once on every
    /// path before it is read); the kernel language accepts the assignments.
    Deferred,
}

/// A variable of the function being checked (a parameter, a `let`, a pattern binding).
pub(super) struct LocalInfo {
    pub(super) name: String,
    pub(super) ty: Type,
    pub(super) mutable: bool,
    pub(super) kind: LocalKind,
    pub(super) span: Span,
}

/// What the whole program's check shares: the diagnostics, the type inference and what it
/// must prove at the end, and the program's functions, constants and tuple types.
#[derive(Default)]
pub(super) struct ProgramCx {
    pub(super) errors: Vec<syn::Error>,
    pub(super) infer: InferTable,
    pub(super) obligations: Vec<Obligation>,
    /// The program's functions by [`FnId`], filled as they are checked.
    pub(super) functions: Vec<Option<Function>>,
    pub(super) sigs: Vec<Option<FnSig>>,
    pub(super) consts: Vec<ConstDef>,
    /// Calls between the program's functions: (caller, callee, where).
    pub(super) calls: Vec<(FnId, FnId, SpanRange)>,
    /// Numbers the loops through the whole program, not per function.
    pub(super) next_loop: u32,
    /// The program's tuple types, after inference ([`Program::tuples`](crate::ir::Program::tuples)).
    pub(super) tuples: Vec<Vec<ScalarType>>,
    /// Whether the program may use the kernel language (arrays and `gpu::` built-ins): an
    /// explicit kernel's, or a device function's checked by itself.
    pub(super) kernel: bool,
    /// Whether the entry function is an explicit kernel (slices in, nothing out).
    pub(super) kernel_entry: bool,
    /// The program's arrays ([`Type::Array`]).
    pub(super) arrays: Vec<ArrayDecl>,
}

/// The check of one function body (or of one `const` item's value): its variables, scopes
/// and loops, over the program's shared state.
pub(super) struct FnChecker<'p> {
    pub(super) prog: &'p mut ProgramCx,
    pub(super) locals: Vec<LocalInfo>,
    pub(super) scopes: Vec<Vec<(String, LocalId)>>,
    pub(super) loops: Vec<LoopFrame>,
    /// The current function's result type (a scalar or a tuple).
    pub(super) ret: Option<Type>,
    /// The signature's type parameters: the signature reports them, so their uses say nothing more.
    pub(super) generic_names: Vec<String>,
    /// The functions and constants visible here, innermost last.
    pub(super) item_scopes: Vec<ItemScope>,
    /// The function whose calls these are (for the call graph).
    pub(super) current: Option<FnId>,
    /// The variables of the functions around a nested one, for a better message when it
    /// uses one (Rust's nested functions cannot).
    pub(super) outer_locals: Vec<String>,
    /// How many `unsafe` blocks are around the expression being checked.
    pub(super) unsafe_depth: u32,
    /// Set while checking the operand of a `*` (`*s.get_unchecked(i)`), until the method
    /// call takes it.
    pub(super) under_deref: bool,
}

impl<'p> FnChecker<'p> {
    pub(super) fn new(
        prog: &'p mut ProgramCx,
        current: Option<FnId>,
        item_scopes: Vec<ItemScope>,
        outer_locals: Vec<String>,
    ) -> FnChecker<'p> {
        FnChecker {
            prog,
            locals: Vec::new(),
            scopes: Vec::new(),
            loops: Vec::new(),
            ret: None,
            generic_names: Vec::new(),
            item_scopes,
            current,
            outer_locals,
            unsafe_depth: 0,
            under_deref: false,
        }
    }

    pub(super) fn new_local(&mut self, name: String, ty: Type, mutable: bool, kind: LocalKind, span: Span) -> LocalId {
        self.locals.push(LocalInfo { name, ty, mutable, kind, span });
        LocalId(self.locals.len() as u32 - 1)
    }

    pub(super) fn declare(&mut self, name: String, ty: Type, mutable: bool, span: Span) -> LocalId {
        self.declare_as(name, ty, mutable, LocalKind::Let, span)
    }

    pub(super) fn declare_as(&mut self, name: String, ty: Type, mutable: bool, kind: LocalKind, span: Span) -> LocalId {
        let id = self.new_local(name.clone(), ty, mutable, kind, span);
        if name != "_" {
            self.scopes.last_mut().expect("a scope is open").push((name, id));
        }
        id
    }

    /// What the program is, as messages name it: "a vectorized function", "a kernel" or
    /// "a device function" (one checked by itself).
    pub(super) fn subject(&self) -> &'static str {
        match self.prog.entry_kind() {
            "kernel" => "a kernel",
            "device function" => "a device function",
            _ => "a vectorized function",
        }
    }

    pub(super) fn lookup(&self, name: &str) -> Option<LocalId> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == name).map(|(_, id)| *id)
    }

    /// A constant declared by a `const` item in scope.
    pub(super) fn lookup_const(&self, name: &str) -> Option<usize> {
        self.item_scopes.iter().rev().flat_map(|s| s.consts.iter().rev()).find(|(n, _)| n == name).map(|(_, i)| *i)
    }

    /// A function in scope: a nested `fn`, or a helper called by this path.
    pub(super) fn lookup_fn(&self, path: &str) -> Option<FnId> {
        self.item_scopes.iter().rev().flat_map(|s| s.fns.iter().rev()).find(|(n, _)| n == path).map(|(_, f)| *f)
    }

    /// The user struct the path `path` names here.
    pub(super) fn lookup_struct(&self, path: &str) -> Option<ScalarType> {
        self.item_scopes.iter().rev().flat_map(|s| s.structs.iter().rev()).find(|(n, _)| n == path).map(|(_, t)| *t)
    }
}

// The data the checks share, next to the context that holds it.

/// Types the kernel checks name often.
pub(super) const USIZE: Type = Type::Scalar(ScalarType::Usize);
pub(super) const U32: Type = Type::Scalar(ScalarType::U32);
pub(super) const BOOL: Type = Type::Scalar(ScalarType::Bool);

/// The first and last token of a piece of syntax: an error over it underlines all of it
/// (on stable Rust a `Span` cannot be joined, so a single span is one token).
#[derive(Copy, Clone)]
pub(super) struct SpanRange(pub(super) Span, pub(super) Span);

impl SpanRange {
    pub(super) fn of(node: &impl ToTokens) -> SpanRange {
        let mut tokens = node.to_token_stream().into_iter();
        let first = tokens.next().map_or_else(Span::call_site, |t| t.span());
        let last = tokens.last().map_or(first, |t| t.span());
        SpanRange(first, last)
    }
}

impl From<Span> for SpanRange {
    fn from(s: Span) -> SpanRange {
        SpanRange(s, s)
    }
}

/// Functions and constants declared by items: a block's nested `fn`s and `const`s, or the
/// helpers a top-level function calls (keyed by the path it calls them by).
#[derive(Clone, Default)]
pub(super) struct ItemScope {
    pub(super) fns: Vec<(String, FnId)>,
    pub(super) consts: Vec<(String, usize)>,
    /// The user structs the item names, by the path it writes (`#[derive(GpuType)]`).
    pub(super) structs: Vec<(String, ScalarType)>,
}

pub(super) struct ConstDef {
    /// The checked value, inlined at each use (`None` after an error).
    pub(super) value: Option<Expr>,
}

#[derive(Copy, Clone, PartialEq, Eq)]
pub(super) enum LoopKind {
    Loop,
    While,
    For,
}

pub(super) struct LoopFrame {
    pub(super) id: LoopId,
    pub(super) label: Option<String>,
    pub(super) kind: LoopKind,
    /// The type of the `loop`'s value, given by its `break`s.
    pub(super) value_ty: Type,
    pub(super) has_break: bool,
}

/// A requirement on a type that may not be known until inference ends.
#[derive(Clone)]
pub(super) enum Require {
    /// `+ - * / %`: an integer or float type.
    Numeric(&'static str),
    /// Unary `-`: a signed integer or a float.
    Negatable,
    /// `& | ^ !`: an integer or `bool`.
    IntOrBool(&'static str),
    /// Shift operands: an integer.
    Int(&'static str),
    /// An integer literal's value fits its type.
    Fits(i128),
    /// `as` between these types is allowed.
    CastTo(ScalarType),
    /// A comparison's operands: a scalar, not `()`.
    Comparable,
    /// A `match` scrutinee: an integer or `bool`.
    Matchable,
}

pub(super) struct Obligation {
    pub(super) ty: Type,
    pub(super) req: Require,
    pub(super) span: SpanRange,
}

#[derive(Clone)]
pub(super) struct FnSig {
    pub(super) name: String,
    pub(super) params: Vec<ScalarType>,
    pub(super) ret: RetType,
}

/// How an assignment writes its place.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum Write {
    /// `x = v`: also gives a `let x;` its value.
    Assign,
    /// `x += v` and the other compound assignments: read, then write.
    Update,
}

/// The array table of the program's check: element type (an inference type until the end)
/// and kind, with where it is declared.
#[derive(Clone)]
pub(super) struct ArrayDecl(pub(super) Type, pub(super) ArrayKind, pub(super) Span);

impl ArrayDecl {
    pub(super) fn clone_parts(&self) -> (Type, ArrayKind) {
        (self.0, self.1.clone())
    }
}
