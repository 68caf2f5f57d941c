//! The fixed-seed corpora as Rust source, written by build scripts so that rustc compiles
//! the generated functions into the tests that compare against them.

use std::ops::Range;

use crate::ast::Program;
use crate::generate::{Config, program};
use crate::render::{render, render_fn, render_struct};

/// The seeds of the corpus the host differential test compiles with rustc (with
/// [`Config::HOST`]).
pub const HOST_SEEDS: Range<u64> = 0..2000;

/// The seeds of the corpus the GPU test compiles with `#[vectorize]` (with
/// [`Config::GPU`]): fewer, since each one is a kernel the macro compiles at build time.
pub const GPU_SEEDS: Range<u64> = 0..300;

/// The seeds of the host corpus with the half and complex types (with
/// [`Config::HOST`]`.with_new_types()`): apart from [`HOST_SEEDS`], since a seed's function
/// has one name (`fz{seed}`) whatever the configuration.
pub const HOST_TYPES_SEEDS: Range<u64> = 100_000..100_600;

/// The seeds of the GPU corpus with the half and complex types (with
/// [`Config::GPU`]`.with_new_types()`).
pub const GPU_TYPES_SEEDS: Range<u64> = 100_000..100_150;

/// The seeds of the host corpus with structs (with [`Config::HOST`]`.with_structs()`).
pub const HOST_STRUCT_SEEDS: Range<u64> = 200_000..200_500;

/// The seeds of the GPU corpus with structs of every type (with
/// [`Config::GPU`]`.with_new_types().with_structs()`).
pub const GPU_STRUCT_SEEDS: Range<u64> = 200_000..200_150;

/// The GPU corpus's parts: the primitive types' seeds, then those with the half and
/// complex types, then those with structs.
pub const GPU_CORPORA: [(Range<u64>, Config); 3] = [
    (GPU_SEEDS, Config::GPU),
    (GPU_TYPES_SEEDS, Config::GPU.with_new_types()),
    (GPU_STRUCT_SEEDS, Config::GPU.with_new_types().with_structs()),
];

/// The host corpora's parts, as [`GPU_CORPORA`] lists the GPU's.
pub const HOST_CORPORA: [(Range<u64>, Config); 3] = [
    (HOST_SEEDS, Config::HOST),
    (HOST_TYPES_SEEDS, Config::HOST.with_new_types()),
    (HOST_STRUCT_SEEDS, Config::HOST.with_structs()),
];

/// The configuration a corpus seed was generated with (`gpu`: the GPU corpus's, else the
/// host's); a seed of no corpus gets the primitive types' configuration.
pub fn config_of(seed: u64, gpu: bool) -> Config {
    let (corpora, primitive) = if gpu { (&GPU_CORPORA, Config::GPU) } else { (&HOST_CORPORA, Config::HOST) };
    corpora.iter().find(|(seeds, _)| seeds.contains(&seed)).map_or(primitive, |(_, cfg)| cfg.clone())
}

/// The names generated code gives the half and complex types and their constructors.
const NEW_TYPES: &str = "use half::{bf16, f16};\nuse num_complex::{Complex, Complex32, Complex64, c32, c64};\n";

/// Lints the generated code trips on purpose: constant divisions by zero, overflowing
/// constant arithmetic, unreachable code after `return`, unused values and names.
pub(crate) const ALLOW: &str =
    "#![allow(warnings, arithmetic_overflow, unconditional_panic, unreachable_code, clippy::all)]";

fn programs(seeds: Range<u64>, cfg: &Config) -> Vec<Program> {
    seeds.map(|s| program(s, cfg)).collect()
}

/// The host corpus: `pub mod native { fn fz0_h0(…) … fn fz0(…) … }` (helpers, named per
/// seed, beside their function) (each function compiled by rustc,
/// `SpecialMath` the trait `super::SpecialMath`) and `pub static CORPUS: &[(seed, source,
/// caller)]`, where the caller runs the native function on argument bits through
/// `kernel_fuzz::native::Native`.
pub fn host_corpus(seeds: Range<u64>) -> String {
    native_corpus(seeds, &Config::HOST, "", "::kernel_fuzz::native::Native::call")
}

/// The host corpus with the half and complex types ([`HOST_TYPES_SEEDS`]), as
/// [`host_corpus`] writes it, for a test that has `half` and `num_complex` and calls a
/// function on words through its own `crate::words::call` (the layout of
/// [`Value::to_words`](crate::Value::to_words)).
pub fn host_types_corpus(seeds: Range<u64>) -> String {
    native_corpus(seeds, &Config::HOST.with_new_types(), NEW_TYPES, "crate::words::call")
}

/// The host corpus with structs ([`HOST_STRUCT_SEEDS`]), as [`host_corpus`] writes it,
/// each program's structs beside its functions.
pub fn host_struct_corpus(seeds: Range<u64>) -> String {
    native_corpus(seeds, &Config::HOST.with_structs(), "", "::kernel_fuzz::native::Native::call")
}

fn native_corpus(seeds: Range<u64>, cfg: &Config, imports: &str, caller: &str) -> String {
    let progs = programs(seeds, cfg);
    let mut out = String::new();
    out.push_str("pub mod native {\n");
    out.push_str(ALLOW);
    out.push_str("\nuse ::kernel_fuzz::special::SpecialMath;\n");
    out.push_str(imports);
    for p in &progs {
        for d in &p.structs {
            out.push_str(&render_struct(d, "Clone, Copy", true));
            out.push('\n');
        }
        for h in &p.helpers {
            out.push_str("pub ");
            out.push_str(&render_fn(h));
            out.push('\n');
        }
        out.push_str("pub ");
        out.push_str(&render_fn(&p.func));
        out.push('\n');
    }
    out.push_str("}\n\n");
    out.push_str("pub static CORPUS: &[(u64, &str, ::kernel_fuzz::native::NativeFn)] = &[\n");
    for p in &progs {
        out.push_str(&format!("({}, {:?}, |a| {caller}(&native::{}, a)),\n", p.seed, render(p), p.func.name));
    }
    out.push_str("];\n");
    out
}

/// The GPU corpus of `corpora` (seeds, each range with its configuration; the seeds
/// distinct): `mod generated { #[device] pub fn fz0_h0(…) … #[vectorize] pub fn fz0(…) …
/// }` (helpers, named per seed, at module level beside their function) and `fn
/// generated_cases(cases)`, which calls the test's `case!` macro once per function with
/// its seed, path, parameters and result type.
pub fn gpu_corpus(corpora: &[(Range<u64>, Config)]) -> String {
    let progs: Vec<Program> = corpora.iter().flat_map(|(seeds, cfg)| programs(seeds.clone(), cfg)).collect();
    let mut out = String::new();
    out.push_str("mod generated {\n");
    out.push_str(ALLOW);
    out.push('\n');
    let new_types = corpora.iter().any(|(_, cfg)| cfg.halves || cfg.complex);
    if new_types {
        out.push_str("use gpu_runtime::{Complex, Complex32, Complex64, bf16, c32, c64, f16};\n");
    }
    for p in &progs {
        for d in &p.structs {
            out.push_str(&render_struct(d, "Clone, Copy, Debug, gpu_runtime::GpuType", true));
            out.push('\n');
        }
        for h in &p.helpers {
            out.push_str("#[gpu_runtime::device]\npub ");
            out.push_str(&render_fn(h));
            out.push('\n');
        }
        out.push_str("#[gpu_runtime::vectorize]\npub ");
        out.push_str(&render_fn(&p.func));
        out.push('\n');
    }
    out.push_str("}\n\nfn generated_cases(cases: &mut Vec<Case>) {\n");
    if new_types {
        // The parameter and result types the `case!` calls name.
        out.push_str("    #[allow(unused_imports)]\n    use gpu_runtime::{Complex, bf16, f16};\n");
    }
    for p in &progs {
        let params: Vec<String> = p.func.params.iter().map(|q| format!("{}: {}", q.name, q.ty.name())).collect();
        out.push_str(&format!(
            "    case!(cases, {}, generated::{}, ({}) -> {});\n",
            p.seed,
            p.func.name,
            params.join(", "),
            p.func.ret.rust()
        ));
    }
    out.push_str("}\n");
    out
}
