//! Differential testing of the compiler with random programs of the kernel language.
//!
//! Each generated function is (1) compiled with its helpers (the `#[device]` functions it
//! calls) by `ptx_codegen::compile_with_helpers` for sm_70 and sm_90, which must succeed (any error from a well-typed program is a finding), and the
//! PTX assembled by NVIDIA's `ptxas` for the same targets; and (2) lowered exactly as for
//! the GPU (the program `frontend::check_program` makes of the function and its helpers;
//! only its rounding to `bf16` is a call, `lower::Lowering::bf16_round_calls`),
//! JIT-compiled for the CPU, and run on edge and random inputs: its results must
//! be bit-identical (any NaN equals any NaN) to the reference's, and it must fault where
//! the reference panics, with the same fault.
//!
//! The reference for the fixed-seed corpora (`kernel_fuzz::corpus::HOST_SEEDS`, and
//! `HOST_TYPES_SEEDS` with `half`'s `f16`/`bf16` and num-complex's `Complex<f32>`/
//! `Complex<f64>`) is the same function compiled by rustc (the build script writes it into
//! this test), under Rust's release semantics (see `release_semantics`); the interpreter is
//! checked against it on the same inputs. For any other seed the interpreter is the
//! reference: `random_programs` (the primitive types) and `random_programs_with_new_types`
//! (the half and complex types too, `f16::from_f64` included, which rustc's `half` does not
//! round once) run `FUZZ_COUNT` seeds from `FUZZ_SEED`; `FUZZ_PROGRESS` reports as it goes
//! and `FUZZ_REDUCE` shrinks the first functions of each kind of finding.
//!
//! Arguments and results pass as `u64` words (`Value::to_words`: a `Complex<f64>` takes
//! two), as the host JIT takes them.
//!
//! Integer overflow: the reference wraps (release semantics), and so do `compile_with_helpers`'s
//! kernel and the host JIT compiled with [`OVERFLOW`]. The checked lowering (what a build
//! with `debug_assertions` gets) is run too, against the interpreter's checked mode.
//!
//! `powi`: Rust leaves its rounding unspecified, and an optimised rustc folds a constant
//! receiver with the host's `pow` where the unoptimised build (and the kernel) run
//! compiler-rt's repeated squaring. The corpus's reference is compared unoptimised (the
//! test profile); with `--release` a `powi` of a constant may differ in its last bit.

mod corpus {
    include!(concat!(env!("OUT_DIR"), "/host_corpus.rs"));
}

mod corpus_types {
    include!(concat!(env!("OUT_DIR"), "/host_types_corpus.rs"));
}

mod corpus_structs {
    include!(concat!(env!("OUT_DIR"), "/host_struct_corpus.rs"));
}

#[path = "support/words.rs"]
mod words;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use inkwell::context::Context;
use kernel_fuzz::ast::Program;
use kernel_fuzz::inputs::inputs;
use kernel_fuzz::native::NativeFn;
use kernel_fuzz::render::render_struct;
use kernel_fuzz::special::libdevice_on_host;
use kernel_fuzz::{Config, Fault, Overflow, Stop, Ty, Value, program, render, render_fn};
use ptx_codegen::{IntOverflow, Options, compile_with_helpers, frontend, host, toolkit};

/// Argument lists per function.
const INPUTS: usize = 48;

/// The targets every PTX is compiled for and assembled for.
const ARCHS: [&str; 2] = ["sm_70", "sm_90"];

/// How the compiler is asked to compile. `compile_with_helpers` gives the kernel of a release build
/// (integers wrap), the variant the reference computes; so does the host JIT with
/// [`OVERFLOW`].
fn options(arch: &str) -> Options {
    Options { arch: arch.to_string(), ..Options::default() }
}

/// Integer overflow in the host JIT: wrapping, as in the reference. The checked variant
/// (a build with `debug_assertions`) is compared with the interpreter's checked mode.
const OVERFLOW: IntOverflow = IntOverflow::Wrap;

/// The fault code the compiled code reports for a fault of Rust's.
fn fault_code(f: Fault) -> u32 {
    use ptx_codegen::Fault as K;
    match f {
        Fault::DivideByZero => K::DivideByZero,
        Fault::RemainderByZero => K::RemainderByZero,
        Fault::DivideOverflow => K::DivideOverflow,
        Fault::RemainderOverflow => K::RemainderOverflow,
        Fault::StepByZero => K::StepByZero,
        Fault::FloatClampBounds => K::FloatClampBounds,
        Fault::IntClampBounds => K::IntClampBounds,
        Fault::AddOverflow => K::AddOverflow,
        Fault::SubOverflow => K::SubOverflow,
        Fault::MulOverflow => K::MulOverflow,
        Fault::NegOverflow => K::NegOverflow,
        Fault::ShlOverflow => K::ShlOverflow,
        Fault::ShrOverflow => K::ShrOverflow,
    }
    .code()
}

#[path = "../../tests/support/quiet.rs"]
mod quiet;
use quiet::quietly;

/// What a run computes: the results, or the fault where Rust panics.
type Outcome = Result<Vec<Value>, Fault>;

fn show(o: &Outcome) -> String {
    match o {
        Ok(vs) => vs.iter().map(Value::to_string).collect::<Vec<_>>().join(", "),
        Err(f) => format!("fault {f:?}"),
    }
}

fn same(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.same(*q)),
        (Err(f), Err(g)) => f == g,
        _ => false,
    }
}

/// Something wrong with one function: `kind` names it (what the reducer keeps while it
/// shrinks the function), `detail` says where.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Finding {
    kind: String,
    detail: String,
}

fn finding(kind: impl Into<String>, detail: impl Into<String>) -> Finding {
    Finding { kind: kind.into(), detail: detail.into() }
}

/// The first line of a message.
fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or_default().to_string()
}

/// A function's PTX for one target, kept for `ptxas`.
struct Ptx {
    seed: u64,
    arch: &'static str,
    file: PathBuf,
}

/// Time spent in each phase, summed over the workers (microseconds).
#[derive(Default)]
struct Phases {
    compile: AtomicU64,
    jit: AtomicU64,
    run: AtomicU64,
    ptxas: AtomicU64,
}

impl Phases {
    fn add(counter: &AtomicU64, since: Instant) {
        counter.fetch_add(since.elapsed().as_micros() as u64, Ordering::Relaxed);
    }

    fn show(counter: &AtomicU64) -> String {
        format!("{:.1}s", counter.load(Ordering::Relaxed) as f64 / 1e6)
    }
}

/// A program as the compiler gets it from `#[vectorize]` and `#[device]`: the function's
/// item and the paths it calls mapped to helper ids, and its helpers (id = the helper's
/// name, unique per seed), each with its own callees. A function's callees are the paths
/// `frontend::external_callees` finds in it (nested functions' calls included), as the
/// macros find them.
type Items = (syn::ItemFn, Vec<(String, String)>, Vec<frontend::HelperDef>);

fn items(p: &Program) -> Result<Items, String> {
    // The program's structs, entered as `#[derive(GpuType)]` enters them: each under its
    // name (unique per seed), every function (and struct) naming them all.
    let structs: Vec<(String, String)> = p.structs.iter().map(|d| (d.name.clone(), d.name.clone())).collect();
    let entries = p
        .structs
        .iter()
        .map(|d| {
            let item: syn::ItemStruct = syn::parse_str(&render_struct(d, "Clone, Copy", false))
                .map_err(|e| format!("{} does not parse: {e}", d.name))?;
            Ok(frontend::StructEntry { id: d.name.clone(), item, fields: structs.clone() })
        })
        .collect::<Result<Vec<_>, String>>()?;
    frontend::define_structs(&entries).map_err(|e| format!("the structs are refused: {e}"))?;
    let parse = |f: &kernel_fuzz::ast::FnItem| -> Result<(syn::ItemFn, Vec<(String, String)>), String> {
        let item: syn::ItemFn = syn::parse_str(&render_fn(f)).map_err(|e| format!("{} does not parse: {e}", f.name))?;
        let callees = frontend::external_callees(&item)
            .iter()
            .map(frontend::path_key)
            .filter_map(|k| p.helpers.iter().find(|h| h.name == k).map(|h| (k.clone(), h.name.clone())))
            .chain(structs.iter().cloned())
            .collect();
        Ok((item, callees))
    };
    let helpers = p
        .helpers
        .iter()
        .map(|h| parse(h).map(|(item, callees)| frontend::HelperDef { id: h.name.clone(), item, callees }))
        .collect::<Result<Vec<_>, _>>()?;
    let (entry, callees) = parse(&p.func)?;
    Ok((entry, callees, helpers))
}

/// Checks one program, (1) and (2) of the module's description; leaves its PTX in `dir`
/// for [`assemble`].
fn check(p: &Program, native: Option<NativeFn>, dir: &Path, ptx: &mut Vec<Ptx>, phases: &Phases) -> Vec<Finding> {
    let seed = p.seed;
    let mut findings = Vec::new();
    let name = &p.func.name;
    let (entry, callees, helpers) = match items(p) {
        Ok(items) => items,
        Err(e) => {
            findings.push(finding("generator bug", e));
            return findings;
        }
    };
    let started = Instant::now();
    for arch in ARCHS {
        match quietly(|| compile_with_helpers(&entry, &callees, &helpers, &options(arch))) {
            Ok(Ok(k)) => {
                if !k.ptx.contains(&format!(".target {arch}")) {
                    findings.push(finding("the PTX does not name its target", arch));
                }
                let file = dir.join(format!("{name}_{arch}.ptx"));
                std::fs::write(&file, &k.ptx).expect("the PTX folder is writable");
                ptx.push(Ptx { seed, arch, file });
            }
            Ok(Err(e)) => {
                findings.push(finding(format!("compile_with_helpers fails: {}", first_line(&e.to_string())), arch))
            }
            Err(panic) => findings.push(finding(format!("compile_with_helpers panics: {}", first_line(&panic)), arch)),
        }
    }
    Phases::add(&phases.compile, started);
    let started = Instant::now();
    let cx = Context::create();
    let jit = quietly(|| {
        let program =
            frontend::check_program(&entry, &callees, &helpers).map_err(|e| format!("the frontend refuses it: {e}"))?;
        let jit = |overflow| {
            // SAFETY: `libdevice_on_host` gives for each libdevice name the address of an
            // `extern "C"` function with that function's signature.
            unsafe { host::jit_with(&cx, &program, &libdevice_on_host, overflow) }
                .map_err(|e| format!("the host JIT fails: {e}"))
        };
        let checked = match program.checks_overflow() {
            true => Some(jit(IntOverflow::Panic).map_err(|e| format!("with overflow checks, {e}"))?),
            false => None,
        };
        Ok::<_, String>((jit(OVERFLOW)?, checked))
    });
    let (jit, checked) = match jit {
        Ok(Ok(j)) => j,
        Ok(Err(e)) => {
            findings.push(finding(first_line(&e), e.clone()));
            return findings;
        }
        Err(panic) => {
            findings.push(finding(format!("lowering for the host JIT panics: {}", first_line(&panic)), panic));
            return findings;
        }
    };
    Phases::add(&phases.jit, started);
    let started = Instant::now();
    let params: Vec<Ty> = p.func.params.iter().map(|q| q.ty).collect();
    let rets = p.func.ret.scalars();
    for args in inputs(seed, &params, INPUTS) {
        let bits: Vec<u64> = args.iter().flat_map(|v| v.to_words()).collect();
        let shown = || {
            let a: Vec<String> = p.func.params.iter().zip(&args).map(|(q, v)| format!("{} = {v}", q.name)).collect();
            format!("({})", a.join(", "))
        };
        let interpreted: Outcome = match kernel_fuzz::run(p, &args) {
            Ok(v) => Ok(v),
            Err(Stop::Fault(f)) => Err(f),
            Err(other) => {
                findings.push(finding("generator bug", format!("the interpreter stops with {other:?} on {}", shown())));
                break;
            }
        };
        let reference = match native {
            None => interpreted.clone(),
            Some(f) => {
                let native: Outcome = match quietly(|| f(&bits)) {
                    Ok(words) => Ok(Value::all_from_words(rets, &words)),
                    Err(msg) => match Fault::from_panic(&msg) {
                        Some(f) => Err(f),
                        None => {
                            let detail = format!("rustc's function panics with {msg:?} on {}", shown());
                            findings.push(finding("an unknown panic", detail));
                            break;
                        }
                    },
                };
                if !same(&interpreted, &native) {
                    let detail =
                        format!("on {} it gives {}, rustc's function {}", shown(), show(&interpreted), show(&native));
                    findings.push(finding("interpreter bug", detail));
                    break;
                }
                native
            }
        };
        let outcome = |(words, code): (Vec<u64>, u32)| -> Result<Outcome, u32> {
            match code {
                0 => Ok(Ok(Value::all_from_words(rets, &words))),
                _ => Fault::ALL.iter().find(|f| fault_code(**f) == code).map(|f| Err(*f)).ok_or(code),
            }
        };
        let Ok(compiled) = outcome(jit.call(&bits)) else {
            findings.push(finding("an unknown fault code", shown()));
            break;
        };
        if !same(&compiled, &reference) {
            let detail =
                format!("on {} the compiled code gives {}, Rust {}", shown(), show(&compiled), show(&reference));
            findings.push(finding("miscompiled", detail));
            break;
        }
        // With overflow checks: against the interpreter's checked mode.
        let Some(checked) = &checked else { continue };
        let want: Outcome = match kernel_fuzz::run_with(p, &args, Overflow::Check) {
            Ok(v) => Ok(v),
            Err(Stop::Fault(f)) => Err(f),
            Err(other) => {
                findings.push(finding("generator bug", format!("the interpreter stops with {other:?} on {}", shown())));
                break;
            }
        };
        let Ok(got) = outcome(checked.call(&bits)) else {
            findings.push(finding("an unknown fault code with overflow checks", shown()));
            break;
        };
        if !same(&got, &want) {
            let detail = format!("on {} the checked code gives {}, Rust {}", shown(), show(&got), show(&want));
            findings.push(finding("miscompiled with overflow checks", detail));
            break;
        }
    }
    Phases::add(&phases.run, started);
    findings
}

/// Assembles the PTX files with `ptxas` ([`toolkit::assemble`]) and deletes them; returns
/// the seeds it rejects and why.
fn assemble(ptx: &[Ptx]) -> Vec<(u64, Finding)> {
    let mut rejected = Vec::new();
    for arch in ARCHS {
        let ptxas = toolkit::find_ptxas(arch).unwrap_or_else(|| {
            panic!(
                "no ptxas that supports {arch} was found (looked at {:?}); run scripts/setup, which installs \
                 the PyPI wheels nvidia-cuda-nvcc and nvidia-cuda-nvcc-cu12, or set PTXAS",
                toolkit::ptxas_candidates()
            )
        });
        let files: Vec<&Ptx> = ptx.iter().filter(|p| p.arch == arch).collect();
        let paths: Vec<PathBuf> = files.iter().map(|p| p.file.clone()).collect();
        for (file, message) in toolkit::assemble(&ptxas, arch, &paths) {
            let seed = files.iter().find(|p| p.file == file).map_or(0, |p| p.seed);
            rejected.push((seed, finding(format!("ptxas rejects the PTX for {arch}"), message)));
        }
    }
    for p in ptx {
        std::fs::remove_file(&p.file).ok();
    }
    rejected
}

/// A program with its source and, for the compiled-in corpus, rustc's function.
type Case = (Program, String, Option<NativeFn>);

/// Which test generates a seed's program again, with the interpreter as the reference: the
/// environment it needs and its name.
type Repro = (&'static str, &'static str);

/// [`random_programs`]: the configuration of [`corpus_matches_rustc`].
const PRIMITIVE: Repro = ("", "random_programs");
/// [`random_programs_with_new_types`] without `from_f64`: the configuration of
/// [`corpus_with_new_types_matches_rustc`].
const NEW_TYPES: Repro = ("FUZZ_FROM_F64=0 ", "random_programs_with_new_types");
/// [`random_programs_with_new_types`].
const NEW_TYPES_F64: Repro = ("", "random_programs_with_new_types");
/// [`random_programs_with_structs`]: the configuration of [`corpus_with_structs_matches_rustc`].
const STRUCTS: Repro = ("", "random_programs_with_structs");

/// Checks `cases` on every core and panics with every finding, grouped by kind.
fn check_all(what: &str, cases: Vec<Case>, repro: Repro) {
    let started = Instant::now();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let next = AtomicUsize::new(0);
    let findings: Mutex<Vec<(u64, Finding)>> = Mutex::new(Vec::new());
    let running: Mutex<Vec<Option<(u64, Instant)>>> = Mutex::new(Vec::new());
    let assembled = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let phases = Phases::default();
    let done = std::sync::atomic::AtomicBool::new(false);
    let progress = std::env::var_os("FUZZ_PROGRESS").is_some();
    std::thread::scope(|s| {
        // A miscompiled loop may never end: name the function before giving up.
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                for (seed, since) in running.lock().unwrap().iter().flatten() {
                    if since.elapsed() > WATCHDOG {
                        let p = cases.iter().find(|p| p.0.seed == *seed).unwrap();
                        eprintln!("seed {seed} has run for {WATCHDOG:?}: the compiled code does not return\n{}", p.1);
                        std::process::abort();
                    }
                }
            }
        });
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                running.lock().unwrap().push(None);
                let (next, findings, running, dir, cases, phases, assembled) =
                    (&next, &findings, &running, &dir, &cases, &phases, &assembled);
                s.spawn(move || {
                    let mut ptx = Vec::new();
                    let flush = |ptx: &mut Vec<Ptx>| {
                        let t = Instant::now();
                        let rejected = assemble(ptx);
                        Phases::add(&phases.ptxas, t);
                        assembled.fetch_add(ptx.len(), Ordering::Relaxed);
                        findings.lock().unwrap().extend(rejected);
                        ptx.clear();
                    };
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((p, _, native)) = cases.get(i) else { break };
                        running.lock().unwrap()[w] = Some((p.seed, Instant::now()));
                        for f in check(p, *native, dir, &mut ptx, phases) {
                            findings.lock().unwrap().push((p.seed, f));
                        }
                        running.lock().unwrap()[w] = None;
                        if ptx.len() >= toolkit::ASSEMBLE_BATCH * ARCHS.len() {
                            flush(&mut ptx);
                        }
                        if progress && i % 500 == 499 {
                            let n = findings.lock().unwrap().len();
                            eprintln!("{what}: {} functions in {:.0?}, {n} findings", i + 1, started.elapsed());
                        }
                    }
                    flush(&mut ptx);
                })
            })
            .collect();
        for h in handles {
            h.join().expect("a worker panicked");
        }
        done.store(true, Ordering::Relaxed);
    });
    std::fs::remove_dir_all(&dir).ok();
    let mut findings = findings.into_inner().unwrap();
    println!(
        "{what}: {} functions compiled for {ARCHS:?}, assembled and run on {INPUTS} inputs each in {:.1?} on {workers} \
         threads (summed over them: compile {}, ptxas {}, host JIT {}, runs {}); {} findings",
        cases.len(),
        started.elapsed(),
        Phases::show(&phases.compile),
        Phases::show(&phases.ptxas),
        Phases::show(&phases.jit),
        Phases::show(&phases.run),
        findings.len()
    );
    let compiled =
        cases.len() * ARCHS.len() - findings.iter().filter(|f| f.1.kind.starts_with("compile_with_helpers")).count();
    assert_eq!(assembled.load(Ordering::Relaxed), compiled, "every PTX compiled went through ptxas");
    if findings.is_empty() {
        return;
    }
    findings.sort();
    panic!("{}", report(&findings, &cases, repro));
}

/// The findings by kind: how many functions show each, and the first few in full (with a
/// reduced version when `FUZZ_REDUCE` is set).
fn report(findings: &[(u64, Finding)], cases: &[Case], (env, test): Repro) -> String {
    let mut kinds: Vec<&str> = findings.iter().map(|f| f.1.kind.as_str()).collect();
    kinds.sort();
    kinds.dedup();
    let reduce = std::env::var_os("FUZZ_REDUCE").is_some();
    let mut out = format!("{} findings in {} functions, of {} kinds:\n", findings.len(), cases.len(), kinds.len());
    for kind in kinds {
        let of_kind: Vec<&(u64, Finding)> = findings.iter().filter(|f| f.1.kind == kind).collect();
        let mut seeds: Vec<u64> = of_kind.iter().map(|f| f.0).collect();
        seeds.dedup();
        out += &format!(
            "\n=== {kind}: {} functions (seeds {:?}{})\n",
            seeds.len(),
            &seeds[..seeds.len().min(20)],
            if seeds.len() > 20 { ", …" } else { "" }
        );
        for (seed, f) in of_kind.iter().take(3) {
            let case = cases.iter().find(|c| c.0.seed == *seed).unwrap();
            out += &format!(
                "\nseed {seed}: {}\n{}\n(reproduce: {env}FUZZ_SEED={seed} FUZZ_COUNT=1 cargo test -p kernel-fuzz --test differential {test} -- --exact)\n",
                f.detail, case.1
            );
            if reduce && f.kind != "interpreter bug" && f.kind != "generator bug" {
                let small = reduced(&case.0, kind);
                out += &format!("reduced:\n{}\n", render(&small));
            }
        }
    }
    out
}

/// `p` made smaller while it still shows a finding of `kind` (with the interpreter as the
/// reference: a candidate has no rustc version).
fn reduced(p: &Program, kind: &str) -> Program {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-reduce-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let params: Vec<Ty> = p.func.params.iter().map(|q| q.ty).collect();
    let small = kernel_fuzz::reduce::reduce(p, &mut |c| {
        // A candidate may use a name it no longer declares, or never leave a loop whose
        // counter it lost: the interpreter says so before the compiled code runs it.
        let valid = inputs(c.seed, &params, INPUTS)
            .iter()
            .all(|args| !matches!(kernel_fuzz::run(c, args), Err(Stop::Runaway | Stop::Invalid(_))));
        if !valid {
            return false;
        }
        let mut ptx = Vec::new();
        let mut found = check(c, None, &dir, &mut ptx, &Phases::default());
        found.extend(assemble(&ptx).into_iter().map(|r| r.1));
        found.iter().any(|f| f.kind == kind)
    });
    std::fs::remove_dir_all(&dir).ok();
    small
}

/// How long one function may take before the test gives up on it.
const WATCHDOG: Duration = Duration::from_secs(60);

/// The reference is compiled as a release build computes: integer overflow wraps. (The
/// test profile turns overflow checks off for the whole workspace; `--release` does too.)
#[test]
fn release_semantics() {
    let wraps = quietly(|| std::hint::black_box(i32::MAX) + std::hint::black_box(1));
    assert_eq!(wraps, Ok(i32::MIN), "the native corpus must be compiled with overflow-checks = false");
}

/// A compiled-in corpus's cases, each program generated again with `cfg`: the generator at
/// run time must build what the build script built.
fn corpus_cases(corpus: &[(u64, &str, NativeFn)], cfg: &Config) -> Vec<Case> {
    corpus
        .iter()
        .map(|(seed, source, native)| {
            let p = program(*seed, cfg);
            assert_eq!(render(&p), *source, "seed {seed}: the generator is not deterministic");
            (p, source.to_string(), Some(*native))
        })
        .collect()
}

/// The fixed-seed corpus: the compiled code and the interpreter against rustc.
#[test]
fn corpus_matches_rustc() {
    let cases = corpus_cases(corpus::CORPUS, &Config::HOST);
    assert!(cases.len() >= 2000, "the corpus has {} functions", cases.len());
    check_all("corpus", cases, PRIMITIVE);
}

/// The fixed-seed corpus with the half and complex types: the compiled code and the
/// interpreter against rustc (with `half` and num-complex).
#[test]
fn corpus_with_new_types_matches_rustc() {
    let cases = corpus_cases(corpus_types::CORPUS, &Config::HOST.with_new_types());
    let seeds = kernel_fuzz::corpus::HOST_TYPES_SEEDS;
    assert_eq!(cases.len() as u64, seeds.end - seeds.start, "one function per seed");
    check_all("corpus-types", cases, NEW_TYPES);
}

/// The fixed-seed corpus with structs: the compiled code and the interpreter against rustc.
#[test]
fn corpus_with_structs_matches_rustc() {
    let cases = corpus_cases(corpus_structs::CORPUS, &Config::HOST.with_structs());
    let seeds = kernel_fuzz::corpus::HOST_STRUCT_SEEDS;
    assert_eq!(cases.len() as u64, seeds.end - seeds.start, "one function per seed");
    let with_structs = cases.iter().filter(|c| !c.0.structs.is_empty()).count();
    assert_eq!(with_structs, cases.len(), "every program of the corpus has structs");
    check_all("corpus-structs", cases, STRUCTS);
}

fn var(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |v| v.parse().unwrap_or_else(|_| panic!("{name}={v} is not a number")))
}

/// Programs of any seeds, with the interpreter as the reference: `FUZZ_SEED` (the first
/// seed; by default one past the corpus) and `FUZZ_COUNT` (by default 100).
#[test]
fn random_programs() {
    let first = var("FUZZ_SEED", 1_000_000);
    let count = var("FUZZ_COUNT", 100);
    check_all("random", generated(first..first + count, &Config::HOST), PRIMITIVE);
}

/// [`random_programs`] with the half and complex types, `f16::from_f64` and
/// `bf16::from_f64` included (without them with `FUZZ_FROM_F64=0`, the configuration of the
/// corpus with the new types).
#[test]
fn random_programs_with_new_types() {
    let first = var("FUZZ_SEED", 1_000_000);
    let count = var("FUZZ_COUNT", 100);
    let (cfg, repro) = match var("FUZZ_FROM_F64", 1) {
        0 => (Config::HOST.with_new_types(), NEW_TYPES),
        _ => (Config::HOST.with_new_types().with_half_from_f64(), NEW_TYPES_F64),
    };
    check_all("random-types", generated(first..first + count, &cfg), repro);
}

/// [`random_programs`] with structs.
#[test]
fn random_programs_with_structs() {
    let first = var("FUZZ_SEED", 1_000_000);
    let count = var("FUZZ_COUNT", 100);
    check_all("random-structs", generated(first..first + count, &Config::HOST.with_structs()), STRUCTS);
}

/// The generator's programs for `seeds`, with the interpreter as the reference.
fn generated(seeds: impl Iterator<Item = u64>, cfg: &Config) -> Vec<Case> {
    seeds
        .map(|seed| {
            let p = program(seed, cfg);
            let source = render(&p);
            (p, source, None)
        })
        .collect()
}

/// Seeds that once found a bug (in the compiler or in the generator), checked at every run.
/// 300009: a float `let` without a type flowed into another whose value was a method's
/// receiver (`let a = 2.5e155; let b = a; (b * b).max(..)`); its literal had no suffix, so
/// rustc (and the frontend) refused the call on an ambiguous `{float}`.
#[test]
fn seeds_that_found_bugs() {
    check_all("regressions", generated([300_009].into_iter(), &Config::HOST), PRIMITIVE);
}

/// Seeds of [`random_programs_with_new_types`] that once found a bug. 3001328 and 3005106
/// (2026-12-07): the sign of a `bf16` computed by an operation (`bf16::signum(p0)`,
/// `p1 + bf16::from_f32(10.0)`) and read by `copysign` came out `+` in the host copy, not
/// on the GPU: LLVM 19's x86-64 back end takes the sign bit of a value rounded to `bfloat`
/// for zero (`lower::Lowering::bf16_round_calls`).
#[test]
fn new_types_seeds_that_found_bugs() {
    let cfg = Config::HOST.with_new_types().with_half_from_f64();
    check_all("regressions-types", generated([3_001_328, 3_005_106].into_iter(), &cfg), NEW_TYPES_F64);
}
