//! Every diagnostic of `#[vectorize]`, one file each, with its reviewed `.stderr`
//! (regenerate with `TRYBUILD=overwrite cargo test --test ui`, then review the diff).

#[test]
fn diagnostics() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
