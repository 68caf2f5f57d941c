//! The on-disk PTX cache (`ptx_codegen::cache`): a kernel compiled before is read back, any
//! change to what decides its code is a miss, a corrupt entry is ignored and rewritten,
//! builds that write one entry at once do not harm it, and a cache that cannot be written
//! costs a compile, never the build.

use std::collections::HashSet;
use std::path::PathBuf;

use ptx_codegen::cache::{Inputs, Key, Kind, Toolchain};
use ptx_codegen::emit::Emitted;
use ptx_codegen::frontend::HelperDef;
use ptx_codegen::{IntOverflow, Options, PtxCache, ScalarType, Target, compile_kernel_variants, compile_variants};

/// A fresh, empty cache directory of this test's own.
fn fresh_cache(name: &str) -> PtxCache {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ptx-cache-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    PtxCache::new(dir)
}

fn item(src: &str) -> syn::ItemFn {
    syn::parse_str(src).unwrap()
}

/// The entries in the cache's directory.
fn entries(cache: &PtxCache) -> Vec<PathBuf> {
    let Ok(list) = std::fs::read_dir(cache.dir()) else { return Vec::new() };
    let mut files: Vec<PathBuf> = list.map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

fn key(f: &syn::ItemFn, callees: &[(String, String)], helpers: &[HelperDef], overflow: IntOverflow) -> Key {
    Inputs::new(Toolchain::current(), Kind::Vectorized, f, callees, helpers, &Options::default()).key(overflow)
}

fn marked(ptx: &str) -> Emitted {
    Emitted { llvm_ir_unoptimized: "; marked".into(), llvm_ir: "; marked".into(), ptx: ptx.into() }
}

#[test]
fn a_kernel_compiled_before_is_read_back() {
    let cache = fresh_cache("hit");
    let f = item("fn add(a: f32, b: f32) -> f32 { a + b }");
    let first = compile_variants(&f, &[], &[], &Options::default(), Some(&cache)).unwrap();
    assert!(first.checked.is_none(), "nothing in `add` can overflow");
    assert_eq!(entries(&cache), vec![cache.entry_path(&key(&f, &[], &[], IntOverflow::Wrap))]);
    let again = compile_variants(&f, &[], &[], &Options::default(), Some(&cache)).unwrap();
    assert_eq!((&again.wrapping.ptx, &again.wrapping.llvm_ir), (&first.wrapping.ptx, &first.wrapping.llvm_ir));
    assert_eq!(again.wrapping.abi, first.wrapping.abi);
    // What the entry holds is what is served: mark it, and the mark comes back.
    cache.store(&key(&f, &[], &[], IntOverflow::Wrap), &marked("// from the cache")).unwrap();
    let served = compile_variants(&f, &[], &[], &Options::default(), Some(&cache)).unwrap();
    assert_eq!(served.wrapping.ptx, "// from the cache");
    assert_eq!(served.wrapping.abi, first.wrapping.abi, "the ABI comes from the frontend, hit or miss");
    // The same function parsed again, laid out differently: its tokens are the same.
    let reformatted = item("fn add(\n    a: f32,\n    b: f32\n) -> f32 {\n    a + b\n}");
    let served = compile_variants(&reformatted, &[], &[], &Options::default(), Some(&cache)).unwrap();
    assert_eq!(served.wrapping.ptx, "// from the cache");
}

#[test]
fn both_overflow_variants_and_explicit_kernels_are_cached() {
    let cache = fresh_cache("variants");
    let f = item("fn inc(a: i32) -> i32 { a + 1 }");
    let first = compile_variants(&f, &[], &[], &Options::default(), Some(&cache)).unwrap();
    let checked = first.checked.as_ref().expect("`+` on i32 is checked");
    assert_eq!(entries(&cache).len(), 2);
    let again = compile_variants(&f, &[], &[], &Options::default(), Some(&cache)).unwrap();
    assert_eq!(again.checked.as_ref().map(|c| &c.ptx), Some(&checked.ptx));
    assert_ne!(again.checked.unwrap().ptx, again.wrapping.ptx);

    let k = item("fn k(a: &mut [i32]) { a[0] += 1; }");
    let first = compile_kernel_variants(&k, &[], &[], &Options::default(), Some(&cache)).unwrap();
    assert_eq!(entries(&cache).len(), 4);
    let explicit = Inputs::new(Toolchain::current(), Kind::Explicit, &k, &[], &[], &Options::default());
    cache.store(&explicit.key(IntOverflow::Panic), &marked("// checked, from the cache")).unwrap();
    let again = compile_kernel_variants(&k, &[], &[], &Options::default(), Some(&cache)).unwrap();
    assert_eq!(again.wrapping.ptx, first.wrapping.ptx);
    assert_eq!(again.checked.unwrap().ptx, "// checked, from the cache");
    assert_eq!(again.wrapping.abi, first.wrapping.abi);
}

/// Every input of a kernel's code, changed alone, changes the key.
#[test]
fn every_input_is_in_the_key() {
    let toolchain = Toolchain::current().clone();
    let f = item("fn f(x: f32) -> f32 { smooth(x) * 2.0 }");
    let callees = vec![("smooth".to_string(), "smooth_1".to_string())];
    let helper = HelperDef { id: "smooth_1".into(), item: item("fn smooth(x: f32) -> f32 { x * x }"), callees: vec![] };
    let options = Options::default();
    let key_of =
        |toolchain: &Toolchain,
         kind: Kind,
         f: &syn::ItemFn,
         callees: &[(String, String)],
         helpers: &[HelperDef],
         options: &Options,
         overflow: IntOverflow| { Inputs::new(toolchain, kind, f, callees, helpers, options).key(overflow) };
    let base = key_of(&toolchain, Kind::Vectorized, &f, &callees, &[helper.clone()], &options, IntOverflow::Wrap);
    let again = key_of(&toolchain, Kind::Vectorized, &f, &callees, &[helper.clone()], &options, IntOverflow::Wrap);
    assert_eq!(base, again, "the key is a function of its inputs");

    let mut changed: Vec<(&str, Key)> = Vec::new();
    let mut with = |what: &'static str,
                    toolchain: &Toolchain,
                    kind: Kind,
                    f: &syn::ItemFn,
                    callees: &[(String, String)],
                    helpers: &[HelperDef],
                    options: &Options,
                    overflow: IntOverflow| {
        changed.push((what, key_of(toolchain, kind, f, callees, helpers, options, overflow)));
    };
    let helpers = [helper.clone()];
    let (vectorized, wrap) = (Kind::Vectorized, IntOverflow::Wrap);
    // The toolchain.
    let compiler = Toolchain { compiler: format!("{} (edited)", toolchain.compiler), ..toolchain.clone() };
    with("compiler", &compiler, vectorized, &f, &callees, &helpers, &options, wrap);
    let llvm = Toolchain { llvm: "19.1.8".into(), ..toolchain.clone() };
    with("LLVM", &llvm, vectorized, &f, &callees, &helpers, &options, wrap);
    let libdevice = Toolchain { libdevice: "0".repeat(64), ..toolchain.clone() };
    with("libdevice", &libdevice, vectorized, &f, &callees, &helpers, &options, wrap);
    // Which program, which variant.
    with("kind", &toolchain, Kind::Explicit, &f, &callees, &helpers, &options, wrap);
    with("overflow", &toolchain, vectorized, &f, &callees, &helpers, &options, IntOverflow::Panic);
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
        with(what, &toolchain, vectorized, &item(src), &callees, &helpers, &options, wrap);
    }
    // Groups that print alike: `$e * 2.0` with `$e` = `x + 1.0` is `(x + 1.0) * 2.0`.
    let grouped = |delimiter| {
        use proc_macro2::{Group, TokenStream};
        let inner: TokenStream = "x + 1.0".parse().unwrap();
        let group = Group::new(delimiter, inner);
        let body = quote::quote!({ #group * 2.0 });
        let body = quote::quote!(fn f(x: f32) -> f32 #body);
        syn::parse2::<syn::ItemFn>(body).unwrap()
    };
    let plain = item("fn f(x: f32) -> f32 { x + 1.0 * 2.0 }");
    let invisible = grouped(proc_macro2::Delimiter::None);
    assert_eq!(
        quote::ToTokens::to_token_stream(&plain).to_string(),
        quote::ToTokens::to_token_stream(&invisible).to_string(),
        "the two print alike"
    );
    with("an invisible group", &toolchain, vectorized, &invisible, &[], &[], &options, wrap);
    with("no invisible group", &toolchain, vectorized, &plain, &[], &[], &options, wrap);
    // The helpers: their definitions, ids and callees, and which path reaches which.
    let edited = |h: HelperDef| [h];
    let body = HelperDef { item: item("fn smooth(x: f32) -> f32 { x * x * x }"), ..helper.clone() };
    with("a helper's body", &toolchain, vectorized, &f, &callees, &edited(body), &options, wrap);
    let id = HelperDef { id: "smooth_2".into(), ..helper.clone() };
    let renamed = vec![("smooth".to_string(), "smooth_2".to_string())];
    with("a helper's id", &toolchain, vectorized, &f, &renamed, &edited(id), &options, wrap);
    let calls = HelperDef { callees: vec![("other".into(), "other_1".into())], ..helper.clone() };
    with("a helper's callees", &toolchain, vectorized, &f, &callees, &edited(calls), &options, wrap);
    let path = vec![("utils::smooth".to_string(), "smooth_1".to_string())];
    with("a callee's path", &toolchain, vectorized, &f, &path, &helpers, &options, wrap);
    with("no helpers", &toolchain, vectorized, &f, &callees, &[], &options, wrap);
    let two = [helper.clone(), HelperDef { id: "extra_1".into(), item: item("fn extra() {}"), callees: vec![] }];
    with("another helper", &toolchain, vectorized, &f, &callees, &two, &options, wrap);
    // Every option.
    let arch = Options { arch: "sm_90".into(), ..options.clone() };
    with("arch", &toolchain, vectorized, &f, &callees, &helpers, &arch, wrap);
    let fastmath = Options { fastmath: true, ..options.clone() };
    with("fastmath", &toolchain, vectorized, &f, &callees, &helpers, &fastmath, wrap);
    let target = Options { target: Target::Cpu, ..options.clone() };
    with("target", &toolchain, vectorized, &f, &callees, &helpers, &target, wrap);
    let identity = Options { identity: Some(syn::parse_str("0.0").unwrap()), ..options.clone() };
    with("identity", &toolchain, vectorized, &f, &callees, &helpers, &identity, wrap);
    let types = Options { types: vec![ScalarType::F32], ..options.clone() };
    with("types", &toolchain, vectorized, &f, &callees, &helpers, &types, wrap);

    let mut seen: HashSet<Key> = HashSet::from([base]);
    for (what, key) in &changed {
        assert!(seen.insert(*key), "changing {what} leaves the key as it was, or as another change makes it");
    }
}

/// The end-to-end form of the above: a changed function or helper is compiled anew.
#[test]
fn a_changed_kernel_is_never_served_stale() {
    let cache = fresh_cache("stale");
    let options = Options::default();
    let add = compile_variants(&item("fn f(a: f32, b: f32) -> f32 { a + b }"), &[], &[], &options, Some(&cache));
    let sub = compile_variants(&item("fn f(a: f32, b: f32) -> f32 { a - b }"), &[], &[], &options, Some(&cache));
    let (add, sub) = (add.unwrap().wrapping.ptx, sub.unwrap().wrapping.ptx);
    assert!(add.contains("add.rn.f32") && sub.contains("sub.rn.f32"), "{add}\n{sub}");

    let f = item("fn f(x: f32) -> f32 { h(x) }");
    let callees = [("h".to_string(), "h_1".to_string())];
    let helper = |body: &str| [HelperDef { id: "h_1".into(), item: item(body), callees: vec![] }];
    let mul = compile_variants(&f, &callees, &helper("fn h(x: f32) -> f32 { x * 3.0 }"), &options, Some(&cache));
    let div = compile_variants(&f, &callees, &helper("fn h(x: f32) -> f32 { x / 3.0 }"), &options, Some(&cache));
    let (mul, div) = (mul.unwrap().wrapping.ptx, div.unwrap().wrapping.ptx);
    assert!(mul.contains("mul.rn.f32") && div.contains("div.rn.f32"), "{mul}\n{div}");

    let sm70 = compile_variants(&item("fn f(a: f32) -> f32 { a }"), &[], &[], &options, Some(&cache)).unwrap();
    let sm90 = Options { arch: "sm_90".into(), ..options.clone() };
    let sm90 = compile_variants(&item("fn f(a: f32) -> f32 { a }"), &[], &[], &sm90, Some(&cache)).unwrap();
    assert!(sm70.wrapping.ptx.contains(".target sm_70") && sm90.wrapping.ptx.contains(".target sm_90"));
}

#[test]
fn a_corrupt_entry_is_ignored_and_rewritten() {
    let cache = fresh_cache("corrupt");
    let f = item("fn mul(a: f64, b: f64) -> f64 { a * b }");
    let compile = || compile_variants(&f, &[], &[], &Options::default(), Some(&cache)).unwrap().wrapping;
    let good = compile();
    let wrapping = key(&f, &[], &[], IntOverflow::Wrap);
    let path = cache.entry_path(&wrapping);
    let whole = std::fs::read(&path).unwrap();
    let mut flipped = whole.clone();
    flipped[whole.len() / 2] ^= 0x20;
    let another = {
        // A valid entry, but another key's, in this key's place.
        let g = item("fn mul(a: f32, b: f32) -> f32 { a * b }");
        compile_variants(&g, &[], &[], &Options::default(), Some(&cache)).unwrap();
        std::fs::read(cache.entry_path(&key(&g, &[], &[], IntOverflow::Wrap))).unwrap()
    };
    for (what, bytes) in [
        ("empty", Vec::new()),
        ("truncated", whole[..whole.len() - 100].to_vec()),
        ("a bit flipped", flipped),
        ("another key's", another),
        ("garbage", b"not an entry at all".to_vec()),
    ] {
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.load(&wrapping), None, "{what}");
        let compiled = compile();
        assert_eq!((&compiled.ptx, &compiled.llvm_ir), (&good.ptx, &good.llvm_ir), "{what}");
        assert_eq!(std::fs::read(&path).unwrap(), whole, "{what}: the entry is rewritten");
    }
}

#[test]
fn builds_that_write_one_entry_at_once_leave_it_whole() {
    let cache = fresh_cache("concurrent");
    let key = key(&item("fn f() {}"), &[], &[], IntOverflow::Wrap);
    let texts = Emitted {
        llvm_ir_unoptimized: "; before\n".repeat(20_000),
        llvm_ir: "; after\n".repeat(20_000),
        ptx: "// ptx\n".repeat(20_000),
    };
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                for _ in 0..25 {
                    cache.store(&key, &texts).unwrap();
                    // A reader sees the whole entry, whichever writer's copy it is.
                    assert_eq!(cache.load(&key).as_ref(), Some(&texts));
                }
            });
        }
    });
    assert_eq!(entries(&cache), vec![cache.entry_path(&key)], "one entry, and no temporary file left");

    // The same through the compiler: every thread misses or hits, and all agree.
    let cache = fresh_cache("concurrent-compiles");
    let compile = || {
        let f = item("fn heavy(x: f64, y: i64) -> f64 { x.sin() * (y / 3) as f64 }");
        compile_variants(&f, &[], &[], &Options::default(), Some(&cache)).unwrap()
    };
    let results: Vec<_> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..4).map(|_| s.spawn(compile)).collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for r in &results[1..] {
        assert_eq!(r.wrapping.ptx, results[0].wrapping.ptx);
    }
    assert_eq!(entries(&cache).len(), 1);
}

#[test]
fn a_cache_that_cannot_be_written_costs_only_a_compile() {
    let blocker = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ptx-cache-tests").join("a-file");
    std::fs::create_dir_all(blocker.parent().unwrap()).unwrap();
    std::fs::write(&blocker, "a file where the cache's directory would be").unwrap();
    let cache = PtxCache::new(blocker.join("cache"));
    let f = item("fn add(a: f32, b: f32) -> f32 { a + b }");
    let cached = compile_variants(&f, &[], &[], &Options::default(), Some(&cache)).unwrap();
    let plain = compile_variants(&f, &[], &[], &Options::default(), None).unwrap();
    assert_eq!(cached.wrapping.ptx, plain.wrapping.ptx);
    assert!(cache.store(&key(&f, &[], &[], IntOverflow::Wrap), &marked("")).is_err());
}
