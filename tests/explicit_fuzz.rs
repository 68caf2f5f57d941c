//! Random explicit kernels: the fixed-seed corpus of `kernel_fuzz::explicit` (kernels over
//! one to three slices and scalars with thread and block indices, grid-stride loops, shared
//! arrays between barriers, atomics, warp shuffles and votes, early returns and faults),
//! which the build script writes as `#[kernel]` functions. Each runs with three launch
//! shapes, and the oracle is `kernel_fuzz`'s interpreter, which runs a kernel's threads
//! one after another from barrier to barrier (the kernels are race-free by construction,
//! so every schedule computes the same):
//!
//! - in CI, the simulator (with its race check on) against the interpreter: the `&mut`
//!   slices bit for bit (any NaN equals any NaN), or the same fault (the same block,
//!   thread and Rust message);
//! - on a GPU host, the GPU against both.
//!
//! `EXPLICIT_FUZZ_SEEDS=a..b` at build time compiles other seeds (the long runs, see
//! docs/testing.md); `EXPLICIT_FUZZ_ONLY=a..b` at run time runs only those of the corpus's
//! seeds (a sample under compute-sanitizer).

#[path = "support/quiet.rs"]
mod quiet;

use gpu_runtime::{Error, LaunchConfig};
use kernel_fuzz::Overflow;
use kernel_fuzz::explicit::{self, Arg, Kernel, Launch, Outcome, ParamKind};
use kernel_fuzz::native::Bits;
use kernel_fuzz::{Ty, Value};

/// Where a kernel runs.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum On {
    Simulator,
    Gpu,
}

/// A call of a generated kernel with arguments, which returns its `&mut` slices' elements
/// as bits.
type Call = fn(On, &LaunchConfig, &[Arg]) -> gpu_runtime::Result<Vec<Vec<u64>>>;

/// A generated kernel: its seed, name, and [`Call`].
type Case = (u64, &'static str, Call);

fn scalar<T: Bits>(a: &Arg) -> T {
    match a {
        Arg::Scalar(v) => T::from_u64(v.to_bits()),
        Arg::Slice(_) => panic!("a slice where a scalar was expected"),
    }
}

fn slice<T: Bits>(a: &Arg) -> Vec<T> {
    match a {
        Arg::Slice(vs) => vs.iter().map(|v| T::from_u64(v.to_bits())).collect(),
        Arg::Scalar(_) => panic!("a scalar where a slice was expected"),
    }
}

fn bits<T: Bits>(v: &[T]) -> Vec<u64> {
    v.iter().map(|x| x.to_u64()).collect()
}

include!(concat!(env!("OUT_DIR"), "/explicit_corpus.rs"));

/// The integer overflow of this build's simulator (the kernel's host copy is compiled with
/// the test's profile).
fn overflow() -> Overflow {
    let checks = quiet::quietly(|| std::hint::black_box(i32::MAX) + std::hint::black_box(1)).is_err();
    if checks { Overflow::Check } else { Overflow::Wrap }
}

/// The `&mut` slices' types, in order.
fn output_types(k: &Kernel) -> Vec<Ty> {
    k.params.iter().filter(|p| matches!(p.kind, ParamKind::Output(..))).map(|p| p.kind.ty()).collect()
}

/// Whether a run's outputs (as bits) are the interpreter's, and where not, the first
/// difference.
fn same_outputs(k: &Kernel, want: &[Vec<Value>], got: &[Vec<u64>]) -> Result<(), String> {
    for ((ty, w), g) in output_types(k).into_iter().zip(want).zip(got) {
        if w.len() != g.len() {
            return Err(format!("{} elements where the interpreter has {}", g.len(), w.len()));
        }
        if let Some(i) = (0..w.len()).find(|&i| !w[i].same(Value::from_bits(ty, g[i]))) {
            return Err(format!(
                "element {i} of an output is {}, the interpreter's {}",
                Value::from_bits(ty, g[i]),
                w[i]
            ));
        }
    }
    Ok(())
}

/// Compares a run with the interpreter's outcome: every fault must be the first thread's
/// (as the simulator reports it) unless `any_thread` (the GPU reports whichever thread
/// wrote its record first: any thread the interpreter sees fault).
fn compare(
    k: &Kernel,
    want: &Outcome,
    got: &gpu_runtime::Result<Vec<Vec<u64>>>,
    any_thread: bool,
) -> Result<(), String> {
    match (want, got) {
        (Outcome::Done(w), Ok(g)) => same_outputs(k, w, g),
        (Outcome::Fault { first, faults, undefined }, Err(Error::ThreadFault { block, thread, message, .. })) => {
            let is = |f: &explicit::ThreadFault| {
                *block == [f.block, 0, 0] && *thread == [f.thread, 0, 0] && f.message == *message
            };
            if is(first) || any_thread && (*undefined || faults.iter().any(is)) {
                Ok(())
            } else {
                Err(format!(
                    "fault in block {block:?}, thread {thread:?}: {message}; the interpreter's: block {}, thread {}: {}",
                    first.block, first.thread, first.message
                ))
            }
        }
        (Outcome::Unspecified(_), Err(Error::ThreadFault { .. })) => Ok(()),
        (Outcome::Done(_), Err(e)) => Err(format!("{e}; the interpreter runs it to the end")),
        (Outcome::Fault { first, .. }, other) => Err(format!(
            "{}; the interpreter faults in block {}, thread {}: {}",
            match other {
                Ok(_) => "returned".to_string(),
                Err(e) => e.to_string(),
            },
            first.block,
            first.thread,
            first.message
        )),
        (Outcome::Unspecified(why), other) => Err(format!(
            "{}; the interpreter says: {why} (a fault is expected)",
            match other {
                Ok(_) => "returned".to_string(),
                Err(e) => e.to_string(),
            }
        )),
    }
}

/// One kernel's launches on `targets` (each against the interpreter, and against each
/// other), or the differences.
fn check(seed: u64, call: Call, targets: &[On], overflow: Overflow) -> Vec<String> {
    let k = explicit::kernel(seed);
    let mut findings = Vec::new();
    for (n, launch) in explicit::launches(&k).into_iter().enumerate() {
        let Launch { grid, block } = launch;
        let args = explicit::arguments(&k, launch, n);
        let want = match explicit::run(&k, launch, &args, overflow) {
            Ok(w) => w,
            Err(e) => {
                findings.push(format!("launch {n} ({grid} × {block}): the interpreter refuses the kernel: {e}"));
                continue;
            }
        };
        let cfg = LaunchConfig::new(grid, block);
        let mut runs = Vec::new();
        for &on in targets {
            let got = call(on, &cfg, &args);
            if let Err(e) = compare(&k, &want, &got, on == On::Gpu) {
                findings.push(format!("launch {n} ({grid} × {block}) on the {on:?}: {e}"));
            }
            runs.push((on, got));
        }
        // The GPU against the simulator: the same outputs, or both failing.
        if let [(_, Ok(a)), (_, Ok(b))] = runs.as_slice() {
            if !outputs_same(&k, a, b) {
                findings.push(format!("launch {n} ({grid} × {block}): the GPU's outputs differ from the simulator's"));
            }
        }
    }
    findings
}

/// Two runs' outputs (bits) are the same values.
fn outputs_same(k: &Kernel, a: &[Vec<u64>], b: &[Vec<u64>]) -> bool {
    output_types(k).into_iter().zip(a.iter().zip(b)).all(|(ty, (a, b))| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| Value::from_bits(ty, *x).same(Value::from_bits(ty, *y)))
    })
}

/// The cases to run: all of the corpus, or those whose seeds lie in `EXPLICIT_FUZZ_ONLY=a..b`
/// (a sample, e.g. under compute-sanitizer, without building another corpus).
fn selected() -> Vec<&'static Case> {
    let Ok(only) = std::env::var("EXPLICIT_FUZZ_ONLY") else { return CASES.iter().collect() };
    let parse = |n: &str| n.trim().parse::<u64>().ok();
    let range = match only.split_once("..").map(|(a, b)| (parse(a), parse(b))) {
        Some((Some(a), Some(b))) if a < b => a..b,
        _ => panic!("EXPLICIT_FUZZ_ONLY is `{only}`, not a non-empty range of seeds `a..b`"),
    };
    let cases: Vec<&Case> = CASES.iter().filter(|c| range.contains(&c.0)).collect();
    assert!(!cases.is_empty(), "EXPLICIT_FUZZ_ONLY={only} selects none of the corpus's seeds {CORPUS_SEEDS:?}");
    cases
}

/// Runs every selected case on `targets`, on as many host threads as there are cores (the
/// simulator's threads mostly wait for each other); panics with the findings.
fn run_all(targets: &[On]) {
    let cases = selected();
    let overflow = overflow();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut failures: Vec<(u64, String)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut failures = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&&(seed, name, call)) = cases.get(i) else { break failures };
                        let findings = check(seed, call, targets, overflow);
                        if !findings.is_empty() {
                            failures.push((
                                seed,
                                format!(
                                    "{name} (seed {seed}, `cargo run -p kernel-fuzz --example show_kernel -- {seed}`):\n  {}",
                                    findings.join("\n  ")
                                ),
                            ));
                        }
                    }
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a worker panicked")).collect()
    });
    failures.sort();
    let failures: Vec<String> = failures.into_iter().map(|f| f.1).collect();
    println!(
        "{} generated kernels, {} launches each, on {targets:?} against the interpreter; {} differ",
        cases.len(),
        explicit::LAUNCHES,
        failures.len()
    );
    assert!(failures.is_empty(), "{} of {} kernels differ:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn the_simulator_runs_the_kernels_as_the_interpreter() {
    run_all(&[On::Simulator]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn the_gpu_runs_the_kernels_as_the_simulator_and_the_interpreter() {
    let checks = overflow() == Overflow::Check;
    assert_eq!(
        checks,
        cfg!(debug_assertions),
        "the kernels check integer overflow exactly when debug_assertions is on; build the simulator's copies the \
         same way: --release or --profile gpu-checked"
    );
    run_all(&[On::Gpu, On::Simulator]);
}

/// The build script wrote the corpus, every kernel compiled.
#[test]
fn the_generated_corpus_is_compiled() {
    assert!(CASES.iter().map(|c| c.0).eq(CORPUS_SEEDS), "one case per seed, in order");
    for &(seed, name, _) in CASES {
        assert_eq!(explicit::kernel(seed).name, name);
    }
}
