//! The kernel entry: a grid-stride loop that applies the scalar function to every element.

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, BasicValue, BasicValueEnum, FunctionValue, IntValue, PointerValue};
use inkwell::{AddressSpace, AtomicOrdering, AtomicRMWBinOp, IntPredicate};
use proc_macro2::Span;

use super::nvvm::{GLOBAL, annotate_kernel, read_sreg64};
use super::types::{llvm_type, memory_type};
use super::{LResult, basic_value, internal};
use crate::abi::{EntryParams, FaultWord, KernelAbi, MAX_DIMS};
use crate::ty::ScalarType;

/// Which of a function's two elementwise entries to build.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum EntryKind {
    /// `abi.entry`: every array is contiguous.
    Contiguous,
    /// `abi.strided_entry()`: the inputs are strided views of an N-dimensional broadcast.
    Strided,
}

/// How large the scalar function is once inlined.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Weight {
    Light,
    /// It calls libdevice's math: entries that are not the fast path call it out of line
    /// rather than inline another copy.
    Heavy,
}

/// Adds the kernel entry that applies `scalar` to every element (see
/// [`crate::abi::EntryParams`] for its parameters), as a grid-stride loop with 64-bit
/// indices.
pub fn lower_kernel_entry<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    scalar: FunctionValue<'ctx>,
    abi: &KernelAbi,
    kind: EntryKind,
    weight: Weight,
) -> LResult<FunctionValue<'ctx>> {
    let global = cx.ptr_type(AddressSpace::from(GLOBAL));
    let i64t = cx.i64_type();
    let strided = kind == EntryKind::Strided;
    let slots = abi.params(strided);
    let mut params: Vec<inkwell::types::BasicMetadataTypeEnum> = vec![i64t.into(); slots.count()];
    for k in 0..abi.outputs.len() {
        params[slots.output(k)] = global.into();
    }
    for (i, &t) in abi.inputs.iter().enumerate() {
        params[slots.input_ptr(i)] = global.into();
        params[slots.input_value(i)] = memory_type(cx, t).into();
    }
    // The layout slots (`ndim`, the shape and each input's strides) are `i64`s.
    if let Some(f) = slots.fault() {
        params[f] = global.into();
    }
    let symbol = if strided { abi.strided_entry() } else { abi.entry.clone() };
    let kernel = module.add_function(&symbol, cx.void_type().fn_type(&params, false), None);
    let attr = |name: &str| cx.create_enum_attribute(Attribute::get_named_enum_kind_id(name), 0);
    let at = |slot: usize| AttributeLoc::Param(slot as u32);
    // Arrays never overlap (the runtime allocates or checks them), inputs are only read:
    // LLVM may then use the read-only data cache (`ld.global.nc`).
    for i in 0..abi.inputs.len() {
        kernel.add_attribute(at(slots.input_ptr(i)), attr("noalias"));
        kernel.add_attribute(at(slots.input_ptr(i)), attr("readonly"));
        kernel.add_attribute(at(slots.input_ptr(i)), attr("nocapture"));
    }
    for k in 0..abi.outputs.len() {
        kernel.add_attribute(at(slots.output(k)), attr("noalias"));
        kernel.add_attribute(at(slots.output(k)), attr("nocapture"));
    }
    annotate_kernel(cx, module, kernel, &[])?;

    let b = cx.create_builder();
    let entry = cx.append_basic_block(kernel, "entry");
    b.position_at_end(entry);
    let tid = read_sreg64(module, &b, "tid.x")?;
    let ntid = read_sreg64(module, &b, "ntid.x")?;
    let ctaid = read_sreg64(module, &b, "ctaid.x")?;
    let nctaid = read_sreg64(module, &b, "nctaid.x")?;
    let first = b.build_int_add(b.build_int_mul(ctaid, ntid, "block_base")?, tid, "first")?;
    let stride = b.build_int_mul(nctaid, ntid, "stride")?;
    let param = |slot: usize| kernel.get_nth_param(slot as u32).expect("declared above");
    let n = param(EntryParams::N).into_int_value();
    let out: Vec<PointerValue<'ctx>> =
        (0..abi.outputs.len()).map(|k| param(slots.output(k)).into_pointer_value()).collect();
    // The per-element fault code (a local the scalar function writes) and the launch's
    // fault word (see `FaultWord`).
    let layout = if strided {
        let at = |slot: usize| param(slot).into_int_value();
        Some(Layout {
            ndim: at(slots.ndim()),
            shape: (0..MAX_DIMS).map(|d| at(slots.extent(d))).collect(),
            strides: (0..abi.inputs.len()).map(|k| (0..MAX_DIMS).map(|d| at(slots.stride(k, d))).collect()).collect(),
        })
    } else {
        None
    };
    let err = match slots.fault() {
        Some(slot) => {
            let global = param(slot).into_pointer_value();
            let local = b.build_alloca(cx.i32_type(), "fault")?;
            Some(FaultSlots { local, global })
        }
        None => None,
    };
    let inputs: Vec<(PointerValue<'ctx>, BasicValueEnum<'ctx>)> = (0..abi.inputs.len())
        .map(|i| (param(slots.input_ptr(i)).into_pointer_value(), param(slots.input_value(i))))
        .collect();

    let offsets = match &layout {
        Some(_) => (0..abi.inputs.len()).map(|_| b.build_alloca(i64t, "offset")).collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
    };
    let remainder = b.build_alloca(i64t, "remainder")?;
    let strided = layout.is_some();
    let lanes = vector_lanes(abi);
    // A function that uses libdevice's math is large once inlined: the strided entry
    // (broadcasting, not the fast path) calls it rather than inlining another copy.
    let outline = strided && weight == Weight::Heavy;
    let loops = GridLoop {
        cx,
        builder: &b,
        kernel,
        scalar,
        abi,
        first,
        stride,
        n,
        out,
        err,
        layout,
        offsets,
        remainder,
        lanes,
        outline,
    };
    if strided {
        // Views over N dimensions: one loop, each input checked for being a scalar (the
        // strided entry is for broadcasting, where scalars and arrays mix).
        loops.emit(&inputs, false, Shape::Plain)?;
        return Ok(kernel);
    }
    // The contiguous entry reads and writes `lanes` elements at a time when every array is
    // aligned for it (device allocations are; a view at an odd offset may not be). A user
    // struct moves whole, an element at a time (its fields are not lanes of one type).
    let vectors = !abi.inputs.iter().chain(&abi.outputs).any(|t| t.is_struct());
    let emit_both = |all_arrays: bool| -> LResult<()> {
        if !vectors {
            return loops.emit(&inputs, all_arrays, Shape::Plain);
        }
        let mut aligned = cx.bool_type().const_int(1, false);
        let arrays = inputs
            .iter()
            .map(|(p, _)| (*p, abi_input_align(abi, &inputs, *p, loops.lanes)))
            .chain(loops.out.iter().zip(&abi.outputs).map(|(p, t)| (*p, vector_align(*t, loops.lanes))));
        for (p, align) in arrays {
            let addr = b.build_ptr_to_int(p, i64t, "addr")?;
            let low = b.build_and(addr, i64t.const_int(align - 1, false), "misaligned")?;
            let ok = b.build_int_compare(IntPredicate::EQ, low, i64t.const_zero(), "aligned")?;
            aligned = b.build_and(aligned, ok, "all_aligned")?;
        }
        let vector = cx.append_basic_block(kernel, "vector");
        let unaligned = cx.append_basic_block(kernel, "unaligned");
        b.build_conditional_branch(aligned, vector, unaligned)?;
        b.position_at_end(vector);
        loops.emit(&inputs, all_arrays, Shape::Vector)?;
        b.position_at_end(unaligned);
        loops.emit(&inputs, all_arrays, Shape::Plain)
    };
    if inputs.is_empty() {
        emit_both(true)?;
    } else {
        // The common case, every input an array, gets a loop without per-element checks.
        let mut all_arrays = cx.bool_type().const_int(1, false);
        for (p, _) in &inputs {
            let is_array = b.build_is_not_null(*p, "is_array")?;
            all_arrays = b.build_and(all_arrays, is_array, "all_arrays")?;
        }
        let fast = cx.append_basic_block(kernel, "arrays");
        let mixed = cx.append_basic_block(kernel, "mixed");
        b.build_conditional_branch(all_arrays, fast, mixed)?;
        b.position_at_end(fast);
        emit_both(true)?;
        b.position_at_end(mixed);
        emit_both(false)?;
    }
    Ok(kernel)
}

/// Elements per vector access of the contiguous entry: 16 bytes of the widest array type,
/// at least 4 and at most 8 elements (4 `f32`s or `f64`s, 8 `i16`s or `u8`s). With 128
/// waves of blocks (the runtime's grid) a thread then takes one or two steps. Swept on an
/// H200 (`bench/sweep.py`, 2^28 elements): `add` on `f32` ran in 747 µs with 4 lanes
/// against 777 µs with 8 and 1 263 µs with 16; `f64` was fastest with 4 (1 515 µs, 2 lanes
/// 1 562).
fn vector_lanes(abi: &KernelAbi) -> u32 {
    let widest = abi.inputs.iter().chain(&abi.outputs).map(|t| t.size_bytes()).max().unwrap_or(4).max(1);
    // `Complex<f32>` arrays move 16 bytes per access, two elements: `a * b + c` over 2^27 of
    // them on the H200 ran in 971-974 µs with two lanes against 987-993 µs with four (three
    // runs each, 2026-12-03). (`Complex<f64>` keeps four, as `f64` does: not measured apart.)
    if widest == 8 && abi.inputs.iter().chain(&abi.outputs).any(|t| *t == crate::ty::ScalarType::C32) {
        return 2;
    }
    (16 / widest).clamp(4, 8)
}

/// The alignment a `lanes`-element access of `t` needs (at most 16 bytes: wider vectors
/// are split into 16-byte accesses).
fn vector_align(t: ScalarType, lanes: u32) -> u64 {
    (lanes as u64 * t.size_bytes() as u64).min(16)
}

fn abi_input_align(
    abi: &KernelAbi,
    inputs: &[(PointerValue<'_>, BasicValueEnum<'_>)],
    p: PointerValue<'_>,
    lanes: u32,
) -> u64 {
    let k = inputs.iter().position(|(q, _)| *q == p).expect("one of the inputs");
    vector_align(abi.inputs[k], lanes)
}

/// How the element loop of an entry is shaped.
#[derive(Copy, Clone, PartialEq)]
enum Shape {
    /// `lanes` consecutive elements per thread per iteration, with vector loads and
    /// stores; then the one-element loop for the last few.
    Vector,
    /// One element per iteration (the strided entry, and unaligned views).
    Plain,
}

struct GridLoop<'a, 'ctx> {
    cx: &'ctx Context,
    builder: &'a Builder<'ctx>,
    kernel: FunctionValue<'ctx>,
    scalar: FunctionValue<'ctx>,
    abi: &'a KernelAbi,
    first: IntValue<'ctx>,
    stride: IntValue<'ctx>,
    n: IntValue<'ctx>,
    /// One output array per result (a tuple's elements in order).
    out: Vec<PointerValue<'ctx>>,
    err: Option<FaultSlots<'ctx>>,
    /// The strided entry's layout parameters.
    layout: Option<Layout<'ctx>>,
    /// Per input, the element offset of the current index (strided entry).
    offsets: Vec<PointerValue<'ctx>>,
    remainder: PointerValue<'ctx>,
    /// Elements per vector access (contiguous entry).
    lanes: u32,
    /// Call the scalar function instead of inlining it (see `lower_kernel_entry`).
    outline: bool,
}

/// `lanes` lanes of a scalar memory type.
fn vector_of(t: inkwell::types::BasicTypeEnum<'_>, lanes: u32) -> inkwell::types::VectorType<'_> {
    match t {
        inkwell::types::BasicTypeEnum::IntType(i) => i.vec_type(lanes),
        inkwell::types::BasicTypeEnum::FloatType(f) => f.vec_type(lanes),
        other => unreachable!("memory types are integers or floats, not {other:?}"),
    }
}

/// The vector that holds `lanes` elements of `t` in memory order: `lanes` lanes of a plain
/// scalar, `2 * lanes` of a complex type's part (`re` then `im` of each element).
fn lanes_type(cx: &Context, t: ScalarType, lanes: u32) -> inkwell::types::VectorType<'_> {
    match t.complex_part() {
        Some(part) => vector_of(memory_type(cx, part), 2 * lanes),
        None => vector_of(memory_type(cx, t), lanes),
    }
}

/// Element `j` of a vector of [`lanes_type`].
fn lane<'ctx>(
    cx: &'ctx Context,
    b: &Builder<'ctx>,
    v: inkwell::values::VectorValue<'ctx>,
    t: ScalarType,
    j: u32,
) -> LResult<BasicValueEnum<'ctx>> {
    let at = |k: u32| b.build_extract_element(v, cx.i32_type().const_int(k as u64, false), "lane");
    if t.is_complex() {
        let st = memory_type(cx, t).into_struct_type();
        let agg = b.build_insert_value(st.get_undef(), at(2 * j)?, 0, "re")?;
        let agg = b.build_insert_value(agg, at(2 * j + 1)?, 1, "im")?;
        return Ok(agg.as_basic_value_enum());
    }
    Ok(at(j)?)
}

/// A vector of [`lanes_type`] holding `values`, one per element.
fn join_lanes<'ctx>(
    cx: &'ctx Context,
    b: &Builder<'ctx>,
    values: &[BasicValueEnum<'ctx>],
    t: ScalarType,
    name: &str,
) -> LResult<inkwell::values::VectorValue<'ctx>> {
    let mut v = lanes_type(cx, t, values.len() as u32).get_undef();
    let idx = |k: usize| cx.i32_type().const_int(k as u64, false);
    for (j, x) in values.iter().enumerate() {
        if t.is_complex() {
            for part in 0..2 {
                let p = b.build_extract_value(x.into_struct_value(), part, "part")?;
                v = b.build_insert_element(v, p, idx(2 * j + part as usize), name)?;
            }
        } else {
            v = b.build_insert_element(v, *x, idx(j), name)?;
        }
    }
    Ok(v)
}

struct Layout<'ctx> {
    ndim: IntValue<'ctx>,
    /// The extent of each axis, innermost first.
    shape: Vec<IntValue<'ctx>>,
    /// Per input, the stride of each axis in elements (signed; 0 for a broadcast axis).
    strides: Vec<Vec<IntValue<'ctx>>>,
}

#[derive(Copy, Clone)]
struct FaultSlots<'ctx> {
    local: PointerValue<'ctx>,
    global: PointerValue<'ctx>,
}

impl<'ctx> GridLoop<'_, 'ctx> {
    /// `for (i = first; i < n; i += stride) out[i] = f(inputs[i]…)`, then `ret`. With
    /// `all_arrays`, every input is loaded from its array; otherwise each input checks
    /// whether it is an array or a broadcast scalar. The contiguous entry first runs
    /// [`UNROLL`] elements per iteration (all their loads issued before any is used, so
    /// more memory requests are in flight), then the loop above finishes the rest.
    fn emit(
        &self,
        inputs: &[(PointerValue<'ctx>, BasicValueEnum<'ctx>)],
        all_arrays: bool,
        shape: Shape,
    ) -> LResult<()> {
        let (cx, b) = (self.cx, self.builder);
        let i64t = cx.i64_type();
        let start = match shape {
            Shape::Vector => self.emit_vectors(inputs, all_arrays)?,
            Shape::Plain => self.first,
        };
        let pre = b.get_insert_block().expect("positioned");
        let head = cx.append_basic_block(self.kernel, "loop");
        let done = cx.append_basic_block(self.kernel, "done");
        let enter = b.build_int_compare(IntPredicate::ULT, start, self.n, "enter")?;
        b.build_conditional_branch(enter, head, done)?;
        b.position_at_end(head);
        let i = b.build_phi(i64t, "i")?;
        i.add_incoming(&[(&start, pre)]);
        let idx = i.as_basic_value().into_int_value();
        if let Some(layout) = &self.layout {
            self.strided_offsets(layout, idx)?;
        }
        let args = self.load_args(inputs, idx, all_arrays)?;
        self.call_and_store(args, idx)?;
        let next = b.build_int_add(idx, self.stride, "next")?;
        let latch = b.get_insert_block().expect("positioned");
        i.add_incoming(&[(&next, latch)]);
        let more = b.build_int_compare(IntPredicate::ULT, next, self.n, "more")?;
        b.build_conditional_branch(more, head, done)?;
        b.position_at_end(done);
        b.build_return(None)?;
        Ok(())
    }

    /// `for (g = first; g < n / lanes; g += stride)` over groups of `lanes` consecutive
    /// elements, loaded and stored as vectors; returns the first index left for the
    /// one-element loop (`n / lanes * lanes + first`).
    fn emit_vectors(
        &self,
        inputs: &[(PointerValue<'ctx>, BasicValueEnum<'ctx>)],
        all_arrays: bool,
    ) -> LResult<IntValue<'ctx>> {
        let (cx, b) = (self.cx, self.builder);
        let i64t = cx.i64_type();
        let lanes = self.lanes;
        let width = i64t.const_int(lanes as u64, false);
        let groups = b.build_int_unsigned_div(self.n, width, "groups")?;
        let pre = b.get_insert_block().expect("positioned");
        let head = cx.append_basic_block(self.kernel, "vectors");
        let exit = cx.append_basic_block(self.kernel, "vectors_done");
        let enter = b.build_int_compare(IntPredicate::ULT, self.first, groups, "enter_vectors")?;
        b.build_conditional_branch(enter, head, exit)?;
        b.position_at_end(head);
        let g = b.build_phi(i64t, "g")?;
        g.add_incoming(&[(&self.first, pre)]);
        let g_val = g.as_basic_value().into_int_value();
        let base = b.build_int_mul(g_val, width, "base")?;
        // Each input's `lanes` values: lanes of one vector load, or the broadcast scalar.
        let mut per_input: Vec<Vec<BasicValueEnum<'ctx>>> = Vec::new();
        for (k, (ptr, val)) in inputs.iter().enumerate() {
            let t = self.abi.inputs[k];
            let mt = memory_type(cx, t);
            let vt = lanes_type(cx, t, lanes);
            let load = |b: &Builder<'ctx>| -> LResult<BasicValueEnum<'ctx>> {
                // SAFETY: `base + lanes <= n` and the arrays have `n` elements.
                let p = unsafe { b.build_in_bounds_gep(mt, *ptr, &[base], "vp")? };
                let v = b.build_load(vt, p, "vx")?;
                if let Some(inst) = v.as_instruction_value() {
                    inst.set_alignment(vector_align(t, lanes) as u32)
                        .map_err(|e| internal(e.to_string(), Span::call_site()))?;
                }
                Ok(v)
            };
            let v = if all_arrays {
                load(b)?.into_vector_value()
            } else {
                let splat = join_lanes(cx, b, &vec![*val; lanes as usize], t, "splat")?;
                self.array_or_scalar(*ptr, splat.into(), vt.into(), load, "vector_", "vx")?.into_vector_value()
            };
            let values = (0..lanes).map(|j| lane(cx, b, v, t, j)).collect::<LResult<Vec<_>>>()?;
            per_input.push(values);
        }
        let mut results: Vec<Vec<BasicValueEnum<'ctx>>> = Vec::new();
        for j in 0..lanes {
            let idx = b.build_int_add(base, i64t.const_int(j as u64, false), "e")?;
            let args = per_input
                .iter()
                .enumerate()
                .map(|(k, l)| self.value_from_memory(l[j as usize], self.abi.inputs[k]).map(Into::into))
                .collect::<LResult<Vec<BasicMetadataValueEnum<'ctx>>>>()?;
            results.push(self.call(args, idx)?);
        }
        for (o, (&t, &ptr)) in self.abi.outputs.iter().zip(&self.out).enumerate() {
            let outs: Vec<BasicValueEnum<'ctx>> = results.iter().map(|r| r[o]).collect();
            let v = join_lanes(cx, b, &outs, t, "out_lane")?;
            // SAFETY: `base + lanes <= n` and the outputs have `n` elements.
            let dst = unsafe { b.build_in_bounds_gep(memory_type(cx, t), ptr, &[base], "vdst")? };
            let st = b.build_store(dst, v)?;
            st.set_alignment(vector_align(t, lanes) as u32).map_err(|e| internal(e.to_string(), Span::call_site()))?;
        }
        let next = b.build_int_add(g_val, self.stride, "next_group")?;
        let latch = b.get_insert_block().expect("positioned");
        g.add_incoming(&[(&next, latch)]);
        let more = b.build_int_compare(IntPredicate::ULT, next, groups, "more_vectors")?;
        b.build_conditional_branch(more, head, exit)?;
        b.position_at_end(exit);
        let done = b.build_int_mul(groups, width, "vectorized")?;
        Ok(b.build_int_add(done, self.first, "tail")?)
    }

    /// The scalar function's arguments for element `idx`.
    fn load_args(
        &self,
        inputs: &[(PointerValue<'ctx>, BasicValueEnum<'ctx>)],
        idx: IntValue<'ctx>,
        all_arrays: bool,
    ) -> LResult<Vec<BasicMetadataValueEnum<'ctx>>> {
        let (cx, b) = (self.cx, self.builder);
        let i64t = cx.i64_type();
        let mut args: Vec<BasicMetadataValueEnum> = Vec::new();
        for (k, (ptr, val)) in inputs.iter().enumerate() {
            let t = self.abi.inputs[k];
            let mt = memory_type(cx, t);
            let load = |b: &Builder<'ctx>| -> LResult<BasicValueEnum<'ctx>> {
                let p = match self.offsets.get(k) {
                    // A strided view: the offset may be negative (a reversed axis); the
                    // runtime passes the address of the view's first element.
                    Some(slot) => {
                        let off = b.build_load(i64t, *slot, "off")?.into_int_value();
                        // SAFETY: a plain GEP (no `inbounds`: the offset may be negative, for a
                        // reversed axis) to an element the view covers, by the strides the
                        // runtime passes.
                        unsafe { b.build_gep(mt, *ptr, &[off], "elem")? }
                    }
                    // SAFETY: `idx < n` and the runtime passes arrays of `n` elements.
                    None => unsafe { b.build_in_bounds_gep(mt, *ptr, &[idx], "elem")? },
                };
                Ok(b.build_load(mt, p, "x")?)
            };
            let raw = if all_arrays { load(b)? } else { self.array_or_scalar(*ptr, *val, mt, load, "", "x")? };
            args.push(self.value_from_memory(raw, t)?.into());
        }
        Ok(args)
    }

    /// An input that may be an array or a broadcast scalar (a null `ptr`): `load` where
    /// `ptr` is an array, else `scalar`. Block names start with `prefix`.
    fn array_or_scalar(
        &self,
        ptr: PointerValue<'ctx>,
        scalar: BasicValueEnum<'ctx>,
        ty: BasicTypeEnum<'ctx>,
        load: impl Fn(&Builder<'ctx>) -> LResult<BasicValueEnum<'ctx>>,
        prefix: &str,
        name: &str,
    ) -> LResult<BasicValueEnum<'ctx>> {
        let (b, cx) = (&self.builder, self.cx);
        let is_array = b.build_is_not_null(ptr, "is_array")?;
        let from_array = cx.append_basic_block(self.kernel, &format!("{prefix}from_array"));
        let joined = cx.append_basic_block(self.kernel, &format!("{prefix}arg"));
        let here = b.get_insert_block().expect("positioned");
        b.build_conditional_branch(is_array, from_array, joined)?;
        b.position_at_end(from_array);
        let loaded = load(b)?;
        let loaded_in = b.get_insert_block().expect("positioned");
        b.build_unconditional_branch(joined)?;
        b.position_at_end(joined);
        let phi = b.build_phi(ty, name)?;
        phi.add_incoming(&[(&loaded, loaded_in), (&scalar, here)]);
        Ok(phi.as_basic_value())
    }

    /// `f(args)` for element `idx`, recording a fault: each output's value, as stored.
    fn call(
        &self,
        mut args: Vec<BasicMetadataValueEnum<'ctx>>,
        idx: IntValue<'ctx>,
    ) -> LResult<Vec<BasicValueEnum<'ctx>>> {
        let (cx, b) = (self.cx, self.builder);
        if let Some(err) = self.err {
            b.build_store(err.local, cx.i32_type().const_zero())?;
            args.push(err.local.into());
        }
        let call = b.build_call(self.scalar, &args, "y")?;
        if self.outline {
            call.add_attribute(
                AttributeLoc::Function,
                cx.create_enum_attribute(Attribute::get_named_enum_kind_id("noinline"), 0),
            );
        }
        let y = basic_value(call.try_as_basic_value(), Span::call_site())?;
        if let Some(err) = self.err {
            self.record_fault(err, idx)?;
        }
        let mut values = Vec::with_capacity(self.abi.outputs.len());
        // A tuple result is a struct, even of one field (`-> (f64,)`); so is one complex
        // value, which is not a tuple of its parts.
        let one = matches!(self.abi.outputs.as_slice(), [t] if y.get_type() == llvm_type(cx, *t));
        for (k, &t) in self.abi.outputs.iter().enumerate() {
            let v = if one { y } else { b.build_extract_value(y.into_struct_value(), k as u32, "result")? };
            values.push(self.to_memory(v, t)?);
        }
        Ok(values)
    }

    /// `out[idx] = f(args)` (each output of a tuple in its array), recording a fault.
    fn call_and_store(&self, args: Vec<BasicMetadataValueEnum<'ctx>>, idx: IntValue<'ctx>) -> LResult<()> {
        let (cx, b) = (self.cx, self.builder);
        let values = self.call(args, idx)?;
        for ((&t, &ptr), v) in self.abi.outputs.iter().zip(&self.out).zip(values) {
            // SAFETY: `idx < n` and the outputs have `n` elements.
            let dst = unsafe { b.build_in_bounds_gep(memory_type(cx, t), ptr, &[idx], "dst")? };
            b.build_store(dst, v)?;
        }
        Ok(())
    }

    /// Each input's element offset for the flat index `idx` of the broadcast shape (in
    /// C order: the innermost axis varies fastest): the index is split into coordinates
    /// axis by axis, up to `ndim` axes, and each coordinate scaled by the input's stride.
    fn strided_offsets(&self, layout: &Layout<'ctx>, idx: IntValue<'ctx>) -> LResult<()> {
        let (cx, b) = (self.cx, self.builder);
        let i64t = cx.i64_type();
        for slot in &self.offsets {
            b.build_store(*slot, i64t.const_zero())?;
        }
        b.build_store(self.remainder, idx)?;
        let done = cx.append_basic_block(self.kernel, "offsets_done");
        for d in 0..MAX_DIMS {
            let axis = cx.append_basic_block(self.kernel, "axis");
            let has =
                b.build_int_compare(IntPredicate::ULT, i64t.const_int(d as u64, false), layout.ndim, "has_axis")?;
            b.build_conditional_branch(has, axis, done)?;
            b.position_at_end(axis);
            let rem = b.build_load(i64t, self.remainder, "rem")?.into_int_value();
            let extent = layout.shape[d];
            // The outermost axis needs no division: its coordinate is what remains.
            let last =
                b.build_int_compare(IntPredicate::EQ, i64t.const_int(d as u64 + 1, false), layout.ndim, "last")?;
            let divide = cx.append_basic_block(self.kernel, "divide");
            let coord_ready = cx.append_basic_block(self.kernel, "coord");
            b.build_conditional_branch(last, coord_ready, divide)?;
            b.position_at_end(divide);
            let q = b.build_int_unsigned_div(rem, extent, "q")?;
            let r = b.build_int_sub(rem, b.build_int_mul(q, extent, "qe")?, "r")?;
            b.build_unconditional_branch(coord_ready)?;
            b.position_at_end(coord_ready);
            let coord = b.build_phi(i64t, "coord")?;
            coord.add_incoming(&[(&rem, axis), (&r, divide)]);
            let rest = b.build_phi(i64t, "rest")?;
            rest.add_incoming(&[(&i64t.const_zero(), axis), (&q, divide)]);
            let coord = coord.as_basic_value().into_int_value();
            b.build_store(self.remainder, rest.as_basic_value().into_int_value())?;
            for (slot, strides) in self.offsets.iter().zip(&layout.strides) {
                let off = b.build_load(i64t, *slot, "off")?.into_int_value();
                let step = b.build_int_mul(coord, strides[d], "step")?;
                b.build_store(*slot, b.build_int_add(off, step, "off")?)?;
            }
        }
        b.build_unconditional_branch(done)?;
        b.position_at_end(done);
        Ok(())
    }

    /// `if code != 0 { atomic_min(global, FaultWord::new(i, code)) }`.
    fn record_fault(&self, err: FaultSlots<'ctx>, idx: IntValue<'ctx>) -> LResult<()> {
        let (cx, b) = (self.cx, self.builder);
        let code = b.build_load(cx.i32_type(), err.local, "code")?.into_int_value();
        let failed = b.build_int_compare(IntPredicate::NE, code, cx.i32_type().const_zero(), "failed")?;
        let record = cx.append_basic_block(self.kernel, "record_fault");
        let next = cx.append_basic_block(self.kernel, "stored");
        b.build_conditional_branch(failed, record, next)?;
        b.position_at_end(record);
        let i64t = cx.i64_type();
        let shifted = b.build_left_shift(idx, i64t.const_int(FaultWord::CODE_BITS.into(), false), "at")?;
        let word = b.build_or(shifted, b.build_int_z_extend(code, i64t, "code64")?, "word")?;
        b.build_atomicrmw(AtomicRMWBinOp::UMin, err.global, word, AtomicOrdering::Monotonic)?;
        b.build_unconditional_branch(next)?;
        b.position_at_end(next);
        Ok(())
    }

    fn value_from_memory(&self, v: BasicValueEnum<'ctx>, t: ScalarType) -> LResult<BasicValueEnum<'ctx>> {
        if t == ScalarType::Bool {
            let zero = self.cx.i8_type().const_zero();
            return Ok(self.builder.build_int_compare(IntPredicate::NE, v.into_int_value(), zero, "b")?.into());
        }
        Ok(v)
    }

    fn to_memory(&self, v: BasicValueEnum<'ctx>, t: ScalarType) -> LResult<BasicValueEnum<'ctx>> {
        if t == ScalarType::Bool {
            return Ok(self.builder.build_int_z_extend(v.into_int_value(), self.cx.i8_type(), "byte")?.into());
        }
        Ok(v)
    }
}
