//! The lower floors of the library import each other without loops and never reach up: a
//! top-level module that names `crate::X` depends on X, and among the modules below the
//! upgrade layer that graph must be acyclic (issue 21: `chart` and `helm` used to import each
//! other through `merge_maps` and `strval`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The modules below the upgrade layer, in no particular order.
const LOWER: &[&str] = &[
    "atomic_write",
    "chart",
    "cluster",
    "cronjob",
    "diff",
    "gotmpl",
    "helm",
    "inventory",
    "invocation",
    "kube",
    "par",
    "shell",
    "source",
    "validate",
    "value_ops",
    "version",
    "yaml",
];

/// Every `.rs` file of a top-level module (a directory or one file).
fn files(src: &Path, module: &str) -> Vec<std::path::PathBuf> {
    let single = src.join(format!("{module}.rs"));
    let mut out = Vec::new();
    if single.is_file() {
        out.push(single);
    }
    let mut dirs = vec![src.join(module)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out
}

/// The top-level modules a module's code names as `crate::X` (comments left out).
fn imports(src: &Path, module: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for file in files(src, module) {
        let text = std::fs::read_to_string(&file).unwrap();
        for line in text.lines().map(str::trim_start).filter(|l| !l.starts_with("//")) {
            let mut rest = line;
            while let Some(i) = rest.find("crate::") {
                rest = &rest[i + "crate::".len()..];
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    // `use crate::{a::b, c};`
                    Some(group) => group.split('}').next().unwrap_or("").split(',').map(str::trim).collect(),
                    None => vec![rest],
                };
                for name in names {
                    let name: String = name.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                    if name != module && known.contains(&name) {
                        out.insert(name);
                    }
                }
            }
        }
    }
    out
}

#[test]
fn lower_modules_import_without_loops_and_never_upward() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let all: BTreeSet<String> =
        lib.lines().filter_map(|l| l.trim().strip_prefix("pub mod ")).map(|l| l.trim_end_matches(';').to_string()).collect();
    for m in LOWER {
        assert!(all.contains(*m), "{m} is not a top-level module any more: update LOWER");
    }
    let lower: BTreeSet<String> = LOWER.iter().map(|m| m.to_string()).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for m in LOWER {
        let deps = imports(&src, m, &all);
        let upward: Vec<&String> = deps.iter().filter(|d| !lower.contains(*d)).collect();
        assert!(upward.is_empty(), "{m} imports {upward:?}, which sit above it");
        graph.insert(m.to_string(), deps);
    }
    // Depth-first search for a back edge; the path to it is the loop.
    fn visit(m: &str, graph: &BTreeMap<String, BTreeSet<String>>, path: &mut Vec<String>, done: &mut BTreeSet<String>) {
        if done.contains(m) {
            return;
        }
        if let Some(i) = path.iter().position(|p| p == m) {
            panic!("import loop: {} -> {m}", path[i..].join(" -> "));
        }
        path.push(m.to_string());
        for d in &graph[m] {
            visit(d, graph, path, done);
        }
        path.pop();
        done.insert(m.to_string());
    }
    let mut done = BTreeSet::new();
    for m in LOWER {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
    // The loop this test was written for stays broken.
    assert!(!graph["chart"].contains("helm"), "chart imports helm again");
}
