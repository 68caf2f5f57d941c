//! Differential testing of the compiler with random programs of the kernel language.
//!
//! Each generated function is (1) compiled with `ptx_codegen::compile_str` for sm_70 and
//! sm_90, which must succeed (any error from a well-typed program is a finding), and the
//! PTX assembled by NVIDIA's `ptxas` for the same targets; and (2) lowered exactly as for
//! the GPU, JIT-compiled for the CPU, and run on edge and random inputs: its results must
//! be bit-identical (any NaN equals any NaN) to the reference's, and it must fault where
//! the reference panics, with the same fault.
//!
//! The reference for the fixed-seed corpus (`kernel_fuzz::corpus::HOST_SEEDS`) is the
//! same function compiled by rustc (the build script writes it into this test), under
//! Rust's release semantics (see `release_semantics`); the interpreter is checked against
//! it on the same inputs. For any other seed (`FUZZ_SEED`, `FUZZ_COUNT`) the interpreter is
//! the reference.

mod corpus {
    include!(concat!(env!("OUT_DIR"), "/host_corpus.rs"));
}

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use inkwell::context::Context;
use kernel_fuzz::ast::Program;
use kernel_fuzz::inputs::inputs;
use kernel_fuzz::special::libdevice_on_host;
use kernel_fuzz::{Config, Fault, Stop, Ty, Value, program, render};
use ptx_codegen::{Options, compile_str, frontend, host, toolkit};

/// Argument lists per function.
const INPUTS: usize = 48;

/// The targets every PTX is compiled for and assembled for.
const ARCHS: [&str; 2] = ["sm_70", "sm_90"];

/// How the compiler is asked to compile: the kernel semantics of a release build (integers
/// wrap), which is what the reference computes.
fn options(arch: &str) -> Options {
    Options { arch: arch.to_string(), ..Options::default() }
}

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
    }
    .code()
}

thread_local! {
    static EXPECTING_PANIC: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, turning a panic into its message (quietly: the panics are expected).
fn quietly<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !EXPECTING_PANIC.with(Cell::get) {
                default(info)
            }
        }));
    });
    EXPECTING_PANIC.with(|e| e.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    EXPECTING_PANIC.with(|e| e.set(false));
    r.map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

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

/// A function's PTX for one target, kept for `ptxas`.
struct Ptx {
    seed: u64,
    arch: &'static str,
    file: PathBuf,
}

/// Checks one program; returns its findings (empty: none) and leaves its PTX in `dir`.
fn check(
    p: &Program,
    source: &str,
    native: Option<fn(&[u64]) -> Vec<u64>>,
    dir: &Path,
    ptx: &mut Vec<Ptx>,
) -> Vec<String> {
    let seed = p.seed;
    let mut findings = Vec::new();
    let name = &p.func.name;
    // (1) compile_str for each target.
    for arch in ARCHS {
        match quietly(|| compile_str(source, &options(arch))) {
            Ok(Ok(k)) => {
                if !k.ptx.contains(&format!(".target {arch}")) {
                    findings.push(format!("the PTX for {arch} does not target it"));
                }
                let file = dir.join(format!("{name}_{arch}.ptx"));
                std::fs::write(&file, &k.ptx).expect("the PTX folder is writable");
                ptx.push(Ptx { seed, arch, file });
            }
            Ok(Err(e)) => findings.push(format!("compile_str for {arch} fails: {e}")),
            Err(panic) => findings.push(format!("compile_str for {arch} panics: {panic}")),
        }
    }
    // (2) the host JIT against the reference.
    let cx = Context::create();
    let jit = quietly(|| {
        let item: syn::ItemFn = syn::parse_str(source).map_err(|e| format!("does not parse: {e}"))?;
        let program = frontend::check_function(&item).map_err(|e| format!("the frontend refuses it: {e}"))?;
        // SAFETY: `libdevice_on_host` gives for each libdevice name the address of an
        // `extern "C"` function with that function's signature.
        unsafe { host::jit(&cx, &program, &libdevice_on_host) }.map_err(|e| format!("the host JIT fails: {e}"))
    });
    let jit = match jit {
        Ok(Ok(j)) => j,
        Ok(Err(e)) => {
            findings.push(e);
            return findings;
        }
        Err(panic) => {
            findings.push(format!("lowering for the host JIT panics: {panic}"));
            return findings;
        }
    };
    let params: Vec<Ty> = p.func.params.iter().map(|q| q.ty).collect();
    let rets = p.func.ret.scalars();
    for args in inputs(seed, &params, INPUTS) {
        let bits: Vec<u64> = args.iter().map(|v| v.to_bits()).collect();
        let shown = || {
            let a: Vec<String> = p.func.params.iter().zip(&args).map(|(q, v)| format!("{} = {v}", q.name)).collect();
            a.join(", ")
        };
        let interpreted: Outcome = match kernel_fuzz::run(p, &args) {
            Ok(v) => Ok(v),
            Err(Stop::Fault(f)) => Err(f),
            Err(other) => {
                findings.push(format!("generator bug: the interpreter stops with {other:?} on ({})", shown()));
                break;
            }
        };
        let reference = match native {
            None => interpreted.clone(),
            Some(f) => {
                let native: Outcome = match quietly(|| f(&bits)) {
                    Ok(words) => Ok(words.iter().zip(rets).map(|(w, t)| Value::from_bits(*t, *w)).collect()),
                    Err(msg) => match Fault::from_panic(&msg) {
                        Some(f) => Err(f),
                        None => {
                            findings.push(format!(
                                "rustc's function panics with an unknown message {msg:?} on ({})",
                                shown()
                            ));
                            break;
                        }
                    },
                };
                if !same(&interpreted, &native) {
                    findings.push(format!(
                        "interpreter bug: on ({}) it gives {}, rustc's function {}",
                        shown(),
                        show(&interpreted),
                        show(&native)
                    ));
                    break;
                }
                native
            }
        };
        let (words, code) = jit.call(&bits);
        let compiled: Outcome = if code == 0 {
            Ok(words.iter().zip(rets).map(|(w, t)| Value::from_bits(*t, *w)).collect())
        } else {
            match Fault::ALL.iter().find(|f| fault_code(**f) == code) {
                Some(f) => Err(*f),
                None => {
                    findings.push(format!("the compiled code reports an unknown fault code {code} on ({})", shown()));
                    break;
                }
            }
        };
        if !same(&compiled, &reference) {
            findings.push(format!(
                "miscompiled: on ({}) the compiled code gives {}, Rust {}",
                shown(),
                show(&compiled),
                show(&reference)
            ));
            break;
        }
    }
    findings
}

/// Assembles the PTX files with `ptxas`, several per run; returns the seeds it rejects
/// and why.
fn assemble(ptx: &[Ptx]) -> Vec<(u64, String)> {
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
        for batch in files.chunks(PTXAS_BATCH) {
            let run = |b: &[&Ptx]| {
                Command::new(&ptxas)
                    .arg(format!("-arch={arch}"))
                    .args(PTXAS_FLAGS)
                    .args(b.iter().map(|p| &p.file))
                    .args(["-o", "/dev/null"])
                    .output()
                    .expect("ptxas runs")
            };
            if run(batch).status.success() {
                continue;
            }
            // Find the files it rejects, one by one.
            for p in batch {
                let out = run(std::slice::from_ref(p));
                if !out.status.success() {
                    rejected.push((
                        p.seed,
                        format!("ptxas -arch={arch} rejects it: {}", String::from_utf8_lossy(&out.stderr)),
                    ));
                }
            }
        }
    }
    rejected
}

/// Files per `ptxas` run: it takes several inputs, which saves a process each.
const PTXAS_BATCH: usize = 25;
/// `ptxas` checks the PTX (syntax, types, instructions the target has) at any optimisation
/// level; `-O0` skips the optimiser, which is not under test and takes most of its time.
const PTXAS_FLAGS: &[&str] = &["-O0"];

/// Checks `programs` on every core, with `reference(i)` the native function of program
/// `i` if it has one, and panics with every finding.
fn check_all(what: &str, programs: Vec<(Program, String, Option<fn(&[u64]) -> Vec<u64>>)>) {
    let started = Instant::now();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-{what}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let next = AtomicUsize::new(0);
    let findings: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());
    let ptx: Mutex<Vec<Ptx>> = Mutex::new(Vec::new());
    let running: Mutex<Vec<Option<(u64, Instant)>>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        // A miscompiled loop may never end: name the function before giving up.
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(200));
                for (seed, since) in running.lock().unwrap().iter().flatten() {
                    if since.elapsed() > WATCHDOG {
                        let p = programs.iter().find(|p| p.0.seed == *seed).unwrap();
                        eprintln!("seed {seed} has run for {WATCHDOG:?}: the compiled code does not return\n{}", p.1);
                        std::process::abort();
                    }
                }
            }
        });
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                running.lock().unwrap().push(None);
                let (next, findings, ptx, running, dir, programs) = (&next, &findings, &ptx, &running, &dir, &programs);
                s.spawn(move || {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some((p, source, native)) = programs.get(i) else { break };
                        running.lock().unwrap()[w] = Some((p.seed, Instant::now()));
                        for f in check(p, source, *native, dir, &mut mine) {
                            findings.lock().unwrap().push((p.seed, f));
                        }
                        running.lock().unwrap()[w] = None;
                    }
                    ptx.lock().unwrap().extend(mine);
                })
            })
            .collect();
        for h in handles {
            h.join().expect("a worker panicked");
        }
        done.store(true, Ordering::Relaxed);
    });
    let checked = started.elapsed();
    let ptx = ptx.into_inner().unwrap();
    let mut findings = findings.into_inner().unwrap();
    // ptxas in parallel too, one batch list per core.
    let chunks: Vec<&[Ptx]> = ptx.chunks(ptx.len().div_ceil(workers).max(1)).collect();
    let rejected: Vec<(u64, String)> = std::thread::scope(|s| {
        let hs: Vec<_> = chunks.iter().map(|c| s.spawn(|| assemble(c))).collect();
        hs.into_iter().flat_map(|h| h.join().expect("ptxas worker")).collect()
    });
    findings.extend(rejected);
    std::fs::remove_dir_all(&dir).ok();
    println!(
        "{what}: {} functions compiled for {ARCHS:?}, run on {INPUTS} inputs each and assembled in {:.1?} ({:.1?} for ptxas); {} findings",
        programs.len(),
        started.elapsed(),
        started.elapsed() - checked,
        findings.len()
    );
    assert!(ptx.len() == programs.len() * ARCHS.len() || !findings.is_empty(), "every function has its PTX");
    if !findings.is_empty() {
        findings.sort();
        let report: Vec<String> = findings
            .iter()
            .map(|(seed, f)| {
                let source = &programs.iter().find(|p| p.0.seed == *seed).unwrap().1;
                format!(
                    "seed {seed}: {f}\n{source}\n(reproduce: FUZZ_SEED={seed} FUZZ_COUNT=1 cargo test -p kernel-fuzz --test differential random_programs)"
                )
            })
            .collect();
        panic!("{} findings in {} functions:\n\n{}", findings.len(), programs.len(), report.join("\n\n"));
    }
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

/// The fixed-seed corpus: the compiled code and the interpreter against rustc.
#[test]
fn corpus_matches_rustc() {
    let programs: Vec<(Program, String, Option<fn(&[u64]) -> Vec<u64>>)> = corpus::CORPUS
        .iter()
        .map(|(seed, source, native)| {
            let p = program(*seed, &Config::HOST);
            // The generator at run time builds what the build script built.
            assert_eq!(render(&p), *source, "seed {seed}: the generator is not deterministic");
            (p, source.to_string(), Some(*native))
        })
        .collect();
    assert!(programs.len() >= 2000, "the corpus has {} functions", programs.len());
    check_all("corpus", programs);
}

/// Programs of any seeds, with the interpreter as the reference: `FUZZ_SEED` (the first
/// seed; by default one past the corpus) and `FUZZ_COUNT` (by default 100).
#[test]
fn random_programs() {
    let var = |name: &str, default: u64| -> u64 {
        std::env::var(name).map_or(default, |v| v.parse().unwrap_or_else(|_| panic!("{name}={v} is not a number")))
    };
    let first = var("FUZZ_SEED", 1_000_000);
    let count = var("FUZZ_COUNT", 100);
    let programs = (first..first + count)
        .map(|seed| {
            let p = program(seed, &Config::HOST);
            let source = render(&p);
            (p, source, None)
        })
        .collect();
    check_all("random", programs);
}
