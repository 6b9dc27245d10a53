//! The floors of the workspace and the scan that keeps them. Crates: each crate's path
//! dependencies (normal, dev and build, from `cargo metadata`) point only to a lower floor
//! ([`CRATE_FLOORS`]); Cargo forbids cycles between crates but not a lower crate reaching up
//! through a dev-dependency, and not a new edge between engines. Modules: inside one crate every
//! `crate::<module>` (and `super::` that climbs to a sibling) in its `src/**/*.rs`, outside
//! comments and string literals, is an edge of its module graph. In the product crate an edge may
//! only point to a lower layer ([`LAYERS`]); in every crate the modules, and the submodules of
//! one module, may not loop (but for [`KNOWN_LOOPS`]). `tests/layers.rs` fails on a violation;
//! `cargo xtask layers` prints the graphs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's crates, lowest floor first (docs/design.md, "Layers"). A crate may depend on
/// the crates of lower floors only; crates of one floor do not depend on each other.
pub const CRATE_FLOORS: &[&[&str]] = &[
    // The engines: general, nothing of Trainer in them.
    &["gotmpl", "kube-version"],
    &["helm-render", "kube-validate"],
    &["chart-source"],
    // The product: the Trainer policy and the command line.
    &["trainer-audit"],
    // Test doubles and project tasks, never a dependency of the product.
    &["testkit"],
    &["xtask"],
];

/// The crate whose top-level modules [`LAYERS`] orders.
pub const PRODUCT: &str = "trainer-audit";

/// The top-level modules of the product crate, lowest layer first (docs/design.md, "Layers"). A
/// module may use the modules of lower layers only; modules of one layer do not use each other.
pub const LAYERS: &[&[&str]] = &[
    // The ground: no module of the crate below them.
    &["cache", "invocation", "par", "shell"],
    &["engine"],
    &["objects"],
    &["gitops", "inventory", "webhook"],
    &["cluster", "diff"],
    &["cronjob", "migrate", "rbac"],
    &["audit"],
    &["plan"],
    &["upgrade"],
    &["fleet", "gitops_review"],
    &["report"],
    &["cli"],
];

/// Loops between modules left to their crate's owners, as (crate, module whose submodules loop or
/// "" for the crate's top-level modules, the modules of the loop): the validator's schema nodes
/// hold CEL's compiled rules, which read the schema nodes, and its formats, metadata and
/// ratcheting work over the same nodes. Printed and not failed on; any other loop fails.
pub const KNOWN_LOOPS: &[(&str, &str, &[&str])] = &[("kube-validate", "", &["cel", "format", "meta", "openapi", "ratchet", "structural"])];

fn known(krate: &str, top: &str, group: &[String]) -> bool {
    KNOWN_LOOPS.iter().any(|(c, t, g)| *c == krate && *t == top && g.iter().copied().eq(group.iter().map(String::as_str)))
}

/// The one dependency up a floor: the product's tests use the test doubles (testkit), which
/// depend on the product; the product itself never does.
fn test_doubles(krate: &str, dep: &str, kinds: &BTreeSet<String>) -> bool {
    krate == PRODUCT && dep == "testkit" && kinds.iter().all(|k| k == "dev")
}

/// The floor of a crate (None: not declared in [`CRATE_FLOORS`]).
pub fn floor(krate: &str) -> Option<usize> {
    CRATE_FLOORS.iter().position(|f| f.contains(&krate))
}

/// One crate of the workspace: its name, its `src/` directory, and the workspace crates it
/// depends on, each with how (`normal`, `dev`, `build`).
#[derive(Debug, Clone)]
pub struct Crate {
    pub name: String,
    pub src: PathBuf,
    pub deps: BTreeMap<String, BTreeSet<String>>,
}

/// The workspace: its crates (from `cargo metadata`), and the module graph of each.
#[derive(Debug)]
pub struct Workspace {
    pub crates: Vec<Crate>,
    pub modules: BTreeMap<String, Graph>,
}

/// Reads the workspace at `root` (`cargo metadata --no-deps`) and scans every crate's `src/`.
pub fn workspace(root: &Path) -> Result<Workspace, String> {
    let root = &root.canonicalize().map_err(|e| format!("{}: {e}", root.display()))?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1", "--manifest-path"])
        .arg(root.join("Cargo.toml"))
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    let names: BTreeSet<String> = packages.iter().filter_map(|p| p["name"].as_str()).map(str::to_string).collect();
    let mut crates = Vec::new();
    for p in &packages {
        let name = p["name"].as_str().unwrap_or_default().to_string();
        let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap_or_default());
        let src = manifest.parent().map(|d| d.join("src")).unwrap_or_default();
        let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let dep = d["name"].as_str().unwrap_or_default();
            if names.contains(dep) {
                deps.entry(dep.to_string()).or_default().insert(d["kind"].as_str().unwrap_or("normal").to_string());
            }
        }
        crates.push(Crate { name, src, deps });
    }
    crates.sort_by_key(|c| (floor(&c.name).unwrap_or(usize::MAX), c.name.clone()));
    let mut modules = BTreeMap::new();
    for c in &crates {
        let mut graph = scan(&c.src).map_err(|e| format!("reading {}: {e}", c.src.display()))?;
        graph.dir = c.src.strip_prefix(root).unwrap_or(&c.src).to_string_lossy().replace('\\', "/");
        modules.insert(c.name.clone(), graph);
    }
    Ok(Workspace { crates, modules })
}

impl Workspace {
    /// What breaks the floors: a crate missing from [`CRATE_FLOORS`] or a dependency on a crate
    /// of the same or a higher floor; the product's modules against [`LAYERS`]; a loop between
    /// the modules of any crate, or between the submodules of one module, not in [`KNOWN_LOOPS`].
    pub fn violations(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.crates {
            let Some(a) = floor(&c.name) else {
                out.push(format!("crate {}: missing from the crate floors (testkit/src/layers.rs, CRATE_FLOORS)", c.name));
                continue;
            };
            for (dep, kinds) in &c.deps {
                let b = floor(dep).unwrap_or(usize::MAX);
                if b >= a && !test_doubles(&c.name, dep, kinds) {
                    let what = if a == b { "within one floor" } else { "upward" };
                    let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
                    out.push(format!("crate {} -> {dep} ({what}: floor {a} depends on floor {b}, as {})", c.name, kinds.join(", ")));
                }
            }
        }
        for f in CRATE_FLOORS.iter().flat_map(|f| f.iter()) {
            if !self.crates.iter().any(|c| c.name == *f) {
                out.push(format!("crate {f}: in the crate floors but not in the workspace"));
            }
        }
        for (krate, graph) in &self.modules {
            if krate == PRODUCT {
                out.extend(graph.violations());
            }
            out.extend(graph.loop_violations(krate));
        }
        out
    }

    /// The graphs for people: the crates by floor with the crates each depends on, then the
    /// product's modules by layer, then each crate's loops.
    pub fn render(&self) -> String {
        let mut out = String::from("crates, lowest floor first: floor crate -> the workspace crates it depends on (dev: only its tests)\n");
        for c in &self.crates {
            let at = floor(&c.name).map_or("?".to_string(), |f| f.to_string());
            let deps: Vec<String> =
                c.deps.iter().map(|(d, k)| if k.iter().all(|k| k == "dev") { format!("{d} (dev)") } else { d.clone() }).collect();
            out.push_str(&format!("{at:>2} {:<14}{}{}\n", c.name, if deps.is_empty() { "" } else { "-> " }, deps.join(" ")));
        }
        if let Some(product) = self.modules.get(PRODUCT) {
            out.push_str(&format!("\n{PRODUCT}: "));
            out.push_str(&product.render());
        }
        for (krate, graph) in &self.modules {
            if krate == PRODUCT {
                continue;
            }
            out.push_str(&format!("\n{krate}: {}", graph.render_loops(krate)));
        }
        out
    }
}

/// Where one reference was found.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Site {
    /// Relative to `src/`.
    pub file: String,
    pub line: usize,
    /// The path as written, resolved to the crate root (`crate::audit::verdict::Decision`).
    pub name: String,
}

/// The module graph: edges between top-level modules, and between the submodules of one
/// top-level module (keyed by that module).
#[derive(Debug, Default)]
pub struct Graph {
    /// The directory scanned, as messages name it (`src`, `crates/gotmpl/src`).
    pub dir: String,
    /// Every top-level module `src/` holds.
    pub modules: BTreeSet<String>,
    pub edges: BTreeMap<(String, String), Vec<Site>>,
    pub inner: BTreeMap<String, BTreeMap<(String, String), Vec<Site>>>,
}

/// The layer of a top-level module (None: not declared in [`LAYERS`]).
pub fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Scans `src` (the crate's `src/` directory).
pub fn scan(src: &Path) -> std::io::Result<Graph> {
    let mut graph = Graph { dir: "src".to_string(), ..Graph::default() };
    let mut subs: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type()?.is_dir() {
            let mut inner = BTreeSet::new();
            for e in std::fs::read_dir(entry.path())? {
                let n = e?.file_name().to_string_lossy().into_owned();
                let n = n.strip_suffix(".rs").unwrap_or(&n).to_string();
                if n != "mod" {
                    inner.insert(n);
                }
            }
            subs.insert(name.clone(), inner);
            graph.modules.insert(name);
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if stem != "lib" && stem != "main" {
                graph.modules.insert(stem.to_string());
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files)?;
    files.sort();
    for file in files {
        let rel = file.strip_prefix(src).unwrap_or(&file).to_string_lossy().replace('\\', "/");
        let module = module_path(&rel);
        if module.is_empty() {
            continue;
        }
        let text = std::fs::read_to_string(&file)?;
        for (line, path) in references(&text, &module) {
            let Some(to) = path.first() else { continue };
            if !graph.modules.contains(to) {
                continue;
            }
            let site = Site { file: rel.clone(), line, name: format!("crate::{}", path.join("::")) };
            if *to != module[0] {
                graph.edges.entry((module[0].clone(), to.clone())).or_default().push(site);
            } else if let (Some(from_sub), Some(to_sub)) = (module.get(1), path.get(1)) {
                let known = subs.get(to).is_some_and(|s| s.contains(to_sub));
                if from_sub != to_sub && known {
                    graph.inner.entry(to.clone()).or_default().entry((from_sub.clone(), to_sub.clone())).or_default().push(site);
                }
            }
        }
    }
    Ok(graph)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// `audit/kinds/mod.rs` → `[audit, kinds]`; `audit/rules.rs` → `[audit, rules]`; `lib.rs` → `[]`.
fn module_path(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.strip_suffix(".rs").unwrap_or(&last);
    if stem != "mod" && !(parts.is_empty() && (stem == "lib" || stem == "main")) {
        parts.push(stem.to_string());
    }
    parts
}

/// The text with comments and the contents of string and character literals blanked (newlines
/// kept, so offsets keep their lines).
fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in out.iter_mut().take(to).skip(from) {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0
                    || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
                    || (b[i - 1] == b'b' && (i < 2 || !(b[i - 2].is_ascii_alphanumeric() || b[i - 2] == b'_')))) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
                let start = i + 2 + hashes;
                let end = b[start..].windows(close.len()).position(|w| w == close.as_slice()).map_or(b.len(), |p| start + p);
                blank(&mut out, start, end);
                i = end + close.len();
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j.min(b.len()));
                i = j + 1;
            }
            b'\'' => {
                // A character literal ('x', '\n', '\u{1F600}', '"'), not a lifetime ('a).
                let end = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..].iter().position(|&c| c == b'\'').map(|p| i + 2 + p)
                } else {
                    let len = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                    (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 1 + len)
                };
                match end {
                    Some(e) => {
                        blank(&mut out, i + 1, e);
                        i = e + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    out
}

fn ident_at(b: &[u8], i: usize) -> Option<(&str, usize)> {
    let len = b[i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
    (len > 0).then(|| (std::str::from_utf8(&b[i..i + len]).unwrap_or(""), i + len))
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The paths after `::` at `i`: one, or one per item of a `{…}` group (each cut to three
/// segments: enough to name a top-level module and its submodule).
fn paths_at(b: &[u8], i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    let mut i = skip_ws(b, i);
    loop {
        if b.get(i) == Some(&b'{') {
            let mut j = i + 1;
            loop {
                j = skip_ws(b, j);
                match b.get(j) {
                    None | Some(b'}') => return,
                    Some(b',') => j += 1,
                    _ => {
                        paths_at(b, j, &path, out);
                        // Past this item: to the next comma or the closing brace at this depth.
                        let mut depth = 0;
                        while let Some(&c) = b.get(j) {
                            match c {
                                b'{' => depth += 1,
                                b'}' if depth == 0 => break,
                                b'}' => depth -= 1,
                                b',' if depth == 0 => break,
                                _ => {}
                            }
                            j += 1;
                        }
                    }
                }
            }
        }
        let Some((ident, end)) = ident_at(b, i) else { break };
        if path.len() < 3 {
            path.push(ident.to_string());
        }
        let next = skip_ws(b, end);
        if b.get(next..next + 2) == Some(b"::") {
            i = skip_ws(b, next + 2);
        } else {
            break;
        }
    }
    if path.len() > prefix.len() {
        out.push(path);
    }
}

/// Every `crate::…` and `super::…` path in a file of module `module`, resolved from the crate
/// root, with its line.
fn references(text: &str, module: &[String]) -> Vec<(usize, Vec<String>)> {
    let b = code_only(text);
    let mut found = Vec::new();
    // Inline modules (`mod tests { … }`) shift what `super` means: (name, brace depth).
    let mut inline: Vec<usize> = Vec::new();
    let mut current: Vec<String> = module.to_vec();
    let mut depth = 0usize;
    let mut i = 0;
    let mut line = 1;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
        }
        if c == b'{' {
            depth += 1;
        } else if c == b'}' {
            depth = depth.saturating_sub(1);
            if inline.last() == Some(&depth) {
                inline.pop();
                current.pop();
            }
        }
        let starts_word = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_' || b[i - 1] == b':');
        if !starts_word || !(c.is_ascii_alphabetic()) {
            i += 1;
            continue;
        }
        let Some((word, end)) = ident_at(&b, i) else {
            i += 1;
            continue;
        };
        if word == "mod" {
            let j = skip_ws(&b, end);
            if let Some((name, e)) = ident_at(&b, j) {
                if b.get(skip_ws(&b, e)) == Some(&b'{') {
                    current.push(name.to_string());
                    inline.push(depth);
                }
            }
        } else if word == "crate" || word == "super" {
            let mut base: Vec<String> = if word == "crate" { Vec::new() } else { current[..current.len().saturating_sub(1)].to_vec() };
            let mut j = end;
            let mut ok = b.get(j..j + 2) == Some(b"::");
            if ok && word == "super" {
                // `super::super::…` climbs once more per `super`.
                while let Some(("super", e)) = ident_at(&b, skip_ws(&b, j + 2)) {
                    if b.get(e..e + 2) != Some(b"::") {
                        break;
                    }
                    base.pop();
                    j = e;
                }
            }
            // `super` from the crate root names nothing; from a top-level module, the crate root.
            ok = ok && (word == "crate" || !current.is_empty());
            if ok {
                let mut paths = Vec::new();
                paths_at(&b, j + 2, &base, &mut paths);
                let lines = line + b[i..j].iter().filter(|&&c| c == b'\n').count();
                found.extend(paths.into_iter().map(|p| (lines, p)));
            }
        }
        i = end;
    }
    found
}

impl Graph {
    /// What breaks the product's declared order: a top-level module missing from [`LAYERS`], and
    /// an edge to the same or a higher layer; each with the file, line and name that makes it.
    pub fn violations(&self) -> Vec<String> {
        let mut out = Vec::new();
        for m in &self.modules {
            if layer(m).is_none() {
                out.push(format!("{}/{m}: a top-level module missing from the layer order (testkit/src/layers.rs, LAYERS)", self.dir));
            }
        }
        for m in LAYERS.iter().flat_map(|l| l.iter()) {
            if !self.modules.contains(*m) {
                out.push(format!("{m}: in the layer order but not in {}/", self.dir));
            }
        }
        for ((from, to), sites) in &self.edges {
            let (Some(a), Some(b)) = (layer(from), layer(to)) else { continue };
            if b >= a {
                let what = if a == b { "within one layer" } else { "upward" };
                for s in sites {
                    out.push(format!("{from} -> {to} ({what}: layer {a} uses layer {b}): {}/{}:{} {}", self.dir, s.file, s.line, s.name));
                }
            }
        }
        out
    }

    /// The loops of crate `krate` not in [`KNOWN_LOOPS`]: between its top-level modules, and
    /// between the submodules of one module; each with the file, line and name of every step.
    pub fn loop_violations(&self, krate: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut report = |top: &str, edges: &BTreeMap<(String, String), Vec<Site>>| {
            for (group, cycle) in groups(edges.keys()) {
                if known(krate, top, &group) {
                    continue;
                }
                let whose = if top.is_empty() { "its modules".to_string() } else { format!("the submodules of {top}") };
                let mut text = format!("crate {krate}: {whose} import each other in a loop: {}", cycle.join(" -> "));
                for pair in cycle.windows(2) {
                    if let Some(s) = edges.get(&(pair[0].clone(), pair[1].clone())).and_then(|s| s.first()) {
                        text.push_str(&format!("\n    {}/{}:{} {}", self.dir, s.file, s.line, s.name));
                    }
                }
                out.push(text);
            }
        };
        report("", &self.edges);
        for (top, edges) in &self.inner {
            report(top, edges);
        }
        out
    }

    /// Loops between top-level modules: each group of modules that reach each other, with one
    /// loop through it.
    pub fn loops(&self) -> Vec<(Vec<String>, Vec<String>)> {
        groups(self.edges.keys())
    }

    /// The product's graph for people: each module with its layer and the modules it uses,
    /// lowest first; then the loops.
    pub fn render(&self) -> String {
        let mut out = String::from("top-level modules, lowest layer first: layer module -> the modules it uses\n");
        let mut mods: Vec<&String> = self.modules.iter().collect();
        mods.sort_by_key(|m| (layer(m).unwrap_or(usize::MAX), m.as_str()));
        for m in mods {
            let uses: Vec<&str> = self.edges.keys().filter(|(f, _)| f == m).map(|(_, t)| t.as_str()).collect();
            let at = layer(m).map_or("?".to_string(), |l| l.to_string());
            out.push_str(&format!("{at:>2} {m:<14}{}{}\n", if uses.is_empty() { "" } else { "-> " }, uses.join(" ")));
        }
        out.push_str(&self.render_loops(PRODUCT));
        out
    }

    /// The loops of crate `krate`, between its top-level modules and between the submodules of
    /// one module, each marked when [`KNOWN_LOOPS`] holds it.
    pub fn render_loops(&self, krate: &str) -> String {
        let mut out = String::new();
        let line = |top: &str, g: &[String], c: &[String]| {
            let note = if known(krate, top, g) { " (known: KNOWN_LOOPS)" } else { "" };
            let at = if top.is_empty() { String::new() } else { format!("{top}: ") };
            format!("  {at}{} (e.g. {}){note}\n", g.join(" "), c.join(" -> "))
        };
        let loops = self.loops();
        out.push_str(&format!("loops between top-level modules: {}\n", if loops.is_empty() { "none" } else { "" }));
        for (g, c) in &loops {
            out.push_str(&line("", g, c));
        }
        let inner: Vec<String> =
            self.inner.iter().flat_map(|(top, e)| groups(e.keys()).into_iter().map(move |(g, c)| line(top, &g, &c))).collect();
        out.push_str(&format!("loops between submodules: {}\n", if inner.is_empty() { "none" } else { "" }));
        for l in inner {
            out.push_str(&l);
        }
        out
    }
}

/// One shortest loop through each group of nodes that reach each other (from its smallest name).
#[cfg(test)]
fn cycles<'a>(edges: impl Iterator<Item = &'a (String, String)>) -> Vec<Vec<String>> {
    groups(edges).into_iter().map(|(_, example)| example).collect()
}

/// Each group of nodes that reach each other (sorted), with one shortest loop through it from
/// its smallest name.
fn groups<'a>(edges: impl Iterator<Item = &'a (String, String)>) -> Vec<(Vec<String>, Vec<String>)> {
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (a, b) in edges {
        next.entry(a).or_default().insert(b);
    }
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for &m in next.get(n).into_iter().flatten() {
                if seen.insert(m) {
                    todo.push(m);
                }
            }
        }
        seen
    };
    let mut done: BTreeSet<&str> = BTreeSet::new();
    let mut out = Vec::new();
    for &start in next.keys() {
        if done.contains(start) || !reach(start).contains(start) {
            continue;
        }
        let group: BTreeSet<&str> = reach(start).into_iter().filter(|n| reach(n).contains(start)).collect();
        done.extend(group.iter().copied());
        // Shortest way back to `start`, breadth first.
        let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        'search: while let Some(n) = queue.pop_front() {
            for &m in next.get(n).into_iter().flatten() {
                if m == start {
                    let mut path = vec![n.to_string()];
                    let mut at = n;
                    while at != start {
                        at = prev[at];
                        path.push(at.to_string());
                    }
                    path.reverse();
                    path.push(start.to_string());
                    out.push((group.iter().map(|g| g.to_string()).collect(), path));
                    break 'search;
                }
                if group.contains(m) && !prev.contains_key(m) && m != start {
                    prev.insert(m, n);
                    queue.push_back(m);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_crate_super_groups_and_inline_modules() {
        let text = r#"
//! crate::fleet in a comment is no edge
use crate::report::{verdict::Decision, check};
use super::kinds::Check;
let s = "crate::plan in a string is none either";
let c = '"'; let l: &'static str = x;
fn f() { crate::upgrade::values::UserValues::default(); }
mod tests {
    use super::*;
    use super::super::compat::Table;
}
"#;
        let module = ["audit".to_string(), "rules".to_string()];
        let found: Vec<(usize, String)> = references(text, &module).into_iter().map(|(l, p)| (l, p.join("::"))).collect();
        assert_eq!(
            found,
            [
                (3, "report::verdict::Decision".to_string()),
                (3, "report::check".to_string()),
                (4, "audit::kinds::Check".to_string()),
                (7, "upgrade::values::UserValues".to_string()),
                (10, "audit::compat::Table".to_string()),
            ]
        );
    }

    #[test]
    fn a_loop_is_found_once_from_its_smallest_name() {
        let e = |a: &str, b: &str| (a.to_string(), b.to_string());
        let edges = [e("report", "fleet"), e("fleet", "report"), e("plan", "upgrade"), e("upgrade", "plan"), e("upgrade", "audit")];
        assert_eq!(cycles(edges.iter()), [vec!["fleet", "report", "fleet"], vec!["plan", "upgrade", "plan"]]);
        let three = [e("a", "b"), e("b", "c"), e("c", "a")];
        assert_eq!(cycles(three.iter()), [vec!["a", "b", "c", "a"]]);
    }
}
