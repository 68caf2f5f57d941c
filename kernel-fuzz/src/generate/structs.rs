//! Structs ([`Config::structs`](super::Config::structs)): the program's definitions,
//! struct variables and their values, and the struct parameters of functions.
//!
//! A struct variable `s` is known to the rest of the generator through its scalars: each
//! is a variable named by its path (`s.f0`, `s.f1[2]`, `s.f2.f0`), read and assigned as any
//! scalar variable is (assignable when `s` is `mut`). The struct itself, and each struct
//! field of it, is a variable of its own kind that only copies, calls and whole-struct
//! assignments name.

use super::{FnSig, Gen, Var};
use crate::ast::*;
use crate::rng::Rng;
use crate::ty::Ty;

impl Gen<'_> {
    /// The program's struct definitions: none without [`Config::structs`]; otherwise one
    /// to three, drawn from a generator of their own (so that the rest of the program draws
    /// as it would without them until a struct is used). A GPU struct has no padding (its
    /// bytes are copied whole), so the fields go from the largest alignment down, and a
    /// last `[u8; k]` field fills the struct to a multiple of its alignment.
    pub(super) fn struct_defs(&mut self, seed: u64) -> Vec<StructDef> {
        if !self.cfg.structs {
            return Vec::new();
        }
        let mut rng = Rng::new(seed ^ 0x5354_5255_4354_5321);
        let types = self.cfg.types();
        let mut defs: Vec<StructDef> = Vec::new();
        for i in 0..rng.range(1, 3) {
            let n = rng.range(1, 4) as usize;
            let mut fields: Vec<FieldTy> = (0..n)
                .map(|_| {
                    let nested = if defs.is_empty() { 0 } else { 2 };
                    match rng.weighted(&[5, 2, nested]) {
                        0 => FieldTy::Scalar(*rng.pick(&types)),
                        1 => FieldTy::Array(*rng.pick(&types), rng.range(1, 4) as usize),
                        _ => FieldTy::Struct(rng.pick(&defs).name.clone()),
                    }
                })
                .collect();
            fields.sort_by_key(|f| std::cmp::Reverse(field_layout(&defs, f).1));
            let (size, align) = struct_layout(&defs, &fields);
            if size % align != 0 {
                fields.push(FieldTy::Array(Ty::U8, (align - size % align) as usize));
            }
            let fields = fields.into_iter().enumerate().map(|(k, f)| (format!("f{k}"), f)).collect();
            defs.push(StructDef { name: format!("Fz{seed}S{i}"), fields });
        }
        defs
    }

    pub(super) fn struct_index(&self, name: &str) -> usize {
        self.structs.iter().position(|d| d.name == name).expect("a struct of the program")
    }

    /// Every part of a value of struct `d` called `prefix`, in declaration order (the order
    /// a literal evaluates its scalars in): the value itself, then its fields, a struct
    /// field as itself and its own parts (`Err(struct)`), an array field as its elements
    /// (`Ok(type)`).
    fn parts(&self, d: usize, prefix: &str) -> Vec<(String, Result<Ty, usize>)> {
        let mut out = vec![(prefix.to_string(), Err(d))];
        for (name, f) in &self.structs[d].fields {
            let path = format!("{prefix}.{name}");
            match f {
                FieldTy::Scalar(t) => out.push((path, Ok(*t))),
                FieldTy::Array(t, n) => out.extend((0..*n).map(|k| (format!("{path}[{k}]"), Ok(*t)))),
                FieldTy::Struct(s) => out.extend(self.parts(self.struct_index(s), &path)),
            }
        }
        out
    }

    /// The paths of the scalars of a value of struct `d` called `prefix`.
    fn leaf_paths(&self, d: usize, prefix: &str) -> Vec<String> {
        self.parts(d, prefix).into_iter().filter(|(_, p)| p.is_ok()).map(|(path, _)| path).collect()
    }

    /// Declares struct variable `name` of struct `d`: itself, its struct fields, and its
    /// scalars.
    pub(super) fn declare_struct(&mut self, name: String, d: usize, mutable: bool) {
        for (path, part) in self.parts(d, &name) {
            match part {
                Ok(t) => self.declare(path, t, mutable, false),
                Err(s) => self.vars.last_mut().expect("a scope").push(Var {
                    name: path,
                    ty: Ty::Bool,
                    mutable,
                    reserved: false,
                    strukt: Some(s),
                }),
            }
        }
    }

    /// The visible struct variables (and struct fields of them) of struct `d`.
    pub(super) fn visible_structs(&self, d: usize) -> Vec<String> {
        self.visible_all().into_iter().filter(|v| v.strukt == Some(d)).map(|v| v.name.clone()).collect()
    }

    /// A function's struct parameters: none where the program has no structs, else one in
    /// two functions takes one.
    pub(super) fn struct_params(&mut self) -> Vec<StructParam> {
        if self.structs.is_empty() || !self.rng.chance(1, 2) {
            return Vec::new();
        }
        let d = self.rng.below(self.structs.len() as u64) as usize;
        let name = "b0".to_string();
        let leaves = self.leaf_paths(d, &name);
        vec![StructParam { name, ty: self.structs[d].name.clone(), mutable: self.rng.chance(1, 4), leaves }]
    }

    /// A visible struct variable of struct `d` as an argument (one exists: see `callable`).
    pub(super) fn struct_arg(&mut self, d: usize) -> StructArg {
        let names = self.visible_structs(d);
        let name = self.rng.pick(&names).clone();
        let leaves = self.leaf_paths(d, &name);
        StructArg { name, leaves }
    }

    /// A value of struct `d`: a copy of a visible one, a call, or a literal.
    pub(super) fn struct_value(&mut self, d: usize, depth: u32) -> StructInit {
        let copies = self.visible_structs(d);
        let name = self.structs[d].name.clone();
        let fns: Vec<FnSig> = self.callable().into_iter().filter(|f| f.ret == Ret::Struct(name.clone())).collect();
        let weights = [4, if copies.is_empty() { 0 } else { 3 }, if fns.is_empty() || depth == 0 { 0 } else { 2 }];
        match self.rng.weighted(&weights) {
            0 => StructInit::Literal(self.struct_lit(d, depth)),
            1 => {
                let from = self.rng.pick(&copies).clone();
                let leaves = self.leaf_paths(d, &from);
                StructInit::Copy { from, leaves }
            }
            _ => {
                let f = self.rng.pick(&fns).clone();
                StructInit::Call(self.call(&f, depth))
            }
        }
    }

    fn struct_lit(&mut self, d: usize, depth: u32) -> StructLit {
        let def = self.structs[d].clone();
        let fields = def
            .fields
            .iter()
            .map(|(f, ty)| {
                let init = match ty {
                    FieldTy::Scalar(t) => FieldInit::Scalar(self.expr(*t, depth)),
                    FieldTy::Array(t, n) => FieldInit::Array((0..*n).map(|_| self.expr(*t, depth)).collect()),
                    FieldTy::Struct(s) => {
                        let inner = self.struct_index(s);
                        FieldInit::Struct(self.struct_lit(inner, depth))
                    }
                };
                (f.clone(), init)
            })
            .collect();
        StructLit { name: def.name, fields }
    }

    /// `let [mut] s = value;` of a struct.
    pub(super) fn let_struct(&mut self, depth: u32) -> Stmt {
        let d = self.rng.below(self.structs.len() as u64) as usize;
        let init = self.struct_value(d, depth + 1);
        let name = self.fresh("s");
        let mutable = self.rng.chance(1, 2);
        let leaves = self.leaf_paths(d, &name);
        // Declared after its value, which cannot name it.
        self.declare_struct(name.clone(), d, mutable);
        Stmt::LetStruct { name, mutable, init, leaves }
    }

    /// The assignable struct variables (and struct fields of them), with their structs.
    pub(super) fn assignable_structs(&self) -> Vec<(String, usize)> {
        self.visible_all()
            .into_iter()
            .filter(|v| v.mutable && !v.reserved)
            .filter_map(|v| v.strukt.map(|d| (v.name.clone(), d)))
            .collect()
    }

    /// `s = value;` of a whole struct (or struct field).
    pub(super) fn assign_struct(&mut self, depth: u32) -> Stmt {
        let targets = self.assignable_structs();
        let (name, d) = self.rng.pick(&targets).clone();
        let init = self.struct_value(d, depth + 1);
        let leaves = self.leaf_paths(d, &name);
        Stmt::AssignStruct { name, init, leaves }
    }
}

/// The size and alignment of a scalar type (`Complex<T>` is two `T`s, `#[repr(C)]`).
fn scalar_layout(t: Ty) -> (u64, u64) {
    match t {
        Ty::Bool | Ty::I8 | Ty::U8 => (1, 1),
        Ty::I16 | Ty::U16 | Ty::F16 | Ty::BF16 => (2, 2),
        Ty::I32 | Ty::U32 | Ty::F32 => (4, 4),
        Ty::I64 | Ty::U64 | Ty::Isize | Ty::Usize | Ty::F64 => (8, 8),
        Ty::C32 => (8, 4),
        Ty::C64 => (16, 8),
    }
}

fn field_layout(defs: &[StructDef], f: &FieldTy) -> (u64, u64) {
    match f {
        FieldTy::Scalar(t) => scalar_layout(*t),
        FieldTy::Array(t, n) => {
            let (size, align) = scalar_layout(*t);
            (size * *n as u64, align)
        }
        FieldTy::Struct(name) => {
            let d = defs.iter().find(|d| &d.name == name).expect("an earlier struct");
            let fields: Vec<FieldTy> = d.fields.iter().map(|(_, f)| f.clone()).collect();
            struct_layout(defs, &fields)
        }
    }
}

/// The size (without tail padding) and alignment of fields laid out in order, `#[repr(C)]`.
fn struct_layout(defs: &[StructDef], fields: &[FieldTy]) -> (u64, u64) {
    let (mut size, mut align) = (0u64, 1u64);
    for f in fields {
        let (s, a) = field_layout(defs, f);
        size = size.div_ceil(a) * a + s;
        align = align.max(a);
    }
    (size, align)
}
