//! No crate of the workspace has an import circle: within each folder of modules, if module
//! `a` names module `b` (`use super::b::…`, `crate::x::b::…`, `super::{b, …}`), `b` does
//! not name `a`, directly or through its other siblings. Reopening `impl FnChecker` in
//! several files is fine; a circle means a shared type lives in the wrong module (it
//! belongs next to the context, or in a leaf). Read from the sources, so that a new import
//! that closes a circle fails here. (`gpu-runtime/tests/layers.rs` checks the runtime's
//! layers on top of this.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const CRATES: [&str; 5] = ["kernel-abi", "ptx-codegen", "gpu-macros", "gpu-runtime", "kernel-fuzz"];

type Module = Vec<String>;

/// Every module of a crate's `src/` and its file.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    fn walk(dir: &Path, src: &Path, out: &mut BTreeMap<Module, PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, src, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src).unwrap().with_extension("");
                let mut module: Module = rel.iter().map(|s| s.to_str().unwrap().to_string()).collect();
                if matches!(module.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                    module.pop();
                }
                out.insert(module, path);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The code of a file without its comments (doc links name modules too).
fn code(text: &str) -> String {
    text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

fn ident(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The paths a file names from `crate::`, `super::` and `self::`, each as written after
/// them (a `{…}` group gives one path per member).
fn paths(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for base in ["crate", "super", "self"] {
        let pattern = format!("{base}::");
        for (at, _) in text.match_indices(&pattern) {
            if at > 0 && text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut rest = &text[at + pattern.len()..];
            let mut path = Vec::new();
            loop {
                let id = ident(rest);
                if id.is_empty() {
                    break;
                }
                path.push(id.to_string());
                rest = &rest[id.len()..];
                match rest.strip_prefix("::") {
                    Some(r) => rest = r,
                    None => break,
                }
            }
            if let Some(group) = rest.strip_prefix('{') {
                let members = &group[..group.find('}').unwrap_or(group.len())];
                for m in members.split(',') {
                    let m = ident(m.trim());
                    if !m.is_empty() {
                        out.push((base.to_string(), [path.clone(), vec![m.to_string()]].concat()));
                    }
                }
            } else {
                out.push((base.to_string(), path));
            }
        }
    }
    out
}

/// The modules each module names (the longest module prefix of each path).
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let mods = modules(src);
    let mut graph: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (module, file) in &mods {
        let text = code(&std::fs::read_to_string(file).unwrap());
        let edges = graph.entry(module.clone()).or_default();
        for (base, path) in paths(&text) {
            let start: Module = match base.as_str() {
                "crate" => Vec::new(),
                "super" => module[..module.len().saturating_sub(1)].to_vec(),
                _ => module.clone(),
            };
            let full: Module = start.into_iter().chain(path).collect();
            if let Some(k) = (1..=full.len()).rev().find(|&k| mods.contains_key(&full[..k])) {
                let target = full[..k].to_vec();
                if target != *module {
                    edges.insert(target);
                }
            }
        }
    }
    graph
}

/// The circles among siblings: for each folder, its children's edges (a module's edges
/// count for the child of the folder that contains it), and the strongly connected parts
/// of more than one module.
fn circles(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<String>> {
    let parents: BTreeSet<Module> = graph.keys().filter(|m| !m.is_empty()).map(|m| m[..m.len() - 1].to_vec()).collect();
    let mut found = Vec::new();
    for parent in parents {
        let child =
            |m: &Module| (m.len() > parent.len() && m.starts_with(&parent)).then(|| m[..=parent.len()].to_vec());
        let mut sib: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (m, targets) in graph {
            let Some(a) = child(m) else { continue };
            let entry = sib.entry(a.clone()).or_default();
            for t in targets {
                if let Some(b) = child(t).filter(|b| *b != a) {
                    entry.insert(b);
                }
            }
        }
        // Two modules are in one circle when each reaches the other.
        let reach = |from: &Module| {
            let mut seen = BTreeSet::new();
            let mut stack = vec![from.clone()];
            while let Some(m) = stack.pop() {
                for n in sib.get(&m).into_iter().flatten() {
                    if seen.insert(n.clone()) {
                        stack.push(n.clone());
                    }
                }
            }
            seen
        };
        let mut done = BTreeSet::new();
        for m in sib.keys() {
            if done.contains(m) {
                continue;
            }
            let from_m = reach(m);
            let mut part: Vec<Module> = from_m.iter().filter(|n| reach(n).contains(m)).cloned().collect();
            if part.is_empty() {
                continue;
            }
            part.push(m.clone());
            part.sort();
            part.dedup();
            done.extend(part.iter().cloned());
            found.push(part.iter().map(|p| p.join("::")).collect());
        }
    }
    found
}

#[test]
fn no_crate_has_an_import_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    let mut modules_seen = 0;
    for krate in CRATES {
        let g = graph(&root.join(krate).join("src"));
        modules_seen += g.len();
        for c in circles(&g) {
            all.push(format!("{krate}: {}", c.join(" <-> ")));
        }
    }
    assert!(modules_seen > 100, "only {modules_seen} modules found: is the scan reading the sources?");
    assert!(all.is_empty(), "import circles:\n{}", all.join("\n"));
}

/// The scan finds a circle where there is one.
#[test]
fn a_circle_is_found() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("circle");
    std::fs::create_dir_all(dir.join("front")).unwrap();
    std::fs::write(dir.join("lib.rs"), "mod front;").unwrap();
    std::fs::write(dir.join("front/mod.rs"), "mod a; mod b; mod c;").unwrap();
    std::fs::write(dir.join("front/a.rs"), "use super::b::Thing;").unwrap();
    std::fs::write(dir.join("front/b.rs"), "use super::{c, d};").unwrap();
    std::fs::write(dir.join("front/c.rs"), "// use super::a::X;\nfn f() { crate::front::a::g() }").unwrap();
    assert_eq!(circles(&graph(&dir)), [vec!["front::a", "front::b", "front::c"]]);
    std::fs::write(dir.join("front/c.rs"), "// use super::a::X;\nfn f() {}").unwrap();
    assert!(circles(&graph(&dir)).is_empty());
}
