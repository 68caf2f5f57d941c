//! Every PTX the corpus generates is accepted by NVIDIA's assembler, for the oldest target
//! (sm_70) and Hopper (sm_90). Needs `ptxas` (`scripts/setup` installs it from PyPI).

mod corpus;

use std::path::PathBuf;

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
    let mut files = Vec::new();
    // The checked kernels once, for the newest target (they differ only in their checks).
    for (name, ptx) in corpus_ptx(&options, arch == "sm_90") {
        assert!(ptx.contains(&format!(".target {arch}")), "{name}: {ptx}");
        let file = dir.join(format!("{name}.ptx"));
        std::fs::write(&file, &ptx).unwrap();
        files.push(file);
    }
    // A kernel and its checked twin define the same entries: separate runs of `ptxas`.
    let (checked, wrapping): (Vec<PathBuf>, Vec<PathBuf>) =
        files.into_iter().partition(|f| f.to_string_lossy().ends_with(".checked.ptx"));
    let rejected = [toolkit::assemble(&ptxas, arch, &wrapping), toolkit::assemble(&ptxas, arch, &checked)].concat();
    let failures: Vec<String> = rejected.iter().map(|(f, e)| format!("{}: {e}", f.display())).collect();
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

/// `toolkit::assemble` names exactly the files `ptxas` rejects, whether the others share a
/// run with them or define the same entry (which one run of `ptxas` refuses).
#[test]
fn assemble_names_the_files_it_rejects() {
    let ptxas = toolkit::find_ptxas("sm_70").expect("ptxas (scripts/setup installs it)");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ptxas-assemble");
    std::fs::create_dir_all(&dir).unwrap();
    let module = |entry: &str, body: &str| {
        format!(".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry {entry}()\n{{\n{body}\n}}\n")
    };
    let files: Vec<PathBuf> = [
        ("a", module("k", "ret;")),
        ("twin", module("k", "ret;")),
        ("bad", module("j", "add.f32 %f1, %f2;\nret;")),
        ("c", module("m", "ret;")),
    ]
    .iter()
    .map(|(name, text)| {
        let f = dir.join(format!("{name}.ptx"));
        std::fs::write(&f, text).unwrap();
        f
    })
    .collect();
    let rejected = toolkit::assemble(&ptxas, "sm_70", &files);
    let names: Vec<_> = rejected.iter().map(|(f, _)| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["bad.ptx"], "{rejected:?}");
    assert!(toolkit::assemble(&ptxas, "sm_70", &[files[0].clone(), files[3].clone()]).is_empty());
}
