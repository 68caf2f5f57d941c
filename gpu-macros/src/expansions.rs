//! What each macro writes, for a reader: the full expansion of one `#[vectorize]`, one
//! `#[kernel]` and one `#[guvectorize]`, formatted, in `gpu-macros/expansions/*.snap`
//! (re-bless with `INSTA_UPDATE=always cargo test -p gpu-macros expansions`, then review
//! the diff like code). Long string literals (the PTX, the LLVM IR) are shortened to their
//! first line and length. Also the checks that the generated code stays a thin door into
//! the runtime.

use proc_macro2::TokenStream;
use quote::quote;

/// The expansion as formatted Rust, with long string literals shortened.
fn formatted(tokens: TokenStream) -> String {
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as a file");
    let text = prettyplease::unparse(&file);
    let mut out = String::new();
    let mut rest = text.as_str();
    // A string literal longer than 200 characters: `"<first line…> (N bytes)"`.
    while let Some(start) = rest.find('"') {
        let Some(len) = literal_len(&rest[start..]) else {
            out.push_str(rest);
            return out;
        };
        let lit = &rest[start..start + len];
        out.push_str(&rest[..start]);
        if lit.len() > 200 {
            let first = lit[1..].split("\\n").next().unwrap_or("");
            out.push_str(&format!("\"{first}… ({} bytes)\"", lit.len() - 2));
        } else {
            out.push_str(lit);
        }
        rest = &rest[start + len..];
    }
    out.push_str(rest);
    out
}

/// The length of the string literal at the start of `s` (with its quotes).
fn literal_len(s: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i + 1),
            _ => {}
        }
    }
    None
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("../expansions");
    s.set_prepend_module_to_snapshot(false);
    s
}

#[test]
fn vectorize() {
    let out = crate::entry::vectorize(
        quote!(),
        quote!(
            fn add(a: f32, b: f32) -> f32 {
                a + b
            }
        ),
    );
    settings().bind(|| insta::assert_snapshot!("vectorize", formatted(out)));
}

#[test]
fn kernel() {
    let out = crate::explicit::kernel(
        quote!(),
        quote!(
            fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
                let i = gpu::grid1();
                if i < y.len() {
                    y[i] = a * x[i] + y[i];
                }
            }
        ),
    );
    settings().bind(|| insta::assert_snapshot!("kernel", formatted(out)));
}

#[test]
fn guvectorize() {
    let out = crate::gufunc::guvectorize(
        quote!("(n),(n)->()"),
        quote!(
            fn dot(a: &[f32], b: &[f32]) -> f32 {
                let mut s = 0.0;
                for i in 0..a.len() {
                    s += a[i] * b[i];
                }
                s
            }
        ),
    );
    settings().bind(|| insta::assert_snapshot!("guvectorize", formatted(out)));
}

/// What a plain function expands to is mostly its kernel and one line per call: the
/// bodies live in the runtime (`gpu_runtime::__private`), so rustc checks them once.
#[test]
fn each_call_is_one_line_into_the_runtime() {
    let out = crate::entry::vectorize(
        quote!(),
        quote!(
            fn add(a: f32, b: f32) -> f32 {
                a + b
            }
        ),
    )
    .to_string();
    // The host loop is generated once, in `__Function`; the fault message is that loop run
    // on one element, and the arguments reach it erased, by the runtime's code.
    assert_eq!(out.matches("fn fill").count(), 1);
    for per_function in ["catch_quiet", "fn message_at", "fn at", "fn devices"] {
        assert!(!out.contains(per_function), "{per_function}");
    }
    for call in ["call", "on", "on_devices", "device", "into", "launch", "launch_device", "launch_into", "host"] {
        assert!(out.contains(&format!(":: __private :: {call} :: < ")), "{call}");
    }
    // The kernel's elementwise calls are made only by the runtime's generic code.
    for kernel_call in
        [". call_host", ". call_device", ". call_into", ". launch_host", ". launch_device", ". launch_into"]
    {
        assert!(!out.contains(kernel_call), "{kernel_call}");
    }
}

/// A gufunc's calls are one line each into the runtime's generic `gu`/`gu_device`, and
/// none of the orchestration (planning, dispatch, launch) is written out in the user's
/// crate.
#[test]
fn a_gufunc_is_a_type_and_one_line_per_call() {
    let out = crate::gufunc::guvectorize(
        quote!("(n)->()"),
        quote!(
            fn total(x: &[f32]) -> f32 {
                let mut s = 0.0;
                for i in 0..x.len() {
                    s += x[i];
                }
                s
            }
        ),
    )
    .to_string();
    // The call, on, sized, cpu, parallel, with, simulate and along.
    assert_eq!(out.matches(":: __private :: gu :: < ").count(), 8, "{out}");
    assert_eq!(out.matches(":: __private :: gu_device :: < ").count(), 1);
    assert_eq!(out.matches(":: __private :: gu_into :: < ").count(), 1);
    assert_eq!(out.matches(":: __private :: gu_launch :: < ").count(), 1);
    for orchestration in ["GuPlan :: new", "gu_run", "host_map", "first_panic", "upload"] {
        assert!(!out.contains(orchestration), "{orchestration}");
    }
}
