//! The on-disk PTX cache (`ptx_codegen::cache`): a function compiled before is read back,
//! any change to what decides its kernels is a miss, a corrupt entry is ignored and
//! rewritten, builds that write one entry at once do not harm it, and a cache that cannot
//! be written costs a compile, never the build.

use std::collections::HashSet;
use std::path::PathBuf;

use ptx_codegen::cache::{Key, Kind, Toolchain, key};
use ptx_codegen::frontend::HelperDef;
use ptx_codegen::{
    KernelVariants, LaunchBounds, Options, PtxCache, ScalarType, Target, Variants, compile_kernel_variants,
    compile_variants,
};

/// A fresh, empty cache directory of this test's own.
fn fresh_cache(name: &str) -> PtxCache {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ptx-cache-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    PtxCache::new(dir)
}

fn item(src: &str) -> syn::ItemFn {
    syn::parse_str(src).unwrap()
}

/// The files in the cache's directory.
fn files(cache: &PtxCache) -> Vec<PathBuf> {
    let Ok(list) = std::fs::read_dir(cache.dir()) else { return Vec::new() };
    let mut files: Vec<PathBuf> = list.map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

/// The key of a vectorized function without helpers, compiled with the default options.
fn plain_key(f: &syn::ItemFn) -> Key {
    key(Toolchain::current(), Kind::Vectorized, f, &[], &[], &Options::default())
}

fn compile(f: &syn::ItemFn, cache: &PtxCache) -> Variants {
    compile_variants(f, &[], &[], &Options::default(), Some(cache)).unwrap()
}

/// A compiled result as the cache gives it back: without the LLVM IR before optimisation,
/// which the macro does not use.
fn as_cached(mut v: Variants) -> String {
    for k in std::iter::once(&mut v.wrapping).chain(&mut v.checked) {
        k.llvm_ir_unoptimized.clear();
    }
    format!("{v:?}")
}

/// The same for an explicit kernel, of which the macro uses no LLVM IR at all.
fn explicit_as_cached(mut v: KernelVariants) -> String {
    for k in std::iter::once(&mut v.wrapping).chain(&mut v.checked) {
        k.llvm_ir.clear();
        k.llvm_ir_unoptimized.clear();
    }
    format!("{v:?}")
}

#[test]
fn a_function_compiled_before_is_read_back() {
    let cache = fresh_cache("hit");
    let f = item("fn add(a: f32, b: f32) -> f32 { a + b }");
    let first = compile(&f, &cache);
    assert!(first.checked.is_none(), "nothing in `add` can overflow");
    assert_eq!(files(&cache), vec![cache.entry_path(&plain_key(&f))]);
    let again = compile(&f, &cache);
    assert_eq!(again.wrapping.abi, first.wrapping.abi);
    assert!(again.wrapping.ptx == first.wrapping.ptx && again.wrapping.llvm_ir == first.wrapping.llvm_ir);
    assert!(again.checked.is_none());
    // Only dumps show the IR before optimisation, and a build that dumps compiles.
    assert!(again.wrapping.llvm_ir_unoptimized.is_empty() && !first.wrapping.llvm_ir_unoptimized.is_empty());
    // What the entry holds is what is served: mark it, and the mark comes back.
    let mut marked = first.clone();
    marked.wrapping.ptx = "// from the cache".into();
    cache.store(&plain_key(&f), &marked).unwrap();
    assert_eq!(compile(&f, &cache).wrapping.ptx, "// from the cache");
    // The same function parsed again, laid out differently: the same tokens.
    let reformatted = item("fn add(\n    a: f32,\n    b: f32\n) -> f32 {\n    a + b\n}");
    assert_eq!(compile(&reformatted, &cache).wrapping.ptx, "// from the cache");
}

#[test]
fn every_part_of_a_result_reads_back() {
    let cache = fresh_cache("parts");
    // Both overflow variants (their ABIs differ: only the checked one can fault), a
    // reduction entry, and tuple results.
    for src in [
        "fn inc(a: i32) -> i32 { a + 1 }",
        "fn both(a: u8, b: f64) -> (f64, bool) { (b * 2.0, a > 3) }",
        "fn none() -> f32 { 1.0 }",
    ] {
        let f = item(src);
        let first = compile(&f, &cache);
        let again = cache.load::<Variants>(&plain_key(&f)).expect("stored");
        assert_eq!(format!("{again:?}"), as_cached(first), "{src}");
    }
    assert_eq!(files(&cache).len(), 3);
    assert!(cache.load::<Variants>(&plain_key(&item("fn inc(a: i32) -> i32 { a + 1 }"))).unwrap().checked.is_some());

    // Explicit kernels: every kind of parameter, shared memory, both variants.
    let k = item(
        "fn k(a: &mut [i32], b: &[f64], n: u32) { \
            let s = gpu::shared::<f32, 64>(); let d = gpu::dynamic_shared::<u8>(); \
            let i = gpu::grid1(); s[0] = 1.0; a[i] += n as i32 + d.len() as i32 + b[i] as i32; }",
    );
    let first = compile_kernel_variants(&k, &[], &[], &Options::default(), Some(&cache)).unwrap();
    let kernel_key = key(Toolchain::current(), Kind::Explicit, &k, &[], &[], &Options::default());
    let again = cache.load::<KernelVariants>(&kernel_key).expect("stored");
    assert!(again.checked.is_some() && again.wrapping.abi.static_shared_bytes > 0 && again.wrapping.abi.dynamic_shared);
    assert_eq!(format!("{again:?}"), explicit_as_cached(first.clone()));
    let served = compile_kernel_variants(&k, &[], &[], &Options::default(), Some(&cache)).unwrap();
    assert_eq!(format!("{served:?}"), explicit_as_cached(first));
    // An entry is read only as the kind of result it holds.
    assert!(cache.load::<Variants>(&kernel_key).is_none());
}

#[test]
fn functions_of_user_structs_read_back() {
    use ptx_codegen::frontend::{StructEntry, define_structs};
    let entry = StructEntry {
        id: "Pt_cache_tests".into(),
        item: syn::parse_str("#[repr(C)] struct Pt { x: f32, y: f32, n: u32, m: u32 }").unwrap(),
        fields: Vec::new(),
    };
    define_structs(&[entry]).unwrap();
    let callees = vec![("Pt".to_string(), "Pt_cache_tests".to_string())];
    let cache = fresh_cache("structs");
    let f = item("fn f(p: Pt, q: Pt) -> Pt { Pt { x: p.x + q.x, y: p.y, n: p.n, m: q.m } }");
    let f_key = key(Toolchain::current(), Kind::Vectorized, &f, &callees, &[], &Options::default());
    let first = compile_variants(&f, &callees, &[], &Options::default(), Some(&cache)).unwrap();
    assert!(first.wrapping.abi.reduce_entry.is_some());
    let again = cache.load::<Variants>(&f_key).expect("an entry naming a struct reads back");
    assert_eq!(format!("{again:?}"), as_cached(first));
    let k = item("fn k(a: &mut [Pt], p: Pt) { let i = gpu::grid1(); if i < a.len() { a[i] = p; } }");
    let k_key = key(Toolchain::current(), Kind::Explicit, &k, &callees, &[], &Options::default());
    let first = compile_kernel_variants(&k, &callees, &[], &Options::default(), Some(&cache)).unwrap();
    let again = cache.load::<KernelVariants>(&k_key).expect("a kernel naming a struct reads back");
    assert_eq!(format!("{again:?}"), explicit_as_cached(first));
}

/// Every input of a function's kernels, changed alone, changes the key.
#[test]
fn every_input_is_in_the_key() {
    let toolchain = Toolchain::current().clone();
    let f = item("fn f(x: f32) -> f32 { smooth(x) * 2.0 }");
    let callees = vec![("smooth".to_string(), "smooth_1".to_string())];
    let helper = HelperDef { id: "smooth_1".into(), item: item("fn smooth(x: f32) -> f32 { x * x }"), callees: vec![] };
    let helpers = [helper.clone()];
    let options = Options::default();
    let vectorized = Kind::Vectorized;
    let base = key(&toolchain, vectorized, &f, &callees, &helpers, &options);
    assert_eq!(base, key(&toolchain, vectorized, &f, &callees, &helpers, &options), "a function of its inputs");

    let mut changed: Vec<(&str, Key)> = Vec::new();
    // The toolchain.
    let compiler = Toolchain { compiler: format!("{} (edited)", toolchain.compiler), ..toolchain.clone() };
    changed.push(("compiler", key(&compiler, vectorized, &f, &callees, &helpers, &options)));
    let llvm = Toolchain { llvm: "19.1.8".into(), ..toolchain.clone() };
    changed.push(("LLVM", key(&llvm, vectorized, &f, &callees, &helpers, &options)));
    let libdevice = Toolchain { libdevice: "another".into(), ..toolchain.clone() };
    changed.push(("libdevice", key(&libdevice, vectorized, &f, &callees, &helpers, &options)));
    // Which entry point.
    changed.push(("kind", key(&toolchain, Kind::Explicit, &f, &callees, &helpers, &options)));
    // The function.
    for (what, src) in [
        ("an operator", "fn f(x: f32) -> f32 { smooth(x) / 2.0 }"),
        ("a literal", "fn f(x: f32) -> f32 { smooth(x) * 2.5 }"),
        ("a literal's spelling", "fn f(x: f32) -> f32 { smooth(x) * 2.0f32 }"),
        ("the name", "fn g(x: f32) -> f32 { smooth(x) * 2.0 }"),
        ("a type", "fn f(x: f64) -> f32 { smooth(x) * 2.0 }"),
        ("a parenthesis", "fn f(x: f32) -> f32 { (smooth(x) * 2.0) }"),
        ("an attribute", "#[inline] fn f(x: f32) -> f32 { smooth(x) * 2.0 }"),
        ("a raw identifier", "fn r#f(x: f32) -> f32 { smooth(x) * 2.0 }"),
    ] {
        changed.push((what, key(&toolchain, vectorized, &item(src), &callees, &helpers, &options)));
    }
    // Tokens that print alike: `$e * 2.0` with `$e` = `x + 1.0` is `(x + 1.0) * 2.0`.
    let invisible = {
        let group = proc_macro2::Group::new(proc_macro2::Delimiter::None, "x + 1.0".parse().unwrap());
        syn::parse2::<syn::ItemFn>(quote::quote!(fn f(x: f32) -> f32 { #group * 2.0 })).unwrap()
    };
    let plain = item("fn f(x: f32) -> f32 { x + 1.0 * 2.0 }");
    let printed = |f: &syn::ItemFn| quote::ToTokens::to_token_stream(f).to_string();
    assert_eq!(printed(&plain), printed(&invisible), "the two print alike");
    changed.push(("an invisible group", key(&toolchain, vectorized, &invisible, &[], &[], &options)));
    changed.push(("no invisible group", key(&toolchain, vectorized, &plain, &[], &[], &options)));
    // The helpers: their definitions, ids and callees, and which path reaches which.
    let body = HelperDef { item: item("fn smooth(x: f32) -> f32 { x * x * x }"), ..helper.clone() };
    changed.push(("a helper's body", key(&toolchain, vectorized, &f, &callees, &[body], &options)));
    let id = HelperDef { id: "smooth_2".into(), ..helper.clone() };
    let renamed = vec![("smooth".to_string(), "smooth_2".to_string())];
    changed.push(("a helper's id", key(&toolchain, vectorized, &f, &renamed, &[id], &options)));
    let calls = HelperDef { callees: vec![("other".into(), "other_1".into())], ..helper.clone() };
    changed.push(("a helper's callees", key(&toolchain, vectorized, &f, &callees, &[calls], &options)));
    let path = vec![("utils::smooth".to_string(), "smooth_1".to_string())];
    changed.push(("a callee's path", key(&toolchain, vectorized, &f, &path, &helpers, &options)));
    changed.push(("no helpers", key(&toolchain, vectorized, &f, &callees, &[], &options)));
    let two = [helper.clone(), HelperDef { id: "extra_1".into(), item: item("fn extra() {}"), callees: vec![] }];
    changed.push(("another helper", key(&toolchain, vectorized, &f, &callees, &two, &options)));
    // Every option.
    let with = |o: Options| key(&toolchain, vectorized, &f, &callees, &helpers, &o);
    changed.push(("arch", with(Options { arch: "sm_90".into(), ..options.clone() })));
    changed.push(("fastmath", with(Options { fastmath: true, ..options.clone() })));
    changed.push(("target", with(Options { target: Target::Cpu, ..options.clone() })));
    changed.push(("identity", with(Options { identity: Some(syn::parse_str("0.0").unwrap()), ..options.clone() })));
    changed.push(("types", with(Options { types: vec![ScalarType::F32], ..options.clone() })));
    let bounds = |max_threads, min_blocks| Some(LaunchBounds { max_threads, min_blocks });
    changed.push(("launch bounds", with(Options { launch_bounds: bounds(256, None), ..options.clone() })));
    changed.push(("their blocks", with(Options { launch_bounds: bounds(256, Some(2)), ..options.clone() })));

    let mut seen: HashSet<Key> = HashSet::from([base]);
    for (what, key) in &changed {
        assert!(seen.insert(*key), "changing {what} leaves the key as it was, or as another change makes it");
    }
}

/// The end-to-end form of the above: a changed function, helper or option compiles anew.
#[test]
fn a_changed_kernel_is_never_served_stale() {
    let cache = fresh_cache("stale");
    let ptx = |src: &str| compile(&item(src), &cache).wrapping.ptx;
    let (add, sub) = (ptx("fn f(a: f32, b: f32) -> f32 { a + b }"), ptx("fn f(a: f32, b: f32) -> f32 { a - b }"));
    assert!(add.contains("add.rn.f32") && sub.contains("sub.rn.f32"), "{add}\n{sub}");
    assert!(ptx("fn f(a: f32, b: f32) -> f32 { a + b }").contains("add.rn.f32"), "and back");

    let f = item("fn f(x: f32) -> f32 { h(x) }");
    let callees = [("h".to_string(), "h_1".to_string())];
    let with_helper = |body: &str| {
        let helpers = [HelperDef { id: "h_1".into(), item: item(body), callees: vec![] }];
        compile_variants(&f, &callees, &helpers, &Options::default(), Some(&cache)).unwrap().wrapping.ptx
    };
    let (mul, div) = (with_helper("fn h(x: f32) -> f32 { x * 3.0 }"), with_helper("fn h(x: f32) -> f32 { x / 3.0 }"));
    assert!(mul.contains("mul.rn.f32") && div.contains("div.rn.f32"), "{mul}\n{div}");

    let f = item("fn f(a: f32) -> f32 { a }");
    let sm90 = Options { arch: "sm_90".into(), ..Options::default() };
    let sm90 = compile_variants(&f, &[], &[], &sm90, Some(&cache)).unwrap().wrapping.ptx;
    assert!(compile(&f, &cache).wrapping.ptx.contains(".target sm_70") && sm90.contains(".target sm_90"));
}

#[test]
fn a_corrupt_entry_is_ignored_and_rewritten() {
    let cache = fresh_cache("corrupt");
    let f = item("fn mul(a: f64, b: f64) -> f64 { a * b }");
    let good = compile(&f, &cache);
    let path = cache.entry_path(&plain_key(&f));
    let whole = std::fs::read(&path).unwrap();
    let mut flipped = whole.clone();
    flipped[whole.len() / 2] ^= 0x20;
    // A valid entry, but another key's, in this key's place.
    let g = item("fn mul(a: f32, b: f32) -> f32 { a * b }");
    compile(&g, &cache);
    let another = std::fs::read(cache.entry_path(&plain_key(&g))).unwrap();
    for (what, bytes) in [
        ("empty", Vec::new()),
        ("truncated", whole[..whole.len() - 100].to_vec()),
        ("a bit flipped", flipped),
        ("another key's", another),
        ("garbage", b"not an entry at all".to_vec()),
    ] {
        std::fs::write(&path, &bytes).unwrap();
        assert!(cache.load::<Variants>(&plain_key(&f)).is_none(), "{what}");
        let compiled = compile(&f, &cache);
        assert!(compiled.wrapping.ptx == good.wrapping.ptx, "{what}");
        assert!(std::fs::read(&path).unwrap() == whole, "{what}: the entry is rewritten");
    }
}

#[test]
fn builds_that_write_one_entry_at_once_leave_it_whole() {
    let cache = fresh_cache("concurrent");
    let f = item("fn heavy(x: f64, y: i64) -> f64 { x.sin() * (y / 3) as f64 }");
    let compiled = compile_variants(&f, &[], &[], &Options::default(), None).unwrap();
    let key = plain_key(&f);
    let expected = as_cached(compiled.clone());
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..20 {
                    cache.store(&key, &compiled).unwrap();
                    // A reader sees a whole entry, whichever writer's copy it is.
                    let read = cache.load::<Variants>(&key).expect("an entry is always there once stored");
                    assert!(format!("{read:?}") == expected);
                }
            });
        }
    });
    assert_eq!(files(&cache), vec![cache.entry_path(&key)], "one entry, and no temporary file left");

    // The same through the compiler: each thread misses or hits, and all agree.
    let cache = fresh_cache("concurrent-compiles");
    let results: Vec<String> = std::thread::scope(|s| {
        // A thread that misses gets the IR before optimisation too.
        let compile =
            || as_cached(compile(&item("fn heavy(x: f64, y: i64) -> f64 { x.sin() * (y / 3) as f64 }"), &cache));
        let threads: Vec<_> = (0..4).map(|_| s.spawn(compile)).collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert!(results.iter().all(|r| *r == expected));
    assert_eq!(files(&cache).len(), 1);
}

#[test]
fn a_cache_that_cannot_be_written_costs_only_a_compile() {
    let blocker = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ptx-cache-tests").join("a-file");
    std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
    std::fs::write(&blocker, "a file where the cache's directory would be").unwrap();
    let cache = PtxCache::new(blocker.join("cache"));
    let f = item("fn add(a: f32, b: f32) -> f32 { a + b }");
    let cached = compile(&f, &cache);
    let plain = compile_variants(&f, &[], &[], &Options::default(), None).unwrap();
    assert!(cached.wrapping.ptx == plain.wrapping.ptx);
    assert!(cache.store(&plain_key(&f), &plain).is_err());
}

#[test]
fn errors_are_not_cached() {
    let cache = fresh_cache("errors");
    let f = item("fn bad(x: f32) -> f32 { x.frobnicate() }");
    for _ in 0..2 {
        let e = compile_variants(&f, &[], &[], &Options::default(), Some(&cache)).unwrap_err();
        assert!(e.to_string().contains("frobnicate"), "{e}");
    }
    assert!(files(&cache).is_empty());
}
