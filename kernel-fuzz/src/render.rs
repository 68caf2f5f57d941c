//! Programs as Rust source.
//!
//! The one subtle part is where a literal may be written without its suffix: only where
//! rustc gives it the generator's type. rustc unifies the literal with the other members
//! of its class (the operands of `+`, both sides of `<`, the branches of an `if`, the
//! value of a `let` with its declared type, an argument with its parameter, …) and, when
//! nothing in the class has a type, falls back to `i32` or `f64`. A cast gives a literal
//! directly under it (through `-`, `!`, parentheses and block tails, not through binary
//! operators or `if`) the cast's type as a hint; a method's receiver must have a type of
//! its own. The renderer follows the same rules, so a bare literal has the same type for
//! rustc, for the kernel compiler and for the interpreter; where the rules would give it
//! another type than the generator's, the literal gets its suffix.

use crate::ast::*;
use crate::ty::{Ty, Value};

/// What the surroundings tell rustc about the type of an expression's class.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Ctx {
    /// The type is known from outside (a declared type, a parameter, the other operand).
    Anchored,
    /// Nothing outside gives a type: an untyped class falls back to `i32`/`f64`.
    Free,
    /// The class must have a type of its own (a method's receiver, a `match` scrutinee).
    Forced,
    /// Directly under `as T`.
    Hint(Ty),
}

/// The program as Rust items (no attributes on functions, not `pub`): its structs (with
/// `#[derive(Clone, Copy)]` and `#[repr(C)]`) and helpers, each followed by a blank line,
/// then the function.
pub fn render(p: &Program) -> String {
    let mut out = String::new();
    for d in &p.structs {
        out.push_str(&render_struct(d, "Clone, Copy", false));
        out.push_str("\n\n");
    }
    for h in &p.helpers {
        out.push_str(&render_fn(h));
        out.push_str("\n\n");
    }
    out.push_str(&render_fn(&p.func));
    out
}

/// A struct definition with these derives and `#[repr(C)]`, `pub` where asked, its fields
/// `pub`.
pub fn render_struct(d: &StructDef, derives: &str, public: bool) -> String {
    let fields: Vec<String> = d.fields.iter().map(|(n, t)| format!("    pub {n}: {},", t.rust())).collect();
    let vis = if public { "pub " } else { "" };
    format!("#[derive({derives})]\n#[repr(C)]\n{vis}struct {} {{\n{}\n}}", d.name, fields.join("\n"))
}

/// One function (the program's, or a helper) as a Rust function item (no attributes, not
/// `pub`).
pub fn render_fn(f: &FnItem) -> String {
    let mut r = Printer { out: String::new(), indent: 0, loops: Vec::new(), deferred: Vec::new() };
    r.func(f);
    r.out
}

/// Statements of a function's body, as the body of another function (an explicit
/// kernel) holds them among its own, each on a line of its own at `indent` levels. A
/// `let` without a type gets its type from its value (its literals suffixed where nothing
/// else types them): the statements after it are not these.
pub(crate) fn render_stmts(stmts: &[Stmt], indent: usize) -> String {
    let mut r = Printer { out: String::new(), indent, loops: Vec::new(), deferred: Vec::new() };
    for (i, s) in stmts.iter().enumerate() {
        if i > 0 {
            r.nl();
        }
        match s {
            Stmt::Let { annotated: false, init: Some(_), .. } => r.let_stmt(s, Ctx::Forced),
            _ => r.stmt(s),
        }
    }
    r.out
}

/// An expression where nothing outside gives it its type (its literals suffixed where
/// nothing in it types them), at `indent` levels.
pub(crate) fn render_expr(e: &Expr, indent: usize) -> String {
    let mut r = Printer { out: String::new(), indent, loops: Vec::new(), deferred: Vec::new() };
    r.expr(e, Ctx::Forced);
    r.out
}

/// Whether an expression's class gets a type from the expression itself (some member is
/// typed: a variable, a call, a cast, a suffixed literal, …).
fn typed(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Lit(l) => !l.bare || l.value.ty() == Ty::Bool,
        ExprKind::Var(_)
        | ExprKind::Const(_)
        | ExprKind::PathConst(..)
        | ExprKind::Cast(_)
        | ExprKind::Call(_)
        | ExprKind::Field(..) => true,
        // `SpecialMath::erf(x)` has `x`'s type, whatever it turns out to be.
        ExprKind::Method { method, recv, path: true, .. } if method.is_special() => typed(recv),
        ExprKind::Method { .. } => true,
        ExprKind::Unary(_, a) => typed(a),
        ExprKind::Binary(op, a, b) => {
            if op.is_comparison() || op.is_logical() {
                true
            } else if op.is_shift() {
                typed(a)
            } else {
                typed(a) || typed(b)
            }
        }
        ExprKind::If { then, els, .. } => block_typed(then) || block_typed(els),
        ExprKind::Match { arms, .. } => arms.iter().any(|a| typed(&a.body)),
        ExprKind::Block(b) => block_typed(b),
        ExprKind::Loop { label, body } => loop_breaks(body, label.as_deref()).iter().any(|v| typed(v)),
        // A half or complex type's conversions and constructors name their type (a
        // spelling that takes it from a part is written only where a part is typed).
        ExprKind::Func { .. } => true,
    }
}

fn block_typed(b: &Block) -> bool {
    matches!(&b.tail, Some(Tail::Scalar(e)) if typed(e))
}

/// The context of the members of `e`'s class, given the context of `e`.
fn class_ctx(e: &Expr, ctx: Ctx) -> Ctx {
    if ctx == Ctx::Anchored || typed(e) {
        Ctx::Anchored
    } else if ctx == Ctx::Forced {
        Ctx::Forced
    } else {
        Ctx::Free
    }
}

/// Whether a literal may be written bare in `ctx` and keep its type.
fn bare_ok(l: &Lit, ctx: Ctx) -> bool {
    let t = l.value.ty();
    if t == Ty::Bool {
        return true;
    }
    l.bare
        && match ctx {
            Ctx::Anchored => true,
            Ctx::Free => t == t.fallback(),
            Ctx::Forced => false,
            // The hint applies to a literal of its own kind (an integer literal under an
            // integer cast, a float literal under a float cast).
            Ctx::Hint(h) if h.is_float() == t.is_float() => h == t,
            Ctx::Hint(_) => t == t.fallback(),
        }
}

/// A number as Rust writes it (no sign for `-0.0` handled by the caller).
fn number(v: Value, style: u8) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::F32(x) => format!("{:?}", x.abs()),
        Value::F64(x) => format!("{:?}", x.abs()),
        _ => {
            let x = v.as_i128().unwrap().unsigned_abs();
            match style {
                1 => format!("0x{x:X}"),
                2 => format!("0b{x:b}"),
                3 => format!("0o{x:o}"),
                4 => {
                    let d = x.to_string();
                    let mut s = String::new();
                    for (i, c) in d.chars().enumerate() {
                        if i > 0 && (d.len() - i) % 3 == 0 {
                            s.push('_');
                        }
                        s.push(c);
                    }
                    s
                }
                _ => x.to_string(),
            }
        }
    }
}

fn negative(v: Value) -> bool {
    match v {
        Value::F32(x) => x.is_sign_negative(),
        Value::F64(x) => x.is_sign_negative(),
        _ => v.as_i128().is_some_and(|x| x < 0),
    }
}

/// A literal's text: `-5i8`, `0x1F`, `2.5`.
fn literal_text(v: Value, style: u8, suffix: bool) -> String {
    let sign = if negative(v) { "-" } else { "" };
    let suffix = if suffix && v.ty() != Ty::Bool { v.ty().name() } else { "" };
    format!("{sign}{}{suffix}", number(v, style))
}

struct Printer {
    out: String,
    indent: usize,
    /// The enclosing loops: their labels and, for a `loop` with a value, the context of
    /// the values its `break`s carry.
    loops: Vec<(Option<String>, Option<Ctx>)>,
    /// Variables declared `let x;` without a type: their assignments give it.
    deferred: Vec<String>,
}

impl Printer {
    fn w(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn nl(&mut self) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
    }

    fn func(&mut self, f: &FnItem) {
        let outer = std::mem::take(&mut self.loops);
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| {
                let (m, raw) = (if p.mutable { "mut " } else { "" }, if p.raw { "r#" } else { "" });
                format!("{m}{raw}{}: {}", p.name, p.ty.name())
            })
            .chain(
                f.struct_params.iter().map(|p| format!("{}{}: {}", if p.mutable { "mut " } else { "" }, p.name, p.ty)),
            )
            .collect();
        self.w(&format!("fn {}({}) -> {} ", f.name, params.join(", "), f.ret.rust()));
        self.block(&f.body, Ctx::Anchored);
        self.loops = outer;
    }

    fn in_loop(&mut self, label: &Option<String>, value: Option<Ctx>, body: &Block) {
        self.loops.push((label.clone(), value));
        self.block(body, Ctx::Anchored);
        self.loops.pop();
    }

    /// `{ stmts tail }`; the tail in `tail_ctx`.
    fn block(&mut self, b: &Block, tail_ctx: Ctx) {
        self.w("{");
        self.indent += 1;
        for (i, s) in b.stmts.iter().enumerate() {
            self.nl();
            match s {
                // A variable whose value has no type of its own stays `{integer}` until
                // rustc sees the rest of the function, and a method cannot be called on it.
                Stmt::Let { name, annotated: false, init: Some(_), .. }
                    if receiver_later(name, &b.stmts[i + 1..], b.tail.as_ref()) =>
                {
                    self.let_stmt(s, Ctx::Forced);
                }
                // rustc types the value from a later use: `let x = 5; let y: u8 = x;`.
                Stmt::Let { name, annotated: false, init: Some(_), .. } if typed_later(name, &b.stmts[i + 1..]) => {
                    self.let_stmt(s, Ctx::Anchored);
                }
                _ => self.stmt(s),
            }
        }
        if let Some(t) = &b.tail {
            self.nl();
            self.tail(t, tail_ctx);
        }
        self.indent -= 1;
        self.nl();
        self.w("}");
    }

    fn tail(&mut self, t: &Tail, ctx: Ctx) {
        match t {
            Tail::Scalar(e) => self.expr(e, ctx),
            Tail::Tuple(es) => {
                self.w("(");
                self.list(es);
                self.w(if es.len() == 1 { ",)" } else { ")" });
            }
            Tail::Struct(init) => self.struct_init(init),
        }
    }

    fn struct_init(&mut self, init: &StructInit) {
        match init {
            StructInit::Literal(l) => self.struct_lit(l),
            StructInit::Copy { from, .. } => self.w(from),
            StructInit::Call(c) => self.call(c),
        }
    }

    fn struct_lit(&mut self, l: &StructLit) {
        self.w(&format!("{} {{ ", l.name));
        for (i, (name, f)) in l.fields.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.w(&format!("{name}: "));
            match f {
                FieldInit::Scalar(e) => self.expr(e, Ctx::Anchored),
                FieldInit::Array(es) => {
                    self.w("[");
                    self.list(es);
                    self.w("]");
                }
                FieldInit::Struct(inner) => self.struct_lit(inner),
            }
        }
        self.w(" }");
    }

    fn label(&mut self, label: &Option<String>) {
        if let Some(l) = label {
            self.w(&format!("'{l}: "));
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Const(c) => {
                self.w(&format!("const {}: {} = ", c.name, c.ty.name()));
                self.expr(&c.value, Ctx::Anchored);
                self.w(";");
            }
            Stmt::Fn(f) => self.func(f),
            Stmt::Let { .. } => self.let_stmt(s, Ctx::Free),
            Stmt::LetTuple { names, call } => {
                let pats: Vec<String> = names
                    .iter()
                    .map(|n| match n {
                        Some((name, true)) => format!("mut {name}"),
                        Some((name, false)) => name.clone(),
                        None => "_".to_string(),
                    })
                    .collect();
                let pats = if pats.len() == 1 { format!("({},)", pats[0]) } else { format!("({})", pats.join(", ")) };
                self.w(&format!("let {pats} = "));
                self.call(call);
                self.w(";");
            }
            Stmt::LetStruct { name, mutable, init, .. } => {
                self.w(&format!("let {}{name} = ", if *mutable { "mut " } else { "" }));
                self.struct_init(init);
                self.w(";");
            }
            Stmt::AssignStruct { name, init, .. } => {
                self.w(&format!("{name} = "));
                self.struct_init(init);
                self.w(";");
            }
            Stmt::Assign { name, op, value } => {
                let op_s = op.map_or(String::new(), |o| o.symbol().to_string());
                self.w(&format!("{name} {op_s}= "));
                let ctx = if op.is_some_and(BinOp::is_shift) {
                    Ctx::Free
                } else if self.deferred.contains(name) {
                    Ctx::Forced
                } else {
                    Ctx::Anchored
                };
                self.expr(value, ctx);
                self.w(";");
            }
            Stmt::Expr(e, let_underscore) => {
                if *let_underscore {
                    self.w("let _ = ");
                }
                // Block-like expressions are parenthesised, so this is never an `if` statement.
                self.expr(e, Ctx::Free);
                self.w(";");
            }
            Stmt::If { cond, then, els } => self.if_stmt(cond, then, els.as_ref()),
            Stmt::While { label, cond, body } => {
                self.label(label);
                self.w("while ");
                self.expr(cond, Ctx::Anchored);
                self.w(" ");
                self.in_loop(label, None, body);
            }
            Stmt::For { label, var, range, body } => {
                self.label(label);
                let mutable = body_assigns(body, var);
                self.w(&format!("for {}{var} in ", if mutable { "mut " } else { "" }));
                self.range(range, var, body);
                self.w(" ");
                self.in_loop(label, None, body);
            }
            Stmt::Loop { label, body } => {
                self.label(label);
                self.w("loop ");
                self.in_loop(label, None, body);
            }
            Stmt::Break { label, value } => {
                self.w("break");
                if let Some(l) = label {
                    self.w(&format!(" '{l}"));
                }
                if let Some(v) = value {
                    let target = match label {
                        Some(l) => self.loops.iter().rev().find(|(name, _)| name.as_ref() == Some(l)),
                        None => self.loops.last(),
                    };
                    let ctx = target.and_then(|t| t.1).expect("a `break` with a value targets a `loop` with a value");
                    self.w(" ");
                    self.expr(v, ctx);
                }
                self.w(";");
            }
            Stmt::Continue { label } => {
                self.w("continue");
                if let Some(l) = label {
                    self.w(&format!(" '{l}"));
                }
                self.w(";");
            }
            Stmt::Return(t) => {
                self.w("return ");
                self.tail(t, Ctx::Anchored);
                self.w(";");
            }
        }
    }

    /// `let`; an initialiser without a declared type in `free_ctx`.
    fn let_stmt(&mut self, s: &Stmt, free_ctx: Ctx) {
        let Stmt::Let { name, mutable, annotated, ty, init } = s else { unreachable!() };
        self.w(&format!("let {}{name}", if *mutable { "mut " } else { "" }));
        if *annotated {
            self.w(&format!(": {}", ty.name()));
        }
        match init {
            Some(e) => {
                self.w(" = ");
                self.expr(e, if *annotated { Ctx::Anchored } else { free_ctx });
            }
            None if !annotated => self.deferred.push(name.clone()),
            None => {}
        }
        self.w(";");
    }

    fn if_stmt(&mut self, cond: &Expr, then: &Block, els: Option<&Block>) {
        self.w("if ");
        self.expr(cond, Ctx::Anchored);
        self.w(" ");
        self.block(then, Ctx::Anchored);
        if let Some(e) = els {
            self.w(" else ");
            match (e.stmts.as_slice(), &e.tail) {
                ([Stmt::If { cond, then, els }], None) => self.if_stmt(cond, then, els.as_ref()),
                _ => self.block(e, Ctx::Anchored),
            }
        }
    }

    fn range(&mut self, r: &RangeLoop, var: &str, body: &Block) {
        let ctx = if typed(&r.start) || typed(&r.end) {
            Ctx::Anchored
        } else if receiver_later(var, &body.stmts, body.tail.as_ref()) {
            Ctx::Forced
        } else {
            Ctx::Free
        };
        self.w("(");
        self.expr(&r.start, ctx);
        self.w(if r.inclusive { "..=" } else { ".." });
        self.expr(&r.end, ctx);
        self.w(")");
        if r.rev {
            self.w(".rev()");
        }
        if let Some(s) = &r.step {
            self.w(".step_by(");
            self.expr(s, Ctx::Anchored);
            self.w(")");
        }
    }

    /// `a, b, c`, each where its type is known from outside.
    fn list(&mut self, es: &[Expr]) {
        for (i, e) in es.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.expr(e, Ctx::Anchored);
        }
    }

    fn call(&mut self, c: &Call) {
        self.w(&format!("{}(", c.func));
        self.list(&c.args);
        for (i, a) in c.structs.iter().enumerate() {
            if i + c.args.len() > 0 {
                self.w(", ");
            }
            self.w(&a.name);
        }
        self.w(")");
    }

    fn expr(&mut self, e: &Expr, ctx: Ctx) {
        match &e.kind {
            ExprKind::Lit(l) => {
                let text = literal_text(l.value, l.style, !bare_ok(l, ctx));
                if negative(l.value) {
                    self.w(&format!("({text})"));
                } else {
                    self.w(&text);
                }
            }
            ExprKind::Var(n) | ExprKind::Const(n) | ExprKind::PathConst(n, _) => self.w(n),
            // rustc reads `-(-128i8)` as `128i8` negated twice, and 128 does not fit.
            ExprKind::Unary(UnOp::Neg, a) if matches!(&a.kind, ExprKind::Lit(l) if is_min(l.value)) => {
                self.w(&format!("(-{}::MIN)", a.ty.name()));
            }
            ExprKind::Unary(op, a) => {
                self.w(if *op == UnOp::Neg { "(-" } else { "(!" });
                let inner = match ctx {
                    Ctx::Hint(_) => ctx,
                    _ => class_ctx(e, ctx),
                };
                self.expr(a, inner);
                self.w(")");
            }
            ExprKind::Binary(op, a, b) => {
                let (ca, cb) = if op.is_comparison() {
                    let c = if typed(a) || typed(b) { Ctx::Anchored } else { Ctx::Free };
                    (c, c)
                } else if op.is_logical() {
                    (Ctx::Anchored, Ctx::Anchored)
                } else if op.is_shift() {
                    (class_ctx(e, ctx), Ctx::Free)
                } else {
                    let c = class_ctx(e, ctx);
                    (c, c)
                };
                self.w("(");
                self.expr(a, ca);
                self.w(&format!(" {} ", op.symbol()));
                self.expr(b, cb);
                self.w(")");
            }
            ExprKind::Cast(a) => {
                self.w("(");
                self.expr(a, Ctx::Hint(e.ty));
                self.w(&format!(" as {})", e.ty.name()));
            }
            ExprKind::Method { method, recv, args, path } => {
                let info = method.info();
                if *path {
                    let owner = if method.is_special() { "SpecialMath" } else { recv.ty.path_name() };
                    self.w(&format!("{owner}::{}(", info.name));
                    // `SpecialMath::erf(x)` takes `x`'s type from the result's class.
                    let ctx = if method.is_special() { class_ctx(e, ctx.no_hint()) } else { Ctx::Anchored };
                    self.expr(recv, ctx);
                    for a in args {
                        self.w(", ");
                        self.expr(a, Ctx::Anchored);
                    }
                } else {
                    self.receiver(recv);
                    self.w(&format!(".{}(", info.name));
                    self.list(args);
                }
                self.w(")");
            }
            ExprKind::Call(c) => self.call(c),
            ExprKind::Field(c, k) => {
                self.call(c);
                self.w(&format!(".{k}"));
            }
            ExprKind::If { cond, then, els } => {
                let c = class_ctx(e, ctx.no_hint());
                self.w("(");
                self.if_expr(cond, then, els, c);
                self.w(")");
            }
            ExprKind::Match { scrutinee, arms } => {
                let c = class_ctx(e, ctx.no_hint());
                self.w("(match ");
                self.expr(scrutinee, Ctx::Forced);
                self.w(" {");
                self.indent += 1;
                for arm in arms {
                    self.nl();
                    self.pat(&arm.pat, true);
                    if let Some(g) = &arm.guard {
                        self.w(" if ");
                        self.expr(g, Ctx::Anchored);
                    }
                    self.w(" => ");
                    self.expr(&arm.body, c);
                    self.w(",");
                }
                self.indent -= 1;
                self.nl();
                self.w("})");
            }
            ExprKind::Block(b) => {
                // A cast's hint reaches a block's tail.
                let c = match ctx {
                    Ctx::Hint(_) => ctx,
                    _ => class_ctx(e, ctx),
                };
                self.w("(");
                self.block(b, c);
                self.w(")");
            }
            ExprKind::Loop { label, body } => {
                let c = class_ctx(e, ctx.no_hint());
                self.w("(");
                self.label(label);
                self.w("loop ");
                self.in_loop(label, Some(c), body);
                self.w(")");
            }
            ExprKind::Func { func, args, spelling } => self.func_expr(e.ty, *func, args, *spelling),
        }
    }

    /// A method's receiver or a field's owner: parenthesised unless it is a name, a call or
    /// a method call.
    fn receiver(&mut self, recv: &Expr) {
        let atomic = matches!(recv.kind, ExprKind::Var(_) | ExprKind::Call(_) | ExprKind::Method { .. });
        if atomic {
            self.expr(recv, Ctx::Forced);
        } else {
            self.w("(");
            self.expr(recv, Ctx::Forced);
            self.w(")");
        }
    }

    /// A conversion, constructor or part of a half or complex type ([`Func`] lists the
    /// spellings).
    fn func_expr(&mut self, ty: Ty, func: Func, args: &[Expr], spelling: u8) {
        let t = ty.name();
        // The complex type's alias (`Complex32`), its turbofish (`Complex::<f32>`) and its
        // shorthand constructor (`c32`).
        let width = |t: Ty| if t == Ty::C32 { "32" } else { "64" };
        let parts_typed = args.iter().any(typed);
        match func {
            Func::FromF32 | Func::FromF64 => {
                let from = if func == Func::FromF32 { "f32" } else { "f64" };
                let suffix = if spelling == 1 { "_const" } else { "" };
                self.w(&format!("{t}::from_{from}{suffix}("));
                self.expr(&args[0], Ctx::Anchored);
                self.w(")");
            }
            Func::FromSmall => {
                // `From<u8>` and `From<i8>`: the argument must have its type already.
                self.w(&format!("{t}::from("));
                self.expr(&args[0], Ctx::Forced);
                self.w(")");
            }
            Func::ToF32 | Func::ToF64 if spelling == 1 => {
                self.w(&format!("{t}::from("));
                self.expr(&args[0], Ctx::Anchored);
                self.w(")");
            }
            Func::ToF32 | Func::ToF64 => {
                self.receiver(&args[0]);
                self.w(if func == Func::ToF32 { ".to_f32()" } else { ".to_f64()" });
            }
            Func::Re | Func::Im => {
                self.receiver(&args[0]);
                self.w(if func == Func::Re { ".re" } else { ".im" });
            }
            Func::New => {
                // Spellings that take the parts' type from a part need a typed one.
                let spelling = if matches!(spelling, 0 | 4) && !parts_typed { 1 } else { spelling };
                let ctx = if parts_typed || spelling != 3 { Ctx::Anchored } else { Ctx::Forced };
                let w = width(ty);
                match spelling {
                    0 => self.w("Complex::new("),
                    1 => self.w(&format!("Complex{w}::new(")),
                    2 => self.w(&format!("Complex::<f{w}>::new(")),
                    3 => self.w(&format!("c{w}(")),
                    _ => self.w("(Complex { re: "),
                }
                self.expr(&args[0], ctx);
                self.w(if spelling == 4 { ", im: " } else { ", " });
                self.expr(&args[1], ctx);
                self.w(if spelling == 4 { " })" } else { ")" });
            }
            Func::FromPart => {
                if spelling == 0 && parts_typed {
                    self.w("Complex::from(");
                    self.expr(&args[0], Ctx::Anchored);
                } else {
                    self.w(&format!("Complex{}::from(", width(ty)));
                    self.expr(&args[0], Ctx::Forced);
                }
                self.w(")");
            }
        }
    }

    fn if_expr(&mut self, cond: &Expr, then: &Block, els: &Block, ctx: Ctx) {
        self.w("if ");
        self.expr(cond, Ctx::Anchored);
        self.w(" ");
        self.block(then, ctx);
        self.w(" else ");
        match (els.stmts.as_slice(), &els.tail) {
            ([], Some(Tail::Scalar(inner))) if matches!(inner.kind, ExprKind::If { .. }) => {
                let ExprKind::If { cond, then, els } = &inner.kind else { unreachable!() };
                self.if_expr(cond, then, els, ctx);
            }
            _ => self.block(els, ctx),
        }
    }

    /// A pattern; `top` is false inside `|` and `@`, where `|` and open ranges need
    /// parentheses.
    fn pat(&mut self, p: &Pat, top: bool) {
        let value = |v: Value, bare: bool| literal_text(v, 0, !bare);
        match p {
            Pat::Wild => self.w("_"),
            Pat::Lit(v, bare) => self.w(&value(*v, *bare)),
            Pat::PathConst(path, _) => self.w(path),
            Pat::Range { lo, hi, inclusive } => {
                let open = lo.is_none() || hi.is_none();
                if open && !top {
                    self.w("(");
                }
                let bound = |b: &Bound| b.name.clone().unwrap_or_else(|| value(b.value, true));
                if let Some(l) = lo {
                    self.w(&bound(l));
                }
                self.w(match (hi, inclusive) {
                    (None, _) => "..",
                    (Some(_), true) => "..=",
                    (Some(_), false) => "..",
                });
                if let Some(h) = hi {
                    self.w(&bound(h));
                }
                if open && !top {
                    self.w(")");
                }
            }
            Pat::Or(ps) => {
                if !top {
                    self.w("(");
                }
                for (i, q) in ps.iter().enumerate() {
                    if i > 0 {
                        self.w(" | ");
                    }
                    self.pat(q, false);
                }
                if !top {
                    self.w(")");
                }
            }
            Pat::Bind(n, None) => self.w(n),
            Pat::Bind(n, Some(sub)) => {
                self.w(&format!("{n} @ "));
                self.pat(sub, false);
            }
        }
    }
}

impl Ctx {
    /// `if` and `match` do not pass a cast's hint on.
    fn no_hint(self) -> Ctx {
        match self {
            Ctx::Hint(_) => Ctx::Free,
            c => c,
        }
    }
}

/// The values of the `break`s that leave the loop with this body and label.
fn loop_breaks<'a>(body: &'a Block, label: Option<&str>) -> Vec<&'a Expr> {
    struct Walk<'l, 'a> {
        label: Option<&'l str>,
        out: Vec<&'a Expr>,
    }
    impl<'a> Walk<'_, 'a> {
        fn block(&mut self, b: &'a Block, nested: usize) {
            for s in &b.stmts {
                self.stmt(s, nested);
            }
            if let Some(t) = &b.tail {
                t.exprs().into_iter().for_each(|e| self.expr(e, nested));
            }
        }

        fn stmt(&mut self, s: &'a Stmt, nested: usize) {
            match s {
                Stmt::Break { label, value } => {
                    if let Some(v) = value {
                        let ours = match label {
                            None => nested == 0,
                            Some(l) => Some(l.as_str()) == self.label,
                        };
                        if ours {
                            self.out.push(v);
                        }
                        self.expr(v, nested);
                    }
                }
                // A nested function cannot leave the loops around it.
                Stmt::Fn(_) | Stmt::Const(_) | Stmt::Continue { .. } => {}
                Stmt::Let { init, .. } => init.iter().for_each(|e| self.expr(e, nested)),
                Stmt::LetTuple { call, .. } => call.args.iter().for_each(|e| self.expr(e, nested)),
                Stmt::LetStruct { init, .. } | Stmt::AssignStruct { init, .. } => {
                    init.exprs().into_iter().for_each(|e| self.expr(e, nested))
                }
                Stmt::Assign { value, .. } | Stmt::Expr(value, _) => self.expr(value, nested),
                Stmt::If { cond, then, els } => {
                    self.expr(cond, nested);
                    self.block(then, nested);
                    if let Some(e) = els {
                        self.block(e, nested);
                    }
                }
                Stmt::While { cond, body, .. } => {
                    self.expr(cond, nested);
                    self.block(body, nested + 1);
                }
                Stmt::For { range, body, .. } => {
                    self.expr(&range.start, nested);
                    self.expr(&range.end, nested);
                    range.step.iter().for_each(|e| self.expr(e, nested));
                    self.block(body, nested + 1);
                }
                Stmt::Loop { body, .. } => self.block(body, nested + 1),
                Stmt::Return(t) => t.exprs().into_iter().for_each(|e| self.expr(e, nested)),
            }
        }

        fn expr(&mut self, e: &'a Expr, nested: usize) {
            match &e.kind {
                ExprKind::Lit(_) | ExprKind::Var(_) | ExprKind::Const(_) | ExprKind::PathConst(..) => {}
                ExprKind::Unary(_, a) | ExprKind::Cast(a) => self.expr(a, nested),
                ExprKind::Binary(_, a, b) => {
                    self.expr(a, nested);
                    self.expr(b, nested);
                }
                ExprKind::Method { recv, args, .. } => {
                    self.expr(recv, nested);
                    args.iter().for_each(|a| self.expr(a, nested));
                }
                ExprKind::Call(c) | ExprKind::Field(c, _) => c.args.iter().for_each(|a| self.expr(a, nested)),
                ExprKind::If { cond, then, els } => {
                    self.expr(cond, nested);
                    self.block(then, nested);
                    self.block(els, nested);
                }
                ExprKind::Match { scrutinee, arms } => {
                    self.expr(scrutinee, nested);
                    for a in arms {
                        a.guard.iter().for_each(|g| self.expr(g, nested));
                        self.expr(&a.body, nested);
                    }
                }
                ExprKind::Block(b) => self.block(b, nested),
                ExprKind::Loop { body, .. } => self.block(body, nested + 1),
                ExprKind::Func { args, .. } => args.iter().for_each(|a| self.expr(a, nested)),
            }
        }
    }
    let mut w = Walk { label, out: Vec::new() };
    w.block(body, 0);
    w.out
}

/// Whether a loop body assigns its loop variable (then it is declared `mut`).
fn body_assigns(body: &Block, var: &str) -> bool {
    let mut found = false;
    visit_blocks(body, &mut |b| {
        found |= b.stmts.iter().any(|s| matches!(s, Stmt::Assign { name, .. } if name == var));
    });
    found
}

/// Whether a later statement of the block certainly gives the variable `name` its type:
/// it is the whole value of a `let` with a type, of an assignment to a variable with one,
/// or an argument of a nested function (before anything rebinds the name).
fn typed_later(name: &str, stmts: &[Stmt]) -> bool {
    let is_it = |e: &Expr| matches!(&e.kind, ExprKind::Var(n) if n == name);
    for s in stmts {
        match s {
            Stmt::Let { annotated: true, init: Some(e), .. } if is_it(e) => return true,
            Stmt::LetTuple { call, .. } if call.args.iter().any(is_it) => return true,
            Stmt::Let { name: n, .. } if n == name => return false,
            Stmt::LetTuple { names, .. } if names.iter().flatten().any(|(n, _)| n == name) => return false,
            Stmt::Let { init: Some(Expr { kind: ExprKind::Call(c), .. }), .. } if c.args.iter().any(is_it) => {
                return true;
            }
            _ => {}
        }
    }
    false
}

/// Whether a variable called `name` is in the receiver of a method call (`x.abs()`,
/// `(x - 1).pow(2)`) in these statements or this tail (another variable of the same name
/// counts too): rustc must know the receiver's type when it gets there.
///
/// The type flows on through `let` without a type: in `let a = 2.5; let b = a; b.max(x)`,
/// `a` must have a type for `b` to, so a later `let` whose value uses the variable and is
/// itself a receiver later counts too.
fn receiver_later(name: &str, stmts: &[Stmt], tail: Option<&Tail>) -> bool {
    let mentions = |e: &Expr| {
        let mut found = false;
        visit_expr(e, &mut |r| found |= matches!(&r.kind, ExprKind::Var(n) if n == name));
        found
    };
    let mut found = false;
    visit_exprs(stmts, tail, &mut |e| match &e.kind {
        ExprKind::Method { recv, path: false, .. } => found |= mentions(recv),
        // A half or complex number's method wants its type in the path form too, and so do
        // the conversions and constructors (`f16::from(x)` of a `u8` or an `i8`).
        ExprKind::Method { recv, path: true, .. } if recv.ty.is_half() || recv.ty.is_complex() => {
            found |= mentions(recv)
        }
        ExprKind::Func { args, .. } => found |= args.iter().any(mentions),
        _ => {}
    });
    found
        || stmts.iter().enumerate().any(|(i, s)| match s {
            Stmt::Let { name: alias, annotated: false, init: Some(init), .. } if alias != name && mentions(init) => {
                receiver_later(alias, &stmts[i + 1..], tail)
            }
            _ => false,
        })
}

/// The least value of a signed integer type.
fn is_min(v: Value) -> bool {
    let t = v.ty();
    t.is_signed() && v.as_i128() == Some(t.int_range().0)
}
