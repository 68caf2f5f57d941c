//! Every PTX the corpus generates is accepted by NVIDIA's assembler, for the oldest target
//! (sm_70) and Hopper (sm_90). Needs `ptxas` (`scripts/setup` installs it from PyPI).

mod corpus;

use std::path::PathBuf;
use std::process::Command;

use ptx_codegen::{IntOverflow, Options, compile_ir, compile_str, frontend, toolkit};

/// The corpus's PTX: each function's wrapping kernel, and with `checked` also its kernel
/// with overflow checks (what a build with `debug_assertions` gets), where it differs.
fn corpus_ptx(options: &Options, checked: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, src) in corpus::corpus() {
        let kernel = compile_str(&src, options).unwrap_or_else(|e| panic!("{name} does not compile: {e}"));
        assert!(kernel.ptx.contains(&format!(".visible .entry {}(", kernel.abi.entry)), "{name}");
        out.push((name.to_string(), kernel.ptx));
        if checked {
            let item: syn::ItemFn = syn::parse_str(&src).unwrap();
            let program = frontend::check_function(&item).unwrap();
            if program.checks_overflow() {
                let k = compile_ir(&program, &item.sig.ident.to_string(), options, IntOverflow::Panic)
                    .unwrap_or_else(|e| panic!("{name} with overflow checks does not compile: {e}"));
                out.push((format!("{name}.checked"), k.ptx));
            }
        }
    }
    out
}

fn assemble_all(arch: &str) {
    let ptxas = toolkit::find_ptxas(arch).unwrap_or_else(|| {
        panic!(
            "no ptxas that supports {arch} was found (looked at {:?}); run scripts/setup, which installs \
             the PyPI wheels nvidia-cuda-nvcc and nvidia-cuda-nvcc-cu12, or set PTXAS",
            toolkit::ptxas_candidates()
        )
    });
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("ptxas-{arch}"));
    std::fs::create_dir_all(&dir).unwrap();
    let options = Options { arch: arch.to_string(), ..Options::default() };
    let mut failures = Vec::new();
    // The checked kernels once, for the newest target (they differ only in their checks).
    for (name, ptx) in corpus_ptx(&options, arch == "sm_90") {
        assert!(ptx.contains(&format!(".target {arch}")), "{name}: {ptx}");
        let file = dir.join(format!("{name}.ptx"));
        std::fs::write(&file, &ptx).unwrap();
        let out = Command::new(&ptxas)
            .args([&format!("-arch={arch}"), file.to_str().unwrap(), "-o", "/dev/null"])
            .output()
            .unwrap();
        if !out.status.success() {
            failures.push(format!("{name}: {}", String::from_utf8_lossy(&out.stderr)));
        }
    }
    assert!(failures.is_empty(), "ptxas ({}) rejected:\n{}", ptxas.display(), failures.join("\n"));
}

#[test]
fn ptxas_accepts_the_corpus_for_sm_70() {
    assemble_all("sm_70");
}

#[test]
fn ptxas_accepts_the_corpus_for_sm_90() {
    assemble_all("sm_90");
}
