//! Random programs on the GPU: the fixed-seed corpora of `kernel_fuzz` made for the GPU
//! (`kernel_fuzz::corpus::GPU_CORPORA`: `Config::GPU`, only operations the GPU computes bit
//! for bit like the CPU, over the primitive types, then with `f16`, `bf16`,
//! `Complex<f32>` and `Complex<f64>` too), which the build script writes as `#[vectorize]`
//! functions. Each runs on generated inputs (edge
//! values first) and is compared with its `::scalar`: bit for bit (any NaN equals any
//! NaN), and where the CPU panics the call must fail at the same first element with Rust's
//! message; the other elements are then compared on their own.
//!
//! Integer overflow: the kernels wrap in a build without `debug_assertions` and check
//! where it has them, so the CPU must be built the same way: `cargo test --release`
//! (both wrap) or `cargo test --profile gpu-checked` (both check).

mod common;

use common::{Gen, SameAs, catch, inputs, verify};

/// Elements per function.
const N: usize = 20_000;

macro_rules! same_tuple {
    ($($t:ident $i:tt),*) => {
        impl<$($t: SameAs),*> SameAs for ($($t,)*) {
            fn same_as(self, o: Self) -> bool {
                $(self.$i.same_as(o.$i))&&*
            }
        }
    };
}
same_tuple!(A 0);
same_tuple!(A 0, B 1);
same_tuple!(A 0, B 1, C 2);
same_tuple!(A 0, B 1, C 2, D 3);
same_tuple!(A 0, B 1, C 2, D 3, E 4);
same_tuple!(A 0, B 1, C 2, D 3, E 4, F 5);

/// A generated function: its seed, name, and the comparison on the GPU.
type Case = (u64, &'static str, Box<dyn Fn() -> Result<(), String>>);

/// One case per generated function (the build script calls it).
macro_rules! case {
    ($cases:ident, $seed:expr, generated::$name:ident, ($($p:ident: $t:ty),*) -> $r:ty) => {
        $cases.push(($seed, stringify!($name), Box::new(|| {
            use generated::$name as f;
            #[allow(unused_mut, unused_variables)]
            let mut g = Gen::new($seed);
            let params: &[&str] = &[$(stringify!($p)),*];
            let n = if params.is_empty() { 1 } else { N };
            $( let $p: Vec<$t> = inputs(n, g.next_u64()); )*
            let cpu: Vec<Result<$r, String>> = (0..n).map(|_i| catch(|| f::scalar($($p[_i]),*))).collect();
            let gpu = |keep: Option<&[usize]>| -> gpu_runtime::Result<Vec<$r>> {
                let host = match keep {
                    None => f($(&$p),*)?,
                    Some(_idx) => {
                        $( let $p: Vec<$t> = _idx.iter().map(|&i| $p[i]).collect(); )*
                        f($(&$p),*)?
                    }
                };
                Ok(<$r as gpu_runtime::Results>::zip(host))
            };
            let inputs_of = |_i: usize| -> String {
                let parts: Vec<String> = vec![$(format!("{} = {:?}", stringify!($p), $p[_i])),*];
                parts.join(", ")
            };
            verify(&cpu, gpu, inputs_of)
        })));
    };
}

include!(concat!(env!("OUT_DIR"), "/gpu_corpus.rs"));

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    generated_cases(&mut cases);
    cases
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn generated_functions_match_the_cpu() {
    let checks = catch(|| std::hint::black_box(i32::MAX) + std::hint::black_box(1)).is_err();
    assert_eq!(
        checks,
        cfg!(debug_assertions),
        "the kernels check integer overflow exactly when debug_assertions is on; build the CPU's functions the same \
         way: --release or --profile gpu-checked"
    );
    let cases = cases();
    let mut failures = Vec::new();
    for (seed, name, run) in &cases {
        if let Err(e) = run() {
            failures
                .push(format!("{name} (seed {seed}, `cargo run -p kernel-fuzz --example show -- {seed} gpu`): {e}"));
        }
    }
    println!(
        "{} generated functions compared with the CPU on {N} elements each; {} differ",
        cases.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} functions differ from the CPU:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The build script wrote the corpus, every function compiled to a kernel.
#[test]
fn the_generated_corpus_is_compiled() {
    let cases = cases();
    let seeds = kernel_fuzz::corpus::GPU_CORPORA.iter().flat_map(|(seeds, _)| seeds.clone());
    assert_eq!(cases.len(), seeds.clone().count());
    assert!(cases.iter().map(|c| c.0).eq(seeds), "one case per seed, in order");
}
