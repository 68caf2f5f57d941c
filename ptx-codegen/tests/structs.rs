//! User structs (`#[derive(GpuType)]`) in kernels and device functions: the layout the
//! compiler gives them, the PTX of field reads and writes, what `ptxas` makes of it, and
//! each refusal with its message.

use std::path::PathBuf;

use ptx_codegen::frontend::{self, HelperDef, StructEntry, define_structs};
use ptx_codegen::{CompiledExplicit, ExplicitParamKind, Options, ScalarType, compile_kernel_variants, toolkit};

const STRUCTS: &[(&str, &str)] = &[
    ("Particle", "#[repr(C)] struct Particle { pos: [f32; 3], vel: [f32; 3], mass: f32, id: u32 }"),
    ("Flagged", "#[repr(C)] struct Flagged { on: bool, weight: f64, inner: Particle, z: Complex<f32> }"),
    // 136 bytes: more than a reduction folds.
    ("Wide", "#[repr(C)] struct Wide { xs: [f64; 17] }"),
];

/// Every test struct entered under a key of this file, and the callee map naming them.
fn structs() -> Vec<(String, String)> {
    let entries: Vec<StructEntry> = STRUCTS
        .iter()
        .map(|(name, src)| StructEntry {
            id: format!("{name}_tests_structs"),
            item: syn::parse_str(src).unwrap(),
            fields: STRUCTS.iter().map(|(n, _)| (n.to_string(), format!("{n}_tests_structs"))).collect(),
        })
        .collect();
    define_structs(&entries).unwrap();
    STRUCTS.iter().map(|(n, _)| (n.to_string(), format!("{n}_tests_structs"))).collect()
}

fn compile_with(src: &str, helpers: &[HelperDef]) -> Result<CompiledExplicit, String> {
    let callees: Vec<(String, String)> =
        structs().into_iter().chain(helpers.iter().map(|h| (h.item.sig.ident.to_string(), h.id.clone()))).collect();
    let item: syn::ItemFn = syn::parse_str(src).unwrap();
    compile_kernel_variants(&item, &callees, helpers, &Options::default(), None)
        .map(|v| v.wrapping)
        .map_err(|e| e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))
}

fn compile(src: &str) -> CompiledExplicit {
    compile_with(src, &[]).unwrap_or_else(|e| panic!("does not compile: {e}\n{src}"))
}

fn helper(src: &str) -> HelperDef {
    let item: syn::ItemFn = syn::parse_str(src).unwrap();
    HelperDef { id: format!("{}_helper", item.sig.ident), item, callees: structs() }
}

fn error_containing(src: &str, needle: &str) {
    let e = compile_with(src, &[]).err().unwrap_or_else(|| panic!("expected an error for {src}"));
    assert!(e.contains(needle), "error {e:?} does not contain {needle:?}");
}

#[test]
fn the_layout_is_repr_c() {
    let callees = structs();
    let particle = frontend::struct_type(&callees[0].1).unwrap();
    let def = particle.struct_def().unwrap();
    assert_eq!(def.offsets(), [0, 12, 24, 28]);
    assert_eq!((def.size(), def.align()), (32, 4));
    let flagged = frontend::struct_type(&callees[1].1).unwrap().struct_def().unwrap();
    // `on` at 0, `weight` aligned to 8, `inner` (align 4) after it, the complex part at 48.
    assert_eq!(flagged.offsets(), [0, 8, 16, 48]);
    assert_eq!((flagged.size(), flagged.align()), (56, 8));
    assert_eq!(particle.rust_name(), "Particle");
}

#[test]
fn slices_of_structs_are_kernel_parameters() {
    let k = compile("fn k(a: &[Particle], out: &mut [Particle]) { let i = gpu::grid1(); out[i] = a[i]; }");
    let kinds: Vec<ExplicitParamKind> = k.abi.params.iter().map(|p| p.kind.clone()).collect();
    assert!(matches!(kinds[0], ExplicitParamKind::Slice { elem: ScalarType::Struct(_), mutable: false }));
    assert!(matches!(kinds[1], ExplicitParamKind::Slice { elem: ScalarType::Struct(_), mutable: true }));
    // 32-byte elements: the address of element `i` is `i * 32` (a shift by 5).
    assert!(k.ptx.contains("shl.b64") && k.ptx.contains(", 5;"), "{}", k.ptx);
}

#[test]
fn a_field_is_read_and_written_in_place() {
    let k = compile(
        "fn k(a: &[Particle], out: &mut [Particle], m: &mut [f32]) {
            let i = gpu::grid1();
            m[i] = a[i].mass + a[i].pos[2];
            out[i].id = 7;
            out[i].vel[1] += 1.5;
        }",
    );
    // `mass` at 24, `pos[2]` at 8: only those are loaded.
    assert!(k.ptx.contains("+24]"), "{}", k.ptx);
    assert!(k.ptx.contains("+8]"), "{}", k.ptx);
    // `id` at 28, `vel[1]` at 16: stored alone, not the whole element.
    assert!(k.ptx.contains("st.global.u32") && k.ptx.contains("+28]"), "{}", k.ptx);
    assert!(k.ptx.contains("+16]"), "{}", k.ptx);
}

#[test]
fn array_fields_are_bounds_checked() {
    let k = compile("fn k(a: &[Particle], m: &mut [f32], j: usize) { let i = gpu::grid1(); m[i] = a[i].vel[j]; }");
    // The element's index against the slice, the field's against 3.
    assert!(k.ptx.contains(", 3;"), "{}", k.ptx);
    let k = compile(
        "fn k(a: &[Particle], m: &mut [f32]) { let i = gpu::grid1(); let p = a[i]; m[i] = p.vel[0] + p.vel[1]; }",
    );
    assert!(!k.ptx.contains("index_fault") || k.ptx.contains("ld.global"), "{}", k.ptx);
}

#[test]
fn literals_locals_and_nested_structs() {
    compile(
        "fn k(out: &mut [Flagged], w: f64) {
            let i = gpu::grid1();
            let p = Particle { pos: [1.0, 2.0, 3.0], vel: [0.0; 3], mass: 4.0, id: i as u32 };
            let mut f = Flagged { on: w > 0.0, weight: w, inner: p, z: Complex::new(1.0f32, -1.0) };
            f.inner.pos[1] = 5.0;
            f.inner.mass *= 2.0;
            f.z = f.z * f.z;
            if f.on { out[i] = f; }
            out[i].inner.vel[2] = f.inner.pos[1];
            out[i].on = !out[i].on;
        }",
    );
}

#[test]
fn device_functions_take_and_return_structs() {
    let step = helper(
        "fn step(mut p: Particle, dt: f32) -> Particle {
            for k in 0..3 { p.pos[k] += p.vel[k] * dt; }
            p
        }",
    );
    let k = compile_with(
        "fn k(ps: &mut [Particle], dt: f32) { let i = gpu::grid1(); if i < ps.len() { ps[i] = step(ps[i], dt); } }",
        &[step],
    )
    .unwrap();
    assert!(k.ptx.contains(".visible .entry"), "{}", k.ptx);
}

#[test]
fn a_struct_is_a_kernel_parameter_by_value() {
    let k = compile(
        "fn k(f: Flagged, out: &mut [f32], n: u32) {
            let i = gpu::grid1();
            if i < out.len() { out[i] = f.inner.pos[i % 3] * f.z.im + f.weight as f32 + n as f32; }
        }",
    );
    let kinds: Vec<ExplicitParamKind> = k.abi.params.iter().map(|p| p.kind.clone()).collect();
    assert!(matches!(kinds[0], ExplicitParamKind::Scalar(ScalarType::Struct(_))), "{kinds:?}");
    // One parameter of the struct's 56 bytes at its 8-byte alignment, as CUDA C++ passes
    // a struct; the fields are read from it at their `#[repr(C)]` offsets.
    assert!(k.ptx.contains(".param .align 8 .b8 kernel_k_param_0[56]"), "{}", k.ptx);
    assert!(
        k.ptx.contains("kernel_k_param_0+48]") && k.ptx.contains("kernel_k_param_0+8]"),
        "`z` at 48, `weight` at 8: {}",
        k.ptx
    );
}

#[test]
fn ptxas_accepts_struct_kernels() {
    let arch = "sm_90";
    let Some(ptxas) = toolkit::find_ptxas(arch) else { panic!("no ptxas for {arch}: run scripts/setup") };
    let k = compile(
        "fn k(a: &[Flagged], out: &mut [Flagged], s: &mut [f32], j: usize) {
            let i = gpu::grid1();
            let mut f = a[i];
            f.inner.vel[j] -= 1.0;
            out[i] = f;
            out[i].inner.pos[j] = a[i].inner.mass;
            s[i] = a[i].z.re + f.inner.vel[0];
        }",
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ptxas-structs");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("structs.ptx");
    std::fs::write(&file, &k.ptx).unwrap();
    let rejected = toolkit::assemble(&ptxas, arch, &[file]);
    assert!(rejected.is_empty(), "{rejected:?}");
}

#[test]
fn refusals_name_the_problem() {
    error_containing("fn k(a: &[Particle], m: &mut [f32]) { m[0] = a[0].speed; }", "no field `speed` on `Particle`");
    error_containing("fn k(a: &[Particle], m: &mut [f32]) { let v = a[0].pos; }", "is an array field");
    error_containing("fn k(a: &[Particle]) { a[0].mass = 1.0; }", "behind a `&` reference");
    error_containing("fn k(a: &[Particle]) { let p = a[0]; p.mass = 1.0; }", "not mutable");
    error_containing("fn k(a: &mut [Particle]) { a[0].pos = [0.0; 3]; }", "is an array field of 3 elements");
    error_containing(
        "fn k(a: &mut [Particle]) { a[0] = Particle { pos: [0.0; 3], vel: [0.0; 3], mass: 1.0 }; }",
        "missing fields `id`",
    );
    error_containing(
        "fn k(a: &mut [Particle]) { a[0] = Particle { pos: [0.0; 2], vel: [0.0; 3], mass: 1.0, id: 0 }; }",
        "field `pos` has 3 elements",
    );
    error_containing(
        "fn k(a: &mut [Particle]) { let p = a[1]; a[0] = Particle { mass: 2.0, ..p }; }",
        "`..` is not supported in a struct literal",
    );
    error_containing("fn k(a: &mut [Particle]) { a[0].mass = 1u32; }", "field `a[0].mass` is a `f32`, found `u32`");
    error_containing("fn k(a: &mut [Particle]) { a[0] = a[0] + a[1]; }", "Particle");
    error_containing("fn k(a: &mut [Particle]) { a[0].mass[0] = 1.0; }", "only a struct's array fields are indexed");
    // What works on primitive scalars only (these used to reach the lowering and panic
    // there).
    error_containing(
        "fn k(a: &mut [Particle]) { let p = a[1]; a[0] = gpu::shfl_sync(0xffffffff, p, 0); }",
        "a warp built-in takes integers, floats and `bool`, not a struct",
    );
    error_containing(
        "fn k(a: &mut [Particle], m: &mut [u32]) { m[0] = gpu::match_any_sync(0xffffffff, a[0]); }",
        "not a struct: apply it to its fields (`p.x`)",
    );
    error_containing(
        "fn k(a: &mut [Particle]) { let (x, y) = gpu::load2(a, 0); }",
        "move integers and floats, not structs",
    );
    error_containing(
        "fn k(a: &mut [Particle]) { let p = a[0]; gpu::store2(a, 0, p, p); }",
        "move integers and floats, not structs",
    );
    error_containing(
        "fn k(a: &mut [Particle], b: &mut [bool]) { b[0] = a[0] == a[1]; }",
        "a comparison does not apply to the struct `Particle`",
    );
    error_containing(
        "fn k(a: &mut [Particle], m: &mut [f32]) { m[0] = a[0] as f32; }",
        "`as f32` does not apply to the struct",
    );
    error_containing("fn k(a: &mut [Particle]) { let mut p = a[0]; p += a[1]; }", "`+` does not apply to the struct");
    error_containing(
        "fn k(a: &mut [Particle], m: &mut [f32]) { match a[0] { p => m[0] = p.mass } }",
        "`match` does not apply",
    );
}

#[test]
fn field_types_are_checked_where_the_struct_is_defined() {
    let bad = |src: &str| {
        let item: syn::ItemStruct = syn::parse_str(src).unwrap();
        frontend::struct_def(&item, &|_| Err(())).err().map(|e| e.to_string())
    };
    assert!(bad("struct S { r: &'static f32 }").unwrap().contains("not a reference"));
    assert!(bad("struct S { v: Vec<f32> }").is_some());
    assert!(bad("struct S { t: (f32, f32) }").is_some());
    assert!(bad("struct S(f32);").unwrap().contains("named fields"));
    assert!(bad("struct S<T> { x: T }").unwrap().contains("generic"));
    assert!(bad("struct S { a: [f32; N] }").unwrap().contains("integer literal"));
    assert!(bad("struct S { a: [[f32; 2]; 2] }").is_some());
    assert!(bad("struct S { a: [f32; 4], b: u8, c: half::f16, z: Complex<f64> }").is_none());
}

#[test]
fn structs_in_tuples_and_shared_arrays() {
    let split = helper(
        "fn split(p: Particle) -> (Particle, f32) {
            let mut q = p;
            q.mass = 0.0;
            (q, p.mass)
        }",
    );
    let k = compile_with(
        "fn k(ps: &mut [Particle], m: &mut [f32]) {
            let tile = gpu::shared::<Particle, 64>();
            let i = gpu::grid1();
            let t = gpu::thread_idx().x as usize;
            tile[t] = ps[i];
            gpu::sync_threads();
            let (q, mass) = split(tile[63 - t]);
            tile[t].id = q.id;
            ps[i] = q;
            m[i] = mass + tile[t].pos[1];
        }",
        &[split],
    )
    .unwrap();
    assert_eq!(k.abi.static_shared_bytes, 64 * 32);
    assert!(k.ptx.contains(".shared"), "{}", k.ptx);
}

/// Rust evaluates a struct literal's fields in the order written: a literal written out of
/// the definition's order evaluates each value into a temporary first.
#[test]
fn literal_fields_are_evaluated_in_the_order_written() {
    use ptx_codegen::ir::{ExprKind, Literal, Stmt, visit_block};
    let callees = structs();
    let item: syn::ItemFn = syn::parse_str(
        "fn k(a: &[f32], out: &mut [Particle]) {
            out[0] = Particle { id: 1, mass: a[9], vel: [a[7]; 3], pos: [a[8], 0.0, 0.0] };
        }",
    )
    .unwrap();
    let p = frontend::check_kernel_program(&item, &callees, &[]).unwrap();
    // The indices of the temporaries' reads of `a`, in the order of their `let`s.
    let mut order = Vec::new();
    visit_block(&p.entry().body, &mut |e| {
        if let ExprKind::Block(b) = &e.kind {
            if matches!(b.tail.as_deref().map(|t| &t.kind), Some(ExprKind::StructLit(_))) {
                for s in &b.stmts {
                    if let Stmt::Let { init: Some(init), .. } = s {
                        if let ExprKind::Index { index, .. } = &init.kind {
                            if let ExprKind::Lit(Literal::Int(i)) = index[0].kind {
                                order.push(i);
                            }
                        }
                    }
                }
            }
        }
    });
    assert_eq!(order, [9, 7, 8]);
    // In the definition's order, no temporaries.
    let item: syn::ItemFn = syn::parse_str(
        "fn k(a: &[f32], out: &mut [Particle]) {
            out[0] = Particle { pos: [a[8], 0.0, 0.0], vel: [a[7]; 3], mass: a[9], id: 1 };
        }",
    )
    .unwrap();
    let p = frontend::check_kernel_program(&item, &callees, &[]).unwrap();
    let mut blocks = 0;
    visit_block(&p.entry().body, &mut |e| {
        blocks += usize::from(matches!(&e.kind, ExprKind::Block(b) if !b.stmts.is_empty()))
    });
    assert_eq!(blocks, 0);
    compile(
        "fn k(a: &[f32], out: &mut [Particle]) { out[0] = Particle { id: 1, mass: a[9], vel: [a[7]; 3], pos: [a[8], 0.0, 0.0] }; }",
    );
}

/// A vectorized function over structs: `src` compiled with the test structs in scope.
fn vectorized(src: &str) -> ptx_codegen::CompiledKernel {
    let item: syn::ItemFn = syn::parse_str(src).unwrap();
    ptx_codegen::compile_variants(&item, &structs(), &[], &Options::default(), None)
        .unwrap_or_else(|e| panic!("does not compile: {e}\n{src}"))
        .wrapping
}

#[test]
fn vectorized_functions_take_structs_by_value_and_return_them() {
    let k = vectorized(
        "fn shift(p: Particle, o: Particle, k: usize) -> (Particle, f32) {
            let mut q = p;
            q.pos[k] -= o.pos[k];
            (q, p.mass + o.mass)
        }",
    );
    assert!(k.abi.reduce_entry.is_none());
    // Each struct input's by-value slot is its bytes (as CUDA passes a struct), read a
    // field at a time; element by element, without vector accesses (a struct's fields are
    // not lanes of one type).
    let entry = k.ptx.split(".entry vectorize_shift_strided").next().unwrap();
    assert_eq!(entry.matches(".param .align 4 .b8").count(), 2, "{entry}");
    assert!(entry.contains("_param_4[32]") && entry.contains("_param_6[32]"), "{entry}");
    assert!(entry.contains("ld.param.f32") && !entry.contains(".v4."), "{entry}");
    // `fn(P, P) -> P` folds: its reduction entry keeps a block's 256 values of 32 bytes in
    // shared memory and loads the elements whole, not as vectors of one type.
    let f = vectorized("fn pick(a: Particle, b: Particle) -> Particle { if a.mass > b.mass { a } else { b } }");
    assert_eq!(f.abi.reduce_entry.as_deref(), Some("vectorize_pick_reduce"));
    let fold = f.ptx.split(".entry vectorize_pick_reduce").nth(1).unwrap();
    assert!(fold.contains(".shared .align 8 .b8 vectorize_pick_reduce_$_values[8192]"), "{}", f.ptx);
    assert!(!fold.contains(".v4.") && !fold.contains(".v2.u64"), "{fold}");
    // A struct of more than `REDUCE_MAX_BYTES` does not.
    let wide = vectorized("fn first(a: Wide, b: Wide) -> Wide { if a.xs[0] < b.xs[0] { a } else { b } }");
    assert!(wide.abi.reduce_entry.is_none());
    let arch = "sm_90";
    let Some(ptxas) = toolkit::find_ptxas(arch) else { panic!("no ptxas for {arch}: run scripts/setup") };
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ptxas-vectorized-structs");
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<PathBuf> = [("shift", &k.ptx), ("pick", &f.ptx)]
        .iter()
        .map(|(name, ptx)| {
            let file = dir.join(format!("{name}.ptx"));
            std::fs::write(&file, ptx).unwrap();
            file
        })
        .collect();
    let rejected = toolkit::assemble(&ptxas, arch, &files);
    assert!(rejected.is_empty(), "{rejected:?}");
}

#[test]
fn a_vectorized_function_indexes_only_array_fields() {
    let item: syn::ItemFn =
        syn::parse_str("fn f(p: Particle, x: f32) -> f32 { let t = (x, x); p.pos[1] + t[0] }").unwrap();
    let e = ptx_codegen::compile_variants(&item, &structs(), &[], &Options::default(), None).err().unwrap();
    assert!(e.to_string().contains("indexing is not supported"), "{e}");
}

/// `op=` on a complex field: the field read again after the value (num-complex's `op=`
/// evaluates its place first, and the borrow checker keeps the value from writing it), with
/// a complex or a real operand; refused with an index that evaluating twice could change.
#[test]
fn op_assign_on_a_complex_field() {
    let k = compile(
        "fn k(a: &mut [Flagged], w: &[Complex<f32>]) {
            let i = gpu::grid1();
            let mut f = a[i];
            f.z *= w[i];
            f.z += 2.0;
            a[i] = f;
            a[i].z /= w[i];
        }",
    );
    // Complex multiply and divide: num-complex's formulas on the parts, in f32.
    assert!(k.ptx.contains("mul.rn.f32") && k.ptx.contains("div.rn.f32"), "{}", k.ptx);
    error_containing(
        "fn k(a: &mut [Flagged], w: &[Complex<f32>]) { let i = gpu::grid1(); a[i + 1].z *= w[i]; }",
        "`op=` on a `Complex<f32>` field with an index that is not a variable, a constant or a literal is not supported: write `a[i + 1].z = a[i + 1].z * …`",
    );
}
