//! Explicit kernels as Rust source: a function item for `#[kernel]`, calling the GPU's
//! built-ins as `gpu::…` (the module must import `gpu_runtime::gpu`). The scalar parts are
//! the scalar renderer's, with every literal that nothing else types suffixed.

use super::ast::*;
use crate::ast::BinOp;
use crate::render::{render_expr, render_stmts};

/// The kernel as a Rust function item (no attributes, not `pub`).
pub fn render(k: &Kernel) -> String {
    let params: Vec<String> = k
        .params
        .iter()
        .map(|p| match p.kind {
            ParamKind::Scalar(t) => format!("{}: {}", p.name, t.name()),
            ParamKind::Input(t) => format!("{}: &[{}]", p.name, t.name()),
            ParamKind::Output(t, _) => format!("{}: &mut [{}]", p.name, t.name()),
        })
        .collect();
    let mut r = Printer { out: format!("fn {}({}) {{", k.name, params.join(", ")), indent: 1 };
    r.stmts(&k.body);
    r.out.push_str("\n}");
    r.out
}

struct Printer {
    out: String,
    indent: usize,
}

impl Printer {
    /// A new line at the current indentation, then `s`.
    fn line(&mut self, s: &str) {
        self.out.push('\n');
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
    }

    fn expr(&self, e: &crate::ast::Expr) -> String {
        render_expr(e, self.indent)
    }

    fn stmts(&mut self, body: &[KStmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn block(&mut self, head: &str, body: &[KStmt]) {
        self.line(&format!("{head} {{"));
        self.indent += 1;
        self.stmts(body);
        self.indent -= 1;
        self.line("}");
    }

    fn array(a: &Array) -> &str {
        a.name()
    }

    fn stmt(&mut self, s: &KStmt) {
        match s {
            KStmt::Index { name, builtin, ty } => {
                if *ty == builtin.ty() {
                    self.line(&format!("let {name}: {} = {};", ty.name(), builtin.call()));
                } else {
                    self.line(&format!("let {name} = {} as {};", builtin.call(), ty.name()));
                }
            }
            KStmt::Len { name, slice } => self.line(&format!("let {name} = {slice}.len();")),
            KStmt::WarpLanes { lanes, mask } => {
                self.line(&format!(
                    "let {lanes}: u32 = (gpu::block_dim().x - (gpu::thread_idx().x - gpu::lane_id())).min(32);"
                ));
                self.line(&format!(
                    "let {mask}: u32 = if {lanes} == 32 {{ u32::MAX }} else {{ (1u32 << {lanes}) - 1 }};"
                ));
            }
            KStmt::Scalar(stmts) => {
                let text = render_stmts(stmts, self.indent);
                self.line(&text);
            }
            KStmt::Load { name, ty, array, index } => {
                let i = self.expr(index);
                self.line(&format!("let {name}: {} = {}[{i}];", ty.name(), Self::array(array)));
            }
            KStmt::Store { array, index, op, value } => {
                let (i, v) = (self.expr(index), self.expr(value));
                let op = op.map_or("", BinOp::symbol);
                self.line(&format!("{}[{i}] {op}= {v};", Self::array(array)));
            }
            KStmt::Shared { name, ty, len } => {
                self.line(&format!("let {name} = gpu::shared::<{}, {len}>();", ty.name()));
            }
            KStmt::Atomic { op, array, index, value } => {
                let (i, v) = (self.expr(index), self.expr(value));
                self.line(&format!("gpu::atomic::{}({}, {i}, {v});", op.name(), Self::array(array)));
            }
            KStmt::Barrier { kind, vote: None } => self.line(&format!("{}();", kind.call())),
            KStmt::Barrier { kind, vote: Some((name, pred)) } => {
                let p = self.expr(pred);
                self.line(&format!("let {name} = {}({p});", kind.call()));
            }
            KStmt::Warp { name, op, mask, value, arg } => {
                let mask = match mask {
                    Mask::Full => "u32::MAX".to_string(),
                    Mask::Var(m) => m.clone(),
                };
                let mut args = vec![mask, self.expr(value)];
                if let Some(a) = arg {
                    args.push(self.expr(a));
                }
                self.line(&format!("let {name} = {}({});", op.call(), args.join(", ")));
            }
            KStmt::If { cond, then, els, .. } => {
                let c = self.expr(cond);
                self.line(&format!("if {c} {{"));
                self.indent += 1;
                self.stmts(then);
                self.indent -= 1;
                if !els.is_empty() {
                    self.line("} else {");
                    self.indent += 1;
                    self.stmts(els);
                    self.indent -= 1;
                }
                self.line("}");
            }
            KStmt::GridStride { var, slice, form: Stride::While, body } => {
                self.line(&format!("let mut {var} = gpu::grid1();"));
                self.line(&format!("while {var} < {slice}.len() {{"));
                self.indent += 1;
                self.stmts(body);
                self.line(&format!("{var} += gpu::gridsize1();"));
                self.indent -= 1;
                self.line("}");
            }
            KStmt::GridStride { var, slice, form: Stride::StepBy, body } => {
                let head = format!("for {var} in (gpu::grid1()..{slice}.len()).step_by(gpu::gridsize1())");
                self.block(&head, body);
            }
            KStmt::BlockStride { var, thread, step, len, body } => {
                self.line(&format!("let mut {var} = {thread};"));
                self.line(&format!("while {var} < {len} {{"));
                self.indent += 1;
                self.stmts(body);
                self.line(&format!("{var} += {step};"));
                self.indent -= 1;
                self.line("}");
            }
            KStmt::Repeat { var, ty, count, body } => {
                self.block(&format!("for {var} in 0..{count}{}", ty.name()), body);
            }
            KStmt::Tree { array, len, op, thread, var } => {
                self.line(&format!("let mut {var}: usize = {};", len / 2));
                self.line(&format!("while {var} > 0 {{"));
                self.indent += 1;
                self.line(&format!("if {thread} < {var} {{"));
                self.indent += 1;
                self.line(&format!("{array}[{thread}] = {array}[{thread}] {} {array}[{thread} + {var}];", op.symbol()));
                self.indent -= 1;
                self.line("}");
                self.line("gpu::sync_threads();");
                self.line(&format!("{var} /= 2;"));
                self.indent -= 1;
                self.line("}");
            }
            KStmt::Return => self.line("return;"),
        }
    }
}
