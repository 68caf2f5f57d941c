//! A missing or corrupt libdevice is a compile error that says what to do, never an abort.
//! libdevice is loaded once per process, so each case runs in a child process of this
//! test binary (the `child` test, which does nothing unless the parent asked for it).

use std::process::Command;

const CASE: &str = "LIBDEVICE_ERRORS_CASE";

fn run_child(libdevice: &std::path::Path) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(CASE, "1")
        .env("GPU_LIBDEVICE", libdevice)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "the child failed: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

#[test]
fn a_missing_file_is_reported_with_its_path() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-such-libdevice.bc");
    let said = run_child(&path);
    assert!(said.contains("cannot read libdevice at") && said.contains("no-such-libdevice.bc"), "{said}");
}

#[test]
fn a_corrupt_file_is_a_parse_error() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("corrupt-libdevice.bc");
    std::fs::write(&path, b"BC\xc0\xde this is not bitcode").unwrap();
    let said = run_child(&path);
    assert!(said.contains("cannot parse libdevice at") && said.contains("corrupt-libdevice.bc"), "{said}");
}

#[test]
#[ignore = "run by the tests above, in a child process"]
fn child() {
    if std::env::var_os(CASE).is_none() {
        return;
    }
    // A kernel without math never touches libdevice.
    ptx_codegen::compile_str("fn add(a: f32, b: f32) -> f32 { a + b }", &Default::default()).unwrap();
    let err = ptx_codegen::compile_str("fn wave(x: f32) -> f32 { x.sin() }", &Default::default())
        .expect_err("a kernel that calls sin cannot compile without libdevice");
    // The second kernel gets the same answer (the load is not retried, nor does it abort).
    let again = ptx_codegen::compile_str("fn wave(x: f64) -> f64 { x.cos() }", &Default::default()).err().unwrap();
    assert_eq!(err.to_string(), again.to_string());
    println!("compile error: {err}");
}
