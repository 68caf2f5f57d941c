//! `gpu::mma::*`: a warp's tensor-core fragments in registers, loaded from an array (with
//! `ldmatrix` from shared memory where the rows are aligned, one element at a time
//! elsewhere), multiplied with `mma.sync` and stored.
//!
//! Lane `l` of a warp holds the elements of the PTX ISA's fragment layouts for
//! `mma.m16n8k16` (f16, bf16) and `mma.m16n8k8` (TF32) (`kernel_abi::mma::Layout`). Every
//! call but `zeros` checks first that the warp's 32 lanes make it together (`activemask`),
//! then (loads and stores) that they name the same tile and that the tile is in the array,
//! each a fault otherwise; the simulator (`gpu_runtime::gpu::mma`) checks the same, in the
//! same order. One `activemask` covers the calls after it while the warp provably stays
//! whole: no branch that lanes could take apart, no call of another function.

use inkwell::attributes::AttributeLoc;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, InstructionOpcode, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use kernel_abi::Fault;

use super::arrays::ArrayPlace;
use super::nvvm::{SHARED, read_sreg};
use super::{FnLower, LResult, Value, internal};
use crate::ir::{ArrayKind, Expr, Fragment, MmaInput, MmaOp, Type};
use crate::ty::ScalarType;

/// The LLVM type of a fragment: its registers, `i32`s (pairs of 16-bit inputs, or one TF32
/// each) or, for the accumulator, `f32`s.
pub(super) fn fragment_type<'ctx>(cx: &'ctx inkwell::context::Context, f: Fragment) -> BasicTypeEnum<'ctx> {
    match f {
        Fragment::Acc => cx.f32_type().array_type(4).into(),
        _ => cx.i32_type().array_type(f.regs()).into(),
    }
}

impl<'ctx> FnLower<'_, 'ctx> {
    pub(super) fn mma(&mut self, op: MmaOp, args: &[Expr], e: &Expr) -> LResult<Value<'ctx>> {
        let mut vals = Vec::new();
        for a in args {
            match self.expr(a)? {
                Some(v) => vals.push(v),
                None => return Ok(None),
            }
        }
        match op {
            MmaOp::Zeros => Ok(Some(fragment_type(self.cx, Fragment::Acc).const_zero())),
            MmaOp::Mma => {
                let Type::Fragment(Fragment::A(input)) = args[0].ty else {
                    return Err(internal("`mma` without an `A` fragment", e.span));
                };
                self.whole_warp()?;
                self.product(input, &vals).map(Some)
            }
            MmaOp::Load(f, a) => {
                self.whole_warp()?;
                let (place, first, ld) = self.tile(a, f, vals[0].into_int_value(), vals[1].into_int_value())?;
                self.load_fragment(f, (a, place), (vals[0].into_int_value(), first), ld).map(Some)
            }
            MmaOp::Store(a) => {
                self.whole_warp()?;
                let (_, first, ld) = self.tile(a, Fragment::Acc, vals[0].into_int_value(), vals[1].into_int_value())?;
                let (g, t) = self.lane_coordinates()?;
                let acc = vals[2].into_array_value();
                for k in 0..4 {
                    let p = self.element_at(Fragment::Acc, k, first, ld, g, t, self.cx.f32_type().into())?;
                    let v = self.builder.build_extract_value(acc, k, "acc")?;
                    self.builder.build_store(p, v)?;
                }
                Ok(None)
            }
        }
    }

    /// The fault [`Fault::MmaDiverged`] unless the warp's 32 lanes are all here. Lanes part
    /// only at a branch, so one check covers the calls after it in the same basic block.
    fn whole_warp(&mut self) -> LResult<()> {
        let here = self.builder.get_insert_block();
        if here.is_some() && here == self.whole_warp_in {
            return Ok(());
        }
        let mask = self.llvm("llvm.nvvm.activemask", &[], &[])?;
        crate::warp_uniform::mark_check(self.cx, mask).map_err(|e| internal(&e, self.func.span))?;
        let mask = mask.into_int_value();
        let all = self.cx.i32_type().const_all_ones();
        let partial = self.builder.build_int_compare(IntPredicate::NE, mask, all, "partial_warp")?;
        let i64t = self.cx.i64_type();
        let mask = self.builder.build_int_z_extend(mask, i64t, "mask")?;
        self.raise_at(partial, Fault::MmaDiverged, mask, i64t.const_int(32, false))?;
        self.whole_warp_in = self.builder.get_insert_block();
        Ok(())
    }

    /// The checks of the tile of `f` at `base`, rows `ld` apart, in `a`: that every lane of
    /// the warp names the same one (the same `base` and `ld`, and for a view the same start
    /// and length), then Rust's of `&a[base..][..span]`, `span = (rows - 1) * ld + cols`
    /// (saturating: a span past `usize::MAX` is past any array). Gives the array, the
    /// tile's first element and `ld`. Every lane then passes or faults alike, so the warp
    /// stays whole.
    fn tile(
        &mut self,
        a: u32,
        f: Fragment,
        base: IntValue<'ctx>,
        ld: IntValue<'ctx>,
    ) -> LResult<(ArrayPlace<'ctx>, PointerValue<'ctx>, IntValue<'ctx>)> {
        let whole = self.builder.get_insert_block() == self.whole_warp_in;
        let place = self.place(a, self.func.span)?;
        let i64t = self.cx.i64_type();
        let mut same = self.cx.bool_type().const_all_ones();
        let mut words = vec![base, ld];
        if matches!(self.array_info[a as usize].kind, ArrayKind::View { .. }) {
            words.push(self.builder.build_ptr_to_int(place.ptr, i64t, "view")?);
            words.push(place.len);
        }
        for w in words {
            if !w.is_const() {
                let here = self.same_in_warp(w)?;
                same = self.builder.build_and(same, here, "same_tile")?;
            }
        }
        if !same.is_const() {
            let differs = self.builder.build_not(same, "tile_differs")?;
            self.raise_at(differs, Fault::MmaTileDiffers, i64t.const_zero(), i64t.const_zero())?;
        }
        let (rows, cols) = f.layout().shape();
        let (product, over) =
            self.mul_with_overflow(ScalarType::U64, ld, i64t.const_int(u64::from(rows - 1), false))?;
        let product = self.builder.build_select(over, i64t.const_all_ones(), product, "saturated")?.into_int_value();
        let span = self
            .llvm("llvm.uadd.sat", &[i64t.into()], &[product.into(), i64t.const_int(u64::from(cols), false).into()])?
            .into_int_value();
        let first = self.window(a, base, span, self.func.span)?;
        if whole {
            self.whole_warp_in = self.builder.get_insert_block();
        }
        Ok((place, first, ld))
    }

    /// The lane's `(g, t)`: `lane / 4` and `lane % 4`, as `i64`s.
    fn lane_coordinates(&self) -> LResult<(IntValue<'ctx>, IntValue<'ctx>)> {
        let i64t = self.cx.i64_type();
        let lane = read_sreg(self.module, &self.builder, "laneid")?;
        let lane = self.builder.build_int_z_extend(lane, i64t, "lane")?;
        let g = self.builder.build_right_shift(lane, i64t.const_int(2, false), false, "g")?;
        let t = self.builder.build_and(lane, i64t.const_int(3, false), "t")?;
        Ok((g, t))
    }

    /// The address of the lane's element `e` of `f` in the tile at `first`, rows `ld`
    /// apart, read as `ty`. In the tile, which [`MmaOp::Load`]'s checks put in the array.
    #[allow(clippy::too_many_arguments)]
    fn element_at(
        &self,
        f: Fragment,
        e: u32,
        first: PointerValue<'ctx>,
        ld: IntValue<'ctx>,
        g: IntValue<'ctx>,
        t: IntValue<'ctx>,
        ty: BasicTypeEnum<'ctx>,
    ) -> LResult<PointerValue<'ctx>> {
        let b = &self.builder;
        let i64t = self.cx.i64_type();
        // A position is affine in `g` and `t`: its value at lane 0 (g = t = 0) plus the
        // steps of each (lane 4: g = 1; lane 1: t = 1).
        let layout = f.layout();
        let (r0, c0) = layout.position(e, 0);
        let (rg, cg) = layout.position(e, 4);
        let (rt, ct) = layout.position(e, 1);
        let affine = |at0: u32, dg: u32, dt: u32, name: &str| -> LResult<IntValue<'ctx>> {
            let x = b.build_int_mul(g, i64t.const_int(u64::from(dg - at0), false), name)?;
            let y = b.build_int_mul(t, i64t.const_int(u64::from(dt - at0), false), name)?;
            let s = b.build_int_add(x, y, name)?;
            Ok(b.build_int_add(s, i64t.const_int(u64::from(at0), false), name)?)
        };
        let row = affine(r0, rg, rt, "row")?;
        let col = affine(c0, cg, ct, "col")?;
        let at = b.build_int_add(b.build_int_mul(row, ld, "row_start")?, col, "offset")?;
        // SAFETY: the element is in the tile, and the tile in the array.
        Ok(unsafe { b.build_in_bounds_gep(ty, first, &[at], "element")? })
    }

    /// The fragment `f` of the tile at `first`, rows `ld` apart, in the array `place`.
    fn load_fragment(
        &mut self,
        f: Fragment,
        (a, place): (u32, ArrayPlace<'ctx>),
        (base, first): (IntValue<'ctx>, PointerValue<'ctx>),
        ld: IntValue<'ctx>,
    ) -> LResult<BasicValueEnum<'ctx>> {
        let shared = place.ptr.get_type().get_address_space() == AddressSpace::from(SHARED);
        // `ldmatrix` moves 16-bit pairs: the 16-bit inputs, and TF32's `A`, whose 32-bit
        // elements land where its layout wants them (a `B` of TF32 would need a transpose
        // of 32-bit elements, which `ldmatrix` does not do).
        let matrix_rows = matches!(f, Fragment::A(_) | Fragment::B(MmaInput::F16 | MmaInput::Bf16));
        if !(shared && matrix_rows) {
            let (g, t) = self.lane_coordinates()?;
            return self.load_elements(f, first, ld, g, t);
        }
        // `ldmatrix` reads rows of 16 bytes, each aligned to 16: the tile's first element
        // and `ld` (in elements of 2 bytes) must keep every row there. The lanes name the
        // same tile ([`Self::tile`]), so the branch is the same for all of them, as
        // `ldmatrix` needs (each lane gives the address of rows that others receive).
        let whole = self.builder.get_insert_block() == self.whole_warp_in;
        let b = &self.builder;
        let i64t = self.cx.i64_type();
        let size = u64::from(self.elem_type(a).size_bytes());
        let low = if matches!(self.array_info[a as usize].kind, ArrayKind::Shared { .. } | ArrayKind::DynamicShared) {
            // The array starts aligned to 16 bytes: the start and `ld` in elements tell,
            // and LLVM can often see that they are multiples of 8 (4) and drop the test.
            b.build_and(b.build_or(base, ld, "rows")?, i64t.const_int(16 / size - 1, false), "misalignment")?
        } else {
            let addr = b.build_ptr_to_int(first, i64t, "addr")?;
            let ld_bytes = b.build_int_mul(ld, i64t.const_int(size, false), "ld_bytes")?;
            b.build_and(b.build_or(addr, ld_bytes, "rows")?, i64t.const_int(15, false), "misalignment")?
        };
        let aligned = b.build_int_compare(IntPredicate::EQ, low, i64t.const_zero(), "aligned")?;
        let (matrix_bb, element_bb, done_bb) = (
            self.cx.append_basic_block(self.llfn, "ldmatrix"),
            self.cx.append_basic_block(self.llfn, "fragment_elements"),
            self.cx.append_basic_block(self.llfn, "fragment_loaded"),
        );
        b.build_conditional_branch(aligned, matrix_bb, element_bb)?;

        b.position_at_end(matrix_bb);
        let from_matrix = self.ldmatrix(f, first, ld)?;
        let matrix_end = self.builder.get_insert_block().ok_or_else(|| internal("no block", self.func.span))?;
        self.builder.build_unconditional_branch(done_bb)?;

        self.builder.position_at_end(element_bb);
        let (g, t) = self.lane_coordinates()?;
        let from_elements = self.load_elements(f, first, ld, g, t)?;
        let element_end = self.builder.get_insert_block().ok_or_else(|| internal("no block", self.func.span))?;
        self.builder.build_unconditional_branch(done_bb)?;

        self.builder.position_at_end(done_bb);
        let phi = self.builder.build_phi(fragment_type(self.cx, f), "fragment")?;
        phi.add_incoming(&[(&from_matrix, matrix_end), (&from_elements, element_end)]);
        if whole {
            // The branch was the same in every lane: the warp is still whole.
            self.whole_warp_in = Some(done_bb);
        }
        Ok(phi.as_basic_value())
    }

    /// Whether every lane of the (whole) warp has the same `x`, an `i64`: the same answer
    /// in every lane.
    fn same_in_warp(&self, x: IntValue<'ctx>) -> LResult<IntValue<'ctx>> {
        let all = self.cx.i32_type().const_all_ones();
        // A 32-bit value widened (a `u32` index `as usize`) compares as it was.
        let narrow = x
            .as_instruction()
            .filter(|i| i.get_opcode() == InstructionOpcode::ZExt)
            .and_then(|i| i.get_operand(0)?.value())
            .map(|v| v.into_int_value())
            .filter(|v| v.get_type().get_bit_width() == 32);
        let (name, x) = match narrow {
            Some(v) => ("llvm.nvvm.match.all.sync.i32p", v),
            None => ("llvm.nvvm.match.all.sync.i64p", x),
        };
        let pair = self.warp_call(name, &[], &[all.into(), x.into()])?;
        crate::warp_uniform::mark_check(self.cx, pair).map_err(|e| internal(&e, self.func.span))?;
        let pair = pair.into_struct_value();
        Ok(self.builder.build_extract_value(pair, 1, "same")?.into_int_value())
    }

    /// `ldmatrix` of an `A` (four 8 × 8 matrices of 16-bit elements: rows 0-7 and 8-15 of
    /// the first 16 bytes of each row, then of the next 16) or a 16-bit `B` (two,
    /// transposed: rows 0-7 and 8-15). Lane `l` gives the address of row `l % 8` of matrix
    /// `l / 8`. TF32's `A` moves as pairs of 16 bits, each lane receiving whole `f32`s at
    /// its layout's places, then rounded as [`Self::load_elements`] rounds them.
    fn ldmatrix(&self, f: Fragment, first: PointerValue<'ctx>, ld: IntValue<'ctx>) -> LResult<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        let i64t = self.cx.i64_type();
        let lane = read_sreg(self.module, b, "laneid")?;
        let lane = b.build_int_z_extend(lane, i64t, "lane")?;
        let c = |v: u64| i64t.const_int(v, false);
        let tf32 = f == Fragment::A(MmaInput::Tf32);
        let (row, col, name) = match f {
            Fragment::A(_) => {
                // row (l % 8) + 8 * ((l / 8) % 2), column 16 bytes * (l / 16)
                let r = b.build_and(lane, c(15), "row")?;
                let k = b.build_right_shift(lane, c(4), false, "upper")?;
                let half_row = if tf32 { 4 } else { 8 };
                (r, b.build_int_mul(k, c(half_row), "col")?, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16")
            }
            // Lanes 16-31 give addresses that `.x2` does not read: the same as 0-15.
            _ => (b.build_and(lane, c(15), "row")?, c(0), "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16"),
        };
        let at = b.build_int_add(b.build_int_mul(row, ld, "row_start")?, col, "offset")?;
        let elem: BasicTypeEnum<'ctx> = if tf32 { self.cx.f32_type().into() } else { self.cx.i16_type().into() };
        // SAFETY: the row is in the tile, and the tile in the array.
        let p = unsafe { b.build_in_bounds_gep(elem, first, &[at], "row")? };
        let regs = self.warp_call(name, &[p.get_type().into()], &[p.into()])?.into_struct_value();
        let mut frag = fragment_type(self.cx, f).into_array_type().get_undef();
        for k in 0..f.regs() {
            let mut r = b.build_extract_value(regs, k, "reg")?;
            if tf32 {
                let x = b.build_bit_cast(r, self.cx.f32_type(), "element")?;
                r = self.llvm("llvm.nvvm.f2tf32.rna", &[], &[x.into()])?;
            }
            frag = b.build_insert_value(frag, r, k, "fragment")?.into_array_value();
        }
        Ok(frag.into())
    }

    /// The fragment read one element at a time (any memory, any alignment); TF32 rounded
    /// from `f32` (`cvt.rna.tf32.f32`).
    fn load_elements(
        &self,
        f: Fragment,
        first: PointerValue<'ctx>,
        ld: IntValue<'ctx>,
        g: IntValue<'ctx>,
        t: IntValue<'ctx>,
    ) -> LResult<BasicValueEnum<'ctx>> {
        let b = &self.builder;
        let (i16t, i32t) = (self.cx.i16_type(), self.cx.i32_type());
        let f32t = self.cx.f32_type();
        let ty = fragment_type(self.cx, f).into_array_type();
        let mut frag = ty.get_undef();
        match f {
            Fragment::A(MmaInput::Tf32) | Fragment::B(MmaInput::Tf32) => {
                for e in 0..f.layout().elements() {
                    let p = self.element_at(f, e, first, ld, g, t, f32t.into())?;
                    let x = b.build_load(f32t, p, "element")?;
                    let r = self.llvm("llvm.nvvm.f2tf32.rna", &[], &[x.into()])?;
                    frag = b.build_insert_value(frag, r, e, "fragment")?.into_array_value();
                }
            }
            Fragment::Acc => {
                for e in 0..f.layout().elements() {
                    let p = self.element_at(f, e, first, ld, g, t, f32t.into())?;
                    let x = b.build_load(f32t, p, "element")?;
                    frag = b.build_insert_value(frag, x, e, "fragment")?.into_array_value();
                }
            }
            _ => {
                for reg in 0..f.regs() {
                    let mut word = i32t.const_zero();
                    for half in 0..2 {
                        let p = self.element_at(f, 2 * reg + half, first, ld, g, t, i16t.into())?;
                        let x = b.build_load(i16t, p, "element")?.into_int_value();
                        let x = b.build_int_z_extend(x, i32t, "half")?;
                        let x = b.build_left_shift(x, i32t.const_int(u64::from(16 * half), false), "placed")?;
                        word = b.build_or(word, x, "pair")?;
                    }
                    frag = b.build_insert_value(frag, word, reg, "fragment")?.into_array_value();
                }
            }
        }
        Ok(frag.into())
    }

    /// The attribute that keeps a warp's collective call where the program has it: LLVM
    /// declares `mma` and `ldmatrix` without it (as plain reads or pure functions), so it
    /// could otherwise sink one into a branch that only some lanes take.
    fn convergent(&self) -> inkwell::attributes::Attribute {
        self.cx.create_enum_attribute(inkwell::attributes::Attribute::get_named_enum_kind_id("convergent"), 0)
    }

    /// The intrinsic `name` (overloaded on `types`), called as a warp's collective.
    fn warp_call(
        &self,
        name: &str,
        types: &[BasicTypeEnum<'ctx>],
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> LResult<BasicValueEnum<'ctx>> {
        let decl = self.intrinsic_decl(name, types)?;
        let call = self.builder.build_call(decl, args, "collective")?;
        call.add_attribute(AttributeLoc::Function, self.convergent());
        super::basic_value(call.try_as_basic_value(), self.func.span)
    }

    /// `mma.sync.aligned` of `vals = [a, b, c]`, giving the accumulator `a · b + c`.
    fn product(&self, input: MmaInput, vals: &[BasicValueEnum<'ctx>]) -> LResult<BasicValueEnum<'ctx>> {
        let name = match input {
            MmaInput::F16 => "llvm.nvvm.mma.m16n8k16.row.col.f32.f32",
            MmaInput::Bf16 => "llvm.nvvm.mma.m16n8k16.row.col.bf16",
            MmaInput::Tf32 => "llvm.nvvm.mma.m16n8k8.row.col.tf32",
        };
        let decl = self.intrinsic_decl(name, &[])?;
        let params = decl.get_type().get_param_types();
        let b = &self.builder;
        let mut args: Vec<BasicMetadataValueEnum<'ctx>> = Vec::new();
        for v in vals {
            let regs = v.into_array_value();
            for k in 0..regs.get_type().len() {
                let r = b.build_extract_value(regs, k, "reg")?;
                // The 16-bit inputs go as `<2 x half>` where the intrinsic takes them so.
                let want = params
                    .get(args.len())
                    .copied()
                    .and_then(|t| BasicTypeEnum::try_from(t).ok())
                    .ok_or_else(|| internal(format!("{name} takes fewer registers"), self.func.span))?;
                let r = if r.get_type() == want { r } else { b.build_bit_cast(r, want, "reg")? };
                args.push(r.into());
            }
        }
        let d = self.builder.build_call(decl, &args, "mma")?;
        d.add_attribute(AttributeLoc::Function, self.convergent());
        let d = super::basic_value(d.try_as_basic_value(), self.func.span)?.into_struct_value();
        let mut acc = fragment_type(self.cx, Fragment::Acc).into_array_type().get_undef();
        for k in 0..4 {
            let x = self.builder.build_extract_value(d, k, "d")?;
            acc = self.builder.build_insert_value(acc, x, k, "acc")?.into_array_value();
        }
        Ok(acc.into())
    }
}
