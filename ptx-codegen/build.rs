//! Names this build of the compiler for the PTX cache (`src/cache.rs`): a hash of the
//! sources that decide what it emits (its own, and `kernel-abi`'s, the contract its entries
//! follow) and of the rustc that builds it. Any change to them gives a new name, so the
//! cache never serves what an older compiler emitted.

use std::path::{Path, PathBuf};
use std::process::Command;

/// What the name covers, relative to this package.
const INPUTS: &[&str] = &["build.rs", "Cargo.toml", "src", "../kernel-abi/Cargo.toml", "../kernel-abi/src"];

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let mut hash = blake3::Hasher::new();
    for input in INPUTS {
        let path = manifest.join(input);
        // A path that is not there (a copy of this package without `kernel-abi` beside it)
        // names nothing; watching it would rerun this script on every build.
        if !path.exists() {
            continue;
        }
        println!("cargo::rerun-if-changed={input}");
        let mut files = Vec::new();
        collect_files(&path, &mut files);
        files.sort();
        for file in files {
            let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
            let name = file.strip_prefix(&manifest).unwrap_or(&file).to_string_lossy().into_owned();
            field(&mut hash, name.as_bytes());
            field(&mut hash, &bytes);
        }
    }
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let version = Command::new(rustc).arg("-vV").output().map(|o| o.stdout).unwrap_or_default();
    field(&mut hash, &version);
    println!("cargo::rustc-env=PTX_CODEGEN_BUILD_ID={}", hash.finalize().to_hex());
}

/// A length-prefixed field: no two sequences of fields hash the same bytes.
fn field(hash: &mut blake3::Hasher, bytes: &[u8]) {
    hash.update(&(bytes.len() as u64).to_le_bytes());
    hash.update(bytes);
}

fn collect_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let entries = std::fs::read_dir(path).unwrap_or_else(|e| panic!("cannot list {}: {e}", path.display()));
        for entry in entries {
            collect_files(&entry.expect("a directory entry").path(), out);
        }
    } else {
        out.push(path.to_path_buf());
    }
}
