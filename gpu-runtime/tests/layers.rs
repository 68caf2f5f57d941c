//! The runtime's modules form layers whose imports only point down (see
//! docs/architecture.md): a module may name its own layer and the layers below it, never one above.
//! Read from the sources, so that a new import that breaks the order fails here.

use std::path::Path;

/// Each top-level module of `src/` and its layer (lib.rs, the root, may name all of them).
const LAYERS: &[(&str, u32)] = &[
    ("error", 0),
    ("scalar", 0),
    ("float", 0),
    ("special", 0),
    ("panics", 0),
    ("grid", 0),
    ("driver", 1),
    ("data", 2),
    ("launch", 3),
    ("api", 4),
    ("sim", 4),
];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

/// The code of a file without its comments (doc links name modules too).
fn code(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn imports_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel.iter().next().unwrap().to_str().unwrap().trim_end_matches(".rs");
        if top == "lib" {
            continue;
        }
        let own = layer(top).unwrap_or_else(|| panic!("{} is in no layer: add it to LAYERS", rel.display()));
        let text = code(&std::fs::read_to_string(&file).unwrap());
        for (at, _) in text.match_indices("crate::") {
            let named: String =
                text[at + "crate::".len()..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            checked += 1;
            match layer(&named) {
                Some(l) if l <= own => {}
                Some(l) => wrong.push(format!("{} (layer {own}) names crate::{named} (layer {l})", rel.display())),
                // A crate-root item (a re-export such as `crate::Stream`): reach it through
                // its own layer instead.
                None => wrong.push(format!("{} names crate::{named}, which is no layer", rel.display())),
            }
        }
    }
    assert!(checked > 50, "only {checked} paths found: is the scan reading the sources?");
    assert!(wrong.is_empty(), "imports that point up or around the layers:\n{}", wrong.join("\n"));
}
