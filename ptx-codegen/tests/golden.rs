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
fn an_exact_product_fuses_into_its_sum() {
    // `x as f32 * 2^-32` is exact for every `u32` (no rounding, no underflow), so fusing it
    // into the addition changes no result: one `fma` (how random floats are made).
    let p = ptx("fn unit(x: u32) -> f32 { x as f32 * (1.0 / 4294967296.0) + 1.0 / 8589934592.0 }", &Options::default());
    assert!(p.contains("fma.rn.f32") && !p.contains("mul.rn.f32") && !p.contains("ftz"), "{p}");
    let p = ptx("fn unit(x: u64) -> f64 { 0.5 - (x >> 11) as f64 * (1.0 / 9007199254740992.0) }", &Options::default());
    assert!(p.contains("fma.rn.f64"), "{p}");
    // Not where the product may round: a float operand (a subnormal loses bits), a factor
    // that is not a power of two, or a power so small that the product is subnormal.
    for src in [
        "fn f(x: f32) -> f32 { x * 0.5 + 1.0 }",
        "fn f(x: u32) -> f32 { x as f32 * 3.0 + 1.0 }",
        "fn f(x: u32) -> f32 { x as f32 * 1.0e-40 + 1.0 }",
        "fn f(x: u8) -> f32 { x as f32 * (1.0 / 1267650600228229401496703205376.0) * (1.0 / 1267650600228229401496703205376.0) + 1.0 }",
    ] {
        let p = ptx(src, &Options::default());
        assert!(!p.contains("fma"), "{src}: {p}");
    }
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

/// Each function of a PTX text (`.entry` or `.func`, in order) and the functions its `call`s
/// name.
fn calls(ptx: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut lines = ptx.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let header = [".entry ", ".func "].iter().find_map(|h| line.trim_start_matches(".visible ").strip_prefix(h));
        if let Some(rest) = header {
            // `.func (.param .b32 func_retval0) name(`, or a declaration without the `(`.
            let rest = rest.trim();
            let rest = if rest.starts_with('(') { rest.split_once(')').map_or("", |(_, r)| r.trim()) } else { rest };
            let name = rest.split(['(', ' ']).next().unwrap_or_default();
            out.push((name.to_string(), Vec::new()));
        } else if line.starts_with("call") {
            // `call.uni (retval0), f, (…)`, the callee on this line or the next.
            let rest = line.split_once(char::is_whitespace).map_or("", |(_, r)| r);
            let rest = rest.trim().strip_prefix("(retval0),").unwrap_or(rest).trim();
            let callee = if rest.is_empty() { lines.next().unwrap_or_default() } else { rest };
            let callee = callee.split([',', ' ', '(', ';']).next().unwrap_or_default().to_string();
            out.last_mut().expect("a call inside a function").1.push(callee);
        }
    }
    out
}

#[test]
fn the_call_parser_finds_each_callee() {
    let ptx = ".func  (.param .b32 func_retval0) g\n(\n\t.param .b32 g_param_0\n)\n;\n\
               .func  (.param .b32 func_retval0) f_scalar(\n\t.param .b32 p\n)\n{\n\tret;\n}\n\
               .visible .entry k(\n)\n{\n\tcall.uni (retval0), \n\tf_scalar, \n\t(\n\tparam0\n\t);\n\
               \tcall.uni \n\tg, \n\t(\n\t);\n}\n";
    let k = ("k".to_string(), vec!["f_scalar".to_string(), "g".into()]);
    assert_eq!(calls(ptx), [("g".into(), vec![]), ("f_scalar".into(), vec![]), k]);
}

/// No entry calls the function it was compiled from (nor a helper, nor libdevice) out of
/// line, plain or `fastmath`: every function of the module shares one floating-point
/// environment, so LLVM inlines across them. The exceptions are meant: a function that
/// uses libdevice's math is called once from the strided and the reduction entries rather
/// than inlined into each.
#[test]
fn entries_inline_the_function_they_run() {
    let sq = [("sq".to_string(), "sq".to_string())];
    let sq_def = || {
        let item: syn::ItemFn = syn::parse_str("fn sq(v: f32) -> f32 { v * v }").unwrap();
        vec![ptx_codegen::frontend::HelperDef { id: "sq".into(), item, callees: vec![] }]
    };
    // (source, whether it calls libdevice's math, whether it calls the helper `sq`)
    let functions = [
        ("fn add(a: f32, b: f32) -> f32 { a + b }", false, false),
        ("fn muladd(x: f32, y: f32, z: f32) -> f32 { x * y + z }", false, false),
        ("fn muladd64(x: f64, y: f64, z: f64) -> f64 { x * y + z }", false, false),
        ("fn div(a: i32, b: i32) -> i32 { a / b }", false, false),
        ("fn relu(x: f32) -> f32 { if x > 0.0 { x } else { 0.0 } }", false, false),
        ("fn split(x: f32) -> (f32, bool) { (x * 0.5, x > 1.0) }", false, false),
        ("fn norm(x: f32, y: f32) -> f32 { (sq(x) + sq(y)) * 0.5 }", false, true),
        ("fn wave(x: f32) -> f32 { x.sin() * x.exp() }", true, false),
        ("fn hyp(x: f64, y: f64) -> f64 { x.hypot(y).ln() }", true, false),
        ("fn mix(a: f32, b: f32) -> f32 { a.powf(b) + a * b }", true, false),
    ];
    for (src, heavy, helper) in functions {
        let item: syn::ItemFn = syn::parse_str(src).unwrap();
        let name = item.sig.ident.to_string();
        for options in [Options::default(), fast()] {
            let (callees, helpers) = if helper { (&sq[..], sq_def()) } else { (&[][..], vec![]) };
            let k = ptx_codegen::compile_with_helpers(&item, callees, &helpers, &options)
                .unwrap_or_else(|e| panic!("{src}: {e}"));
            let own = format!("{name}_scalar");
            for (function, called) in calls(&k.ptx) {
                let meant =
                    heavy && (function == k.abi.strided_entry() || Some(&function) == k.abi.reduce_entry.as_ref());
                for callee in called {
                    let allowed = callee == own && meant;
                    assert!(
                        allowed,
                        "{src} (fastmath: {}): `{function}` calls `{callee}` out of line\n{}",
                        options.fastmath, k.ptx
                    );
                }
            }
            if heavy {
                // The outlined copy is still there, and called.
                let strided = calls(&k.ptx).into_iter().find(|(f, _)| *f == k.abi.strided_entry()).unwrap();
                assert_eq!(strided.1, std::slice::from_ref(&own), "{src}");
            }
        }
    }
}

/// The same for explicit kernels: the body and its `#[device]` helpers are inlined into the
/// `.entry`, and under `fastmath` the entry flushes f32 subnormals as its body does.
#[test]
fn kernels_inline_their_body_and_helpers() {
    let helper = |src: &str, id: &str| {
        let item: syn::ItemFn = syn::parse_str(src).unwrap();
        ptx_codegen::frontend::HelperDef { id: id.into(), item, callees: vec![] }
    };
    let helpers = [
        helper("fn twice(v: f32) -> f32 { v * 2.0 }", "twice"),
        helper("fn wavy(v: f32) -> f32 { v.sin() + v.cos() }", "wavy"),
        helper("fn safe_div(a: i32, b: i32) -> i32 { a / b + 1 }", "safe_div"),
    ];
    let callees: Vec<(String, String)> =
        ["twice", "wavy", "safe_div"].iter().map(|h| (h.to_string(), h.to_string())).collect();
    let kernels = [
        "fn axpy(a: f32, x: &[f32], y: &mut [f32]) { let i = gpu::grid1(); if i < y.len() { y[i] = a * x[i] + y[i]; } }",
        "fn scale(x: &[f32], y: &mut [f32]) { let i = gpu::grid1(); if i < y.len() { y[i] = twice(x[i]) * x[i] + 1.0; } }",
        "fn waves(x: &[f32], y: &mut [f32]) { let i = gpu::grid1(); if i < y.len() { y[i] = wavy(x[i]) * x[i]; } }",
        "fn divide(a: &[i32], out: &mut [i32]) { let i = gpu::grid1(); out[i] = safe_div(a[i], 3 - a[0]); }",
    ];
    for src in kernels {
        let item: syn::ItemFn = syn::parse_str(src).unwrap();
        for options in [Options::default(), fast()] {
            let v = ptx_codegen::compile_kernel_variants(&item, &callees, &helpers, &options, None)
                .unwrap_or_else(|e| panic!("{src}: {e}"));
            for k in std::iter::once(&v.wrapping).chain(&v.checked) {
                for (function, called) in calls(&k.ptx) {
                    assert!(
                        called.is_empty(),
                        "{src} (fastmath: {}): `{function}` calls {called:?} out of line\n{}",
                        options.fastmath,
                        k.ptx
                    );
                }
                let float = k.ptx.contains(".f32");
                if float && options.fastmath {
                    assert!(k.ptx.contains(".ftz.f32"), "{src}: fastmath flushes f32 subnormals\n{}", k.ptx);
                } else {
                    assert!(!k.ptx.contains(".ftz."), "{src}: IEEE subnormals unless fastmath\n{}", k.ptx);
                }
            }
        }
    }
}
