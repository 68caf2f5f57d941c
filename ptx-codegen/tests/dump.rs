//! `GPU_VECTORIZE_DUMP` writes each kernel's LLVM IR (before and after optimisation) and
//! PTX to a folder. Its own test binary: it sets the variable, and no other test may read
//! the environment meanwhile.

use ptx_codegen::{Options, PtxCache, cache, compile_str, compile_variants};

#[test]
fn the_dump_folder_gets_ir_and_ptx() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dump");
    let _ = std::fs::remove_dir_all(&dir);
    // SAFETY: the only test of this binary, so no other thread reads the environment.
    unsafe { std::env::set_var(ptx_codegen::DUMP_ENV, &dir) };
    let k = compile_str("fn dumped_twice(x: f64) -> f64 { x * 2.0 }", &Options::default()).unwrap();
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
    assert_eq!(read("dumped_twice.ptx"), k.ptx);
    assert_eq!(read("dumped_twice.opt.ll"), k.llvm_ir);
    assert!(read("dumped_twice.ll").contains("define internal double @dumped_twice_scalar("));

    // With the variable set, the PTX cache is left alone: a function in it is compiled, and
    // dumped, all the same.
    let ptx_cache = PtxCache::new(std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dump-cache"));
    let _ = std::fs::remove_dir_all(ptx_cache.dir());
    let f: syn::ItemFn = syn::parse_str("fn dumped_despite_cache(x: f64) -> f64 { x * 3.0 }").unwrap();
    let mut stored = compile_variants(&f, &[], &[], &Options::default(), None).unwrap();
    stored.wrapping.ptx = "// from the cache".into();
    let key = cache::key(cache::Toolchain::current(), cache::Kind::Vectorized, &f, &[], &[], &Options::default());
    ptx_cache.store(&key, &stored).unwrap();
    let compiled = compile_variants(&f, &[], &[], &Options::default(), Some(&ptx_cache)).unwrap().wrapping;
    // SAFETY: as above.
    unsafe { std::env::remove_var(ptx_codegen::DUMP_ENV) };
    assert!(compiled.ptx.contains(".entry") && !compiled.llvm_ir_unoptimized.is_empty());
    assert_eq!(read("dumped_despite_cache.ptx"), compiled.ptx);
    assert_eq!(read("dumped_despite_cache.ll"), compiled.llvm_ir_unoptimized);
    let served = compile_variants(&f, &[], &[], &Options::default(), Some(&ptx_cache)).unwrap();
    assert_eq!(served.wrapping.ptx, "// from the cache", "the entry is there for builds that do not dump");
}
