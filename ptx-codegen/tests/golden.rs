//! Golden PTX of representative kernels (re-bless with `INSTA_UPDATE=always`, then review
//! the diff like code), and the properties each must keep whatever LLVM does.

use ptx_codegen::{Options, compile_str};

/// The PTX of `src`, without its strided entry (the N-dimensional variant of the same
/// loop, checked on its own below) to keep the snapshots readable.
fn ptx(src: &str, options: &Options) -> String {
    let full = compile_str(src, options).unwrap_or_else(|e| panic!("{src}: {e}")).ptx;
    let mut out = String::new();
    let mut skipping = false;
    for line in full.lines() {
        if line.starts_with(".visible .entry") && line.contains("_strided(") {
            skipping = true;
        }
        if !skipping {
            out.push_str(line);
            out.push('\n');
        }
        if skipping && line == "}" {
            skipping = false;
        }
    }
    out
}

#[test]
fn the_strided_entry_walks_views_by_their_strides() {
    let p = compile_str("fn add_gpu(a: f32, b: f32) -> f32 { a + b }", &Options::default()).unwrap().ptx;
    let start = p.find(".entry vectorize_add_gpu_strided(").expect("a strided entry");
    let body = &p[start..start + p[start..].find("\n}\n").expect("its end")];
    // n, the output, two (pointer, value) pairs, ndim, 8 extents and 8 strides per input.
    assert_eq!(body.matches("\t.param ").count(), 1 + 1 + 4 + 1 + 8 + 16, "{body}");
    // Coordinates come from divisions (32-bit when the values fit), and the inputs are
    // still read through the read-only cache.
    assert!(body.contains("div.u32") && body.contains("div.u64"), "{body}");
    assert!(body.contains("ld.global.nc.f32"), "{body}");
    assert!(body.contains("add.rn.f32"), "{body}");
}

fn fast() -> Options {
    Options { fastmath: true, ..Options::default() }
}

#[test]
fn add_is_ieee_with_read_only_loads() {
    let p = ptx("fn add_gpu(a: f32, b: f32) -> f32 { a + b }", &Options::default());
    assert!(p.contains("add.rn.f32") && p.contains("ld.global.nc.f32"), "{p}");
    // Aligned arrays are read and written 16 bytes at a time.
    assert!(p.contains("ld.global.nc.v4.f32") && p.contains("st.global.v4.f32"), "{p}");
    insta::assert_snapshot!("add_f32_sm70", p);
}

#[test]
fn multiply_add_is_not_contracted_unless_fastmath() {
    let src = "fn saxpy(a: f32, x: f32, y: f32) -> f32 { a * x + y }";
    let p = ptx(src, &Options::default());
    assert!(p.contains("mul.rn.f32") && p.contains("add.rn.f32") && !p.contains("fma"), "{p}");
    let p = ptx(src, &fast());
    assert!(p.contains("fma.rn.ftz.f32"), "{p}");
    insta::assert_snapshot!("saxpy_fastmath", p);
}

#[test]
fn fastmath_uses_approximate_transcendentals() {
    let src = "fn wave(x: f32) -> f32 { x.sin() * x.exp() }";
    let exact = ptx(src, &Options::default());
    // (libdevice's accurate `expf` uses `ex2.approx` as one step of its own, exact or not.)
    assert!(!exact.contains("sin.approx"), "{exact}");
    let p = ptx(src, &fast());
    assert!(p.contains("sin.approx.ftz.f32"), "{p}");
    assert!(p.len() < exact.len() / 2, "the fast version is much shorter");
}

#[test]
fn integer_division_reports_the_first_failed_element() {
    let p = ptx("fn div(a: i32, b: i32) -> i32 { a / b }", &Options::default());
    assert!(p.contains("atom.global.min.u64") && p.contains("div.s32"), "{p}");
    insta::assert_snapshot!("div_i32", p);
}

#[test]
fn f64_math_links_libdevice_and_inlines_it_into_the_kernel() {
    let p = ptx(
        "fn hyp(x: f64, y: f64) -> f64 { x.hypot(y).ln() }",
        &Options { arch: "sm_90".into(), ..Options::default() },
    );
    assert!(p.contains(".target sm_90"), "{p}");
    // The entries are the kernel and its reduction (the strided entry is left out here).
    assert_eq!(p.matches(".entry").count(), 2);
    // libdevice is inlined into the function, and the function into the kernel; the
    // reduction (and the strided entry) call one copy of it instead of inlining more.
    let kernel = &p[p.find(".entry vectorize_hyp(").unwrap()..p.find(".entry vectorize_hyp_reduce(").unwrap()];
    assert!(!kernel.contains("call.uni"), "{kernel}");
    assert!(!p.contains("__nv_"), "{p}");
    assert!(p[p.find(".entry vectorize_hyp_reduce(").unwrap()..].contains("call.uni"), "{p}");
}

#[test]
fn a_select_is_branch_free() {
    let p = ptx("fn relu(x: f32) -> f32 { if x > 0.0 { x } else { 0.0 } }", &Options::default());
    insta::assert_snapshot!("relu_f32", p);
}

#[test]
fn binary_functions_of_one_type_get_a_reduction_kernel() {
    let k = compile_str("fn add(a: f64, b: f64) -> f64 { a + b }", &Options::default()).unwrap();
    assert_eq!(k.abi.reduce_entry.as_deref(), Some("vectorize_add_reduce"));
    assert!(k.ptx.contains(".visible .entry vectorize_add_reduce("), "{}", k.ptx);
    assert!(k.ptx.contains("bar.sync") && k.ptx.contains(".shared"), "{}", k.ptx);
    let k = compile_str("fn mix(a: f64, b: f32) -> f64 { a + b as f64 }", &Options::default()).unwrap();
    assert_eq!(k.abi.reduce_entry, None);
}

#[test]
fn a_one_field_tuple_is_a_result_array_of_its_own() {
    // `-> (f64,)` returns a struct of one field, not a scalar: each entry takes it apart.
    let k = compile_str("fn single(a: f64, b: f64) -> (f64,) { (a + b,) }", &Options::default())
        .unwrap_or_else(|e| panic!("a one-field tuple compiles: {e}"));
    assert_eq!(k.abi.outputs.len(), 1);
    // A tuple, even of one `T`, is not `(T, T) -> T`: no reduction entry.
    assert_eq!(k.abi.reduce_entry, None);
    for entry in [k.abi.entry.clone(), k.abi.strided_entry()] {
        assert!(k.ptx.contains(&format!(".entry {entry}(")), "{entry}");
    }
    assert!(k.ptx.contains("add.rn.f64") && k.ptx.contains("st.global.f64"), "{}", k.ptx);
}
